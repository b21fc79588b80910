#include "vips_shim.h"
#include "../platform/monotonic_clock.h"
#include "../platform/platform.h"
#include <math.h>
#include <stdlib.h>

/* A Lanczos3 reduce across (horizontally) of an 8-bit image, on the calling thread, with libvips'
 * geometry (reduceh: the output width rounded to nearest, the pixels invented or dropped shared equally
 * by both edges, the edges extended by copying).
 *
 * libvips 8.14 reduces down with an orc vector program but across with a scalar loop over each output
 * sample's taps: on this machine its reduceh of a 3840x2160 photograph by 2 costs ~80 ms, ten times its
 * reducev (bench/RESULTS.md, 2026-11-26 (WebP decoded once into memory)). Here each row is widened once to four floats a pixel (one SIMD
 * register) and every output pixel is a weighted sum of those vectors, with the weights of each output
 * column computed once for the image (exactly at its position; libvips rounds the position to 1/64 of a
 * pixel and its weights to 12 bits, so the two differ by a level here and there).
 *
 * The input is read in strips through a region on this thread: when it is a lazy pipeline (a reduce
 * down), that pipeline runs here too, strip by strip, and no intermediate image is held whole. */

typedef float ipx_v4f __attribute__((vector_size(16)));

/* Rows asked of the input at a time. */
#define IPX_ACROSS_STRIP 16

static double ipx_lanczos3(double x) {
    if (x == 0.0) return 1.0;
    if (x <= -3.0 || x >= 3.0) return 0.0;
    double px = M_PI * x;
    return 3.0 * sin(px) * sin(px / 3.0) / (px * px);
}

/* The taps of every output column: the first input column each reads (may be < 0 or run past the right
 * edge: the row is padded), and `taps` normalised weights each (0 past a column's own support), each
 * weight repeated in the four lanes of a vector so that the inner loop only loads and multiplies. The
 * taps are the input columns strictly inside the kernel's support (|x| < 3 output pixels), at most
 * ceil(6 x shrink): the column at floor(centre - support) and the one ceil(6 x shrink) + 1 further on lie
 * at |x| >= 3, where Lanczos3 is exactly 0, and are not visited. */
struct ipx_across_plan {
    int width;
    int taps;
    int pad;
    int *first;
    ipx_v4f *weights;
};

static void ipx_across_plan_free(struct ipx_across_plan *plan) {
    free(plan->first);
    free(plan->weights);
}

int ipx_reduced_side(int in_side, double shrink) {
    int side = (int)((double)in_side / shrink + 0.5);
    return side < 1 ? 1 : side;
}

static int ipx_across_plan_make(struct ipx_across_plan *plan, int in_width, double shrink) {
    int width = ipx_reduced_side(in_width, shrink);
    double extra = (double)width * shrink - (double)in_width;
    double support = 3.0 * shrink;
    int taps = (int)ceil(2.0 * support);
    plan->width = width;
    plan->taps = taps;
    plan->pad = taps + 1;
    plan->first = malloc(sizeof(int) * (size_t)width);
    plan->weights = aligned_alloc(sizeof(ipx_v4f), sizeof(ipx_v4f) * (size_t)width * (size_t)taps);
    /* Each tap's kernel value, evaluated once (two sines) and then divided by the column's sum. */
    double *values = malloc(sizeof(double) * (size_t)taps);
    if (!plan->first || !plan->weights || !values) {
        free(values);
        ipx_across_plan_free(plan);
        return -1;
    }
    for (int x = 0; x < width; x++) {
        /* The output pixel's centre in input pixel coordinates. */
        double centre = ((double)x + 0.5) * shrink - 0.5 - extra / 2.0;
        int first = (int)floor(centre - support) + 1;
        double sum = 0.0;
        for (int k = 0; k < taps; k++) {
            values[k] = ipx_lanczos3(((double)(first + k) - centre) / shrink);
            sum += values[k];
        }
        ipx_v4f *weights = plan->weights + (size_t)x * (size_t)taps;
        for (int k = 0; k < taps; k++) {
            float weight = (float)(values[k] / sum);
            weights[k] = (ipx_v4f){weight, weight, weight, weight};
        }
        plan->first[x] = first;
    }
    free(values);
    return 0;
}

