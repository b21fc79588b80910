#include "vips_shim.h"
#include "../platform/monotonic_clock.h"
#include <webp/decode.h>
#include <webp/demux.h>
#include <stdlib.h>

/* A still WebP decoded by libwebp, scaled while it decodes, straight into one memory image on the calling
 * thread.
 *
 * libvips' webpload makes the same libwebp call with the same scaled size (so the pixels are the same),
 * but around it it decodes into an RGBA frame, paints that into a second RGBA frame, and copies rows from
 * there into its output, which the loader writes into yet another memory image: four images of the
 * decode's size at 3 to 4 bytes a pixel, where this decoder holds one, RGB unless the file has alpha.
 * That made every WebP of 1000 px and more a job larger than the whole transform budget (it ran alone,
 * the other cores waiting; bench/RESULTS.md, 2026-11-26 (WebP decoded once into memory)).
 *
 * libwebp parses the file (its demuxer the container, its decoder the bitstream); this code only drives
 * them. An animation, or a canvas of more than `max_pixels` (the limit the caller checked the header
 * against), is not decoded here (1: libvips' case). The bitstream is fed to libwebp's incremental decoder
 * in steps, so the deadline is looked at between them; data libwebp rejects or that ends early is 4. */

/* Bytes of the bitstream handed to libwebp between two looks at the deadline. */
#define IPX_WEBP_STEP (256 * 1024)

static const struct {
    const char *vips;
    const char *fourcc;
    uint32_t flag;
} ipx_webp_metadata[] = {
    {VIPS_META_ICC_NAME, "ICCP", ICCP_FLAG},
    {VIPS_META_EXIF_NAME, "EXIF", EXIF_FLAG},
    {VIPS_META_XMP_NAME, "XMP ", XMP_FLAG},
};

/* Feeds `length` bytes to libwebp's incremental decoder in steps. 0 done, 2 past the deadline, 4 rejected
 * or ended early. */
static int ipx_webp_decode_into(const uint8_t *data, size_t length, WebPDecoderConfig *config, long long deadline_ns) {
    WebPIDecoder *decoder = WebPIDecode(NULL, 0, config);
    if (!decoder) return 4;
    int status = 4;
    size_t fed = 0;
    while (fed < length) {
        fed = length - fed > IPX_WEBP_STEP ? fed + IPX_WEBP_STEP : length;
        VP8StatusCode code = WebPIUpdate(decoder, data, fed);
        if (code == VP8_STATUS_OK) {
            status = 0;
            break;
        }
        if (code != VP8_STATUS_SUSPENDED) break;
        if (deadline_ns > 0 && ipx_monotonic_ns() > deadline_ns) {
            status = 2;
            break;
        }
    }
    WebPIDelete(decoder);
    return status;
}

/* owned: the image gets memory of its own (ipx_pixel_image), for a decode kept beyond this transform;
 * else the calling thread's buffer (ipx_thread_buffer_image). */
static int ipx_webp_decode(const void *buffer, size_t length, double scale, int orientation, long long max_pixels,
                           long long deadline_ns, int owned, VipsImage **out) {
    if (length == 0 || !(scale > 0 && scale <= 1)) return 1;
    WebPData data = {(const uint8_t *)buffer, length};
    WebPDemuxer *demux = WebPDemux(&data);
    if (!demux) return 1;
    uint32_t flags = WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS);
    long long canvas_width = WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH);
    long long canvas_height = WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
    WebPIterator frame;
    if ((flags & ANIMATION_FLAG) || canvas_width < 1 || canvas_height < 1 || canvas_width * canvas_height > max_pixels ||
        !WebPDemuxGetFrame(demux, 1, &frame)) {
        WebPDemuxDelete(demux);
        return 1;
    }
    /* libvips' rounding of the scaled size (webp2vips.c), so that both decodes are the same pixels. */
    int width = (int)VIPS_RINT((double)canvas_width * scale);
    int height = (int)VIPS_RINT((double)canvas_height * scale);
    int bands = (flags & ALPHA_FLAG) ? 4 : 3;
    int status = 1;
    VipsImage *image = NULL;
    if (width >= 1 && height >= 1 && frame.width == canvas_width && frame.height == canvas_height) {
        image = owned ? ipx_pixel_image(width, height, bands, VIPS_INTERPRETATION_sRGB)
                      : ipx_thread_buffer_image(width, height, bands, VIPS_INTERPRETATION_sRGB);
        status = image ? 0 : -1;
    }
    if (status == 0) {
        WebPDecoderConfig config;
        WebPInitDecoderConfig(&config);
        config.output.colorspace = bands == 4 ? MODE_RGBA : MODE_RGB;
        config.output.is_external_memory = 1;
        config.output.u.RGBA.rgba = VIPS_IMAGE_ADDR(image, 0, 0);
        config.output.u.RGBA.stride = (int)VIPS_IMAGE_SIZEOF_LINE(image);
        config.output.u.RGBA.size = (size_t)VIPS_IMAGE_SIZEOF_IMAGE(image);
        if (scale != 1.0) {
            config.options.use_scaling = 1;
            config.options.scaled_width = width;
            config.options.scaled_height = height;
        }
        status = ipx_webp_decode_into(frame.fragment.bytes, frame.fragment.size, &config, deadline_ns);
    }
    if (status == 0) {
        for (size_t index = 0; index < sizeof(ipx_webp_metadata) / sizeof(ipx_webp_metadata[0]); index++) {
            WebPChunkIterator chunk;
            if ((flags & ipx_webp_metadata[index].flag) &&
                WebPDemuxGetChunk(demux, ipx_webp_metadata[index].fourcc, 1, &chunk)) {
                vips_image_set_blob_copy(image, ipx_webp_metadata[index].vips, chunk.chunk.bytes, chunk.chunk.size);
                WebPDemuxReleaseChunkIterator(&chunk);
            }
        }
        if (orientation > 1) vips_image_set_int(image, VIPS_META_ORIENTATION, orientation);
        *out = image;
    } else if (image) {
        g_object_unref(image);
    }
    WebPDemuxReleaseIterator(&frame);
    WebPDemuxDelete(demux);
    return status;
}

int ipx_webp_decode_scaled(const void *buffer, size_t length, double scale, int orientation, long long max_pixels,
                           long long deadline_ns, VipsImage **out) {
    return ipx_webp_decode(buffer, length, scale, orientation, max_pixels, deadline_ns, 0, out);
}

int ipx_webp_decode_whole(const void *buffer, size_t length, int orientation, long long max_pixels, long long deadline_ns,
                          VipsImage **out) {
    return ipx_webp_decode(buffer, length, 1.0, orientation, max_pixels, deadline_ns, 1, out);
}
