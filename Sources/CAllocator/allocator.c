/* The executable's allocator: jemalloc (linked in by this target), as imgproxy's images use. libvips
   allocates and frees image-sized buffers on several threads at a high rate; glibc's malloc keeps such
   memory in per-thread arenas and fragments it between the long-lived entries of the memory tier, so
   resident memory drifts far above what is live. jemalloc sizes its arenas by class, returns unused
   pages on a timer (a background thread, no locks taken by requests), and gives each thread a cache
   (no arena lock per allocation on the event loops).

   Its settings are embedded here (MALLOC_CONF in the environment still overrides any of them):
   - background_thread:true   purging happens on jemalloc's own thread, not in a request's malloc/free;
   - dirty_decay_ms:1000      freed pages go back to the kernel within about a second instead of the
                              default 10 s, so a burst of transforms does not leave its buffers resident;
   - muzzy_decay_ms:0         no second, lazily-freed (MADV_FREE) stage: RSS shows what is really held;
   - narenas:4                four arenas for the process's few busy threads (the default, 4 per core,
                              spreads the same load over more partly-used arenas). */
#include "allocator.h"

#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:4";

/* Whether malloc itself is jemalloc's (a library loaded ahead of it could have taken the symbol):
   this thread's allocation counter must grow by a malloc. */
static int ipx_jemalloc_serves_malloc(void) {
    uint64_t before = 0, after = 0;
    size_t size = sizeof(before);
    if (mallctl("thread.allocated", &before, &size, NULL, 0) != 0) return 0;
    void *volatile probe = malloc(4096);
    size = sizeof(after);
    int known = mallctl("thread.allocated", &after, &size, NULL, 0) == 0;
    free(probe);
    return known && after >= before + 4096;
}

const char *ipx_allocator_name(void) {
    static char name[64];
    if (name[0] == 0) {
        const char *version = NULL;
        size_t size = sizeof(version);
        if (ipx_jemalloc_serves_malloc() && mallctl("version", &version, &size, NULL, 0) == 0 && version != NULL) {
            snprintf(name, sizeof(name), "jemalloc %.*s", (int)strcspn(version, "-"), version);
        } else {
            snprintf(name, sizeof(name), "glibc");
        }
    }
    return name;
}

static size_t ipx_jemalloc_stat(const char *name) {
    uint64_t epoch = 1;
    size_t epoch_size = sizeof(epoch);
    if (mallctl("epoch", &epoch, &epoch_size, &epoch, epoch_size) != 0) return 0;
    size_t value = 0;
    size_t size = sizeof(value);
    if (mallctl(name, &value, &size, NULL, 0) != 0) return 0;
    return value;
}

size_t ipx_allocator_resident_bytes(void) { return ipx_jemalloc_stat("stats.resident"); }

size_t ipx_allocator_allocated_bytes(void) { return ipx_jemalloc_stat("stats.allocated"); }