/* Pixel `x` of a row of `bands` samples (uchar or float) as four floats, the unused lanes 0. */
#define IPX_WIDEN_PIXEL(p, x, bands)                                                                    \
    ((bands) == 3   ? (ipx_v4f){(float)(p)[3 * (x)], (float)(p)[3 * (x) + 1], (float)(p)[3 * (x) + 2], 0}  \
     : (bands) == 1 ? (ipx_v4f){(float)(p)[x], 0, 0, 0}                                                   \
     : (bands) == 4 ? (ipx_v4f){(float)(p)[4 * (x)], (float)(p)[4 * (x) + 1], (float)(p)[4 * (x) + 2],    \
                                (float)(p)[4 * (x) + 3]}                                                   \
                    : (ipx_v4f){(float)(p)[2 * (x)], (float)(p)[2 * (x) + 1], 0, 0})

/* A row widened to four floats a pixel, `pad` copies of the edge pixels on each side: the edges, then
 * the inside in a loop per band count, so that each pixel is one vector built without a branch. */
#define IPX_WIDEN_ROW(row, p, width, bands, pad)                                                        \
    do {                                                                                                \
        ipx_v4f first = IPX_WIDEN_PIXEL(p, 0, bands), last = IPX_WIDEN_PIXEL(p, (width) - 1, bands);    \
        for (int x = 0; x < (pad); x++) {                                                               \
            (row)[x] = first;                                                                           \
            (row)[(pad) + (width) + x] = last;                                                          \
        }                                                                                               \
        ipx_v4f *inside = (row) + (pad);                                                                \
        switch (bands) {                                                                                \
        case 3: for (int x = 0; x < (width); x++) inside[x] = IPX_WIDEN_PIXEL(p, x, 3); break;          \
        case 1: for (int x = 0; x < (width); x++) inside[x] = IPX_WIDEN_PIXEL(p, x, 1); break;          \
        case 4: for (int x = 0; x < (width); x++) inside[x] = IPX_WIDEN_PIXEL(p, x, 4); break;          \
        default: for (int x = 0; x < (width); x++) inside[x] = IPX_WIDEN_PIXEL(p, x, 2); break;         \
        }                                                                                               \
    } while (0)

/* One input row widened to four floats a pixel, `pad` copies of the edge pixels on each side. */
static void ipx_across_widen(ipx_v4f *row, const VipsPel *pixels, int width, int bands, int pad) {
    IPX_WIDEN_ROW(row, pixels, width, bands, pad);
}

typedef int ipx_v4i __attribute__((vector_size(16)));

/* The four sums of a pixel as 8-bit levels: rounded to nearest (+0.5, then truncated) and clamped to
 * 0...255, in vector operations instead of a branch a sample. */
static inline ipx_v4i ipx_across_levels(ipx_v4f sum) {
    const ipx_v4f zero = {0, 0, 0, 0}, top = {255, 255, 255, 255}, half = {0.5f, 0.5f, 0.5f, 0.5f};
    ipx_v4f value = sum + half;
#if defined(__clang__)
    value = __builtin_elementwise_min(__builtin_elementwise_max(value, zero), top);
#else
    /* GCC has no elementwise min/max: the same clamp by masks (no NaN reaches here, so the same values). */
    ipx_v4i above = value > zero, below = value < top;
    value = (ipx_v4f)(((ipx_v4i)value & above) | ((ipx_v4i)zero & ~above));
    value = (ipx_v4f)(((ipx_v4i)value & below) | ((ipx_v4i)top & ~below));
#endif
    return __builtin_convertvector(value, ipx_v4i);
}

typedef float ipx_v8f __attribute__((vector_size(32)));
typedef unsigned char ipx_v4u8 __attribute__((vector_size(4)));

/* Writes the four sums of a pixel as `bands` 8-bit samples. */
static inline void ipx_across_store(ipx_v4f sum, VipsPel *q, int bands) {
    ipx_v4u8 level = __builtin_convertvector(ipx_across_levels(sum), ipx_v4u8);
    switch (bands) {
    case 4: __builtin_memcpy(q, &level, 4); break;
    case 3: __builtin_memcpy(q, &level, 2); q[2] = level[2]; break;
    case 2: __builtin_memcpy(q, &level, 2); break;
    default: q[0] = level[0];
    }
}

