// corun_probe: can a memory-bound kernel stream run beside a long compute-bound kernel in the
// same OpenCL context without slowing it much? Native, one device, one context, two queues.
//
//   corun_probe [--platform NAME] [--lc-us N] [--trials N] [--mib N] [--slice-groups N]
//
// LC: a spin kernel (dependent float math), 4 work-groups of 256 per compute unit, calibrated
// to about --lc-us of device time. BE: float4 saxpy slices of --slice-groups groups of 256
// that walk two --mib MiB buffers. Cases: lc_alone, be_alone, corun_lc_first (LC launched,
// then BE slices until it completes) and corun_be_first (BE stream first, then LC).
// Human text goes to stderr; one JSON object to stdout.
//
// Build: g++ -O2 -std=c++20 -Wall -Wextra -o corun_probe corun_probe.cpp -lOpenCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace {

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cl_int e_ = (x);                                                                      \
    if (e_ != CL_SUCCESS) {                                                               \
      std::fprintf(stderr, "corun_probe: %s failed: OpenCL error %d (line %d)\n", #x, e_, \
                   __LINE__);                                                             \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

using Clock = std::chrono::steady_clock;

const char* kSource =
    "__kernel void spin(__global float* out, uint iters, float a, float b) {\n"
    "  float x = (float)get_global_id(0) * 1e-6f;\n"
    "  for (uint i = 0; i < iters; ++i) x = x * a + b;\n"
    "  out[get_global_id(0)] = x;\n"
    "}\n"
    "__kernel void saxpy(__global const float4* x, __global float4* y, float a, uint off) {\n"
    "  size_t i = get_global_id(0) + off;\n"
    "  y[i] = a * x[i] + y[i];\n"
    "}\n";

constexpr size_t kLocal = 256;
constexpr size_t kMaxInFlight = 4;

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "corun_probe: %s\n", msg.c_str());
  std::exit(1);
}

struct Options {
  std::string platform;
  double lc_us = 2000;
  int trials = 50;
  size_t mib = 1024;
  size_t slice_groups = 65536;
};

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) Die("missing value for " + a);
    const char* v = argv[++i];
    if (a == "--platform")
      o.platform = v;
    else if (a == "--lc-us")
      o.lc_us = std::atof(v);
    else if (a == "--trials")
      o.trials = std::atoi(v);
    else if (a == "--mib")
      o.mib = std::strtoull(v, nullptr, 10);
    else if (a == "--slice-groups")
      o.slice_groups = std::strtoull(v, nullptr, 10);
    else
      Die("unknown option " + a);
  }
  if (o.lc_us <= 0 || o.trials <= 0 || o.mib == 0 || o.slice_groups == 0)
    Die("options must be positive");
  return o;
}

std::string PlatformName(cl_platform_id p) {
  size_t n = 0;
  CHECK(clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, nullptr, &n));
  std::string s(n, '\0');
  CHECK(clGetPlatformInfo(p, CL_PLATFORM_NAME, n, s.data(), nullptr));
  return s.c_str();
}

std::string DeviceName(cl_device_id d) {
  size_t n = 0;
  CHECK(clGetDeviceInfo(d, CL_DEVICE_NAME, 0, nullptr, &n));
  std::string s(n, '\0');
  CHECK(clGetDeviceInfo(d, CL_DEVICE_NAME, n, s.data(), nullptr));
  return s.c_str();
}

// A GPU of the named platform (any device there if it has no GPU); without a name, the first
// platform with a GPU, else the first platform's first device.
cl_device_id PickDevice(const std::string& want) {
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(0, nullptr, &np));
  if (np == 0) Die("no OpenCL platforms");
  std::vector<cl_platform_id> ps(np);
  CHECK(clGetPlatformIDs(np, ps.data(), nullptr));
  auto first = [](cl_platform_id p, cl_device_type t) -> cl_device_id {
    cl_device_id d = nullptr;
    if (clGetDeviceIDs(p, t, 1, &d, nullptr) != CL_SUCCESS) return nullptr;
    return d;
  };
  if (!want.empty()) {
    for (cl_platform_id p : ps) {
      if (PlatformName(p).find(want) == std::string::npos) continue;
      if (cl_device_id d = first(p, CL_DEVICE_TYPE_GPU)) return d;
      if (cl_device_id d = first(p, CL_DEVICE_TYPE_ALL)) return d;
    }
    Die("no device on a platform named like '" + want + "'");
  }
  for (cl_platform_id p : ps)
    if (cl_device_id d = first(p, CL_DEVICE_TYPE_GPU)) return d;
  if (cl_device_id d = first(ps[0], CL_DEVICE_TYPE_ALL)) return d;
  Die("no OpenCL device");
}

