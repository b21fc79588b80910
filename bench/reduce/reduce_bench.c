/* The one-pass Lanczos3 reduce of Sources/CVipsShim/reduce/reduce_across.c on its own: a 2560x1440 3-band noise
 * image reduced by 1.33, 2.37 and 4 (the srcset's 1920, 1080 and 640 px from a kept 1/2 decode of a
 * 5120x2880 file), one thread, best of 7, and a checksum of the output (equal checksums: the same bytes).
 * Built by run.sh, which includes the file under test (REDUCE_C) so that its static functions are
 * reachable. */
#include REDUCE_C
#include <stdio.h>
#include <time.h>

static double seconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

int main(void) {
    const int width = 2560, height = 1440, bands = 3;
    const double shrinks[] = {1.33, 2.37, 4.0};
    VipsPel *image = malloc((size_t)width * height * bands);
    if (!image) return 1;
    unsigned seed = 1;
    for (size_t i = 0; i < (size_t)width * height * bands; i++) {
        seed = seed * 1103515245u + 12345u;
        image[i] = (VipsPel)(seed >> 16);
    }
    unsigned long long checksum = 0;
    for (int s = 0; s < 3; s++) {
        struct ipx_down_across reduce;
        if (ipx_down_across_make(&reduce, width, height, bands, shrinks[s], shrinks[s])) return 1;
        size_t line = (size_t)reduce.across.width * bands;
        VipsPel *out = malloc(line * (size_t)reduce.down.width);
        if (!out) return 1;
        struct ipx_down_rows rows = {image, (size_t)width * bands, width, height, 0};
        double best = 1e9;
        for (int round = 0; round < 7; round++) {
            double start = seconds_now();
            for (int y = 0; y < reduce.down.width; y++) {
                ipx_down_across_row(&reduce.across, &reduce.down, y, &rows, bands, reduce.sums, reduce.row, out + line * (size_t)y);
            }
            double spent = seconds_now() - start;
            if (spent < best) best = spent;
        }
        for (size_t i = 0; i < line * (size_t)reduce.down.width; i++) checksum = checksum * 31 + out[i];
        printf("reduce by %.2f to %dx%d: %.2f ms\n", shrinks[s], reduce.across.width, reduce.down.width, best * 1000);
        free(out);
        ipx_down_across_free(&reduce);
    }
    printf("checksum %llx\n", checksum);
    free(image);
    return 0;
}