/* Output pixels in pairs, each pair's two vectors of four lanes side by side in one of eight (one AVX
   register where the CPU has it): every lane sees the same multiplications and additions in the same
   order as one pixel alone, so the bytes are the same with or without AVX2 (which halves the vector
   operations; with the cheaper store, a reduce by 1.33-4 costs 5-19% less, bench/RESULTS.md 2026-11-27 (a faster one-pass reduce)).
   Two sums a pixel, so that each addition does not wait for the one before; the first tap goes to `odd`
   (it used to follow a tap of weight 0 at the front), so every sample is the same as before the taps of
   weight 0 were left out. */
IPX_CLONES_AVX2
static void ipx_across_row(const struct ipx_across_plan *plan, const ipx_v4f *row, VipsPel *out, int bands) {
    const int taps = plan->taps;
    int x = 0;
    for (; x + 1 < plan->width; x += 2) {
        const ipx_v4f *p = row + plan->first[x] + plan->pad, *r = row + plan->first[x + 1] + plan->pad;
        const ipx_v4f *w = plan->weights + (size_t)x * (size_t)taps, *v = w + taps;
        ipx_v8f even = {0}, odd = {0};
        int k = 0;
        for (; k + 1 < taps; k += 2) {
            odd += __builtin_shufflevector(p[k], r[k], 0, 1, 2, 3, 4, 5, 6, 7)
                * __builtin_shufflevector(w[k], v[k], 0, 1, 2, 3, 4, 5, 6, 7);
            even += __builtin_shufflevector(p[k + 1], r[k + 1], 0, 1, 2, 3, 4, 5, 6, 7)
                * __builtin_shufflevector(w[k + 1], v[k + 1], 0, 1, 2, 3, 4, 5, 6, 7);
        }
        if (k < taps) {
            odd += __builtin_shufflevector(p[k], r[k], 0, 1, 2, 3, 4, 5, 6, 7)
                * __builtin_shufflevector(w[k], v[k], 0, 1, 2, 3, 4, 5, 6, 7);
        }
        ipx_v8f sum = even + odd;
        ipx_across_store(__builtin_shufflevector(sum, sum, 0, 1, 2, 3), out + (size_t)x * (size_t)bands, bands);
        ipx_across_store(__builtin_shufflevector(sum, sum, 4, 5, 6, 7), out + (size_t)(x + 1) * (size_t)bands, bands);
    }
    for (; x < plan->width; x++) {
        const ipx_v4f *p = row + plan->first[x] + plan->pad;
        const ipx_v4f *w = plan->weights + (size_t)x * (size_t)taps;
        ipx_v4f even = {0, 0, 0, 0}, odd = {0, 0, 0, 0};
        int k = 0;
        for (; k + 1 < taps; k += 2) {
            odd += p[k] * w[k];
            even += p[k + 1] * w[k + 1];
        }
        if (k < taps) odd += p[k] * w[k];
        ipx_across_store(even + odd, out + (size_t)x * (size_t)bands, bands);
    }
}

int ipx_reduce_across_lanczos3(VipsImage *in, VipsImage **out, double shrink) {
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || in->Bands < 1 || in->Bands > 4 ||
        !(shrink >= 1.0) || shrink > 1000.0 || in->Xsize < 1 || in->Ysize < 1) {
        return 1;
    }
    const int bands = in->Bands, in_width = in->Xsize, height = in->Ysize;
    struct ipx_across_plan plan = {0};
    if (ipx_across_plan_make(&plan, in_width, shrink)) return -1;
    ipx_v4f *row = aligned_alloc(16, sizeof(ipx_v4f) * ((size_t)in_width + 2 * (size_t)plan.pad));
    /* Its own memory (in huge pages when large, mapped_pixels.c), then the input's fields and metadata
       (profile, orientation) with the new width. */
    VipsImage *image = ipx_pixel_image(plan.width, height, bands, in->Type);
    VipsRegion *region = row && image ? vips_region_new(in) : NULL;
    int status = region ? 0 : -1;
    if (status == 0) {
        status = vips_image_pipelinev(image, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL);
        image->Xsize = plan.width;
    }
    for (int top = 0; status == 0 && top < height; top += IPX_ACROSS_STRIP) {
        VipsRect strip = {0, top, in_width, height - top < IPX_ACROSS_STRIP ? height - top : IPX_ACROSS_STRIP};
        if (vips_region_prepare(region, &strip)) {
            status = -1;
            break;
        }
        for (int y = top; y < top + strip.height; y++) {
            ipx_across_widen(row, VIPS_REGION_ADDR(region, 0, y), in_width, bands, plan.pad);
            ipx_across_row(&plan, row, VIPS_IMAGE_ADDR(image, 0, y), bands);
        }
    }
    if (region) g_object_unref(region);
    free(row);
    ipx_across_plan_free(&plan);
    if (status) {
        if (image) g_object_unref(image);
        return -1;
    }
    *out = image;
    return 0;
}

