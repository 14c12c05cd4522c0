// rgpu-probe-switch: how long a device takes to pass from one context's kernel to another's.
//
// Under `fair`, a latency-critical (LC) kernel arriving while a best-effort (BE) tenant's
// kernel runs waits for that kernel to stop and then for the device to switch contexts
// (docs/scheduling.md, "Session 8": 137-142 us on the H100 and the H200, in every cell). This
// measures the switch natively, in one process as rgpud has it, under what may sit on the BE
// context's queues at that moment, so that the floor can be told from rgpud's own cost:
//
//   rgpu-probe-switch [--platform NAME] [--count N] [--be-us US] > switch.json
//
// Each trial launches the BE kernel (one wave, about --be-us of device time), waits until
// it has started, launches the LC kernel, and takes from profiling times the gap between
// the BE kernel's end and the LC kernel's start. Cases:
//   same_context   LC on a second queue of the BE kernel's context (no switch)
//   other_context  LC in its own context; nothing else on the BE context
//   blocked_marker as other_context, and a second queue of the BE context holds a marker
//                  waiting on a user event that completes only after the trial (as rgpud's
//                  held launches leave one on the application's queue)
//   read_after     as other_context, with a 4-byte read queued behind the BE kernel (as
//                  rgpud reads a run's control words back)
//   kernel_after   as other_context, with a second BE kernel queued behind the first (the
//                  LC kernel then waits for the device's own time-slicing, not for an end)
//   same_idle      the LC kernel launched on the BE context's second queue after the BE
//                  kernel ended (submit to start: the launch latency, no switch)
//   other_idle     the same in the LC context (a switch to a context that was not the
//                  device's last)
// Figures are p50 / p90 / p99 / max in microseconds over N trials (default 200).
#include <CL/cl.h>

#include <algorithm>
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

const char* kSource =
    "__kernel void spin(__global uint* out, uint iters) {\n"
    "  uint x = get_global_id(0);\n"
    "  for (uint i = 0; i < iters; ++i) x = x * 1664525u + 1013904223u;\n"
    "  if (x == 0u) out[0] = x;\n"
    "}\n";

struct Side {
  cl_context ctx = nullptr;
  cl_command_queue q = nullptr;
  cl_command_queue q2 = nullptr;  // a second queue of the same context
  cl_kernel k = nullptr;
  cl_mem buf = nullptr;
};

Side MakeSide(cl_device_id dev, cl_context shared) {
  cl_int err;
  Side s;
  s.ctx = shared ? shared : clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  if (shared) clRetainContext(shared);
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  s.q = clCreateCommandQueueWithProperties(s.ctx, dev, props, &err);
  CHECK(err);
  s.q2 = clCreateCommandQueueWithProperties(s.ctx, dev, props, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(s.ctx, 1, &kSource, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &dev, "", nullptr, nullptr));
  s.k = clCreateKernel(prog, "spin", &err);
  CHECK(err);
  clReleaseProgram(prog);
  s.buf = clCreateBuffer(s.ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
  CHECK(err);
  CHECK(clSetKernelArg(s.k, 0, sizeof(s.buf), &s.buf));
  return s;
}

void FreeSide(Side& s) {
  clReleaseMemObject(s.buf);
  clReleaseKernel(s.k);
  clReleaseCommandQueue(s.q);
  clReleaseCommandQueue(s.q2);
  clReleaseContext(s.ctx);
}

cl_ulong Prof(cl_event e, cl_profiling_info what) {
  cl_ulong v = 0;
  CHECK(clGetEventProfilingInfo(e, what, sizeof v, &v, nullptr));
  return v;
}

cl_event Launch(cl_command_queue q, cl_kernel k, cl_uint iters, size_t global) {
  CHECK(clSetKernelArg(k, 1, sizeof iters, &iters));
  const size_t local = 256;
  cl_event e;
  CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, &e));
  CHECK(clFlush(q));
  return e;
}

// Device time of one launch of the spin kernel with these iterations.
double KernelUs(const Side& s, cl_uint iters, size_t global) {
  cl_event e = Launch(s.q, s.k, iters, global);
  CHECK(clWaitForEvents(1, &e));
  const double us = (Prof(e, CL_PROFILING_COMMAND_END) - Prof(e, CL_PROFILING_COMMAND_START)) / 1e3;
  clReleaseEvent(e);
  return us;
}

// Iterations for about `us` of device time (doubling, then scaled).
cl_uint Calibrate(const Side& s, double us, size_t global) {
  cl_uint iters = 1024;
  double t = KernelUs(s, iters, global);
  while (t < us / 4 && iters < (1u << 30)) t = KernelUs(s, iters *= 2, global);
  iters = static_cast<cl_uint>(std::max(1.0, iters * us / std::max(t, 1.0)));
  KernelUs(s, iters, global);
  return iters;
}

enum class Case {
  SameContext,
  OtherContext,
  BlockedMarker,
  ReadAfter,
  KernelAfter,
  SameIdle,
  OtherIdle
};
const char* Name(Case c) {
  switch (c) {
    case Case::SameContext: return "same_context";
    case Case::OtherContext: return "other_context";
    case Case::BlockedMarker: return "blocked_marker";
    case Case::ReadAfter: return "read_after";
    case Case::KernelAfter: return "kernel_after";
    case Case::SameIdle: return "same_idle";
    case Case::OtherIdle: return "other_idle";
  }
  return "?";
}

struct Gaps {
  std::vector<double> switch_us;   // BE kernel end to LC kernel start
  std::vector<double> lc_wait_us;  // LC kernel submitted to started
  int before_end = 0;  // trials whose LC kernel was submitted before the BE kernel ended
};

