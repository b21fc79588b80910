#include "vips_shim.h"
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <libxml/parser.h>

int ipx_vips_start(const char *program_name, int concurrency, int operation_cache_max) {
    if (VIPS_INIT(program_name)) {
        return -1;
    }
    vips_concurrency_set(concurrency);
    /* Only the loaders the service supports may run: every other loader (TIFF, SVG, PDF, FITS,
       matrix, ImageMagick, ...) is blocked, and so is anything libvips marks untrusted. */
    vips_block_untrusted_set(TRUE);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    const char *allowed[] = {"VipsForeignLoadJpegBuffer", "VipsForeignLoadPngBuffer", "VipsForeignLoadWebpBuffer",
                             "VipsForeignLoadNsgifBuffer", "VipsForeignLoadHeifBuffer"};
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        vips_operation_block_set(allowed[i], FALSE);
    }
    /* libvips 8.14 marks the whole JPEG XL module untrusted: the saver is allowed (it reads our own pixels);
       the loader only when the service is told to read JPEG XL sources (ipx_vips_allow_jxl_input). */
    vips_operation_block_set("VipsForeignSaveJxl", FALSE);
    vips_cache_set_max(operation_cache_max);
    if (operation_cache_max == 0) {
        vips_cache_set_max_mem(0);
        vips_cache_set_max_files(0);
    }
    return 0;
}

void ipx_vips_allow_jxl_input(void) {
    vips_operation_block_set("VipsForeignLoadJxlBuffer", FALSE);
}

void ipx_vips_allow_svg_input(void) {
    xmlInitParser();
    vips_operation_block_set("VipsForeignLoadSvgBuffer", FALSE);
}

int ipx_vips_svgload_scaled(const void *buffer, size_t length, double scale, VipsImage **out) {
    /* svgload's own range; outside it libvips warns and keeps its default of 1 (the declared size). */
    if (!(scale >= IPX_SVG_MIN_SCALE && scale <= IPX_SVG_MAX_SCALE)) {
        vips_error("ipx_vips_svgload_scaled", "scale %g out of range", scale);
        return -1;
    }
    return vips_svgload_buffer((void *)buffer, length, out, "scale", scale, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
}

int ipx_vips_header(const void *buffer, size_t length,
                    int *width, int *height, int *pages, int *orientation, int *bands, int *colour_managed,
                    int *pixel_bytes) {
    VipsImage *image = vips_image_new_from_buffer(buffer, length, "",
                                                  "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!image) {
        return -1;
    }
    *width = vips_image_get_width(image);
    *height = vips_image_get_height(image);
    /* The raw field: vips_image_get_n_pages() says 1 for 1000 pages or more. */
    if (!vips_image_get_typeof(image, VIPS_META_N_PAGES) || vips_image_get_int(image, VIPS_META_N_PAGES, pages)) {
        *pages = 1;
    }
    *orientation = vips_image_get_orientation(image);
    *bands = vips_image_get_bands(image);
    *pixel_bytes = (int)VIPS_IMAGE_SIZEOF_PEL(image);
    /* An sRGB profile on an RGB image needs no conversion (ipx_icc_is_srgb): its numbers are sRGB. */
    /* 2: an RGB image with a profile other than sRGB (Display P3, Adobe RGB, ...), which colour=keep keeps. */
    int has_profile = vips_image_get_typeof(image, VIPS_META_ICC_NAME) != 0;
    int rgb_profile = 0;
    if (has_profile && *bands >= 3 && vips_image_get_interpretation(image) == VIPS_INTERPRETATION_sRGB) {
        const void *profile = NULL;
        size_t profile_length = 0;
        if (!vips_image_get_blob(image, VIPS_META_ICC_NAME, &profile, &profile_length) &&
            ipx_icc_is_srgb(profile, profile_length)) {
            has_profile = 0;
        } else {
            rgb_profile = 1;
        }
    }
    *colour_managed = rgb_profile ? 2 : (has_profile || vips_image_get_interpretation(image) == VIPS_INTERPRETATION_CMYK);
    g_object_unref(image);
    return 0;
}

int ipx_vips_to_srgb(VipsImage *in, VipsImage **out) {
    return vips_colourspace(in, out, VIPS_INTERPRETATION_sRGB, NULL);
}

int ipx_vips_to_greyscale(VipsImage *in, VipsImage **out) {
    return vips_colourspace(in, out, VIPS_INTERPRETATION_B_W, NULL);
}

int ipx_vips_gaussblur(VipsImage *in, VipsImage **out, double sigma) {
    return vips_gaussblur(in, out, sigma, NULL);
}

int ipx_vips_sharpen(VipsImage *in, VipsImage **out, double sigma) {
    return vips_sharpen(in, out, "sigma", sigma, NULL);
}

int ipx_vips_flatten(VipsImage *in, VipsImage **out, double red, double green, double blue) {
    double background[3] = {red, green, blue};
    VipsArrayDouble *array = vips_array_double_new(background, 3);
    int result = vips_flatten(in, out, "background", array, NULL);
    vips_area_unref(VIPS_AREA(array));
    return result;
}

int ipx_vips_cast_uchar(VipsImage *in, VipsImage **out) {
    return vips_cast_uchar(in, out, NULL);
}

int ipx_vips_copy_memory(VipsImage *in, VipsImage **out) {
    VipsImage *copy = vips_image_copy_memory(in);
    if (!copy) {
        return -1;
    }
    *out = copy;
    return 0;
}

int ipx_vips_copy_into_pixels(VipsImage *in, VipsImage **out) {
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE ||
        (size_t)VIPS_IMAGE_SIZEOF_IMAGE(in) < IPX_MAPPED_PIXELS_MIN_BYTES) {
        return ipx_vips_copy_memory(in, out);
    }
    /* Written by libvips' sink straight into the mapping (an image on foreign memory is not reallocated). */
    VipsImage *image = ipx_pixel_image(in->Xsize, in->Ysize, in->Bands, in->Type);
    if (!image) return -1;
    if (vips_image_write(in, image)) {
        g_object_unref(image);
        return -1;
    }
    *out = image;
    return 0;
}

