// Session 24: how long NVIDIA's OpenCL takes to complete a marker that waits on a user event,
// once the user event is set (rgpud's held launches: the application's event is such a marker,
// set when the last slice completes). Build: g++ -O2 -std=c++20 -o gate_probe gate_probe.cpp
// -lOpenCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;
static double Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}
static void Report(const char* what, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%-62s p50 %7.1f  p90 %7.1f  p99 %7.1f us (n=%zu)\n", what, v[v.size() / 2],
              v[v.size() * 9 / 10], v[v.size() * 99 / 100], v.size());
}
static std::atomic<Clock::time_point::rep> g_cb{0};
static void CL_CALLBACK OnDone(cl_event, cl_int, void*) {
  g_cb = Clock::now().time_since_epoch().count();
}

int main() {
  cl_platform_id ps[8];
  cl_uint np = 0;
  clGetPlatformIDs(8, ps, &np);
  cl_device_id dev = nullptr;
  for (cl_uint i = 0; i < np && !dev; ++i)
    clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_GPU, 1, &dev, nullptr);
  for (cl_uint i = 0; i < np && !dev; ++i)
    clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &dev, nullptr);
  if (!dev) return std::puts("no device"), 1;
  char name[256];
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, nullptr);
  std::printf("device: %s\n", name);
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  cl_command_queue app = clCreateCommandQueue(ctx, dev, 0, &err);
  cl_command_queue exec = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
  const char* src = "__kernel void k(__global int* p) { p[get_global_id(0)] += 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  clBuildProgram(prog, 1, &dev, "", nullptr, nullptr);
  cl_kernel k = clCreateKernel(prog, "k", &err);
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, nullptr, &err);
  clSetKernelArg(k, 0, sizeof buf, &buf);
  const size_t g = 1024;
  constexpr int kN = 2000;
  std::vector<double> direct, gate_wait, gate_cb, chain_wait, chain_cb;
  for (int i = 0; i < kN + 50; ++i) {
    // A: a kernel on the application's queue, waited for.
    cl_event ke;
    auto t0 = Clock::now();
    clEnqueueNDRangeKernel(app, k, 1, nullptr, &g, nullptr, 0, nullptr, &ke);
    clWaitForEvents(1, &ke);
    auto t1 = Clock::now();
    clReleaseEvent(ke);
    // B: a marker behind a user event; set the user event, wait for the marker.
    cl_event u = clCreateUserEvent(ctx, &err), m;
    clEnqueueMarkerWithWaitList(app, 1, &u, &m);
    clFlush(app);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    auto t2 = Clock::now();
    clSetUserEventStatus(u, CL_COMPLETE);
    clWaitForEvents(1, &m);
    auto t3 = Clock::now();
    clReleaseEvent(m);
    clReleaseEvent(u);
    // C: the same, seen through a completion callback on the marker.
    u = clCreateUserEvent(ctx, &err);
    clEnqueueMarkerWithWaitList(app, 1, &u, &m);
    g_cb = 0;
    clSetEventCallback(m, CL_COMPLETE, OnDone, nullptr);
    clFlush(app);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    auto t4 = Clock::now();
    clSetUserEventStatus(u, CL_COMPLETE);
    while (g_cb.load() == 0) {
    }
    auto t5 = Clock::time_point(Clock::duration(g_cb.load()));
    clReleaseEvent(m);
    clReleaseEvent(u);
    // D: rgpud's whole chain: a kernel on its own queue; its callback sets the user event of
    // a marker on the application's queue, which the application waits for.
    u = clCreateUserEvent(ctx, &err);
    clEnqueueMarkerWithWaitList(app, 1, &u, &m);
    clFlush(app);
    auto t6 = Clock::now();
    clEnqueueNDRangeKernel(exec, k, 1, nullptr, &g, nullptr, 0, nullptr, &ke);
    clSetEventCallback(
        ke, CL_COMPLETE,
        [](cl_event, cl_int, void* p) {
          clSetUserEventStatus(static_cast<cl_event>(p), CL_COMPLETE);
        },
        u);
    clFlush(exec);
    clWaitForEvents(1, &m);
    auto t7 = Clock::now();
    clReleaseEvent(ke);
    clReleaseEvent(m);
    clReleaseEvent(u);
    if (i >= 50) {
      direct.push_back(Us(t0, t1));
      gate_wait.push_back(Us(t2, t3));
      gate_cb.push_back(Us(t4, t5));
      chain_wait.push_back(Us(t6, t7));
    }
  }
  Report("A kernel on the app queue: enqueue -> clWaitForEvents returns", direct);
  Report("B user event set -> clWaitForEvents(marker) returns", gate_wait);
  Report("C user event set -> marker's callback runs", gate_cb);
  Report("D kernel on 2nd queue, callback sets gate -> marker waited", chain_wait);
  return 0;
}
