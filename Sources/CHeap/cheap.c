#include "cheap.h"
#include <stdlib.h>   // defines __GLIBC__ on glibc
#if defined(__GLIBC__)
#include <malloc.h>
int bk_heap_trim(void) { return malloc_trim(0); }
int bk_heap_limit_arenas(int arenas) { return mallopt(M_ARENA_MAX, arenas); }
#else
int bk_heap_trim(void) { return 0; }
int bk_heap_limit_arenas(int arenas) { (void)arenas; return 0; }
#endif
