#ifndef IPX_FACE_SHIM_H
#define IPX_FACE_SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A face found by ipx_faces_detect, in pixels of the image searched.
typedef struct {
    int x, y, width, height;
} ipx_face_box;

/// Most faces ipx_faces_detect reports (the largest first).
#define IPX_FACES_MAX 32

/// Loads the face cascade (an OpenCV cascade file, e.g. opencv-data's
/// /usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml) for every thread, and keeps OpenCV
/// from starting threads of its own. 0 when it loaded; -1 when the file is missing or not a cascade.
int ipx_faces_start(const char *cascade_path);

/// Finds frontal faces in a grey image of `width` x `height` bytes (rows `stride` bytes apart): OpenCV's
/// cascade classifier over its pyramid (scale step 1.15, 4 neighbours, faces of at least `min_side`
/// pixels), histogram-equalised first. Writes up to `max_boxes` boxes, largest first, and returns how
/// many were found (at most `max_boxes`); -1 before ipx_faces_start succeeded or when OpenCV fails.
/// The caller bounds the work by the image's size (the service searches at most 640 px a side).
int ipx_faces_detect(const unsigned char *grey, int width, int height, size_t stride, int min_side,
                     ipx_face_box *boxes, int max_boxes);

#ifdef __cplusplus
}
#endif

#endif
