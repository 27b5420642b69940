#ifndef CHEAP_H
#define CHEAP_H
/// Gives the memory the C allocator holds free back to the system (glibc's malloc_trim; nothing
/// elsewhere). Returns 1 when some was given back.
int bk_heap_trim(void);
#endif