int ipx_vips_copy_lazy(VipsImage *in, VipsImage **out) {
    return vips_copy(in, out, NULL);
}

int ipx_vips_copy_with_orientation(VipsImage *in, VipsImage **out, int orientation) {
    if (vips_copy(in, out, NULL)) {
        return -1;
    }
    vips_image_set_int(*out, VIPS_META_ORIENTATION, orientation);
    return 0;
}

int ipx_vips_jpegsave(VipsImage *in, void **buffer, size_t *length, int quality, int interlace, int strip) {
    return vips_jpegsave_buffer(in, buffer, length, "Q", quality, "strip", strip ? TRUE : FALSE,
                                "optimize_coding", TRUE, "interlace", interlace ? TRUE : FALSE, NULL);
}

int ipx_vips_jpegsave_layout(VipsImage *in, void **buffer, size_t *length, int quality, int interlace,
                             int subsample, int restart_interval) {
    return vips_jpegsave_buffer(in, buffer, length, "Q", quality, "strip", TRUE, "optimize_coding", TRUE,
                                "interlace", interlace ? TRUE : FALSE,
                                "subsample_mode", subsample ? VIPS_FOREIGN_SUBSAMPLE_ON : VIPS_FOREIGN_SUBSAMPLE_OFF,
                                "restart_interval", restart_interval, NULL);
}

int ipx_vips_pngsave_layout(VipsImage *in, void **buffer, size_t *length, int filter, int interlace, int bitdepth,
                            int palette) {
    static const VipsForeignPngFilter filters[] = {VIPS_FOREIGN_PNG_FILTER_NONE, VIPS_FOREIGN_PNG_FILTER_SUB,
                                                   VIPS_FOREIGN_PNG_FILTER_UP, VIPS_FOREIGN_PNG_FILTER_AVG,
                                                   VIPS_FOREIGN_PNG_FILTER_PAETH, VIPS_FOREIGN_PNG_FILTER_ALL};
    if (filter < 0 || filter > 5) return -1;
    return vips_pngsave_buffer(in, buffer, length, "filter", filters[filter], "interlace", interlace ? TRUE : FALSE,
                               "bitdepth", bitdepth, "palette", palette ? TRUE : FALSE, NULL);
}

int ipx_vips_jpegsave_metadata(VipsImage *in, void **buffer, size_t *length, int quality, int interlace, int subsample,
                               int keep) {
    return vips_jpegsave_buffer(in, buffer, length, "Q", quality, "strip", keep ? FALSE : TRUE,
                                "interlace", interlace ? TRUE : FALSE,
                                "subsample_mode", subsample ? VIPS_FOREIGN_SUBSAMPLE_ON : VIPS_FOREIGN_SUBSAMPLE_OFF, NULL);
}

int ipx_vips_webpsave_metadata(VipsImage *in, void **buffer, size_t *length) {
    return vips_webpsave_buffer(in, buffer, length, "Q", 90, NULL);
}

int ipx_vips_pngsave_metadata(VipsImage *in, void **buffer, size_t *length) {
    return vips_pngsave_buffer(in, buffer, length, NULL);
}

int ipx_vips_pngsave(VipsImage *in, void **buffer, size_t *length, int compression, int strip) {
    return vips_pngsave_buffer(in, buffer, length, "compression", compression, "strip", strip ? TRUE : FALSE, NULL);
}

int ipx_vips_webpsave_lossless(VipsImage *in, void **buffer, size_t *length) {
    return vips_webpsave_buffer(in, buffer, length, "lossless", TRUE, NULL);
}

int ipx_vips_webpsave(VipsImage *in, void **buffer, size_t *length, int quality, int strip) {
    return vips_webpsave_buffer(in, buffer, length, "Q", quality, "strip", strip ? TRUE : FALSE, NULL);
}