cl_ulong Prof(cl_event e, cl_profiling_info what) {
  cl_ulong t = 0;
  CHECK(clGetEventProfilingInfo(e, what, sizeof(t), &t, nullptr));
  return t;
}

double DeviceUs(cl_event e) {
  return (Prof(e, CL_PROFILING_COMMAND_END) - Prof(e, CL_PROFILING_COMMAND_START)) / 1e3;
}

bool Complete(cl_event e) {
  cl_int s = 0;
  CHECK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s), &s, nullptr));
  if (s < 0) Die("a command ended with error " + std::to_string(s));
  return s == CL_COMPLETE;
}

void SpinFor(double us) {
  auto end = Clock::now() + std::chrono::duration<double, std::micro>(us);
  while (Clock::now() < end) {
  }
}

struct Stats {
  double p50 = 0, p99 = 0, max = 0;
};

// Nearest-rank percentiles.
Stats Summarise(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    size_t k = static_cast<size_t>(std::ceil(q * v.size()));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  s.p50 = at(0.50);
  s.p99 = at(0.99);
  s.max = v.back();
  return s;
}

std::string Json(const Stats& s) {
  char b[160];
  std::snprintf(b, sizeof(b), "{\"p50\": %.1f, \"p99\": %.1f, \"max\": %.1f}", s.p50, s.p99, s.max);
  return b;
}

std::string Escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) o += c;
  }
  return o;
}

