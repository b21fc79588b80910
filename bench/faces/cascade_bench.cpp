// Times OpenCV's cascade classifier on grey images, one thread, best of 5, at the pyramid steps and
// smallest faces given, and prints the faces found: what bench/faces/run.sh compares the cascades with.
//   cascade_bench CASCADE IMAGE [STEP:MIN ...]
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s CASCADE IMAGE [STEP:MIN ...]\n", argv[0]);
        return 2;
    }
    cv::setNumThreads(1);
    cv::CascadeClassifier classifier;
    if (!classifier.load(argv[1])) return 1;
    cv::Mat grey = cv::imread(argv[2], cv::IMREAD_GRAYSCALE);
    if (grey.empty()) return 1;
    cv::Mat equalised;
    cv::equalizeHist(grey, equalised);
    std::vector<std::string> settings(argv + 3, argv + argc);
    if (settings.empty()) settings = {"1.1:20", "1.15:20", "1.2:24"};
    for (const std::string &setting : settings) {
        double step = std::stod(setting.substr(0, setting.find(':')));
        int smallest = std::stoi(setting.substr(setting.find(':') + 1));
        double best = 1e9;
        std::vector<cv::Rect> faces;
        for (int round = 0; round < 5; round++) {
            faces.clear();
            auto start = std::chrono::steady_clock::now();
            classifier.detectMultiScale(equalised, faces, step, 4, cv::CASCADE_SCALE_IMAGE, cv::Size(smallest, smallest));
            best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        }
        std::printf("%dx%d step %.2f min %d: %.1f ms, %zu faces", grey.cols, grey.rows, step, smallest, best, faces.size());
        for (const cv::Rect &face : faces) std::printf(" [%d,%d %dx%d]", face.x, face.y, face.width, face.height);
        std::printf("\n");
    }
    return 0;
}
