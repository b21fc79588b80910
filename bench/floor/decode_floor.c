/* CPU per baseline JPEG, one thread, no HTTP: what a 300 px thumbnail costs at its floor.
 *
 * For each file: (1) libjpeg's own scaled decode at the draft scale (the largest 1/8..1/1 whose image
 * still covers 300 px wide; Pillow's draft mode, thumbor's path), which is the Huffman decode every
 * implementation pays; (2) the libvips calls ImageProxy makes for it (jpegload at the shrink its rule
 * picks, thumbnail_image forced to the exact size, jpegsave q80 with optimised Huffman tables); (3) the
 * same at the draft scale. Times are process CPU (CLOCK_PROCESS_CPUTIME_ID), mean of REPS runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jpeglib.h>
#include <vips/vips.h>

#define WIDTH 300
#define REPS 10

static double cpu_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

/* The draft scale: the largest shrink (8, 4, 2) whose image is still at least `margin` x WIDTH wide. */
static int shrink_for(int width, double margin) {
    for (int shrink = 8; shrink > 1; shrink /= 2)
        if (width / (double)shrink >= WIDTH * margin) return shrink;
    return 1;
}

static double libjpeg_decode(const unsigned char *bytes, size_t length, int shrink) {
    double start = cpu_ms();
    for (int rep = 0; rep < REPS; rep++) {
        struct jpeg_decompress_struct info;
        struct jpeg_error_mgr errors;
        info.err = jpeg_std_error(&errors);
        jpeg_create_decompress(&info);
        jpeg_mem_src(&info, bytes, length);
        jpeg_read_header(&info, TRUE);
        info.scale_num = 1;
        info.scale_denom = shrink;
        info.out_color_space = JCS_RGB;
        jpeg_start_decompress(&info);
        size_t stride = (size_t)info.output_width * 3;
        unsigned char *pixels = malloc(stride * info.output_height);
        while (info.output_scanline < info.output_height) {
            JSAMPROW row = pixels + stride * info.output_scanline;
            jpeg_read_scanlines(&info, &row, 1);
        }
        jpeg_finish_decompress(&info);
        jpeg_destroy_decompress(&info);
        free(pixels);
    }
    return (cpu_ms() - start) / REPS;
}

static double served_calls(const unsigned char *bytes, size_t length, int shrink) {
    double start = cpu_ms();
    for (int rep = 0; rep < REPS; rep++) {
        VipsImage *loaded, *resized;
        if (vips_jpegload_buffer((void *)bytes, length, &loaded, "shrink", shrink, "access", VIPS_ACCESS_SEQUENTIAL, NULL))
            return -1;
        int height = (int)(vips_image_get_height(loaded) * (double)WIDTH / vips_image_get_width(loaded) + 0.5);
        vips_thumbnail_image(loaded, &resized, WIDTH, "height", height, "size", VIPS_SIZE_FORCE, NULL);
        g_object_unref(loaded);
        void *output;
        size_t output_length;
        vips_jpegsave_buffer(resized, &output, &output_length, "Q", 80, "optimize_coding", TRUE, "strip", TRUE, NULL);
        g_free(output);
        g_object_unref(resized);
    }
    return (cpu_ms() - start) / REPS;
}

int main(int argc, char **argv) {
    if (VIPS_INIT(argv[0])) return 1;
    vips_concurrency_set(1);
    vips_cache_set_max(0);
    double sums[3] = {0};
    printf("| file | size | draft scale / ours | libjpeg decode at draft ms | ImageProxy's libvips calls ms | same at draft scale ms |\n");
    printf("|---|---|---|---|---|---|\n");
    for (int i = 1; i < argc; i++) {
        FILE *file = fopen(argv[i], "rb");
        if (!file) continue;
        fseek(file, 0, SEEK_END);
        long length = ftell(file);
        rewind(file);
        unsigned char *bytes = malloc(length);
        if (fread(bytes, 1, length, file) != (size_t)length) { fclose(file); free(bytes); continue; }
        fclose(file);
        VipsImage *header = vips_image_new_from_buffer(bytes, length, "", NULL);
        int width = vips_image_get_width(header), height = vips_image_get_height(header);
        g_object_unref(header);
        int draft = shrink_for(width, 1.0), ours = shrink_for(width, 1.25);
        double floor = libjpeg_decode(bytes, length, draft);
        double as_served = served_calls(bytes, length, ours);
        double at_draft = served_calls(bytes, length, draft);
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        printf("| %s | %dx%d | 1/%d / 1/%d | %.2f | %.2f | %.2f |\n", name, width, height, draft, ours, floor, as_served, at_draft);
        sums[0] += floor; sums[1] += as_served; sums[2] += at_draft;
        free(bytes);
    }
    int count = argc - 1;
    if (count > 0) printf("| **mean** | | | **%.2f** | **%.2f** | **%.2f** |\n", sums[0] / count, sums[1] / count, sums[2] / count);
    return 0;
}
