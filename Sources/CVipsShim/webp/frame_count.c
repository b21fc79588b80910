#include "vips_shim.h"
#include <gif_lib.h>
#include <string.h>
#include <webp/demux.h>
#include <webp/mux.h>

/* Frame counts of animated sources, read by the formats' own libraries (libwebpdemux, giflib) from the
 * container structure alone: no pixel is decoded, so a file of thousands of frames is counted in
 * microseconds and refused before any loader runs. libvips' own count is not used: its
 * vips_image_get_n_pages() reports 1 for 1000 frames or more, and its GIF loader stops counting at 4097. */

int ipx_webp_frame_count(const void *buffer, size_t length) {
    WebPData data = {buffer, length};
    WebPDemuxState state;
    WebPDemuxer *demux = WebPDemuxPartial(&data, &state);
    if (!demux) return -1;
    int frames = state == WEBP_DEMUX_DONE ? (int)WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT) : -1;
    WebPDemuxDelete(demux);
    return frames;
}

struct ipx_gif_reader {
    const GifByteType *data;
    size_t length, offset;
};

static int ipx_gif_read(GifFileType *gif, GifByteType *out, int wanted) {
    struct ipx_gif_reader *reader = gif->UserData;
    size_t left = reader->length - reader->offset;
    size_t count = (size_t)wanted < left ? (size_t)wanted : left;
    memcpy(out, reader->data + reader->offset, count);
    reader->offset += count;
    return (int)count;
}

int ipx_gif_frame_count(const void *buffer, size_t length, int limit) {
    struct ipx_gif_reader reader = {buffer, length, 0};
    int error = 0;
    GifFileType *gif = DGifOpen(&reader, ipx_gif_read, &error);
    if (!gif) return -1;
    int frames = 0, failed = 0;
    GifRecordType record;
    do {
        if (DGifGetRecordType(gif, &record) == GIF_ERROR) {
            failed = 1;
            break;
        }
        if (record == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) == GIF_ERROR) {
                failed = 1;
                break;
            }
            /* DGifGetImageDesc keeps every descriptor: drop them, only the count matters. */
            frames++;
            if (frames > limit) break;
            int code_size = 0;
            GifByteType *block = NULL;
            /* The LZW data is stepped over block by block, never decompressed. */
            if (DGifGetCode(gif, &code_size, &block) == GIF_ERROR) {
                failed = 1;
                break;
            }
            while (block) {
                if (DGifGetCodeNext(gif, &block) == GIF_ERROR) {
                    failed = 1;
                    break;
                }
            }
            if (failed) break;
        } else if (record == EXTENSION_RECORD_TYPE) {
            int code = 0;
            GifByteType *extension = NULL;
            if (DGifGetExtension(gif, &code, &extension) == GIF_ERROR) {
                failed = 1;
                break;
            }
            while (extension) {
                if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) {
                    failed = 1;
                    break;
                }
            }
            if (failed) break;
        }
    } while (record != TERMINATE_RECORD_TYPE);
    DGifCloseFile(gif, &error);
    /* A file cut short still has the frames counted so far (libvips shows what is there). */
    return failed && frames == 0 ? -1 : frames;
}

int ipx_webp_strip_metadata(const void *buffer, size_t length, void **out, size_t *out_length) {
    return ipx_webp_strip_metadata_but_icc(buffer, length, 0, out, out_length);
}

int ipx_webp_strip_metadata_but_icc(const void *buffer, size_t length, int keep_icc, void **out, size_t *out_length) {
    WebPData input = {buffer, length};
    WebPMux *mux = WebPMuxCreate(&input, 0);
    if (!mux) return -1;
    const char *chunks[] = {"EXIF", "XMP ", "ICCP"};
    size_t count = keep_icc ? 2 : 3;
    for (size_t i = 0; i < count; i++) {
        WebPMuxError status = WebPMuxDeleteChunk(mux, chunks[i]);
        if (status != WEBP_MUX_OK && status != WEBP_MUX_NOT_FOUND) {
            WebPMuxDelete(mux);
            return -1;
        }
    }
    WebPData assembled = {NULL, 0};
    WebPMuxError status = WebPMuxAssemble(mux, &assembled);
    WebPMuxDelete(mux);
    if (status != WEBP_MUX_OK) {
        WebPDataClear(&assembled);
        return -1;
    }
    void *copy = g_malloc(assembled.size);
    memcpy(copy, assembled.bytes, assembled.size);
    *out = copy;
    *out_length = assembled.size;
    WebPDataClear(&assembled);
    return 0;
}
