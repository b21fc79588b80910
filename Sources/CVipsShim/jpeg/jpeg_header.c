#include "vips_shim.h"
#include <jpeglib.h>
#include <jerror.h>
#include <libexif/exif-data.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* A JPEG's header as libvips' jpegload reports it (size, bands, EXIF orientation, ICC profile), read by
 * libjpeg and libexif directly.
 *
 * libvips' header read of a JPEG first asks every loader whether the bytes are theirs, builds an image
 * object, formats every EXIF tag it finds into a string field and parses the resolution; on a miss of a
 * baseline web JPEG that was ~0.05-0.15 ms of glib, gobject and libexif work on the request's task for
 * four numbers (bench/RESULTS.md, 2026-11-26 (the fixed cost of a miss)). Here:
 *   - libjpeg reads the markers up to the first scan (jpeg_read_header) and assembles the ICC profile
 *     from its APP2 segments (jpeg_read_icc_profile);
 *   - libexif parses the first APP1 segment that starts "Exif", as libvips does (the specification's
 *     fix-ups off while loading), and the orientation is IFD 0's Orientation tag, 1 unless it is 1-8.
 * Nothing is parsed by this code itself. Whenever the answer could differ from libvips' (libjpeg raises
 * an error or a warning, the colour space is not grey, YCbCr/RGB or CMYK/YCCK, the APP2 segments do not
 * make a profile libjpeg accepts, the orientation is not a SHORT or LONG), 1 is returned and the caller
 * asks libvips. */

struct ipx_header_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
};

static void ipx_header_error_exit(j_common_ptr info) {
    longjmp(((struct ipx_header_error *)info->err)->jump, 1);
}

/* Any warning (a corrupt marker, data before the frame): libvips' case. */
static void ipx_header_emit(j_common_ptr info, int level) {
    if (level < 0) longjmp(((struct ipx_header_error *)info->err)->jump, 1);
}

static void ipx_header_silent(j_common_ptr info) { (void)info; }

/* IFD 0's Orientation of an APP1 "Exif" payload: 1-8, 1 when absent or out of range, 0 when it is
 * stored in a form libvips' reading might treat differently. */
static int ipx_exif_orientation(const unsigned char *data, unsigned int length) {
    ExifData *exif = exif_data_new();
    if (!exif) return 0;
    exif_data_unset_option(exif, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
    exif_data_load_data(exif, data, length);
    int orientation = 1;
    ExifEntry *entry = exif_content_get_entry(exif->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION);
    if (entry && entry->components >= 1 && entry->data) {
        ExifByteOrder order = exif_data_get_byte_order(exif);
        long value = 0;
        if (entry->format == EXIF_FORMAT_SHORT && entry->size >= 2) {
            value = exif_get_short(entry->data, order);
        } else if (entry->format == EXIF_FORMAT_LONG && entry->size >= 4) {
            value = (long)exif_get_long(entry->data, order);
        } else {
            orientation = 0;
        }
        if (orientation && value >= 1 && value <= 8) orientation = (int)value;
    }
    exif_data_unref(exif);
    return orientation;
}

int ipx_jpeg_header(const void *buffer, size_t length, int *width, int *height, int *orientation, int *bands,
                    int *colour_managed) {
    if (length < 4 || length > (size_t)0x7fffffff) return 1;
    struct jpeg_decompress_struct info;
    struct ipx_header_error error;
    /* Read after a longjmp out of libjpeg, so kept in memory. */
    JOCTET *volatile icc = NULL;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = ipx_header_error_exit;
    error.manager.emit_message = ipx_header_emit;
    error.manager.output_message = ipx_header_silent;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&info);
        free(icc);
        return 1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, (const unsigned char *)buffer, (unsigned long)length);
    jpeg_save_markers(&info, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(&info, JPEG_APP0 + 2, 0xFFFF);
    if (jpeg_read_header(&info, TRUE) != JPEG_HEADER_OK) longjmp(error.jump, 1);
    int components = 0, cmyk = 0;
    switch (info.out_color_space) {
    case JCS_GRAYSCALE: components = 1; break;
    case JCS_RGB: components = 3; break;
    case JCS_CMYK: components = 4; cmyk = 1; break;
    default: break;
    }
    if (!components || info.num_components != components || info.data_precision != 8) longjmp(error.jump, 1);
    int exif_orientation = 1, saw_exif = 0, saw_icc = 0;
    for (jpeg_saved_marker_ptr marker = info.marker_list; marker; marker = marker->next) {
        if (marker->marker == JPEG_APP0 + 1 && marker->data_length > 4 && !memcmp(marker->data, "Exif", 4)) {
            /* Two EXIF blocks: which one libvips reads is its business. */
            if (saw_exif) longjmp(error.jump, 1);
            saw_exif = 1;
            exif_orientation = ipx_exif_orientation(marker->data, marker->data_length);
            if (!exif_orientation) longjmp(error.jump, 1);
        }
        if (marker->marker == JPEG_APP0 + 2 && marker->data_length > 14 && !memcmp(marker->data, "ICC_PROFILE", 11)) saw_icc = 1;
    }
    JOCTET *profile = NULL;
    unsigned int profile_length = 0;
    if (saw_icc) {
        if (!jpeg_read_icc_profile(&info, &profile, &profile_length) || !profile) longjmp(error.jump, 1);
        icc = profile;
    }
    /* As ipx_vips_header: 2 for an RGB image with a profile other than sRGB, 1 for any other profile or
       CMYK, 0 for sRGB numbers. */
    int managed = cmyk || (icc && components < 3);
    if (icc && components == 3) managed = ipx_icc_is_srgb(icc, profile_length) ? 0 : 2;
    *width = (int)info.image_width;
    *height = (int)info.image_height;
    *orientation = exif_orientation;
    *bands = components;
    *colour_managed = managed;
    jpeg_destroy_decompress(&info);
    free(icc);
    return 0;
}
