/* Stress for #19's libvips crashes: threads that each build, evaluate and drop libvips' vectorised
 * reduces in a loop, as two transform threads do under load. Every reducev libvips builds compiles an orc
 * program and frees it with the operation, so the threads compile and free programs at the same time all
 * the time: liborc up to 0.4.33 (Debian 12's) races there and corrupts the heap. Built without
 * orc_serialized.c, this program dies within seconds (a segfault, glibc's malloc checks, or libvips'
 * `vips_object_dispose_argument` assertion on an object whose memory the race reused); built with it, as
 * the service is, it runs clean. scripts/check-orc-race.sh builds and runs both.
 *
 * Usage: orc_race THREADS SECONDS. Exits 0 after SECONDS with the operations done on stdout. */
#include <vips/vips.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef ORC_RACE_SERIALIZED
long ipx_orc_serialized_calls(void);
#endif

static atomic_long operations;
static atomic_int failures;

/* One chain the way a transform builds one: a vertical reduce (an orc program), a horizontal one, a
 * linear step, all evaluated into memory and dropped. */
static int reduce_once(VipsImage *source, double factor) {
    VipsImage *vertical = NULL, *horizontal = NULL, *output = NULL;
    int failed = vips_reducev(source, &vertical, factor, NULL)
        || vips_reduceh(vertical, &horizontal, factor, NULL)
        || vips_linear1(horizontal, &output, 1.01, 0.5, "uchar", TRUE, NULL);
    if (!failed) {
        size_t length = 0;
        void *pixels = vips_image_write_to_memory(output, &length);
        failed = pixels == NULL;
        g_free(pixels);
    }
    if (vertical) g_object_unref(vertical);
    if (horizontal) g_object_unref(horizontal);
    if (output) g_object_unref(output);
    return failed;
}

static void *worker(void *argument) {
    VipsImage *source = argument;
    unsigned seed = (unsigned)(size_t)pthread_self();
    for (;;) {
        /* A different factor each time: libvips builds (and compiles) a new reduce for each. */
        double factor = 1.1 + (double)(rand_r(&seed) % 1000) / 250.0;
        if (reduce_once(source, factor)) {
            atomic_fetch_add(&failures, 1);
            vips_error_clear();
        }
        atomic_fetch_add(&operations, 1);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3 || VIPS_INIT(argv[0])) {
        fprintf(stderr, "usage: orc_race THREADS SECONDS\n");
        return 2;
    }
    int threads = atoi(argv[1]);
    int seconds = atoi(argv[2]);
    if (threads < 1 || threads > 64 || seconds < 1) {
        fprintf(stderr, "orc_race: THREADS 1-64, SECONDS at least 1\n");
        return 2;
    }
    /* Each operation built anew: libvips' operation cache would hand back a compiled reduce. */
    vips_cache_set_max(0);
    VipsImage *black = NULL, *bytes = NULL;
    if (vips_black(&black, 64, 256, "bands", 3, NULL) || vips_cast_uchar(black, &bytes, NULL)) {
        fprintf(stderr, "orc_race: %s\n", vips_error_buffer());
        return 2;
    }
    VipsImage *source = vips_image_copy_memory(bytes);
    pthread_t workers[64];
    for (int index = 0; index < threads; index++) pthread_create(&workers[index], NULL, worker, source);
    sleep((unsigned)seconds);
    long done = atomic_load(&operations);
    int failed = atomic_load(&failures);
#ifdef ORC_RACE_SERIALIZED
    printf("operations %ld failures %d serialized-calls %ld\n", done, failed, ipx_orc_serialized_calls());
    /* The lock must have been in the path: libvips' compiles went through the process's definitions. */
    if (ipx_orc_serialized_calls() == 0) { fprintf(stderr, "orc_race: libvips did not call through orc_serialized.c\n"); _exit(3); }
#else
    printf("operations %ld failures %d\n", done, failed);
#endif
    fflush(stdout);
    _exit(failed ? 4 : 0);
}
