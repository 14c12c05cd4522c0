// Session 15, call 1: does the slicer's rewrite (two hidden kernel arguments, a ulong16 and a
// pointer, and the built-in prelude) cost NVIDIA's driver or the device anything?
// Natively, in one process: the same kernels built from the original source and from
// slicer::RewriteForSlicing's output, alternating, on one in-order profiling queue (as rgpud's).
//   arg_probe PLATFORM_SUBSTRING
// Prints, per variant and round: enqueue us/launch of the tiny kernel (20000 launches, no
// events, then clFinish), launches/s including the finish, the spin kernel's device time at
// two lengths (median END-START of 100), and a request (spin + 4-byte blocking read, back to
// back and after 1 ms pauses) p50/p99.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "server/scheduler/slicer.h"

using Clock = std::chrono::steady_clock;
#define CK(x)                                                                      \
  do {                                                                             \
    cl_int e_ = (x);                                                               \
    if (e_ != CL_SUCCESS) throw std::runtime_error(#x " = " + std::to_string(e_)); \
  } while (0)

static const char* kSrc = R"CL(
__kernel void tiny(__global int* p) { if (get_global_id(0) == 0) p[0] += 1; }
__kernel void spin(__global float* out, const int iters) {
  const size_t gid = get_global_id(0);
  float x = (float)(gid & 1023) * 1e-3f;
  const float a = 0.999999f, b = 1e-6f;
  for (int i = 0; i < iters; ++i) x = fma(x, a, b);
  out[gid & 65535] = x;
}
)CL";

struct Variant {
  const char* name;
  cl_program prog;
  cl_kernel tiny, spin;
  bool hidden;
};

static double Pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

int main(int argc, char** argv) {
  const std::string want = argc > 1 ? argv[1] : "NVIDIA";
  cl_uint np = 0;
  CK(clGetPlatformIDs(0, nullptr, &np));
  std::vector<cl_platform_id> ps(np);
  CK(clGetPlatformIDs(np, ps.data(), nullptr));
  cl_platform_id plat = nullptr;
  for (auto p : ps) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (std::string(name).find(want) != std::string::npos) plat = p;
  }
  if (!plat) throw std::runtime_error("no platform " + want);
  cl_device_id dev;
  CK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  CK(err);
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
  CK(err);
  auto rw = rgpu::slicer::RewriteForSlicing(kSrc, "");
  if (!rw.ok()) throw std::runtime_error("rewrite refused: " + rw.status().message());
  auto build = [&](const std::string& src) {
    const char* s = src.c_str();
    cl_program p = clCreateProgramWithSource(ctx, 1, &s, nullptr, &err);
    CK(err);
    CK(clBuildProgram(p, 1, &dev, "", nullptr, nullptr));
    return p;
  };
  std::vector<Variant> vs;
  for (int i = 0; i < 2; ++i) {
    Variant v{i ? "rewritten" : "original", build(i ? rw.value().source : std::string(kSrc)),
              nullptr, nullptr, i == 1};
    v.tiny = clCreateKernel(v.prog, "tiny", &err);
    CK(err);
    v.spin = clCreateKernel(v.prog, "spin", &err);
    CK(err);
    vs.push_back(v);
  }
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 65536 * 4, nullptr, &err);
  CK(err);
  int zero = 0;
  CK(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof zero, &zero, 0, nullptr, nullptr));
  for (auto& v : vs) {
    CK(clSetKernelArg(v.tiny, 0, sizeof buf, &buf));
    CK(clSetKernelArg(v.spin, 0, sizeof buf, &buf));
    if (v.hidden) {
      cl_ulong16 h{};
      cl_mem null_mem = nullptr;
      CK(clSetKernelArg(v.tiny, 1, sizeof h, &h));
      CK(clSetKernelArg(v.tiny, 2, sizeof(cl_mem), &null_mem));
      CK(clSetKernelArg(v.spin, 2, sizeof h, &h));
      CK(clSetKernelArg(v.spin, 3, sizeof(cl_mem), &null_mem));
    }
  }
  auto spin_us = [&](Variant& v, int iters, int n) {
    CK(clSetKernelArg(v.spin, 1, sizeof iters, &iters));
    size_t g = 528 * 128, l = 128;
    std::vector<double> d;
    for (int i = 0; i < n; ++i) {
      cl_event e;
      CK(clEnqueueNDRangeKernel(q, v.spin, 1, nullptr, &g, &l, 0, nullptr, &e));
      CK(clWaitForEvents(1, &e));
      cl_ulong s, t;
      CK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof s, &s, nullptr));
      CK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t, &t, nullptr));
      clReleaseEvent(e);
      d.push_back((t - s) / 1e3);
    }
    return Pct(d, 0.5);
  };
  // Calibrate two spin lengths on the original.
  int it370 = 4096, it50 = 512;
  for (int r = 0; r < 4; ++r) {
    it370 = static_cast<int>(it370 * 370.0 / spin_us(vs[0], it370, 5));
    it50 = static_cast<int>(it50 * 50.0 / spin_us(vs[0], it50, 5));
  }
  std::printf("calibrated: 370 us -> %d iters, 50 us -> %d iters\n", it370, it50);
  for (int round = 1; round <= 3; ++round) {
    for (auto& v : vs) {
      size_t g1 = 1;
      const int n = 20000;
      for (int i = 0; i < 2000; ++i)
        CK(clEnqueueNDRangeKernel(q, v.tiny, 1, nullptr, &g1, nullptr, 0, nullptr, nullptr));
      CK(clFinish(q));
      auto t0 = Clock::now();
      for (int i = 0; i < n; ++i)
        CK(clEnqueueNDRangeKernel(q, v.tiny, 1, nullptr, &g1, nullptr, 0, nullptr, nullptr));
      auto t1 = Clock::now();
      CK(clFinish(q));
      auto t2 = Clock::now();
      const double enq = std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
      const double rate = n / std::chrono::duration<double>(t2 - t0).count();
      const double d370 = spin_us(v, it370, 100), d50 = spin_us(v, it50, 100);
      // Requests: spin then a 4-byte blocking read.
      auto requests = [&](int iters, int pause_us) {
        CK(clSetKernelArg(v.spin, 1, sizeof iters, &iters));
        size_t g = 528 * 128, l = 128;
        std::vector<double> us;
        float val;
        for (int i = 0; i < 300; ++i) {
          if (pause_us) std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
          auto a = Clock::now();
          CK(clEnqueueNDRangeKernel(q, v.spin, 1, nullptr, &g, &l, 0, nullptr, nullptr));
          CK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 4, &val, 0, nullptr, nullptr));
          us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
        }
        return std::make_pair(Pct(us, 0.5), Pct(us, 0.99));
      };
      auto b370 = requests(it370, 0), p370 = requests(it370, 1000), p50r = requests(it50, 1000);
      std::printf(
          "round %d %-9s | tiny enqueue %.2f us/launch, %.0f launches/s | spin device 370: %.1f "
          "us, 50: %.2f us | "
          "request 370 b2b p50/p99 %.1f/%.1f, 370 after 1ms %.1f/%.1f, 50 after 1ms %.1f/%.1f\n",
          round, v.name, enq, rate, d370, d50, b370.first, b370.second, p370.first, p370.second,
          p50r.first, p50r.second);
      std::fflush(stdout);
    }
  }
  return 0;
}
