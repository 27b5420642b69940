#ifndef CHEAP_H
#define CHEAP_H
/// Gives the memory the C allocator holds free back to the system (glibc's malloc_trim; nothing
/// elsewhere). Returns 1 when some was given back.
int bk_heap_trim(void);
/// Lets the C allocator keep at most `arenas` heaps for all threads (glibc's M_ARENA_MAX; by
/// default 8 a core, each keeping what its threads freed). Returns 1 when set.
int bk_heap_limit_arenas(int arenas);
#endif
