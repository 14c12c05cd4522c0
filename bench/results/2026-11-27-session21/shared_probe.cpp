// Session 21: in ONE device context (as rgpud's opt-in context group has it), what a
// latency-critical (LC) request pays beside best-effort (BE) memory-bound slices, natively,
// for each way the BE work could give way. No rgpu here: this is the floor of each mechanism.
//
//   shared_probe [PLATFORM] [SECONDS] [LC_US] [BE_MIB]
//
// BE: saxpy over BE_MIB MiB (two float4 arrays), fed as slices of `slice_us` of device time,
// `depth` slices on the device at once (a feeder thread launches the next as the oldest ends).
// LC: a compute-bound spin kernel, 4 work-groups of 256 per compute unit, LC_US long, then a
// 4-byte blocking read; Poisson arrivals (mean gap 4 ms, fixed seed), measured from the due
// time to the read's return (a late request counts its lateness, as the sharing matrix does).
// Modes per (depth, slice_us):
//   alone      no BE;
//   beside     BE fed throughout (nothing gives way);
//   hold       the feeder launches nothing from the LC request's start to its end (what
//              rgpud's fair does): the LC kernel starts beside the slices already queued;
//   waitlist   hold, and the LC kernel waits for the last BE slice through its event wait list;
//   drain      hold, and the LC thread spins until the BE slices on the device have ended.
// Prints one line per run: LC p50 / p99 / max (us), LC kernel device time p50 / p99, LC start
// after its launch call p50 / p99, BE slices per second and against BE alone.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

#define CHECK(x)                                                       \
  do {                                                                 \
    cl_int e_ = (x);                                                   \
    if (e_ != CL_SUCCESS) {                                            \
      fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); \
      exit(1);                                                         \
    }                                                                  \
  } while (0)

static const char* kSrc = R"CL(
__kernel void spin(__global float* out, const int iters) {
  const size_t gid = get_global_id(0);
  float x = (float)(gid & 1023) * 1e-3f;
  const float a = 0.999999f, b = 1e-6f;
  for (int i = 0; i < iters; ++i) x = fma(x, a, b);
  out[gid & 65535] = x;
}
__kernel void saxpy(__global const float4* x, __global float4* y, const float a) {
  const size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
)CL";

namespace {

cl_context ctx;
cl_device_id dev;
cl_command_queue qb, ql;
cl_kernel kspin, ksaxpy;
cl_mem mx, my, mout;
size_t cu = 0, lc_global = 0, be_elems4 = 0;

double EventUs(cl_event e, cl_profiling_info a, cl_profiling_info b) {
  cl_ulong ta = 0, tb = 0;
  CHECK(clGetEventProfilingInfo(e, a, sizeof ta, &ta, nullptr));
  CHECK(clGetEventProfilingInfo(e, b, sizeof tb, &tb, nullptr));
  return (double(tb) - double(ta)) / 1e3;
}

bool Done(cl_event e) {
  cl_int st = 0;
  CHECK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr));
  return st <= CL_COMPLETE;
}

double SpinUs(int iters) {
  CHECK(clSetKernelArg(kspin, 1, sizeof(int), &iters));
  const size_t local = 256;
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    cl_event e;
    CHECK(clEnqueueNDRangeKernel(ql, kspin, 1, nullptr, &lc_global, &local, 0, nullptr, &e));
    CHECK(clWaitForEvents(1, &e));
    t.push_back(EventUs(e, CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END));
    clReleaseEvent(e);
  }
  std::sort(t.begin(), t.end());
  return t[3];
}

cl_event Slice(size_t first, size_t n) {
  const size_t local = 256;
  cl_event e;
  CHECK(clEnqueueNDRangeKernel(qb, ksaxpy, 1, &first, &n, &local, 0, nullptr, &e));
  return e;
}

// Device us of a slice of n float4 elements (median of 9).
double SliceUs(size_t n) {
  std::vector<double> t;
  for (int i = 0; i < 9; ++i) {
    cl_event e = Slice(n < be_elems4 ? (i * n) % (be_elems4 - n) / 256 * 256 : 0, n);
    CHECK(clWaitForEvents(1, &e));
    t.push_back(EventUs(e, CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END));
    clReleaseEvent(e);
  }
  std::sort(t.begin(), t.end());
  return t[4];
}