// `global`: both kernels' work-items (one wave of work-groups of 256).
void Trial(Case c, Side& be, Side& lc, double be_us, cl_uint be_iters, cl_uint lc_iters,
           size_t global, Gaps* out) {
  cl_int err;
  cl_event blocker = nullptr, marker = nullptr, extra = nullptr;
  if (c == Case::BlockedMarker) {
    blocker = clCreateUserEvent(be.ctx, &err);
    CHECK(err);
    CHECK(clEnqueueMarkerWithWaitList(be.q2, 1, &blocker, &marker));
    CHECK(clFlush(be.q2));
  }
  cl_event b = Launch(be.q, be.k, be_iters, global);
  uint32_t word = 0;  // the read's destination: waited for below, before it goes
  if (c == Case::ReadAfter) {
    CHECK(clEnqueueReadBuffer(be.q, be.buf, CL_FALSE, 0, sizeof word, &word, 0, nullptr, &extra));
    CHECK(clFlush(be.q));
  }
  if (c == Case::KernelAfter) extra = Launch(be.q, be.k, be_iters, global);
  // Let the BE kernel start and run a quarter of its time, so the LC kernel meets it
  // mid-way (NVIDIA's OpenCL reports no CL_RUNNING before a kernel completes, so its status
  // cannot tell; the profiling times say whether the LC kernel came in time: lc_before_end).
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(be_us / 4)));
  const bool idle = c == Case::SameIdle || c == Case::OtherIdle;
  if (idle) CHECK(clWaitForEvents(1, &b));
  const bool same = c == Case::SameContext || c == Case::SameIdle;
  cl_command_queue lq = same ? be.q2 : lc.q;
  cl_kernel lk = same ? be.k : lc.k;
  cl_event l = Launch(lq, lk, lc_iters, global);
  CHECK(clWaitForEvents(1, &l));
  CHECK(clWaitForEvents(1, &b));
  const cl_ulong ls = Prof(l, CL_PROFILING_COMMAND_START);
  out->switch_us.push_back(
      (static_cast<double>(ls) - static_cast<double>(Prof(b, CL_PROFILING_COMMAND_END))) / 1e3);
  out->lc_wait_us.push_back((ls - Prof(l, CL_PROFILING_COMMAND_SUBMIT)) / 1e3);
  if (Prof(l, CL_PROFILING_COMMAND_SUBMIT) < Prof(b, CL_PROFILING_COMMAND_END)) out->before_end++;
  if (blocker) {
    CHECK(clSetUserEventStatus(blocker, CL_COMPLETE));
    CHECK(clWaitForEvents(1, &marker));
    clReleaseEvent(marker);
    clReleaseEvent(blocker);
  }
  if (extra) {
    CHECK(clWaitForEvents(1, &extra));
    clReleaseEvent(extra);
  }
  clReleaseEvent(l);
  clReleaseEvent(b);
}

std::string Quantiles(std::vector<double> v) {
  if (v.empty()) return "null";
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
  };
  char buf[160];
  std::snprintf(buf, sizeof buf, "{\"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f, \"max\": %.1f}",
                at(0.5), at(0.9), at(0.99), v.back());
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string want;
  int n = 200;
  double be_us = 2000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--platform") && i + 1 < argc)
      want = argv[++i];
    else if (!std::strcmp(argv[i], "--count") && i + 1 < argc)
      n = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--be-us") && i + 1 < argc)
      be_us = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--platform NAME] [--count N] [--be-us US]\n", argv[0]);
      return 2;
    }
  }
  const ProbeDevice pd = PickProbeDevice(want);
  cl_device_id dev = pd.device;
  cl_uint cus = 1;
  clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, nullptr);
  Side be = MakeSide(dev, nullptr), lc = MakeSide(dev, nullptr);
  // One wave of work-groups of 256 (4 per compute unit), as the matrix's kernels.
  const size_t global = size_t{cus} * 4 * 256;
  const cl_uint be_iters = Calibrate(be, be_us, global);
  const cl_uint lc_iters = Calibrate(lc, 100, global);
  Calibrate(be, 100, global);  // the same context's copy warms up too
  std::printf(
      "{\"platform\": \"%s\", \"device\": \"%s\", \"count\": %d, \"be_us\": %.0f, "
      "\"be_kernel_us\": %.1f, "
      "\"lc_kernel_us\": %.1f, \"cases\": {\n",
      pd.platform.c_str(), pd.name.c_str(), n, be_us, KernelUs(be, be_iters, global),
      KernelUs(lc, lc_iters, global));
  const Case cases[] = {Case::SameContext, Case::OtherContext, Case::BlockedMarker, Case::ReadAfter,
                        Case::KernelAfter, Case::SameIdle,     Case::OtherIdle};
  for (size_t i = 0; i < std::size(cases); ++i) {
    Gaps g;
    for (int t = 0; t < n; ++t) Trial(cases[i], be, lc, be_us, be_iters, lc_iters, global, &g);
    std::printf(
        "  \"%s\": {\"switch_us\": %s, \"lc_submit_to_start_us\": %s, \"lc_before_end\": %d}%s\n",
        Name(cases[i]), Quantiles(g.switch_us).c_str(), Quantiles(g.lc_wait_us).c_str(),
        g.before_end, i + 1 < std::size(cases) ? "," : "");
    std::fflush(stdout);
  }
  std::printf("}}\n");
  FreeSide(be);
  FreeSide(lc);
  return 0;
}
