#ifndef IPX_ALLOCATOR_H
#define IPX_ALLOCATOR_H

#include <stddef.h>

/* The process's allocator: "jemalloc <version>" when jemalloc serves malloc (it is linked into the
   executable), otherwise "glibc". */
const char *ipx_allocator_name(void);

/* Bytes of physically resident pages jemalloc holds (stats.resident, refreshed by this call);
   0 when jemalloc is not the allocator. */
size_t ipx_allocator_resident_bytes(void);

/* Bytes jemalloc has handed out and not had back (stats.allocated); 0 when jemalloc is not the allocator. */
size_t ipx_allocator_allocated_bytes(void);

#endif