/* The reduce down of an image in memory, summed in floats and handed to the reduce across without
 * rounding between them: for each output row, the input rows under its taps are summed into one row of
 * samples (extended at the top and bottom edges by copying, as libvips' reducev does), which is widened
 * and reduced across as above. libvips' reducev compiles an orc program for every image it reduces
 * (~0.1 ms of code generation on a 300 px miss, bench/RESULTS.md 2026-11-26 (the fixed cost of a miss)) and runs as a lazy
 * pipeline with regions; here there is one loop, vectorised by the compiler for AVX2 where the CPU has it. */

typedef unsigned char ipx_v8u8 __attribute__((vector_size(8)));

/* Input rows a pass of the reduce down sums at once: more rows read side by side than 8 cost more (a
 * reduce by 4, 24 taps, ran 5% slower in one pass) than the loads and stores of the sums they save. */
#define IPX_DOWN_MAX_PASS 8

/* Up to IPX_DOWN_MAX_PASS input rows under one output row's taps, weighted and summed sample by sample
 * into `sums` (started at 0 on the first pass): each sample's sum is built in a register, tap after tap
 * in their order, and stored once a pass. The same additions in the same order as adding the rows one at
 * a time into `sums`, so the same bytes, without a load and a store of every sum for every tap. */
IPX_CLONES_AVX2
static void ipx_down_sum(float *restrict sums, const VipsPel *const *restrict rows, const float *restrict weights, int taps,
                         int samples, int first_pass) {
    int i = 0;
    for (; i + 8 <= samples; i += 8) {
        ipx_v8f sum;
        if (first_pass) {
            sum = (ipx_v8f){0};
        } else {
            __builtin_memcpy(&sum, sums + i, sizeof sum);
        }
        for (int k = 0; k < taps; k++) {
            ipx_v8u8 bytes;
            __builtin_memcpy(&bytes, rows[k] + i, sizeof bytes);
            sum += weights[k] * __builtin_convertvector(bytes, ipx_v8f);
        }
        __builtin_memcpy(sums + i, &sum, sizeof sum);
    }
    for (; i < samples; i++) {
        float sum = first_pass ? 0.0f : sums[i];
        for (int k = 0; k < taps; k++) sum += weights[k] * (float)rows[k][i];
        sums[i] = sum;
    }
}

/* One row of summed samples widened to four floats a pixel, `pad` copies of the edge pixels on each side. */
static void ipx_across_widen_sums(ipx_v4f *row, const float *sums, int width, int bands, int pad) {
    IPX_WIDEN_ROW(row, sums, width, bands, pad);
}

/* Where the input rows of a reduce down are: every row of an image in memory, or the last `ring` rows
 * that a decoder wrote into a ring of that many (row r in slot r % ring). Rows above the top and below the
 * bottom are the edge rows, as libvips' reducev extends them. */
struct ipx_down_rows {
    const VipsPel *base;
    size_t stride;
    int width;
    int height;
    int ring; /* 0: all rows in memory */
};

static inline const VipsPel *ipx_down_row(const struct ipx_down_rows *rows, int row) {
    row = row < 0 ? 0 : row >= rows->height ? rows->height - 1 : row;
    return rows->base + (size_t)(rows->ring ? row % rows->ring : row) * rows->stride;
}

