// Probe: where a request's tail goes after an idle pause. A ~370 us kernel, then a 4-byte
// blocking read, after a pause; per request the time until clEnqueueNDRangeKernel returned
// and until the read returned. Prints percentiles and the 10 slowest requests.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
using Clock = std::chrono::steady_clock;
static const char* src = R"(__kernel void spin(__global uint* out, const uint iters) {
  uint x = (uint)get_global_id(0);
  for (uint i = 0; i < iters; ++i) x = x * 1664525u + 1013904223u;
  if (x == 0x9e3779b9u) out[1] = x;
  if (get_global_id(0) == 0) out[0] = iters; })";
static double P(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, (size_t)(q * v.size()))];
}
int main(int argc, char** argv) {
  const char* want = argc > 1 ? argv[1] : "";
  double target = argc > 2 ? atof(argv[2]) : 370;
  int pause_us = argc > 3 ? atoi(argv[3]) : 4000;
  int count = argc > 4 ? atoi(argv[4]) : 500;
  cl_uint n;
  cl_platform_id ps[8];
  clGetPlatformIDs(8, ps, &n);
  cl_platform_id p = nullptr;
  for (cl_uint i = 0; i < n; ++i) {
    char name[256];
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, 256, name, nullptr);
    if (strstr(name, want)) p = ps[i];
  }
  if (!p) {
    printf("no platform %s\n", want);
    return 1;
  }
  cl_device_id d;
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr);
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &err);
  cl_command_queue q = clCreateCommandQueue(ctx, d, CL_QUEUE_PROFILING_ENABLE, &err);
  cl_program pr = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  clBuildProgram(pr, 1, &d, "", nullptr, nullptr);
  cl_kernel k = clCreateKernel(pr, "spin", &err);
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
  clSetKernelArg(k, 0, sizeof(out), &out);
  cl_uint cus;
  clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, nullptr);
  size_t local = 128, global = cus * local;
  cl_uint iters = 4096;
  for (int r = 0; r < 5; ++r) {
    clSetKernelArg(k, 1, sizeof iters, &iters);
    cl_event e;
    clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, &e);
    clWaitForEvents(1, &e);
    cl_ulong a, b;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, 8, &a, nullptr);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, 8, &b, nullptr);
    clReleaseEvent(e);
    double us = (b - a) / 1e3;
    iters = (cl_uint)std::max(16.0, iters * target / std::max(us, 1.0));
  }
  clSetKernelArg(k, 1, sizeof iters, &iters);
  cl_uint v;
  std::vector<double> tot, enq, wake;
  struct Slow {
    double tot, enq, wake;
    int i;
  };
  std::vector<Slow> all;
  for (int i = -20; i < count; ++i) {
    auto want_t = Clock::now() + std::chrono::microseconds(pause_us);
    std::this_thread::sleep_until(want_t);
    auto t0 = Clock::now();
    clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr);
    auto t1 = Clock::now();
    clEnqueueReadBuffer(q, out, CL_TRUE, 0, 4, &v, 0, nullptr, nullptr);
    auto t2 = Clock::now();
    if (i < 0) continue;
    double a = std::chrono::duration<double, std::micro>(t2 - t0).count();
    double b = std::chrono::duration<double, std::micro>(t1 - t0).count();
    double w = std::chrono::duration<double, std::micro>(t0 - want_t).count();
    tot.push_back(a);
    enq.push_back(b);
    wake.push_back(w);
    all.push_back({a, b, w, i});
  }
  printf(
      "%s pause %d us, kernel %.0f us: request p50 %.1f p90 %.1f p99 %.1f max %.1f | launch call "
      "p50 %.1f p99 %.1f max %.1f | sleep overshoot p50 %.1f p99 %.1f (n=%zu)\n",
      want, pause_us, target, P(tot, .5), P(tot, .9), P(tot, .99), P(tot, 1), P(enq, .5),
      P(enq, .99), P(enq, 1), P(wake, .5), P(wake, .99), tot.size());
  std::sort(all.begin(), all.end(), [](const Slow& x, const Slow& y) { return x.tot > y.tot; });
  printf("  slowest:");
  for (int i = 0; i < 8 && i < (int)all.size(); ++i)
    printf(" #%d %.0f (launch %.0f)", all[i].i, all[i].tot, all[i].enq);
  printf("\n");
}
