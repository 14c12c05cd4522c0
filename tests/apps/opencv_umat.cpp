// OpenCV's OpenCL path (cv::UMat) from C++, unmodified: the operations of opencv_ops.py
// through the same library code that Python's cv2 binds, for hosts where cv2 and its 380 MB
// of libraries are not installed (a GPU host: tests/gpu/apps_on_device.sh carries this
// program with libopencv_core and libopencv_imgproc only).
//
//   rgpu-opencv-umat run OP OUT     runs OP on OpenCV's default OpenCL device, saves the result
//   rgpu-opencv-umat compare A B    exits 1 unless both results are identical
//   rgpu-opencv-umat list           the operations
//
// OPENCV_OPENCL_RAISE_ERROR=1 (set by tests/apps/opencv_test.sh) turns a failed OpenCL kernel
// into an error instead of a quiet fallback to the CPU code.
#include <opencv2/core.hpp>
#include <opencv2/core/ocl.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

// The same inputs in every build: 8-bit BGR images and a float matrix from a fixed generator.
struct Inputs {
  cv::Mat bgr, other, m;
};

uint64_t NextRandom(uint64_t& s) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  return s >> 33;
}

Inputs MakeInputs() {
  uint64_t s = 11;
  Inputs in;
  in.bgr.create(480, 640, CV_8UC3);
  in.other.create(480, 640, CV_8UC3);
  in.m.create(256, 256, CV_32F);
  for (auto* img : {&in.bgr, &in.other})
    for (size_t i = 0; i < img->total() * img->elemSize(); ++i)
      img->data[i] = static_cast<uint8_t>(NextRandom(s));
  auto* f = in.m.ptr<float>();
  for (size_t i = 0; i < in.m.total(); ++i)
    f[i] = static_cast<float>(NextRandom(s) % 1000000) / 1e6f;
  return in;
}

using Op = std::function<cv::UMat(const cv::UMat&, const cv::UMat&, const cv::UMat&)>;

const std::vector<std::pair<std::string, Op>>& Ops() {
  static const std::vector<std::pair<std::string, Op>> ops = {
      {"resize_linear",
       [](auto& u, auto&, auto&) {
         cv::UMat o;
         cv::resize(u, o, {320, 240}, 0, 0, cv::INTER_LINEAR);
         return o;
       }},
      {"resize_area",
       [](auto& u, auto&, auto&) {
         cv::UMat o;
         cv::resize(u, o, {160, 120}, 0, 0, cv::INTER_AREA);
         return o;
       }},
      {"gaussian_blur",
       [](auto& u, auto&, auto&) {
         cv::UMat o;
         cv::GaussianBlur(u, o, {5, 5}, 1.5);
         return o;
       }},
      {"cvtcolor_gray",
       [](auto& u, auto&, auto&) {
         cv::UMat o;
         cv::cvtColor(u, o, cv::COLOR_BGR2GRAY);
         return o;
       }},
      {"cvtcolor_hsv",
       [](auto& u, auto&, auto&) {
         cv::UMat o;
         cv::cvtColor(u, o, cv::COLOR_BGR2HSV);
         return o;
       }},
      {"add",
       [](auto& u, auto& v, auto&) {
         cv::UMat o;
         cv::add(u, v, o);
         return o;
       }},
      {"multiply",
       [](auto& u, auto& v, auto&) {
         cv::UMat o;
         cv::multiply(u, v, o, 1.0 / 255);
         return o;
       }},
      {"add_weighted",
       [](auto& u, auto& v, auto&) {
         cv::UMat o;
         cv::addWeighted(u, 0.3, v, 0.7, 2.0, o);
         return o;
       }},
      {"absdiff",
       [](auto& u, auto& v, auto&) {
         cv::UMat o;
         cv::absdiff(u, v, o);
         return o;
       }},
      {"transpose",
       [](auto&, auto&, auto& m) {
         cv::UMat o;
         cv::transpose(m, o);
         return o;
       }},
      {"flip",
       [](auto&, auto&, auto& m) {
         cv::UMat o;
         cv::flip(m, o, -1);
         return o;
       }},
      {"gemm",
       [](auto&, auto&, auto& m) {
         cv::UMat o;
         cv::gemm(m, m, 1.0, cv::noArray(), 0.0, o);
         return o;
       }},
  };
  return ops;
}

// A result file: rows, cols, type (int32 each), then the pixels row by row.
bool Save(const cv::Mat& m, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  const int32_t head[3] = {m.rows, m.cols, m.type()};
  f.write(reinterpret_cast<const char*>(head), sizeof(head));
  for (int r = 0; r < m.rows; ++r)
    f.write(reinterpret_cast<const char*>(m.ptr(r)),
            static_cast<std::streamsize>(m.cols * m.elemSize()));
  return static_cast<bool>(f);
}

bool Load(const std::string& path, cv::Mat* m) {
  std::ifstream f(path, std::ios::binary);
  int32_t head[3];
  if (!f.read(reinterpret_cast<char*>(head), sizeof(head)) || head[0] <= 0 || head[1] <= 0)
    return false;
  m->create(head[0], head[1], head[2]);
  return static_cast<bool>(f.read(reinterpret_cast<char*>(m->data),
                                  static_cast<std::streamsize>(m->total() * m->elemSize())));
}

int Run(const std::string& name, const std::string& out) {
  cv::ocl::setUseOpenCL(true);
  if (!cv::ocl::useOpenCL()) {
    std::cerr << "OpenCV has no OpenCL device\n";
    return 1;
  }
  const cv::ocl::Device& d = cv::ocl::Device::getDefault();
  for (auto& [n, op] : Ops()) {
    if (n != name) continue;
    std::cout << name << " on " << d.name() << " (" << d.vendorName() << ", " << d.version()
              << ")\n";
    const Inputs in = MakeInputs();
    const cv::UMat u = in.bgr.getUMat(cv::ACCESS_READ), v = in.other.getUMat(cv::ACCESS_READ),
                   m = in.m.getUMat(cv::ACCESS_READ);
    const cv::UMat r = op(u, v, m);
    cv::ocl::finish();
    return Save(r.getMat(cv::ACCESS_READ), out) ? 0 : 1;
  }
  std::cerr << "unknown operation " << name << "\n";
  return 2;
}

int Compare(const std::string& a, const std::string& b) {
  cv::Mat x, y;
  if (!Load(a, &x) || !Load(b, &y)) {
    std::cerr << "cannot read " << a << " or " << b << "\n";
    return 1;
  }
  if (x.size() != y.size() || x.type() != y.type()) {
    std::cerr << x.rows << "x" << x.cols << " type " << x.type() << " vs " << y.rows << "x"
              << y.cols << " type " << y.type() << "\n";
    return 1;
  }
  const size_t bytes = x.total() * x.elemSize();
  size_t differ = 0;
  for (size_t i = 0; i < bytes; ++i) differ += x.data[i] != y.data[i];
  if (differ) {
    std::cerr << differ << " of " << bytes << " bytes differ\n";
    return 1;
  }
  std::cout << "identical: " << x.rows << "x" << x.cols << " type " << x.type() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "list") {
    for (auto& [n, op] : Ops()) std::cout << n << (&n == &Ops().back().first ? "\n" : " ");
    return 0;
  }
  if (cmd == "run" && argc == 4) return Run(argv[2], argv[3]);
  if (cmd == "compare" && argc == 4) return Compare(argv[2], argv[3]);
  std::cerr << "usage: " << argv[0] << " run OP OUT | compare A B | list\n";
  return 2;
}
