// Overlays (watermarks and text) composited over every frame of an image.
#include "vips_shim.h"

/* Unrefs each non-NULL image of a NULL-terminated list. */
static void ipx_unref_all(VipsImage **images, int count) {
    for (int i = 0; i < count; i++) {
        if (images[i]) g_object_unref(images[i]);
    }
}

int ipx_vips_overlay_prepare(VipsImage *in, double scale, double opacity, VipsImage **out) {
    VipsImage *t[5] = {NULL, NULL, NULL, NULL, NULL};
    int result = -1;
    if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_sRGB, NULL)) goto done;
    if (vips_cast_uchar(t[0], &t[1], NULL)) goto done;
    if (t[1]->Bands == 4) {
        t[2] = t[1];
        g_object_ref(t[2]);
    } else if (vips_addalpha(t[1], &t[2], NULL)) {
        goto done;
    }
    if (scale > 0 && scale != 1.0) {
        if (vips_resize(t[2], &t[3], scale, NULL)) goto done;
    } else {
        t[3] = t[2];
        g_object_ref(t[3]);
    }
    if (opacity < 1.0) {
        double a[4] = {1, 1, 1, opacity < 0 ? 0 : opacity};
        double b[4] = {0, 0, 0, 0};
        VipsImage *linear = NULL;
        if (vips_linear(t[3], &linear, a, b, 4, NULL)) goto done;
        int cast = vips_cast_uchar(linear, &t[4], NULL);
        g_object_unref(linear);
        if (cast) goto done;
        *out = t[4];
        t[4] = NULL;
    } else {
        *out = t[3];
        t[3] = NULL;
    }
    result = 0;
done:
    ipx_unref_all(t, 5);
    return result;
}

int ipx_vips_overlay_place(VipsImage *overlay, int frame_width, int frame_height, int left, int top, int tile,
                           int gap_x, int gap_y, VipsImage **out) {
    double transparent[4] = {0, 0, 0, 0};
    VipsArrayDouble *background = vips_array_double_new(transparent, 4);
    int result = -1;
    if (!tile) {
        result = vips_embed(overlay, out, left, top, frame_width, frame_height, "extend", VIPS_EXTEND_BACKGROUND,
                            "background", background, NULL);
    } else {
        VipsImage *cell = NULL, *tiled = NULL;
        int cell_width = overlay->Xsize + gap_x, cell_height = overlay->Ysize + gap_y;
        if (!vips_embed(overlay, &cell, 0, 0, cell_width, cell_height, "extend", VIPS_EXTEND_BACKGROUND, "background",
                        background, NULL)) {
            int across = frame_width / cell_width + 1, down = frame_height / cell_height + 1;
            if (!vips_replicate(cell, &tiled, across, down, NULL)) {
                result = vips_extract_area(tiled, out, 0, 0, frame_width, frame_height, NULL);
            }
        }
        if (cell) g_object_unref(cell);
        if (tiled) g_object_unref(tiled);
    }
    vips_area_unref(VIPS_AREA(background));
    return result;
}

int ipx_vips_text_layer(const char *markup, const char *font, int width_limit, const double *rgba, VipsImage **out) {
    VipsImage *t[5] = {NULL, NULL, NULL, NULL, NULL};
    int result = -1;
    if (vips_text(&t[0], markup, "font", font, "width", width_limit, "dpi", 72, "wrap", VIPS_TEXT_WRAP_WORD_CHAR, NULL))
        goto done;
    /* The mask, scaled by the colour's alpha (which carries the opacity), is the alpha band. */
    double a = rgba[3] / 255.0, b = 0;
    if (vips_linear(t[0], &t[1], &a, &b, 1, NULL)) goto done;
    if (vips_cast_uchar(t[1], &t[2], NULL)) goto done;
    double colour[3] = {rgba[0], rgba[1], rgba[2]};
    t[3] = vips_image_new_from_image(t[2], colour, 3);
    if (!t[3]) goto done;
    if (vips_bandjoin2(t[3], t[2], &t[4], NULL)) goto done;
    if (vips_copy(t[4], out, "interpretation", VIPS_INTERPRETATION_sRGB, NULL)) goto done;
    result = 0;
done:
    ipx_unref_all(t, 5);
    return result;
}

int ipx_vips_composite_frames(VipsImage *in, VipsImage *layer, int page_height, VipsImage **out) {
    VipsImage *t[5] = {NULL, NULL, NULL, NULL, NULL};
    int result = -1;
    int frames = page_height > 0 && in->Ysize % page_height == 0 ? in->Ysize / page_height : 1;
    int had_alpha = in->Bands == 2 || in->Bands == 4;
    if (frames > 1) {
        if (vips_replicate(layer, &t[0], 1, frames, NULL)) goto done;
    } else {
        t[0] = layer;
        g_object_ref(t[0]);
    }
    if (in->Bands < 3) {
        if (vips_colourspace(in, &t[1], VIPS_INTERPRETATION_sRGB, NULL)) goto done;
    } else {
        t[1] = in;
        g_object_ref(t[1]);
    }
    if (vips_composite2(t[1], t[0], &t[2], VIPS_BLEND_MODE_OVER, NULL)) goto done;
    if (vips_cast_uchar(t[2], &t[3], NULL)) goto done;
    if (!had_alpha) {
        if (vips_extract_band(t[3], &t[4], 0, "n", 3, NULL)) goto done;
    } else {
        t[4] = t[3];
        t[3] = NULL;
    }
    /* The first input's metadata (page height, delays, profile) is kept. */
    *out = t[4];
    t[4] = NULL;
    result = 0;
done:
    ipx_unref_all(t, 5);
    return result;
}
