// rgpu-probe-driver: what the OpenCL calls rgpud makes per command cost on a platform.
//
// rgpud's launch rate and round trip are bounded by the driver calls it makes around each
// command (an event per launch for accounting, status and profiling queries, callbacks).
// This measures each of them natively, so docs/performance.md can say which ones matter:
//
//   rgpu-probe-driver [--platform NAME] [--count N] > probe.json
//
// Every figure is a mean over N calls (default 20000) in microseconds, after a warm-up.
#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/probe_check.h"

namespace {

using Clock = std::chrono::steady_clock;

const char* kSource = "__kernel void tiny(__global int* p) { if (get_global_id(0) == 0) p[0] += 1; }";


double UsPer(Clock::time_point t0, int n) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
}

}  // namespace

int main(int argc, char** argv) {
  std::string want;
  int n = 20000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--platform") && i + 1 < argc) want = argv[++i];
    else if (!std::strcmp(argv[i], "--count") && i + 1 < argc) n = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--platform NAME] [--count N]\n", argv[0]);
      return 2;
    }
  }
  const ProbeDevice pd = PickProbeDevice(want);
  cl_device_id dev = pd.device;
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  CHECK(err);
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &dev, "", nullptr, nullptr));
  cl_kernel k = clCreateKernel(prog, "tiny", &err);
  CHECK(err);
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
  CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof(buf), &buf));
  size_t g = 1;
  for (int i = 0; i < 1000; ++i) CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
  CHECK(clFinish(q));

  // Launch cost without and with an event (what rgpud asks for on every launch).
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
  const double launch_no_event = UsPer(t0, n);
  CHECK(clFinish(q));
  // The same on a queue without profiling (what an application that asks for none has;
  // rgpud turns profiling on for every queue it makes, for accounting).
  cl_command_queue plain = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &err);
  CHECK(err);
  for (int i = 0; i < 1000; ++i) CHECK(clEnqueueNDRangeKernel(plain, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
  CHECK(clFinish(plain));
  t0 = Clock::now();
  for (int i = 0; i < n; ++i) CHECK(clEnqueueNDRangeKernel(plain, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
  const double launch_no_event_no_profiling = UsPer(t0, n);
  CHECK(clFinish(plain));
  clReleaseCommandQueue(plain);
  // The same with two more queues in the context, idle (as rgpud's `fair` keeps beside an
  // application's queue: its own queue for held work and one for stop flags).
  cl_command_queue extra[2];
  for (int i = 0; i < 2; ++i) {
    extra[i] = clCreateCommandQueueWithProperties(ctx, dev, i == 0 ? props : nullptr, &err);
    CHECK(err);
  }
  t0 = Clock::now();
  for (int i = 0; i < n; ++i)
    CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
  const double launch_no_event_two_more_queues = UsPer(t0, n);
  CHECK(clFinish(q));
  for (auto x : extra) clReleaseCommandQueue(x);
  std::vector<cl_event> evs(n);
  t0 = Clock::now();
  for (int i = 0; i < n; ++i) CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, &evs[i]));
  const double launch_event = UsPer(t0, n);
  // The same with the argument set again before each launch (rgpud sets every argument
  // at launch time, so that a held launch keeps the values it was submitted with).
  std::vector<cl_event> evs2(n);
  t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    CHECK(clSetKernelArg(k, 0, sizeof(buf), &buf));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, &evs2[i]));
  }
  const double launch_event_setarg = UsPer(t0, n);
  // Status of events still in flight (the newest ones first, as a poller would meet them).
  cl_int st;
  const int pending_n = std::min(n, 2000);
  t0 = Clock::now();
  for (int i = 0; i < pending_n; ++i)
    clGetEventInfo(evs2[n - 1 - i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr);
  const double status_pending = UsPer(t0, pending_n);
  CHECK(clFinish(q));
  // Status and profiling of completed events.
  t0 = Clock::now();
  for (int i = 0; i < n; ++i) clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr);
  const double status_complete = UsPer(t0, n);
  cl_ulong v;
  t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_START, sizeof(v), &v, nullptr);
    clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_END, sizeof(v), &v, nullptr);
  }
  const double profiling_two = UsPer(t0, n);
  t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    clRetainEvent(evs[i]);
    clReleaseEvent(evs[i]);
  }
  const double retain_release = UsPer(t0, n);
  for (auto e : evs) clReleaseEvent(e);
  for (auto e : evs2) clReleaseEvent(e);

  // A completion callback per launch (how rgpud counts commands in flight).
  static std::atomic<int> fired{0};
  t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    cl_event e;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, &e));
    CHECK(clSetEventCallback(e, CL_COMPLETE, [](cl_event, cl_int, void*) { fired++; }, nullptr));
    clReleaseEvent(e);
  }
  const double launch_event_callback = UsPer(t0, n);
  CHECK(clFinish(q));
  for (int i = 0; i < 1000 && fired.load() < n; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));

  // One launch then clFinish / clWaitForEvents, for the round trip's device part.
  const int rt = std::min(n, 5000);
  t0 = Clock::now();
  for (int i = 0; i < rt; ++i) {
    CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
    CHECK(clFinish(q));
  }
  const double launch_finish = UsPer(t0, rt);

  std::printf(
      "{\"platform\": \"%s\", \"device\": \"%s\", \"count\": %d, \"us\": {\n"
      "  \"launch_no_event\": %.3f,\n  \"launch_no_event_no_profiling\": %.3f,\n"
      "  \"launch_no_event_two_more_queues\": %.3f,\n"
      "  \"launch_with_event\": %.3f,\n"
      "  \"launch_with_event_and_setarg\": %.3f,\n  \"launch_with_event_and_callback\": %.3f,\n"
      "  \"status_query_in_flight\": %.3f,\n  \"status_query_complete\": %.3f,\n"
      "  \"profiling_start_end_complete\": %.3f,\n  \"retain_release\": %.3f,\n"
      "  \"launch_then_finish\": %.3f\n}, \"callbacks_fired\": %d}\n",
      pd.platform.c_str(), pd.name.c_str(), n, launch_no_event, launch_no_event_no_profiling,
      launch_no_event_two_more_queues, launch_event, launch_event_setarg, launch_event_callback,
      status_pending, status_complete, profiling_two, retain_release, launch_finish, fired.load());
  clReleaseMemObject(buf);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return 0;
}
