#include "cheap.h"
#include <stdlib.h>   // defines __GLIBC__ on glibc
#if defined(__GLIBC__)
#include <malloc.h>
#include <stdio.h>
int bk_heap_trim(void) { return malloc_trim(0); }
void bk_heap_report(void) { struct mallinfo2 m = mallinfo2(); fprintf(stderr, "EXP heap: arena %zu MB, in use %zu MB, free %zu MB, mmapped %zu MB, releasable %zu MB\n", m.arena >> 20, m.uordblks >> 20, m.fordblks >> 20, m.hblkhd >> 20, m.keepcost >> 20); }
#else
int bk_heap_trim(void) { return 0; }
void bk_heap_report(void) {}
#endif
