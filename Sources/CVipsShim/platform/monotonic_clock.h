#ifndef IPX_MONOTONIC_CLOCK_H
#define IPX_MONOTONIC_CLOCK_H
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds: the clock of every deadline the shim's decoders and encoders check
   (TransformDeadline's monotonicNanoseconds on the Swift side). */
static inline long long ipx_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

#endif
