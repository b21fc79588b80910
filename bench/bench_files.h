/* What the C harnesses share (bench/jpeg_dc, bench/png_decode, Tests/CKernels/kernels_golden.c): a file read
 * whole, and a clock. */
#ifndef BENCH_FILES_H
#define BENCH_FILES_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* The bytes of `path` in a new block (the caller frees it) and their count; NULL when it cannot be read. */
static inline unsigned char *bench_read_file(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *bytes = size > 0 ? malloc((size_t)size) : NULL;
    if (bytes && fread(bytes, 1, (size_t)size, file) != (size_t)size) {
        free(bytes);
        bytes = NULL;
    }
    fclose(file);
    *length = bytes ? (size_t)size : 0;
    return bytes;
}
#endif
