#include "vips_shim.h"
#include "../platform/platform.h"
#include <libdeflate.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* A whole decode of the common PNG (8-bit RGB or RGBA, not interlaced) for the kept decodes of a srcset
 * (#34): libdeflate inflates the image data in one call (about 3x zlib's speed on the benchmark's
 * wallpapers, whose size is known from the header), and the rows are unfiltered here with one pixel at a
 * time in 16-bit lanes: SSE2 on x86-64, GCC/clang vector extensions elsewhere (NEON on aarch64), integer
 * operations in the same order, so the same bytes (Debian's libpng unfilters Paeth rows a byte at a time). Everything else is declined
 * (1) and libvips' loader decodes it, so that no file decodes differently from before:
 *   - another depth, colour type, interlace, compression or filter method;
 *   - any chunk whose CRC does not match, a chunk cut short, a first chunk other than IHDR, IDAT chunks
 *     that are not one run, no IEND, a critical chunk other than IHDR/IDAT/IEND (PLTE included);
 *   - the ancillary chunks libpng reads that change pixels or what libvips makes of them (iCCP, eXIf,
 *     tRNS, bKGD) or that this decoder has no use for (sCAL, oFFs, pCAL, hIST, sPLT); pHYs (the resolution),
 *     text, tIME, sRGB, gAMA, cHRM and sBIT (libvips 8.14 applies none of them: the same pixels and fields
 *     with or without, PNGDecodeTests) and chunks libpng does not know are passed over, as libpng does;
 *   - a stream that does not inflate to exactly the rows the header gives, with nothing left over, a row
 *     filter other than 0-4, a side above libpng's limit (1,000,000), or more than `max_bytes` of pixels.
 * Memory: the decode inflates into the image's own memory (its rows with their filter bytes, `height` bytes
 * more than the pixels) and unfilters it in place, each row copied out first; the IDAT run is copied into
 * one block only when it is split over chunks. CPU: linear in the file and the bounded pixels. */

static uint32_t ipx_png_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int ipx_png_type_is(const uint8_t *type, const char *name) { return memcmp(type, name, 4) == 0; }

/* Ancillary chunks libpng reads whose content libvips' loader turns into pixels or image fields. */
static int ipx_png_declines_ancillary(const uint8_t *type) {
    static const char *const declined[] = {"iCCP", "eXIf", "tRNS", "bKGD", "sCAL", "oFFs", "pCAL", "hIST", "sPLT", NULL};
    for (int i = 0; declined[i]; i++) {
        if (ipx_png_type_is(type, declined[i])) return 1;
    }
    return 0;
}

#if defined(__x86_64__) && IPX_X86_KERNELS
#include <emmintrin.h>

/* A pixel's `bands` bytes in 16-bit lanes (SSE2). */
typedef __m128i ipx_png_lanes;

/* The Paeth predictor of one pixel, its `bands` bytes in 16-bit lanes. */
static inline ipx_png_lanes ipx_png_paeth(ipx_png_lanes a, ipx_png_lanes b, ipx_png_lanes c) {
    const __m128i zero = _mm_setzero_si128();
    __m128i b_c = _mm_sub_epi16(b, c), a_c = _mm_sub_epi16(a, c);
    __m128i sum = _mm_add_epi16(b_c, a_c);
    __m128i pa = _mm_max_epi16(b_c, _mm_sub_epi16(zero, b_c));
    __m128i pb = _mm_max_epi16(a_c, _mm_sub_epi16(zero, a_c));
    __m128i pc = _mm_max_epi16(sum, _mm_sub_epi16(zero, sum));
    /* b where pb <= pc, else c; then a where pa <= min(pb, pc), else that. */
    __m128i take_c = _mm_cmpgt_epi16(pb, pc);
    __m128i b_or_c = _mm_or_si128(_mm_andnot_si128(take_c, b), _mm_and_si128(take_c, c));
    __m128i not_a = _mm_cmpgt_epi16(pa, _mm_min_epi16(pb, pc));
    return _mm_or_si128(_mm_andnot_si128(not_a, a), _mm_and_si128(not_a, b_or_c));
}

static inline ipx_png_lanes ipx_png_zero(void) { return _mm_setzero_si128(); }

/* (x + predictor) modulo 256 in each lane. */
static inline ipx_png_lanes ipx_png_add_bytes(ipx_png_lanes x, ipx_png_lanes predictor) {
    return _mm_and_si128(_mm_add_epi16(x, predictor), _mm_set1_epi16(0xFF));
}