int ipx_vips_avifsave(VipsImage *in, void **buffer, size_t *length, int quality, int effort, int strip) {
    return vips_heifsave_buffer(in, buffer, length, "Q", quality, "strip", strip ? TRUE : FALSE,
                                "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                "effort", effort, NULL);
}

int ipx_vips_jxlsave(VipsImage *in, void **buffer, size_t *length, int quality, int effort, int strip) {
    return vips_jxlsave_buffer(in, buffer, length, "Q", quality, "effort", effort, "strip", strip ? TRUE : FALSE, NULL);
}

int ipx_vips_heicsave_metadata(VipsImage *in, void **buffer, size_t *length, int quality, int bitdepth) {
    return vips_heifsave_buffer(in, buffer, length, "Q", quality, "bitdepth", bitdepth,
                                "compression", VIPS_FOREIGN_HEIF_COMPRESSION_HEVC, "effort", 0, NULL);
}

int ipx_vips_gifsave(VipsImage *in, void **buffer, size_t *length) {
    return vips_gifsave_buffer(in, buffer, length, "strip", TRUE, NULL);
}

/* Decodes into memory with loader options; falls back to none when the loader has no such option. */
static int ipx_vips_decode_with(const void *buffer, size_t length, const char *options, VipsImage **out) {
    VipsImage *lazy = vips_image_new_from_buffer(buffer, length, options, NULL);
    if (!lazy && options[0] != '\0') {
        vips_error_clear();
        lazy = vips_image_new_from_buffer(buffer, length, "", NULL);
    }
    if (!lazy) {
        return -1;
    }
    /* The profile's bytes copied before the loader reads the pixels and closes (ipx_vips_with_own_profile). */
    VipsImage *owned = NULL;
    int status = ipx_vips_with_own_profile(lazy, &owned);
    g_object_unref(lazy);
    if (status) {
        return -1;
    }
    VipsImage *copy = vips_image_copy_memory(owned);
    g_object_unref(owned);
    if (!copy) {
        return -1;
    }
    *out = copy;
    return 0;
}

int ipx_vips_decode(const void *buffer, size_t length, VipsImage **out) {
    return ipx_vips_decode_with(buffer, length, "", out);
}

int ipx_vips_getpoint(VipsImage *in, int x, int y, double *values, int max_bands, int *bands) {
    double *vector = NULL;
    int count = 0;
    if (vips_getpoint(in, &vector, &count, x, y, NULL)) {
        return -1;
    }
    int copied = count < max_bands ? count : max_bands;
    memcpy(values, vector, sizeof(double) * (size_t)copied);
    *bands = count;
    g_free(vector);
    return 0;
}

char *ipx_vips_take_error(void) {
    char *message = g_strdup(vips_error_buffer());
    vips_error_clear();
    return message;
}

/* vips_thumbnail's colour management: with an export profile it imports with the embedded profile (or
   libvips' CMYK default) and converts to sRGB; without one (no profile: the numbers are sRGB already) it
   leaves the pixels untouched, bit for bit. */
static void ipx_thumbnail_shrinks(VipsImage *in, int width, int height, int size, int crop, double *across, double *down);

int ipx_vips_thumbnail_buffer_pages(const void *buffer, size_t length, VipsImage **out,
                                    int width, int height, int size, int crop, int pages, int to_srgb) {
    char options[64];
    if (pages > 1) {
        snprintf(options, sizeof(options), "fail_on=error,n=%d", pages);
    } else {
        snprintf(options, sizeof(options), "fail_on=error");
    }
    if (pages <= 1 && size != VIPS_SIZE_DOWN) {
        /* A source that grows on a side is thumbnailed from its whole image (no shrink-on-load to lose), enlarged
           about the pixel centres (ipx_enlarged_for_thumbnail). */
        VipsImage *loaded = vips_image_new_from_buffer(buffer, length, options, NULL);
        if (!loaded) return -1;
        double across = 1, down = 1;
        ipx_thumbnail_shrinks(loaded, width, height, size, crop, &across, &down);
        int status = 1;
        if (across < 1.0 || down < 1.0) status = ipx_vips_thumbnail_image(loaded, out, width, height, size, crop, to_srgb);
        g_object_unref(loaded);
        if (status != 1) return status;
    }
    const char *profile = to_srgb ? "srgb" : NULL;
    if (crop >= 0) {
        return vips_thumbnail_buffer((void *)buffer, length, out, width, "height", height, "size", size,
                                     "crop", crop, "option_string", options, "export_profile", profile, NULL);
    }
    return vips_thumbnail_buffer((void *)buffer, length, out, width, "height", height, "size", size,
                                 "option_string", options, "export_profile", profile, NULL);
}

int ipx_vips_thumbnail_webp_scaled(const void *buffer, size_t length, VipsImage **out,
                                   int width, int height, int size, int crop, double scale, int to_srgb) {
    VipsImage *loaded = NULL;
    VipsAccess access = crop >= 0 ? VIPS_ACCESS_RANDOM : VIPS_ACCESS_SEQUENTIAL;
    if (vips_webpload_buffer((void *)buffer, length, &loaded, "scale", scale, "fail_on", VIPS_FAIL_ON_ERROR,
                             "access", access, NULL)) {
        return -1;
    }
    int status = ipx_vips_thumbnail_image(loaded, out, width, height, size, crop, to_srgb);
    g_object_unref(loaded);
    return status;
}

int ipx_vips_thumbnail_jpeg_shrunk(const void *buffer, size_t length, VipsImage **out,
                                   int width, int height, int size, int crop, int shrink, int to_srgb) {
    VipsImage *loaded = NULL;
    VipsAccess access = crop >= 0 ? VIPS_ACCESS_RANDOM : VIPS_ACCESS_SEQUENTIAL;
    if (vips_jpegload_buffer((void *)buffer, length, &loaded, "shrink", shrink, "fail_on", VIPS_FAIL_ON_ERROR,
                             "access", access, NULL)) {
        return -1;
    }
    int status = ipx_vips_thumbnail_image(loaded, out, width, height, size, crop, to_srgb);
    g_object_unref(loaded);
    return status;
}

int ipx_vips_jpegload_shrunk(const void *buffer, size_t length, int shrink, VipsImage **out) {
    VipsImage *loaded = NULL;
    if (vips_jpegload_buffer((void *)buffer, length, &loaded, "shrink", shrink, "fail_on", VIPS_FAIL_ON_ERROR, NULL)) {
        return -1;
    }
    int status = ipx_vips_copy_memory(loaded, out);
    g_object_unref(loaded);
    return status;
}

int ipx_vips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int ipx_vips_resize_by(VipsImage *in, VipsImage **out, double scale) {
    return vips_resize(in, out, scale, NULL);
}

int ipx_vips_insert(VipsImage *main, VipsImage *sub, VipsImage **out, int x, int y) {
    return vips_insert(main, sub, out, x, y, NULL);
}

int ipx_vips_pixelate(VipsImage *in, VipsImage **out, int block) {
    if (block < 1) block = 1;
    int width = vips_image_get_width(in), height = vips_image_get_height(in);
    int across = (width + block - 1) / block, down = (height + block - 1) / block;
    VipsImage *averaged = NULL, *zoomed = NULL;
    /* Each block's average (the last ones narrower), then each average repeated over its block. */
    if (vips_shrink(in, &averaged, (double)width / across, (double)height / down, NULL)) return -1;
    int status = vips_zoom(averaged, &zoomed, block, block, NULL);
    g_object_unref(averaged);
    if (status) return -1;
    status = vips_extract_area(zoomed, out, 0, 0, VIPS_MIN(width, vips_image_get_width(zoomed)),
                               VIPS_MIN(height, vips_image_get_height(zoomed)), NULL);
    g_object_unref(zoomed);
    return status;
}

int ipx_vips_embed_centre(VipsImage *in, VipsImage **out, int width, int height, const double *background, int bands) {
    VipsArrayDouble *array = vips_array_double_new(background, bands);
    int result = vips_gravity(in, out, VIPS_COMPASS_DIRECTION_CENTRE, width, height,
                              "extend", VIPS_EXTEND_BACKGROUND, "background", array, NULL);
    vips_area_unref(VIPS_AREA(array));
    return result;
}

int ipx_vips_add_alpha(VipsImage *in, VipsImage **out) {
    return vips_addalpha(in, out, NULL);
}

int ipx_vips_linear_uchar(VipsImage *in, VipsImage **out, const double *a, const double *b, int bands) {
    VipsImage *linear = NULL;
    if (vips_linear(in, &linear, (double *)a, (double *)b, bands, NULL)) {
        return -1;
    }
    int result = vips_cast_uchar(linear, out, NULL);
    g_object_unref(linear);
    return result;
}

int ipx_vips_recomb3(VipsImage *in, VipsImage **out, const double *matrix) {
    VipsImage *m = vips_image_new_matrix_from_array(3, 3, matrix, 9);
    if (!m) {
        return -1;
    }
    VipsImage *colour = NULL, *mixed = NULL, *cast = NULL, *alpha = NULL;
    int result = -1;
    int has_alpha = vips_image_hasalpha(in);
    if (vips_extract_band(in, &colour, 0, "n", 3, NULL)) goto done;
    if (vips_recomb(colour, &mixed, m, NULL)) goto done;
    if (vips_cast_uchar(mixed, &cast, NULL)) goto done;
    if (has_alpha) {
        if (vips_extract_band(in, &alpha, 3, NULL)) goto done;
        result = vips_bandjoin2(cast, alpha, out, NULL);
    } else {
        result = vips_copy(cast, out, "interpretation", VIPS_INTERPRETATION_sRGB, NULL);
    }
done:
    if (colour) g_object_unref(colour);
    if (mixed) g_object_unref(mixed);
    if (cast) g_object_unref(cast);
    if (alpha) g_object_unref(alpha);
    g_object_unref(m);
    return result;
}

int ipx_vips_rotate(VipsImage *in, VipsImage **out, int quarter_turns) {
    VipsAngle angle = quarter_turns == 1 ? VIPS_ANGLE_D90 : quarter_turns == 2 ? VIPS_ANGLE_D180 : VIPS_ANGLE_D270;
    return vips_rot(in, out, angle, NULL);
}

int ipx_vips_mirror(VipsImage *in, VipsImage **out, int horizontal) {
    return vips_flip(in, out, horizontal ? VIPS_DIRECTION_HORIZONTAL : VIPS_DIRECTION_VERTICAL, NULL);
}

int ipx_vips_apply_mask(VipsImage *in, VipsImage **out, const unsigned char *mask) {
    int width = vips_image_get_width(in), height = vips_image_get_height(in);
    VipsImage *mask_image = vips_image_new_from_memory_copy(mask, (size_t)width * height, width, height, 1, VIPS_FORMAT_UCHAR);
    if (!mask_image) {
        return -1;
    }
    VipsImage *colour = NULL, *alpha = NULL, *product = NULL, *scaled = NULL, *cast = NULL;
    int result = -1;
    if (vips_image_hasalpha(in)) {
        int bands = vips_image_get_bands(in);
        if (vips_extract_band(in, &colour, 0, "n", bands - 1, NULL)) goto done;
        if (vips_extract_band(in, &alpha, bands - 1, NULL)) goto done;
        if (vips_multiply(alpha, mask_image, &product, NULL)) goto done;
        if (vips_linear1(product, &scaled, 1.0 / 255.0, 0, NULL)) goto done;
        if (vips_cast_uchar(scaled, &cast, NULL)) goto done;
        result = vips_bandjoin2(colour, cast, out, NULL);
    } else {
        result = vips_bandjoin2(in, mask_image, out, NULL);
    }
done:
    if (colour) g_object_unref(colour);
    if (alpha) g_object_unref(alpha);
    if (product) g_object_unref(product);
    if (scaled) g_object_unref(scaled);
    if (cast) g_object_unref(cast);
    g_object_unref(mask_image);
    return result;
}

int ipx_vips_find_trim(VipsImage *in, double threshold, int *left, int *top, int *width, int *height) {
    return vips_find_trim(in, left, top, width, height, "threshold", threshold, NULL);
}

int ipx_vips_smartcrop(VipsImage *in, VipsImage **out, int width, int height) {
    return vips_smartcrop(in, out, width, height, "interesting", VIPS_INTERESTING_ATTENTION, NULL);
}

/* The only metadata fields an encoded result may keep: what frames and their timing need. Everything
   else goes (EXIF blob and the exif-ifd* fields savers rebuild EXIF from, XMP, IPTC, ICC, Photoshop,
   comments, PNG text chunks, orientation, resolution units, ...). */
static const char *ipx_kept_fields[] = {VIPS_META_PAGE_HEIGHT, VIPS_META_N_PAGES, "delay", "loop", "gif-delay",
                                        "gif-loop", NULL};

struct ipx_removable {
    GPtrArray *names;
    int keep_icc;
};

static void *ipx_collect_removable(VipsImage *image, const char *field, GValue *value, void *a) {
    struct ipx_removable *removable = a;
    (void)image;
    (void)value;
    for (int i = 0; ipx_kept_fields[i]; i++) {
        if (strcmp(field, ipx_kept_fields[i]) == 0) return NULL;
    }
    if (removable->keep_icc && strcmp(field, VIPS_META_ICC_NAME) == 0) return NULL;
    g_ptr_array_add(removable->names, g_strdup(field));
    return NULL;
}

int ipx_vips_without_metadata(VipsImage *in, VipsImage **out) {
    return ipx_vips_without_metadata_but_icc(in, out, 0);
}

int ipx_vips_without_metadata_but_icc(VipsImage *in, VipsImage **out, int keep_icc) {
    if (vips_copy(in, out, NULL)) {
        return -1;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    struct ipx_removable removable = {names, keep_icc};
    vips_image_map(*out, ipx_collect_removable, &removable);
    for (guint i = 0; i < names->len; i++) {
        /* Built-in header fields (width, bands, ...) are not in the table: removing them is a no-op. */
        vips_image_remove(*out, g_ptr_array_index(names, i));
    }
    g_ptr_array_free(names, TRUE);
    return 0;
}

/* The shrink across and down vips_thumbnail (8.14) takes for `in` and these arguments, in the image's own axes
   (the target turned when the orientation swaps them, as thumbnail's auto-rotation does): the ratio of each side
   to its target, both the larger one for a box to fit in, both the smaller one for a crop, each its own when
   forced; `size` up (1) or down (2) keeps the shrink at most or at least 1. */
static void ipx_thumbnail_shrinks(VipsImage *in, int width, int height, int size, int crop, double *across, double *down) {
    int swap = vips_image_get_orientation_swap(in);
    double target_width = swap ? height : width, target_height = swap ? width : height;
    double horizontal = in->Xsize / target_width, vertical = in->Ysize / target_height;
    if (size != VIPS_SIZE_FORCE) {
        double common = crop > 0 ? VIPS_MIN(horizontal, vertical) : VIPS_MAX(horizontal, vertical);
        horizontal = vertical = common;
    }
    if (size == VIPS_SIZE_UP) {
        horizontal = VIPS_MIN(horizontal, 1.0);
        vertical = VIPS_MIN(vertical, 1.0);
    } else if (size == VIPS_SIZE_DOWN) {
        horizontal = VIPS_MAX(horizontal, 1.0);
        vertical = VIPS_MAX(vertical, 1.0);
    }
    *across = horizontal;
    *down = vertical;
}

/* `in` enlarged on each side vips_thumbnail would enlarge, to the size it would enlarge it to, with libvips'
   bicubic interpolator and pixel centres mapped onto pixel centres; NULL (nothing to do) when no side grows.
   libvips 8.14's resize enlarges with its input shifted by half an input pixel (an image symmetric about its
   centre comes out lopsided: ResizeCentreTests), so ipx_vips_thumbnail_image hands thumbnail this instead,
   which then has nothing to enlarge. An alpha is premultiplied around the interpolation, as thumbnail does. */
static int ipx_enlarged_for_thumbnail(VipsImage *in, int width, int height, int size, int crop, VipsImage **out) {
    *out = NULL;
    double across = 1, down = 1;
    ipx_thumbnail_shrinks(in, width, height, size, crop, &across, &down);
    if ((across >= 1.0 && down >= 1.0) || across <= 0 || down <= 0) return 0;
    if (vips_image_get_n_pages(in) > 1) return 0; /* frames in one strip: left to thumbnail */
    double grown_width = rint(in->Xsize / across), grown_height = rint(in->Ysize / down);
    if (grown_width < 1 || grown_height < 1 || grown_width > VIPS_MAX_COORD || grown_height > VIPS_MAX_COORD) return 0;
    VipsImage *t[5] = {NULL};
    VipsInterpolate *bicubic = vips_interpolate_new("bicubic");
    VipsArrayInt *area = vips_array_int_newv(4, 0, 0, (int)grown_width, (int)grown_height);
    int alpha = vips_image_hasalpha(in);
    VipsImage *source = in;
    int status = 0;
    if (alpha) {
        status = vips_premultiply(in, &t[0], NULL);
        source = t[0];
    }
    /* A side that shrinks (a forced box, one side down, one up) is reduced first, as resize orders it, so that
       the enlargement never makes the other side's full width. */
    if (!status && (across > 1.0 || down > 1.0)) {
        status = vips_resize(source, &t[1], across > 1.0 ? grown_width / in->Xsize : 1.0, "vscale",
                             down > 1.0 ? grown_height / in->Ysize : 1.0, "kernel", VIPS_KERNEL_LANCZOS3, NULL);
        source = t[1];
    }
    double scale_across = grown_width / (status ? 1 : source->Xsize), scale_down = grown_height / (status ? 1 : source->Ysize);
    status = status || vips_affine(source, &t[2], scale_across, 0.0, 0.0, scale_down, "interpolate", bicubic,
                                   "idx", (1.0 - 1.0 / scale_across) / 2.0, "idy", (1.0 - 1.0 / scale_down) / 2.0,
                                   "oarea", area, "extend", VIPS_EXTEND_COPY, "premultiplied", alpha, NULL);
    if (!status && alpha) {
        status = vips_unpremultiply(t[2], &t[3], NULL) || vips_cast(t[3], &t[4], vips_image_get_format(in), NULL);
        if (!status) {
            *out = t[4];
            t[4] = NULL;
        }
    } else if (!status) {
        *out = t[2];
        t[2] = NULL;
    }
    for (int i = 0; i < 5; i++) if (t[i]) g_object_unref(t[i]);
    vips_area_unref(VIPS_AREA(area));
    g_object_unref(bicubic);
    return status ? -1 : 0;
}

static int ipx_thumbnail_as_is(VipsImage *in, VipsImage **out, int width, int height, int size, int crop, int to_srgb) {
    const char *profile = to_srgb ? "srgb" : NULL;
    if (crop >= 0) {
        return vips_thumbnail_image(in, out, width, "height", height, "size", size, "crop", crop,
                                    "export_profile", profile, NULL);
    }
    return vips_thumbnail_image(in, out, width, "height", height, "size", size, "export_profile", profile, NULL);
}

int ipx_vips_thumbnail_image(VipsImage *in, VipsImage **out, int width, int height, int size, int crop, int to_srgb) {
    VipsImage *grown = NULL;
    if (ipx_enlarged_for_thumbnail(in, width, height, size, crop, &grown)) return -1;
    int status = ipx_thumbnail_as_is(grown ? grown : in, out, width, height, size, crop, to_srgb);
    if (grown) g_object_unref(grown);
    return status;
}

int ipx_vips_metadata_fields(VipsImage *in, char *names, size_t capacity) {
    GPtrArray *list = g_ptr_array_new_with_free_func(g_free);
    struct ipx_removable removable = {list, 0};
    vips_image_map(in, ipx_collect_removable, &removable);
    size_t used = 0;
    names[0] = '\0';
    for (guint i = 0; i < list->len; i++) {
        const char *name = g_ptr_array_index(list, i);
        size_t length = strlen(name);
        if (used + length + 2 > capacity) break;
        memcpy(names + used, name, length);
        used += length;
        names[used++] = '\n';
        names[used] = '\0';
    }
    g_ptr_array_free(list, TRUE);
    return (int)used;
}

int ipx_vips_copy_with_blob(VipsImage *in, VipsImage **out, const char *name, const void *data, size_t length) {
    if (vips_copy(in, out, NULL)) {
        return -1;
    }
    vips_image_set_blob_copy(*out, name, data, length);
    return 0;
}

int ipx_vips_with_own_profile(VipsImage *in, VipsImage **out) {
    const void *data = NULL;
    size_t length = 0;
    if (!vips_image_get_typeof(in, VIPS_META_ICC_NAME) || vips_image_get_blob(in, VIPS_META_ICC_NAME, &data, &length)) {
        return vips_copy(in, out, NULL);
    }
    return ipx_vips_copy_with_blob(in, out, VIPS_META_ICC_NAME, data, length);
}

int ipx_vips_copy_with_string(VipsImage *in, VipsImage **out, const char *name, const char *value) {
    if (vips_copy(in, out, NULL)) {
        return -1;
    }
    vips_image_set_string(*out, name, value);
    return 0;
}

int ipx_vips_icc_export(VipsImage *in, VipsImage **out, const char *profile) {
    return vips_icc_export(in, out, "output_profile", profile, NULL);
}

int ipx_vips_icc_to_srgb(VipsImage *in, VipsImage **out) {
    return vips_icc_transform(in, out, "srgb", "embedded", TRUE, NULL);
}

int ipx_vips_page_height(VipsImage *in) {
    return vips_image_get_page_height(in);
}

void *ipx_vips_pixels(VipsImage *in, size_t *length) {
    return vips_image_write_to_memory(in, length);
}

int ipx_vips_decode_all_pages(const void *buffer, size_t length, VipsImage **out) {
    /* Single-frame formats have no "n" option. */
    return ipx_vips_decode_with(buffer, length, "n=-1", out);
}

int ipx_vips_copy_as_animation(VipsImage *in, VipsImage **out, int page_height, int delay_ms) {
    if (vips_copy(in, out, NULL)) {
        return -1;
    }
    int frames = vips_image_get_height(in) / page_height;
    vips_image_set_int(*out, VIPS_META_PAGE_HEIGHT, page_height);
    vips_image_set_int(*out, VIPS_META_N_PAGES, frames);
    int *delays = g_new(int, frames);
    for (int i = 0; i < frames; i++) {
        delays[i] = delay_ms;
    }
    vips_image_set_array_int(*out, "delay", delays, frames);
    g_free(delays);
    vips_image_set_int(*out, "loop", 0);
    return 0;
}

/* The request the calling thread works for (set by the transform pool around a job), or "" for none. */
static __thread char ipx_thread_log_tag[64];

void ipx_set_thread_log_tag(const char *tag) {
    if (!tag) {
        ipx_thread_log_tag[0] = '\0';
        return;
    }
    g_strlcpy(ipx_thread_log_tag, tag, sizeof(ipx_thread_log_tag));
}

static void ipx_glib_log_handler(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    /* Like GLib's default handler: info and debug messages (libvips' progress notes) are dropped. */
    if (!(level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE))) return;
    ipx_log_callback callback = (ipx_log_callback)data;
    callback(domain, (int)level, message ? message : "", ipx_thread_log_tag[0] ? ipx_thread_log_tag : NULL);
}

void ipx_emit_glib_warning(const char *domain, const char *message) {
    g_log(domain, G_LOG_LEVEL_WARNING, "%s", message);
}

void ipx_route_glib_log(ipx_log_callback callback) {
    g_log_set_default_handler(ipx_glib_log_handler, (gpointer)callback);
}

int ipx_limit_malloc_arenas(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}

int ipx_set_malloc_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

int ipx_release_free_memory(void) {
    return malloc_trim(0);
}

void ipx_malloc_statistics(size_t *in_use, size_t *free_in_heaps) {
    struct mallinfo2 info = mallinfo2();
    *in_use = info.uordblks + info.hblkhd;
    *free_in_heaps = info.fordblks;
}

/* Opens a buffer for a whole decode that fails on the first decode error (fail_on=error), its profile
   copied out of the loader (ipx_vips_with_own_profile); the pixels are read when the image is evaluated
   (copied to memory, or resized). */
int ipx_vips_load_strict(const void *buffer, size_t length, int random_access, VipsImage **out) {
    VipsImage *lazy = vips_image_new_from_buffer(
        buffer, length, random_access ? "fail_on=error,access=random" : "fail_on=error,access=sequential", NULL);
    if (!lazy) {
        return -1;
    }
    int status = ipx_vips_with_own_profile(lazy, out);
    g_object_unref(lazy);
    return status;
}

/* Whether the alpha band of an image with alpha is opaque everywhere (premultiplying is then the identity). */
static int ipx_vips_alpha_is_opaque(VipsImage *in) {
    VipsImage *alpha = NULL;
    double minimum = 0;
    int status = vips_extract_band(in, &alpha, vips_image_get_bands(in) - 1, NULL) || vips_min(alpha, &minimum, NULL);
    if (alpha) g_object_unref(alpha);
    if (status) {
        vips_error_clear();
        return 0;
    }
    VipsBandFormat format = vips_image_get_format(in);
    if (format == VIPS_FORMAT_UCHAR) return minimum >= 255;
    if (format == VIPS_FORMAT_USHORT) return minimum >= 65535;
    return 0;
}

/* vips_resize with no box shrink (a reducing gap of 0): Lanczos3 all the way, with resize's own
   pixel-centre convention (the one thumbnail uses). */
static int ipx_vips_resize_lanczos(VipsImage *in, VipsImage **out, double hshrink, double vshrink) {
    /* An 8-bit image reduced across: in memory, down and across in one pass of reduce_across.c; otherwise
       libvips' reduce down (an orc vector program), then the reduce across of reduce_across.c, which runs
       that pipeline on this thread (resize's own order: down, then across). */
    if (in->BandFmt == VIPS_FORMAT_UCHAR && in->Bands <= 4 && hshrink > 1.0 && vshrink >= 1.0) {
        /* An image in memory (a decode): both directions in one pass of our own, no orc program to compile. */
        int whole = vshrink > 1.0 ? ipx_reduce_lanczos3_in_memory(in, out, hshrink, vshrink) : 1;
        if (whole != 1) return whole;
        VipsImage *down = in;
        if (vshrink > 1.0 &&
            vips_reducev(in, &down, vshrink, "kernel", VIPS_KERNEL_LANCZOS3, "gap", 0.0, NULL)) {
            return -1;
        }
        if (down == in) g_object_ref(in);
        int status = ipx_reduce_across_lanczos3(down, out, hshrink);
        g_object_unref(down);
        if (status != 1) return status;
    }
    return vips_resize(in, out, 1.0 / hshrink, "vscale", 1.0 / vshrink, "gap", 0.0, "kernel", VIPS_KERNEL_LANCZOS3, NULL);
}

int ipx_vips_reduce_lanczos3_exact(VipsImage *in, VipsImage **out, double hshrink, double vshrink) {
    VipsImage *t[5] = {NULL};
    int status = vips_cast(in, &t[0], VIPS_FORMAT_DOUBLE, NULL)
        || vips_reducev(t[0], &t[1], vshrink, "kernel", VIPS_KERNEL_LANCZOS3, "gap", 0.0, NULL)
        || vips_reduceh(t[1], &t[2], hshrink, "kernel", VIPS_KERNEL_LANCZOS3, "gap", 0.0, NULL)
        || vips_round(t[2], &t[3], VIPS_OPERATION_ROUND_RINT, NULL)
        || vips_cast(t[3], &t[4], VIPS_FORMAT_UCHAR, NULL)
        || ipx_vips_copy_memory(t[4], out);
    for (int i = 0; i < 5; i++) if (t[i]) g_object_unref(t[i]);
    return status ? -1 : 0;
}

int ipx_vips_reducev_lanczos3(VipsImage *in, VipsImage **out, double shrink) {
    VipsImage *reduced = NULL;
    if (vips_reducev(in, &reduced, shrink, "kernel", VIPS_KERNEL_LANCZOS3, "gap", 0.0, NULL)) return -1;
    int status = ipx_vips_copy_memory(reduced, out);
    g_object_unref(reduced);
    return status;
}

int ipx_vips_reduceh_lanczos3(VipsImage *in, VipsImage **out, double shrink) {
    VipsImage *reduced = NULL;
    if (vips_reduceh(in, &reduced, shrink, "kernel", VIPS_KERNEL_LANCZOS3, "gap", 0.0, NULL)) return -1;
    int status = ipx_vips_copy_memory(reduced, out);
    g_object_unref(reduced);
    return status;
}

/* Whether an image in memory has an alpha band that is not opaque everywhere (one pass over it). */
int ipx_vips_has_real_alpha(VipsImage *in) {
    return vips_image_hasalpha(in) && !ipx_vips_alpha_is_opaque(in);
}

/* Reduces by `hshrink` across and `vshrink` down with Lanczos3 alone. libvips 8.14's resize box-shrinks
   first from a 4x reduction on, and on an image in memory that box shrink costs several times the
   Lanczos reduce, as does thumbnail's premultiplied float resize of an RGBA image whose alpha is opaque
   (bench/RESULTS.md, 2026-11-26 (one decode for a srcset)). With `premultiply` (a real alpha) the reduce is premultiplied, as
   vips_thumbnail does. */
int ipx_vips_reduce_lanczos(VipsImage *in, VipsImage **out, double hshrink, double vshrink, int premultiply) {
    if (!premultiply) {
        return ipx_vips_resize_lanczos(in, out, hshrink, vshrink);
    }
    VipsImage *premultiplied = NULL, *reduced = NULL, *unpremultiplied = NULL;
    int status = vips_premultiply(in, &premultiplied, NULL)
        || ipx_vips_resize_lanczos(premultiplied, &reduced, hshrink, vshrink)
        || vips_unpremultiply(reduced, &unpremultiplied, NULL)
        || vips_cast(unpremultiplied, out, vips_image_get_format(in), NULL);
    if (premultiplied) g_object_unref(premultiplied);
    if (reduced) g_object_unref(reduced);
    if (unpremultiplied) g_object_unref(unpremultiplied);
    return status ? -1 : 0;
}

/* Bytes an image's pixels take in memory (all bands, all frames). */
size_t ipx_vips_memory_bytes(VipsImage *in) {
    return VIPS_IMAGE_SIZEOF_IMAGE(in);
}

int ipx_vips_webpload_scaled(const void *buffer, size_t length, double scale, VipsImage **out) {
    VipsImage *loaded = NULL;
    if (vips_webpload_buffer((void *)buffer, length, &loaded, "scale", scale, "fail_on", VIPS_FAIL_ON_ERROR, NULL)) {
        return -1;
    }
    int status = ipx_vips_copy_memory(loaded, out);
    g_object_unref(loaded);
    return status;
}
