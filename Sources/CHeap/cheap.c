#include "cheap.h"
#include <stdlib.h>   // defines __GLIBC__ on glibc
#if defined(__GLIBC__)
#include <malloc.h>
int bk_heap_trim(void) { return malloc_trim(0); }
int bk_heap_limit_arenas(int arenas) { return mallopt(M_ARENA_MAX, arenas); }
int bk_heap_map_large(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
int bk_heap_maps_block(unsigned long bytes) {
    void *p = malloc(bytes);
    if (!p) return -1;
    // glibc marks a block mapped on its own with bit 1 (IS_MMAPPED) of the size word before it.
    int mapped = (((size_t *)p)[-1] & 2) != 0;
    free(p);
    return mapped;
}
#else
int bk_heap_trim(void) { return 0; }
int bk_heap_limit_arenas(int arenas) { (void)arenas; return 0; }
int bk_heap_map_large(int bytes) { (void)bytes; return 0; }
int bk_heap_maps_block(unsigned long bytes) { (void)bytes; return -1; }
#endif
