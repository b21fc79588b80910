#include "face_shim.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

/* Face detection for g=face, filter=redact_faces and /info?faces=1 (issue #62): OpenCV's objdetect with the
   cascades Debian ships in opencv-data (by default the improved LBP frontal-face cascade: on 640 px
   photographs 4-5x faster than the Haar cascade thumbor uses, with the same faces found and none in the
   faceless test photographs; bench/results/20261129-04-faces-and-svg/NOTES.md); no model is fetched at
   run time. OpenCV's CascadeClassifier keeps scratch state while it detects, so each thread has its own
   copy, loaded from the path given once at start. */

namespace {
std::mutex start_lock;
std::string cascade_path;
bool started = false;

cv::CascadeClassifier *thread_classifier() {
    thread_local cv::CascadeClassifier classifier;
    thread_local bool loaded = false;
    if (!loaded) {
        std::string path;
        {
            std::lock_guard<std::mutex> guard(start_lock);
            if (!started) return nullptr;
            path = cascade_path;
        }
        if (!classifier.load(path)) return nullptr;
        loaded = true;
    }
    return &classifier;
}
}  // namespace

extern "C" int ipx_faces_start(const char *path) {
    try {
        cv::setNumThreads(1);
        cv::CascadeClassifier probe;
        if (!path || !probe.load(path)) return -1;
        std::lock_guard<std::mutex> guard(start_lock);
        cascade_path = path;
        started = true;
        return 0;
    } catch (...) {
        return -1;
    }
}

extern "C" int ipx_faces_detect(const unsigned char *grey, int width, int height, size_t stride, int min_side,
                                ipx_face_box *boxes, int max_boxes) {
    if (!grey || width < 1 || height < 1 || stride < (size_t)width || max_boxes < 0) return -1;
    try {
        cv::CascadeClassifier *classifier = thread_classifier();
        if (!classifier) return -1;
        cv::Mat image(height, width, CV_8UC1, const_cast<unsigned char *>(grey), stride);
        cv::Mat equalised;
        cv::equalizeHist(image, equalised);
        std::vector<cv::Rect> faces;
        int smallest = std::max(12, min_side);
        classifier->detectMultiScale(equalised, faces, 1.15, 4, cv::CASCADE_SCALE_IMAGE, cv::Size(smallest, smallest));
        std::sort(faces.begin(), faces.end(), [](const cv::Rect &a, const cv::Rect &b) {
            if (a.area() != b.area()) return a.area() > b.area();
            return a.x != b.x ? a.x < b.x : a.y < b.y;
        });
        int count = std::min((int)faces.size(), max_boxes);
        for (int i = 0; i < count; i++) {
            boxes[i].x = faces[i].x;
            boxes[i].y = faces[i].y;
            boxes[i].width = faces[i].width;
            boxes[i].height = faces[i].height;
        }
        return count;
    } catch (...) {
        return -1;
    }
}