/* Output row `y` of a reduce down and across: the input rows under its taps summed into `sums`, widened
 * into `row` and reduced across into `out`. The same arithmetic in the same order whatever holds the rows,
 * so an image reduced in memory and one reduced as it is decoded are the same bytes. */
static void ipx_down_across_row(const struct ipx_across_plan *across, const struct ipx_across_plan *down, int y,
                                const struct ipx_down_rows *rows, int bands, float *sums, ipx_v4f *row, VipsPel *out) {
    const int in_width = rows->width, samples = in_width * bands;
    const ipx_v4f *weights = down->weights + (size_t)y * (size_t)down->taps;
    const VipsPel *pass_rows[IPX_DOWN_MAX_PASS];
    float pass_weights[IPX_DOWN_MAX_PASS];
    int in_pass = 0, first_pass = 1;
    for (int k = 0; k < down->taps; k++) {
        float weight = weights[k][0];
        if (weight == 0.0f) continue;
        pass_rows[in_pass] = ipx_down_row(rows, down->first[y] + k);
        pass_weights[in_pass++] = weight;
        if (in_pass == IPX_DOWN_MAX_PASS) {
            ipx_down_sum(sums, pass_rows, pass_weights, in_pass, samples, first_pass);
            in_pass = 0;
            first_pass = 0;
        }
    }
    if (in_pass > 0 || first_pass) ipx_down_sum(sums, pass_rows, pass_weights, in_pass, samples, first_pass);
    ipx_across_widen_sums(row, sums, in_width, bands, across->pad);
    ipx_across_row(across, row, out, bands);
}

/* The plans and work rows of a reduce down and across from `in_width` x `in_height`. */
struct ipx_down_across {
    struct ipx_across_plan across, down;
    float *sums;
    ipx_v4f *row;
};

static void ipx_down_across_free(struct ipx_down_across *reduce) {
    free(reduce->sums);
    free(reduce->row);
    ipx_across_plan_free(&reduce->across);
    ipx_across_plan_free(&reduce->down);
}

static int ipx_down_across_make(struct ipx_down_across *reduce, int in_width, int in_height, int bands, double hshrink,
                                double vshrink) {
    *reduce = (struct ipx_down_across){0};
    if (ipx_across_plan_make(&reduce->across, in_width, hshrink)) return -1;
    if (ipx_across_plan_make(&reduce->down, in_height, vshrink)) {
        ipx_across_plan_free(&reduce->across);
        return -1;
    }
    reduce->sums = malloc(sizeof(float) * (size_t)in_width * (size_t)bands);
    reduce->row = aligned_alloc(16, sizeof(ipx_v4f) * ((size_t)in_width + 2 * (size_t)reduce->across.pad));
    if (!reduce->sums || !reduce->row) {
        ipx_down_across_free(reduce);
        return -1;
    }
    return 0;
}

static int ipx_down_across_takes(int bands, int in_width, int in_height, double hshrink, double vshrink) {
    return bands >= 1 && bands <= 4 && hshrink > 1.0 && vshrink > 1.0 && hshrink <= 1000.0 && vshrink <= 1000.0 &&
           in_width >= 1 && in_height >= 1;
}

int ipx_reduce_lanczos3_in_memory(VipsImage *in, VipsImage **out, double hshrink, double vshrink) {
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || !in->data ||
        !ipx_down_across_takes(in->Bands, in->Xsize, in->Ysize, hshrink, vshrink)) {
        return 1;
    }
    const int bands = in->Bands;
    struct ipx_down_across reduce;
    if (ipx_down_across_make(&reduce, in->Xsize, in->Ysize, bands, hshrink, vshrink)) return -1;
    VipsImage *image = ipx_pixel_image(reduce.across.width, reduce.down.width, bands, in->Type);
    int status = image ? 0 : -1;
    if (status == 0) {
        /* The input's fields and metadata (profile, orientation), then the output's size. */
        status = vips_image_pipelinev(image, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL);
        image->Xsize = reduce.across.width;
        image->Ysize = reduce.down.width;
    }
    struct ipx_down_rows rows = {VIPS_IMAGE_ADDR(in, 0, 0), VIPS_IMAGE_SIZEOF_LINE(in), in->Xsize, in->Ysize, 0};
    for (int y = 0; status == 0 && y < reduce.down.width; y++) {
        ipx_down_across_row(&reduce.across, &reduce.down, y, &rows, bands, reduce.sums, reduce.row, VIPS_IMAGE_ADDR(image, 0, y));
    }
    ipx_down_across_free(&reduce);
    if (status) {
        if (image) g_object_unref(image);
        return -1;
    }
    *out = image;
    return 0;
}

