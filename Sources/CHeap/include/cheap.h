#ifndef CHEAP_H
#define CHEAP_H
/// Gives the memory the C allocator holds free back to the system (glibc's malloc_trim; nothing
/// elsewhere). Returns 1 when some was given back.
int bk_heap_trim(void);
/// Lets the C allocator keep at most `arenas` heaps for all threads (glibc's M_ARENA_MAX; by
/// default 8 a core, each keeping what its threads freed). Returns 1 when set.
int bk_heap_limit_arenas(int arenas);
/// Makes the C allocator map every block of at least `bytes` on its own and unmap it when freed
/// (glibc's M_MMAP_THRESHOLD, fixed: by default it rises to the largest block freed, up to 32 MB,
/// and later big blocks come from the heap, where what is freed between live ones stays
/// resident). Returns 1 when set.
int bk_heap_map_large(int bytes);
/// Whether a block of `bytes` is mapped on its own (allocated, looked at, freed): 1 yes, 0 no
/// (from the heap), -1 when that cannot be told (not glibc, or no memory).
int bk_heap_maps_block(unsigned long bytes);
#endif