struct Feeder {
  int depth = 2;
  size_t slice = 0;
  std::atomic<bool> stop{false}, hold{false};
  std::atomic<long> done{0};
  std::atomic<int> on_device{0};
  std::atomic<cl_event> last{nullptr};  // the last slice launched (one reference held here)
  void Run() {
    std::deque<cl_event> q;
    size_t next = 0;
    while (!stop.load()) {
      while (!q.empty() && Done(q.front())) {
        clReleaseEvent(q.front());
        q.pop_front();
        done++;
      }
      on_device = static_cast<int>(q.size());
      if (!hold.load() && static_cast<int>(q.size()) < depth) {
        if (next + slice > be_elems4) next = 0;
        cl_event e = Slice(next, slice);
        next += slice;
        clRetainEvent(e);
        cl_event old = last.exchange(e);
        if (old) clReleaseEvent(old);
        CHECK(clFlush(qb));
        q.push_back(e);
        on_device = static_cast<int>(q.size());
      }
    }
    clFinish(qb);
    for (cl_event e : q) clReleaseEvent(e);
    if (cl_event e = last.exchange(nullptr)) clReleaseEvent(e);
  }
};

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// One run: mode in {bealone, alone, beside, hold, waitlist, drain}.
void Run(const std::string& mode, int depth, double slice_us, size_t slice, double seconds,
         double be_alone_rate) {
  Feeder f;
  f.depth = depth;
  f.slice = slice;
  std::thread feeder;
  const bool be = mode != "alone";
  if (be) feeder = std::thread([&] { f.Run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const long done0 = f.done.load();
  const auto t0 = Clock::now();
  std::vector<double> lat, kern, start;
  if (mode != "bealone") {
    uint64_t s = 0x9e3779b97f4a7c15ull;
    auto rnd = [&] {
      s += 0x9e3779b97f4a7c15ull;
      uint64_t z = s;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      return double((z ^ (z >> 31)) >> 11) / double(1ull << 53);
    };
    auto due = t0;
    const size_t local = 256;
    float word = 0;
    while (Clock::now() - t0 < std::chrono::duration<double>(seconds)) {
      due += std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double, std::milli>(-4.0 * std::log(1 - rnd())));
      while (Clock::now() < due) {
      }
      if (mode != "beside") f.hold = true;
      cl_event wait = nullptr;
      if (mode == "waitlist" && f.on_device.load() > 0) wait = f.last.exchange(nullptr);
      if (mode == "drain")
        while (f.on_device.load() > 0) {
        }
      cl_event ke;
      const auto launched = Clock::now();
      CHECK(clEnqueueNDRangeKernel(ql, kspin, 1, nullptr, &lc_global, &local, wait ? 1 : 0,
                                   wait ? &wait : nullptr, &ke));
      CHECK(clEnqueueReadBuffer(ql, mout, CL_TRUE, 0, 4, &word, 0, nullptr, nullptr));
      const auto end = Clock::now();
      f.hold = false;
      if (wait) clReleaseEvent(wait);
      lat.push_back(std::chrono::duration<double, std::micro>(end - due).count());
      kern.push_back(EventUs(ke, CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END));
      cl_ulong st = 0;
      CHECK(clGetEventProfilingInfo(ke, CL_PROFILING_COMMAND_START, sizeof st, &st, nullptr));
      cl_ulong q = 0;
      CHECK(clGetEventProfilingInfo(ke, CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, nullptr));
      start.push_back((double(st) - double(q)) / 1e3);
      clReleaseEvent(ke);
      (void)launched;
    }
  } else {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
  const double el = std::chrono::duration<double>(Clock::now() - t0).count();
  const double rate = (f.done.load() - done0) / el;
  f.stop = true;
  if (feeder.joinable()) feeder.join();
  printf(
      "%-8s depth %d slice %5.1f us: LC p50 %7.1f p99 %7.1f max %7.1f (n %zu) | kernel p50 %6.1f "
      "p99 %6.1f | "
      "start p50 %6.1f p99 %6.1f | BE %8.0f slices/s %.2f of alone\n",
      mode.c_str(), depth, slice_us, Pct(lat, 0.5), Pct(lat, 0.99), Pct(lat, 1.0), lat.size(),
      Pct(kern, 0.5), Pct(kern, 0.99), Pct(start, 0.5), Pct(start, 0.99), be ? rate : 0.0,
      be && be_alone_rate > 0 ? rate / be_alone_rate : 0.0);
  fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const char* want = argc > 1 ? argv[1] : "NVIDIA";
  const double seconds = argc > 2 ? atof(argv[2]) : 3;
  const double lc_us = argc > 3 ? atof(argv[3]) : 370;
  const size_t be_mib = argc > 4 ? strtoull(argv[4], nullptr, 0) : 2048;
  cl_platform_id ps[8];
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(8, ps, &np));
  cl_platform_id p = nullptr;
  for (cl_uint i = 0; i < np && !p; ++i) {
    char name[256] = {};
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (strstr(name, want)) p = ps[i];
  }
  if (!p) return fprintf(stderr, "no platform named %s\n", want), 1;
  CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  cl_uint units = 0;
  CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr));
  cu = units;
  cl_int e;
  ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e);
  CHECK(e);
  qb = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
  CHECK(e);
  ql = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
  CHECK(e);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSrc, nullptr, &e);
  CHECK(e);
  CHECK(clBuildProgram(prog, 1, &dev, "", nullptr, nullptr));
  kspin = clCreateKernel(prog, "spin", &e);
  CHECK(e);
  ksaxpy = clCreateKernel(prog, "saxpy", &e);
  CHECK(e);
  be_elems4 = be_mib * 1024 * 1024 / 2 / 16 / 256 * 256;
  mx = clCreateBuffer(ctx, CL_MEM_READ_WRITE, be_elems4 * 16, nullptr, &e);
  CHECK(e);
  my = clCreateBuffer(ctx, CL_MEM_READ_WRITE, be_elems4 * 16, nullptr, &e);
  CHECK(e);
  mout = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 65536 * 4, nullptr, &e);
  CHECK(e);
  const float zero = 0, a = 1.0001f;
  CHECK(clEnqueueFillBuffer(qb, mx, &zero, 4, 0, be_elems4 * 16, 0, nullptr, nullptr));
  CHECK(clEnqueueFillBuffer(qb, my, &zero, 4, 0, be_elems4 * 16, 0, nullptr, nullptr));
  CHECK(clFinish(qb));
  CHECK(clSetKernelArg(kspin, 0, sizeof(cl_mem), &mout));
  CHECK(clSetKernelArg(ksaxpy, 0, sizeof(cl_mem), &mx));
  CHECK(clSetKernelArg(ksaxpy, 1, sizeof(cl_mem), &my));
  CHECK(clSetKernelArg(ksaxpy, 2, sizeof(float), &a));
  lc_global = 4 * cu * 256;
  // Calibrate the LC kernel: iterations scale linearly.
  int iters = 1000;
  double us = SpinUs(iters);
  iters = std::max(1, static_cast<int>(iters * lc_us / us));
  us = SpinUs(iters);
  iters = std::max(1, static_cast<int>(iters * lc_us / us));
  us = SpinUs(iters);
  const double whole_us = SliceUs(be_elems4 / 256 * 256);
  printf(
      "%s: %u compute units; LC %zu items x %d iterations = %.1f us; BE saxpy %zu MiB = %.1f us "
      "(%.0f GB/s)\n",
      want, units, lc_global, iters, us, be_mib, whole_us, 3.0 * be_elems4 * 16 / whole_us / 1e3);
  struct Cfg {
    int depth;
    double slice_us;
  };
  const Cfg cfgs[] = {{2, 50}, {1, 50}, {2, 25}, {1, 100}};
  for (const Cfg& c : cfgs) {
    size_t n =
        std::max<size_t>(256, static_cast<size_t>(be_elems4 * c.slice_us / whole_us) / 256 * 256);
    const double su = SliceUs(n);
    printf("-- slices of %zu float4 = %.1f us measured\n", n, su);
    const double alone_s = std::max(1.0, seconds / 2);
    // BE alone first: its rate is the denominator.
    Feeder f;
    f.depth = c.depth;
    f.slice = n;
    std::thread t([&] { f.Run(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const long d0 = f.done.load();
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(alone_s));
    const double rate =
        (f.done.load() - d0) / std::chrono::duration<double>(Clock::now() - t0).count();
    f.stop = true;
    t.join();
    printf(
        "bealone  depth %d slice %5.1f us: BE %8.0f slices/s = %.2f of the whole kernel's rate\n",
        c.depth, su, rate, rate * n / (be_elems4 / whole_us * 1e6));
    for (const char* m : {"alone", "beside", "hold", "waitlist", "drain"})
      Run(m, c.depth, su, n, seconds, rate);
  }
  return 0;
}