/* The reduce of ipx_reduce_lanczos3_in_memory encoded as a JPEG row by row (jpeg_encode.c's writer): each
 * output row goes to libjpeg as soon as it is made, into one row of memory, and the reduced image is never
 * held (3 bytes an output pixel less, none of it freshly mapped and faulted in). The same rows as the
 * reduce's image, so the same bytes as encoding that image. */
int ipx_jpeg_encode_reduced(VipsImage *in, double hshrink, double vshrink, int quality, int interlace, long long deadline_ns,
                            void **out, size_t *length, int *width, int *height) {
    *out = NULL;
    *length = 0;
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || !in->data || in->Bands != 3 ||
        in->Type != VIPS_INTERPRETATION_sRGB || !ipx_down_across_takes(in->Bands, in->Xsize, in->Ysize, hshrink, vshrink)) {
        return 1;
    }
    struct ipx_down_across reduce;
    if (ipx_down_across_make(&reduce, in->Xsize, in->Ysize, 3, hshrink, vshrink)) return -1;
    const int out_width = reduce.across.width, out_height = reduce.down.width;
    ipx_jpeg_writer *writer = ipx_jpeg_writer_new(out_width, out_height, 3, quality, interlace);
    VipsPel *row = writer ? malloc((size_t)out_width * 3) : NULL;
    int status = row ? 0 : -1;
    struct ipx_down_rows rows = {VIPS_IMAGE_ADDR(in, 0, 0), VIPS_IMAGE_SIZEOF_LINE(in), in->Xsize, in->Ysize, 0};
    for (int y = 0; status == 0 && y < out_height; y++) {
        if (deadline_ns > 0 && (y & 15) == 0 && ipx_monotonic_ns() > deadline_ns) {
            status = 2;
            break;
        }
        ipx_down_across_row(&reduce.across, &reduce.down, y, &rows, 3, reduce.sums, reduce.row, row);
        if (ipx_jpeg_writer_write(writer, row)) status = -1;
    }
    if (status == 0 && ipx_jpeg_writer_finish(writer, out, length)) status = -1;
    free(row);
    ipx_jpeg_writer_free(writer);
    ipx_down_across_free(&reduce);
    if (status == 0) {
        *width = out_width;
        *height = out_height;
    }
    return status;
}

/* A reduce down and across fed one input row at a time (a decoder's scanlines): the rows wait in a ring of
 * as many rows as one output row's taps span, in this thread's reused buffer (thread_buffer.c), and each
 * output row is made as soon as the last input row under its taps has arrived. The taps' first rows only
 * move down, so a row is overwritten only once no output row left needs it. The whole input is never
 * held: for a 5120x2880 photograph reduced to 3840 px, 8 rows (0.3 MiB) instead of 44 MiB. */
struct ipx_reduce_stream {
    struct ipx_down_across reduce;
    struct ipx_down_rows rows;
    unsigned char *ring;
    ipx_thread_buffer *lease;
    int owns_ring;
    int bands;
    int rows_in;  /* input rows written so far */
    int rows_out; /* output rows made so far */
    VipsImage *image;
    /* Or, instead of the image: each output row made into `out_row` and handed to `writer` (not owned). */
    ipx_jpeg_writer *writer;
    VipsPel *out_row;
    int failed;
};