/* A pixel's bytes in 16-bit lanes, read as 4 bytes whatever `bands` (one load: a 3-byte read assembled in
 * memory stalls on the store it is built by). The rows read so have a byte readable after them; with 3
 * bands the fourth lane holds the next pixel's first byte, which nothing stores. */
static inline __attribute__((always_inline)) ipx_png_lanes ipx_png_load_pixel(const uint8_t *p) {
    uint32_t word;
    memcpy(&word, p, 4);
    return _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)word), _mm_setzero_si128());
}

static inline __attribute__((always_inline)) void ipx_png_store_pixel(uint8_t *p, ipx_png_lanes lanes, int bands) {
    uint32_t word = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(lanes, lanes));
    if (bands == 4) {
        memcpy(p, &word, 4);
    } else {
        p[0] = (uint8_t)word;
        p[1] = (uint8_t)(word >> 8);
        p[2] = (uint8_t)(word >> 16);
    }
}
#else
/* The portable twin (aarch64 and any other target, and x86 built with IPX_PORTABLE_KERNELS): the same
 * lanes and the same integer steps in GCC/clang vector extensions (NEON on aarch64). Lanes hold 0..255 and
 * differences of them, so 16 bits never overflow and every step is exact: the same bytes as SSE2. */
typedef int16_t ipx_png_lanes __attribute__((vector_size(8)));

/* |x| in each lane. */
static inline ipx_png_lanes ipx_png_abs(ipx_png_lanes x) {
    ipx_png_lanes negative = x >> 15;
    return (x ^ negative) - negative;
}

static inline ipx_png_lanes ipx_png_paeth(ipx_png_lanes a, ipx_png_lanes b, ipx_png_lanes c) {
    ipx_png_lanes b_c = b - c, a_c = a - c;
    ipx_png_lanes pa = ipx_png_abs(b_c), pb = ipx_png_abs(a_c), pc = ipx_png_abs(b_c + a_c);
    /* b where pb <= pc, else c; then a where pa <= min(pb, pc), else that (comparisons give all-ones lanes). */
    ipx_png_lanes take_c = (ipx_png_lanes)(pb > pc);
    ipx_png_lanes b_or_c = (b & ~take_c) | (c & take_c);
    ipx_png_lanes smaller = (pb & ~take_c) | (pc & take_c);
    ipx_png_lanes not_a = (ipx_png_lanes)(pa > smaller);
    return (a & ~not_a) | (b_or_c & not_a);
}

static inline ipx_png_lanes ipx_png_zero(void) { return (ipx_png_lanes){0, 0, 0, 0}; }

static inline ipx_png_lanes ipx_png_add_bytes(ipx_png_lanes x, ipx_png_lanes predictor) {
    return (x + predictor) & (ipx_png_lanes){0xFF, 0xFF, 0xFF, 0xFF};
}

static inline __attribute__((always_inline)) ipx_png_lanes ipx_png_load_pixel(const uint8_t *p) {
    return (ipx_png_lanes){p[0], p[1], p[2], p[3]};
}

static inline __attribute__((always_inline)) void ipx_png_store_pixel(uint8_t *p, ipx_png_lanes lanes, int bands) {
    for (int k = 0; k < bands; k++) p[k] = (uint8_t)lanes[k];
}
#endif

/* One row's filter undone: `filtered` (the row's bytes after its filter byte) into `out`, with `prior` the
 * row above unfiltered (zeros for the first); both have a byte readable past `stride` (ipx_png_load_pixel).
 * 0, or -1 for a filter type PNG does not define. */
static inline __attribute__((always_inline)) int ipx_png_unfilter_row_of(
    int filter, const uint8_t *restrict filtered, const uint8_t *restrict prior, uint8_t *restrict out, size_t stride,
    const int bands) {
    size_t i;
    switch (filter) {
    case 0:
        memcpy(out, filtered, stride);
        return 0;
    case 1:
        for (i = 0; i < (size_t)bands; i++) out[i] = filtered[i];
        for (; i < stride; i++) out[i] = (uint8_t)(filtered[i] + out[i - (size_t)bands]);
        return 0;
    case 2:
        for (i = 0; i < stride; i++) out[i] = (uint8_t)(filtered[i] + prior[i]);
        return 0;
    case 3:
        for (i = 0; i < (size_t)bands; i++) out[i] = (uint8_t)(filtered[i] + (prior[i] >> 1));
        for (; i < stride; i++) out[i] = (uint8_t)(filtered[i] + ((out[i - (size_t)bands] + prior[i]) >> 1));
        return 0;
    case 4: {
        ipx_png_lanes a = ipx_png_zero(), c = ipx_png_zero();
        for (i = 0; i < stride; i += (size_t)bands) {
            ipx_png_lanes b = ipx_png_load_pixel(prior + i);
            ipx_png_lanes x = ipx_png_load_pixel(filtered + i);
            ipx_png_lanes value = ipx_png_add_bytes(x, ipx_png_paeth(a, b, c));
            ipx_png_store_pixel(out + i, value, bands);
            a = value;
            c = b;
        }
        return 0;
    }
    default:
        return -1;
    }
}