class Probe {
 public:
  Probe(cl_device_id dev, const Options& o) : dev_(dev), opt_(o) {
    cl_int err;
    CHECK(clGetDeviceInfo(dev_, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cus_), &cus_, nullptr));
    ctx_ = clCreateContext(nullptr, 1, &dev_, nullptr, nullptr, &err);
    CHECK(err);
    qlc_ = clCreateCommandQueue(ctx_, dev_, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    qbe_ = clCreateCommandQueue(ctx_, dev_, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    Build();
    MakeBuffers();
  }

  ~Probe() {
    clReleaseMemObject(lc_out_);
    clReleaseMemObject(x_);
    clReleaseMemObject(y_);
    clReleaseKernel(spin_);
    clReleaseKernel(saxpy_);
    clReleaseProgram(prog_);
    clReleaseCommandQueue(qlc_);
    clReleaseCommandQueue(qbe_);
    clReleaseContext(ctx_);
  }

  cl_uint ComputeUnits() const { return cus_; }
  cl_uint Iters() const { return iters_; }

  // Doubles iters until a launch takes a quarter of the target, then scales to the target
  // (up to 4 times, until within 5%). The first launch (build, warm-up) is not timed.
  void Calibrate() {
    iters_ = 1024;
    LcOnce();
    double t = LcMedian();
    while (t < opt_.lc_us / 4 && iters_ < (1u << 30)) {
      iters_ *= 2;
      t = LcMedian();
    }
    for (int round = 0; round < 4 && std::abs(t - opt_.lc_us) > 0.05 * opt_.lc_us; ++round) {
      double scaled = static_cast<double>(iters_) * opt_.lc_us / std::max(t, 1e-3);
      iters_ = static_cast<cl_uint>(std::clamp(scaled, 1.0, 4e9));
      t = LcMedian();
    }
    std::fprintf(stderr, "calibrated: iters=%u, one LC launch ~%.1f us\n", iters_, t);
  }

  Stats LcAlone() {
    std::vector<double> v;
    for (int i = 0; i < opt_.trials; ++i) v.push_back(LcOnce());
    return Summarise(v);
  }

  // Saxpy slices back to back for ~0.5 s, at most 4 in flight. Rate over device time.
  void BeAlone(double* slices_per_s, double* gbps) {
    std::deque<cl_event> flying;
    size_t done = 0;
    cl_ulong first_start = 0, last_end = 0;
    auto stop = Clock::now() + std::chrono::milliseconds(500);
    while (Clock::now() < stop || !flying.empty()) {
      if (Clock::now() < stop && flying.size() < kMaxInFlight) {
        flying.push_back(Slice());
        continue;
      }
      cl_event e = flying.front();
      flying.pop_front();
      CHECK(clWaitForEvents(1, &e));
      if (done == 0) first_start = Prof(e, CL_PROFILING_COMMAND_START);
      last_end = Prof(e, CL_PROFILING_COMMAND_END);
      ++done;
      CHECK(clReleaseEvent(e));
    }
    double s = (last_end - first_start) / 1e9;
    be_rate_ = done / std::max(s, 1e-9);
    *slices_per_s = be_rate_;
    *gbps = be_rate_ * SliceBytes() / 1e9;
    std::fprintf(stderr, "be_alone: %zu slices in %.3f s device time: %.1f slices/s, %.1f GB/s\n",
                 done, s, *slices_per_s, *gbps);
  }

  // One co-run case; returns its JSON object.
  std::string Corun(bool be_first) {
    std::vector<double> lc_us, queued_us;
    size_t be_total = 0, be_during = 0;
    auto t0 = Clock::now();
    for (int t = 0; t < opt_.trials; ++t) {
      std::vector<cl_event> be;  // every slice of the trial, for its profiling times
      std::deque<size_t> flying;
      auto launch = [&] {
        be.push_back(Slice());
        flying.push_back(be.size() - 1);
      };
      if (be_first)
        for (int i = 0; i < 2; ++i) launch();
      cl_event lc = LcLaunch();
      CHECK(clFlush(qlc_));
      if (!be_first) SpinFor(20);
      while (!Complete(lc)) {
        if (flying.size() < kMaxInFlight)
          launch();
        else if (Complete(be[flying.front()]))
          flying.pop_front();
      }
      CHECK(clFinish(qbe_));
      cl_ulong ls = Prof(lc, CL_PROFILING_COMMAND_START);
      cl_ulong le = Prof(lc, CL_PROFILING_COMMAND_END);
      lc_us.push_back((le - ls) / 1e3);
      queued_us.push_back((ls - Prof(lc, CL_PROFILING_COMMAND_QUEUED)) / 1e3);
      // Slices whose end fell within the LC kernel's run (both queues share the device clock).
      for (cl_event e : be) {
        cl_ulong end = Prof(e, CL_PROFILING_COMMAND_END);
        if (end >= ls && end <= le) ++be_during;
        CHECK(clReleaseEvent(e));
      }
      be_total += be.size();
      CHECK(clReleaseEvent(lc));
    }
    double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    double lc_sum_s = 0;
    for (double v : lc_us) lc_sum_s += v / 1e6;
    double frac = (be_during / std::max(lc_sum_s, 1e-12)) / std::max(be_rate_, 1e-12);
    Stats l = Summarise(lc_us), q = Summarise(queued_us);
    const char* name = be_first ? "corun_be_first" : "corun_lc_first";
    std::fprintf(stderr,
                 "%s: lc p50 %.1f p99 %.1f max %.1f us; queued->start p50 %.1f p99 %.1f us; "
                 "be slices %zu (%zu during LC), wall %.3f s, be fraction of alone %.3f\n",
                 name, l.p50, l.p99, l.max, q.p50, q.p99, be_total, be_during, wall, frac);
    char b[256];
    std::snprintf(b, sizeof(b),
                  ", \"be_fraction_of_alone\": %.4f, \"be_slices\": %zu, "
                  "\"be_slices_during_lc\": %zu, \"wall_s\": %.4f}",
                  frac, be_total, be_during, wall);
    return "{\"lc_us\": " + Json(l) + ", \"lc_queued_to_start_us\": " + Json(q) + b;
  }

 private:
  void Build() {
    cl_int err;
    prog_ = clCreateProgramWithSource(ctx_, 1, &kSource, nullptr, &err);
    CHECK(err);
    if (clBuildProgram(prog_, 1, &dev_, "", nullptr, nullptr) != CL_SUCCESS) {
      size_t n = 0;
      clGetProgramBuildInfo(prog_, dev_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      clGetProgramBuildInfo(prog_, dev_, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      Die("kernel build failed:\n" + log);
    }
    spin_ = clCreateKernel(prog_, "spin", &err);
    CHECK(err);
    saxpy_ = clCreateKernel(prog_, "saxpy", &err);
    CHECK(err);
  }

  void MakeBuffers() {
    cl_int err;
    lc_global_ = static_cast<size_t>(cus_) * 4 * kLocal;
    lc_out_ = clCreateBuffer(ctx_, CL_MEM_WRITE_ONLY, lc_global_ * sizeof(float), nullptr, &err);
    CHECK(err);
    float a = 0.999f, b = 0.001f;
    CHECK(clSetKernelArg(spin_, 0, sizeof(lc_out_), &lc_out_));
    CHECK(clSetKernelArg(spin_, 2, sizeof(a), &a));
    CHECK(clSetKernelArg(spin_, 3, sizeof(b), &b));

    size_t bytes = opt_.mib << 20;
    cl_ulong max_alloc = 0;
    CHECK(clGetDeviceInfo(dev_, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(max_alloc), &max_alloc,
                          nullptr));
    if (bytes > max_alloc)
      Die("--mib " + std::to_string(opt_.mib) + " exceeds the device's max allocation of " +
          std::to_string(max_alloc >> 20) + " MiB");
    n4_ = bytes / 16;
    slice_ = opt_.slice_groups * kLocal;
    if (slice_ > n4_) Die("a slice is larger than the buffer; lower --slice-groups");
    if (n4_ > UINT32_MAX) Die("--mib too large for a 32-bit offset");
    x_ = clCreateBuffer(ctx_, CL_MEM_READ_ONLY, bytes, nullptr, &err);
    CHECK(err);
    y_ = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    CHECK(err);
    float one = 1.0f, zero = 0.0f;
    CHECK(clEnqueueFillBuffer(qbe_, x_, &one, sizeof(one), 0, bytes, 0, nullptr, nullptr));
    CHECK(clEnqueueFillBuffer(qbe_, y_, &zero, sizeof(zero), 0, bytes, 0, nullptr, nullptr));
    CHECK(clFinish(qbe_));
    float sa = 1e-3f;
    CHECK(clSetKernelArg(saxpy_, 0, sizeof(x_), &x_));
    CHECK(clSetKernelArg(saxpy_, 1, sizeof(y_), &y_));
    CHECK(clSetKernelArg(saxpy_, 2, sizeof(sa), &sa));
  }

  double SliceBytes() const { return 3.0 * 16.0 * slice_; }

  cl_event LcLaunch() {
    cl_event e;
    CHECK(clSetKernelArg(spin_, 1, sizeof(iters_), &iters_));
    CHECK(clEnqueueNDRangeKernel(qlc_, spin_, 1, nullptr, &lc_global_, &kLocal, 0, nullptr, &e));
    return e;
  }

  // One LC launch alone; its device time in us.
  double LcOnce() {
    cl_event e = LcLaunch();
    CHECK(clFinish(qlc_));
    double us = DeviceUs(e);
    CHECK(clReleaseEvent(e));
    return us;
  }

  double LcMedian() {
    double v[3] = {LcOnce(), LcOnce(), LcOnce()};
    std::sort(v, v + 3);
    return v[1];
  }

  // Enqueues and flushes the next saxpy slice; the offset walks the buffer and wraps.
  cl_event Slice() {
    cl_event e;
    if (offset_ + slice_ > n4_) offset_ = 0;
    cl_uint off = static_cast<cl_uint>(offset_);
    CHECK(clSetKernelArg(saxpy_, 3, sizeof(off), &off));
    CHECK(clEnqueueNDRangeKernel(qbe_, saxpy_, 1, nullptr, &slice_, &kLocal, 0, nullptr, &e));
    CHECK(clFlush(qbe_));
    offset_ += slice_;
    return e;
  }

  cl_device_id dev_;
  Options opt_;
  cl_uint cus_ = 0;
  cl_context ctx_ = nullptr;
  cl_command_queue qlc_ = nullptr, qbe_ = nullptr;
  cl_program prog_ = nullptr;
  cl_kernel spin_ = nullptr, saxpy_ = nullptr;
  cl_mem lc_out_ = nullptr, x_ = nullptr, y_ = nullptr;
  size_t lc_global_ = 0, n4_ = 0, slice_ = 0, offset_ = 0;
  cl_uint iters_ = 0;
  double be_rate_ = 0;  // be_alone slices per second
};

}  // namespace

int main(int argc, char** argv) {
  Options opt = ParseArgs(argc, argv);
  cl_device_id dev = PickDevice(opt.platform);
  std::string name = DeviceName(dev);
  std::string json;
  {
    Probe p(dev, opt);
    std::fprintf(stderr, "device: %s, %u compute units\n", name.c_str(), p.ComputeUnits());
    p.Calibrate();
    Stats alone = p.LcAlone();
    std::fprintf(stderr, "lc_alone: p50 %.1f p99 %.1f max %.1f us\n", alone.p50, alone.p99,
                 alone.max);
    double rate = 0, gbps = 0;
    p.BeAlone(&rate, &gbps);
    std::string lc_first = p.Corun(false);
    std::string be_first = p.Corun(true);
    char be[128];
    std::snprintf(be, sizeof(be), "{\"slices_per_s\": %.2f, \"gbps\": %.2f}", rate, gbps);
    json = "{\"device\": \"" + Escape(name) +
           "\", \"compute_units\": " + std::to_string(p.ComputeUnits()) +
           ", \"lc_iters\": " + std::to_string(p.Iters()) + ", \"lc_alone\": " + Json(alone) +
           ", \"be_alone\": " + be + ", \"corun_lc_first\": " + lc_first +
           ", \"corun_be_first\": " + be_first + "}";
  }
  std::printf("%s\n", json.c_str());
  return 0;
}