static ipx_reduce_stream *ipx_reduce_stream_make(int in_width, int in_height, int bands, double hshrink, double vshrink,
                                                VipsInterpretation interpretation, ipx_jpeg_writer *writer) {
    if (!ipx_down_across_takes(bands, in_width, in_height, hshrink, vshrink)) return NULL;
    ipx_reduce_stream *stream = calloc(1, sizeof(*stream));
    if (!stream) return NULL;
    if (ipx_down_across_make(&stream->reduce, in_width, in_height, bands, hshrink, vshrink)) {
        free(stream);
        return NULL;
    }
    size_t stride = (size_t)in_width * (size_t)bands;
    int ring = stream->reduce.down.taps < in_height ? stream->reduce.down.taps : in_height;
    stream->ring = ipx_thread_buffer_lend(stride * (size_t)ring, &stream->lease);
    if (!stream->ring) {
        stream->ring = malloc(stride * (size_t)ring);
        stream->owns_ring = 1;
    }
    stream->writer = writer;
    int ready;
    if (writer) {
        stream->out_row = stream->ring ? malloc((size_t)stream->reduce.across.width * (size_t)bands) : NULL;
        ready = stream->out_row != NULL;
    } else {
        stream->image = stream->ring ? ipx_pixel_image(stream->reduce.across.width, stream->reduce.down.width, bands, interpretation) : NULL;
        ready = stream->image != NULL;
    }
    if (!ready) {
        ipx_reduce_stream_free(stream);
        return NULL;
    }
    stream->rows = (struct ipx_down_rows){stream->ring, stride, in_width, in_height, ring};
    stream->bands = bands;
    return stream;
}

ipx_reduce_stream *ipx_reduce_stream_new(int in_width, int in_height, int bands, double hshrink, double vshrink,
                                         VipsInterpretation interpretation) {
    return ipx_reduce_stream_make(in_width, in_height, bands, hshrink, vshrink, interpretation, NULL);
}

ipx_reduce_stream *ipx_reduce_stream_new_encoding(int in_width, int in_height, int bands, double hshrink, double vshrink,
                                                  ipx_jpeg_writer *writer) {
    if (!writer) return NULL;
    return ipx_reduce_stream_make(in_width, in_height, bands, hshrink, vshrink, VIPS_INTERPRETATION_sRGB, writer);
}

unsigned char *ipx_reduce_stream_next_row(ipx_reduce_stream *stream) {
    if (stream->rows_in >= stream->rows.height) return NULL;
    return stream->ring + (size_t)(stream->rows_in % stream->rows.ring) * stream->rows.stride;
}

/* The last input row output row `y` reads. */
static int ipx_reduce_stream_last_row(const ipx_reduce_stream *stream, int y) {
    int last = stream->reduce.down.first[y] + stream->reduce.down.taps - 1;
    return last < stream->rows.height - 1 ? last : stream->rows.height - 1;
}

void ipx_reduce_stream_row_written(ipx_reduce_stream *stream) {
    stream->rows_in++;
    struct ipx_down_across *reduce = &stream->reduce;
    while (stream->rows_out < reduce->down.width && ipx_reduce_stream_last_row(stream, stream->rows_out) < stream->rows_in) {
        int y = stream->rows_out++;
        VipsPel *out = stream->writer ? stream->out_row : VIPS_IMAGE_ADDR(stream->image, 0, y);
        ipx_down_across_row(&reduce->across, &reduce->down, y, &stream->rows, stream->bands, reduce->sums, reduce->row, out);
        if (stream->writer && !stream->failed && ipx_jpeg_writer_write(stream->writer, out)) stream->failed = 1;
    }
}

int ipx_reduce_stream_failed(const ipx_reduce_stream *stream) {
    return stream->failed;
}

int ipx_reduce_stream_finish_encoding(ipx_reduce_stream *stream) {
    int status = stream->writer && !stream->failed && stream->rows_in == stream->rows.height &&
                         stream->rows_out == stream->reduce.down.width ? 0 : -1;
    ipx_reduce_stream_free(stream);
    return status;
}

VipsImage *ipx_reduce_stream_finish(ipx_reduce_stream *stream) {
    VipsImage *image = NULL;
    if (stream->rows_in == stream->rows.height && stream->rows_out == stream->reduce.down.width) {
        image = stream->image;
        stream->image = NULL;
    }
    ipx_reduce_stream_free(stream);
    return image;
}

void ipx_reduce_stream_free(ipx_reduce_stream *stream) {
    if (!stream) return;
    if (stream->image) g_object_unref(stream->image);
    free(stream->out_row);
    if (stream->owns_ring) free(stream->ring);
    else ipx_thread_buffer_return(stream->lease);
    ipx_down_across_free(&stream->reduce);
    free(stream);
}