/* ipx_png_unfilter_row_of made for 3 and 4 bands, so that each pixel's loads and stores have a constant size. */
static int ipx_png_unfilter_row(int filter, const uint8_t *restrict filtered, const uint8_t *restrict prior,
                                uint8_t *restrict out, size_t stride, int bands) {
    return bands == 3 ? ipx_png_unfilter_row_of(filter, filtered, prior, out, stride, 3)
                      : ipx_png_unfilter_row_of(filter, filtered, prior, out, stride, 4);
}

static void ipx_png_munmap_closed(VipsObject *image, void *mapping) {
    (void)image;
    size_t *block = mapping;
    munmap((void *)block[0], block[1]);
    free(block);
}

/* A `width` x `height` x `bands` image over memory of at least `bytes` (the pixels and the slack the
 * inflate needs), its first byte in *memory: a huge-page mapping from IPX_MAPPED_PIXELS_MIN_BYTES (as
 * ipx_pixel_image), else malloc; freed when the image closes. */
static VipsImage *ipx_png_image_over(size_t bytes, int width, int height, int bands, uint8_t **memory) {
    size_t pixels = (size_t)width * (size_t)height * (size_t)bands;
    VipsImage *image = NULL;
    if (bytes >= IPX_MAPPED_PIXELS_MIN_BYTES) {
        size_t length = 0;
        void *start = ipx_huge_map(bytes, &length);
        size_t *block = start ? malloc(2 * sizeof(size_t)) : NULL;
        if (!block) {
            if (start) munmap(start, length);
            return NULL;
        }
        block[0] = (size_t)start;
        block[1] = length;
        image = vips_image_new_from_memory(start, pixels, width, height, bands, VIPS_FORMAT_UCHAR);
        if (!image) {
            ipx_png_munmap_closed(NULL, block);
            return NULL;
        }
        g_signal_connect(image, "postclose", G_CALLBACK(ipx_png_munmap_closed), block);
        *memory = start;
    } else {
        uint8_t *block = malloc(bytes);
        if (!block) return NULL;
        image = vips_image_new_from_memory(block, pixels, width, height, bands, VIPS_FORMAT_UCHAR);
        if (!image) {
            free(block);
            return NULL;
        }
        g_signal_connect_swapped(image, "postclose", G_CALLBACK(free), block);
        *memory = block;
    }
    image->Type = VIPS_INTERPRETATION_sRGB;
    return image;
}

int ipx_png_decode_whole(const void *buffer, size_t length, size_t max_bytes, VipsImage **out) {
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    const uint8_t *p = buffer;
    *out = NULL;
    if (!p || length < 8 + 25 || memcmp(p, signature, 8) != 0) return 1;
    uint32_t width = 0, height = 0;
    int bands = 0;
    /* libvips' resolution without a pHYs chunk (its 72 pixels per inch, as it writes it). */
    double xres = 2.834, yres = 2.834;
    const uint8_t *first_idat = NULL;
    size_t idat_chunks = 0, idat_bytes = 0, idat_run_start = 0, idat_run_end = 0;
    int idat_run_over = 0, ended = 0, resolution_read = 0;
    size_t offset = 8;
    while (offset < length) {
        if (length - offset < 12) return 1;
        uint32_t declared = ipx_png_be32(p + offset);
        if (declared > 0x7FFFFFFFu || declared > length - offset - 12) return 1;
        const uint8_t *type = p + offset + 4, *data = p + offset + 8;
#ifndef IPX_PNG_IGNORE_CRC /* defined by the fuzz target only (fuzz/run.sh) */
        if (libdeflate_crc32(0, type, (size_t)declared + 4) != ipx_png_be32(data + declared)) return 1;
#endif
        int first = offset == 8;
        if (first != ipx_png_type_is(type, "IHDR")) return 1;
        if (first) {
            if (declared != 13) return 1;
            width = ipx_png_be32(data);
            height = ipx_png_be32(data + 4);
            uint8_t depth = data[8], colour = data[9];
            if (depth != 8 || (colour != 2 && colour != 6) || data[10] != 0 || data[11] != 0 || data[12] != 0) return 1;
            bands = colour == 2 ? 3 : 4;
            if (width == 0 || height == 0 || width > 1000000u || height > 1000000u) return 1;
        } else if (ipx_png_type_is(type, "IDAT")) {
            if (idat_run_over) return 1;
            if (idat_chunks == 0) {
                first_idat = data;
                idat_run_start = offset;
            }
            idat_chunks++;
            idat_bytes += declared;
            idat_run_end = offset + 12 + declared;
        } else if (ipx_png_type_is(type, "IEND")) {
            ended = 1;
            break;
        } else if (!(type[0] & 0x20)) {
            return 1; /* a critical chunk: PLTE, or one this decoder does not know */
        } else if (ipx_png_declines_ancillary(type)) {
            return 1;
        } else if (ipx_png_type_is(type, "pHYs") && declared == 9 && idat_chunks == 0 && !resolution_read) {
            /* libvips' resolution: pixels per metre as pixels per millimetre; another unit is declined.
               libpng reads the first one before the image data and passes over the others. */
            if (data[8] != 1) return 1;
            resolution_read = 1;
            xres = ipx_png_be32(data) / 1000.0;
            yres = ipx_png_be32(data + 4) / 1000.0;
        }
        if (idat_chunks > 0 && !ipx_png_type_is(type, "IDAT")) idat_run_over = 1;
        offset += 12 + (size_t)declared;
    }
    if (!ended || idat_chunks == 0 || idat_bytes == 0) return 1;
    size_t stride = (size_t)width * (size_t)bands;
    if ((size_t)height > max_bytes / stride) return 1;
    size_t pixels = stride * (size_t)height;
    size_t inflated = pixels + (size_t)height;

    /* The IDAT run's data as one block: in place when it is one chunk, else copied together. */
    uint8_t *joined = NULL;
    const uint8_t *stream = first_idat;
    if (idat_chunks > 1) {
        joined = malloc(idat_bytes);
        if (!joined) return -1;
        size_t at = 0;
        for (size_t walk = idat_run_start; walk < idat_run_end;) {
            uint32_t declared = ipx_png_be32(p + walk);
            memcpy(joined + at, p + walk + 8, declared);
            at += declared;
            walk += 12 + (size_t)declared;
        }
        stream = joined;
    }
    uint8_t *memory = NULL;
    VipsImage *image = ipx_png_image_over(inflated, (int)width, (int)height, bands, &memory);
    struct libdeflate_decompressor *decompressor = image ? libdeflate_alloc_decompressor() : NULL;
    if (!decompressor) {
        if (image) g_object_unref(image);
        free(joined);
        return -1;
    }
    size_t consumed = 0, produced = 0;
    enum libdeflate_result result =
        libdeflate_zlib_decompress_ex(decompressor, stream, idat_bytes, memory, inflated, &consumed, &produced);
    libdeflate_free_decompressor(decompressor);
    free(joined);
    if (result != LIBDEFLATE_SUCCESS || produced != inflated || consumed != idat_bytes) {
        g_object_unref(image);
        return 1;
    }
    /* Row r sits at r * (stride + 1) behind its filter byte and goes to r * stride: each row is copied out
     * before it is unfiltered into place, after the row above it. The row above is read a byte past its end
     * (the current row's first, in the same memory); the copy and the zeros have that byte of their own. */
    uint8_t *row = calloc(1, stride + 4), *zeros = calloc(1, stride + 4);
    if (!row || !zeros) {
        free(row);
        free(zeros);
        g_object_unref(image);
        return -1;
    }
    int status = 0;
    for (size_t r = 0; r < height && status == 0; r++) {
        const uint8_t *filtered = memory + r * (stride + 1);
        int filter = filtered[0];
        memcpy(row, filtered + 1, stride);
        status = ipx_png_unfilter_row(filter, row, r ? memory + (r - 1) * stride : zeros, memory + r * stride, stride, bands);
    }
    free(row);
    free(zeros);
    if (status) {
        g_object_unref(image);
        return 1;
    }
    image->Xres = xres;
    image->Yres = yres;
    *out = image;
    return 0;
}
