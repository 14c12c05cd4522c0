// rgpu-probe-queues: does a write on another queue of one context reach a kernel that is still
// running, however many queues the context has?
//
// The lab's persistent kernel (seed 000, tables 4-7) polls a flag in device memory until its
// tenant writes the flag on a second queue. Natively, and through rgpud with a context per
// tenant, the write reaches it. Through rgpud with one context for a group of tenants it never
// did on the H200: every persistent kernel ran until its poll limit (session 47, call 3). A
// context group has many queues in one context (every tenant's, and rgpud's own beside each).
// This probe asks the driver alone whether the number of queues in a context decides it.
//
// For each count N: a fresh context with N queues; a kernel of one work-group per compute unit
// that polls the flag (at most --max-polls times) goes on queue 0; after --settle-ms, the flag
// is written on queue W (the last, unless --write-queue); the probe waits for the kernel and
// reports how long it ran after the write and whether every work-group saw the flag.
//
//   rgpu-probe-queues [--platform NAME] [--counts 2,4,8,...] [--max-polls P] > queues.json
//   rgpu-probe-queues [--platform NAME] --release-ms R > waits.json   (WaitsTest below)
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

// Each work-item polls until the flag is set or it has polled max_polls times; work-item 0 of
// each group writes how many polls its group made (max_polls: it never saw the flag).
const char* kSource = R"CL(
kernel void poll_flag(volatile global int* flag, global long* polls, long max_polls) {
  long n = 0;
  while (n < max_polls && atomic_add(flag, 0) == 0) n++;
  if (get_local_id(0) == 0) polls[get_group_id(0)] = n;
}
kernel void touch(global long* out) { out[get_global_id(0)] += 1; }
)CL";

struct Options {
  std::string platform;
  std::vector<int> counts{2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
  long max_polls = 20'000'000;
  int settle_ms = 50;
  int write_queue = -1;  // -1: the last queue
  int release_ms = 0;    // > 0: the waits test instead (WaitsTest)
};

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// A fresh context of `count` queues (queue `profiled` with profiling) and the polling kernel,
// its arguments set: the flag (zero) and a poll count per work-group, one group per compute unit.
struct PollingContext {
  cl_context ctx = nullptr;
  std::vector<cl_command_queue> qs;
  cl_program prog = nullptr;
  cl_kernel poll = nullptr;
  cl_mem flag = nullptr, polls = nullptr;
  cl_uint cus = 1;
  size_t local = 64, global = 64;

  PollingContext(cl_device_id dev, int count, int profiled, cl_long max_polls) {
    cl_int err = CL_SUCCESS;
    ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    CHECK(err);
    for (int i = 0; i < count; ++i) {
      qs.push_back(
          clCreateCommandQueue(ctx, dev, i == profiled ? CL_QUEUE_PROFILING_ENABLE : 0, &err));
      CHECK(err);
    }
    prog = clCreateProgramWithSource(ctx, 1, &kSource, nullptr, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", nullptr, nullptr));
    poll = clCreateKernel(prog, "poll_flag", &err);
    CHECK(err);
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cus), &cus, nullptr));
    global = local * cus;
    flag = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_int), nullptr, &err);
    CHECK(err);
    polls = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_long) * cus, nullptr, &err);
    CHECK(err);
    CHECK(clSetKernelArg(poll, 0, sizeof(cl_mem), &flag));
    CHECK(clSetKernelArg(poll, 1, sizeof(cl_mem), &polls));
    CHECK(clSetKernelArg(poll, 2, sizeof(max_polls), &max_polls));
  }
  ~PollingContext() {
    clReleaseMemObject(polls);
    clReleaseMemObject(flag);
    clReleaseKernel(poll);
    clReleaseProgram(prog);
    for (auto q : qs) clReleaseCommandQueue(q);
    clReleaseContext(ctx);
  }
  PollingContext(const PollingContext&) = delete;
  PollingContext& operator=(const PollingContext&) = delete;

  // Clears the flag, then puts the polling kernel on queue 0; returns when it was enqueued.
  Clock::time_point Start() {
    const cl_int zero = 0;
    CHECK(clEnqueueWriteBuffer(qs[0], flag, CL_TRUE, 0, sizeof(zero), &zero, 0, nullptr, nullptr));
    const auto start = Clock::now();
    CHECK(clEnqueueNDRangeKernel(qs[0], poll, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    CHECK(clFlush(qs[0]));
    return start;
  }
  // Sets the flag on queue `q`, without waiting for the write.
  void Release(int q) {
    const cl_int one = 1;
    CHECK(clEnqueueWriteBuffer(qs[q], flag, CL_FALSE, 0, sizeof(one), &one, 0, nullptr, nullptr));
    CHECK(clFlush(qs[q]));
  }
};

cl_int StatusOf(cl_event ev) {
  cl_int st = CL_QUEUED;
  CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr));
  return st;
}

void RunOne(cl_device_id dev, const Options& o, int count, bool first) {
  PollingContext pc(dev, count, -1, o.max_polls);
  // Every queue has done something, as a tenant's queues have (a driver may bind a queue to a
  // hardware channel only at its first command).
  const cl_long zero = 0;
  for (int i = 1; i < count; ++i)
    CHECK(clEnqueueWriteBuffer(pc.qs[i], pc.polls, CL_TRUE, 0, sizeof(zero), &zero, 0, nullptr,
                               nullptr));
  const auto start = pc.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(o.settle_ms));
  const int w = o.write_queue >= 0 && o.write_queue < count ? o.write_queue : count - 1;
  const auto written = Clock::now();
  pc.Release(w);
  CHECK(clFinish(pc.qs[0]));
  const auto ended = Clock::now();
  CHECK(clFinish(pc.qs[w]));
  std::vector<cl_long> got(pc.cus);
  CHECK(clEnqueueReadBuffer(pc.qs[0], pc.polls, CL_TRUE, 0, sizeof(cl_long) * pc.cus, got.data(), 0,
                            nullptr, nullptr));
  const auto stopped =
      std::count_if(got.begin(), got.end(), [&](cl_long n) { return n < o.max_polls; });
  std::printf(
      "%s    {\"queues\": %d, \"write_queue\": %d, \"groups\": %u, \"groups_stopped_by_flag\": "
      "%ld, \"ms_after_write\": %.3f, \"ms_total\": %.3f}",
      first ? "" : ",\n", count, w, pc.cus, static_cast<long>(stopped), Ms(ended - written),
      Ms(ended - start));
  std::fflush(stdout);
}

// --release-ms R: while the polling kernel runs on queue 0 (its flag written on queue 2 by
// another thread R ms after it started), a one-group kernel goes on queue 1 and the probe waits
// for it in one of five ways: clFinish(queue 1), clWaitForEvents on its event, polling the
// event's status, a 4-byte blocking read on queue 1 after it, and clFinish(queue 1) followed by
// the event's status and profiling times (and how long until its status reads complete). A wait
// that returns only when the polling kernel ends (about R ms) waits for another queue's kernel,
// not for its own.
void WaitsTest(cl_device_id dev, const Options& o) {
  // Queue 1 profiles, as the lab's tenants' queues do.
  PollingContext pc(dev, 3, 1, o.max_polls);
  cl_int err = CL_SUCCESS;
  cl_kernel touch = clCreateKernel(pc.prog, "touch", &err);
  CHECK(err);
  cl_mem small = clCreateBuffer(pc.ctx, CL_MEM_READ_WRITE, sizeof(cl_long) * 64, nullptr, &err);
  CHECK(err);
  CHECK(clSetKernelArg(touch, 0, sizeof(cl_mem), &small));
  std::vector<cl_long> zeros(64, 0);
  CHECK(clEnqueueWriteBuffer(pc.qs[1], small, CL_TRUE, 0, sizeof(cl_long) * 64, zeros.data(), 0,
                             nullptr, nullptr));
  const size_t one_group = 64;
  // Warm the one-group kernel up.
  CHECK(clEnqueueNDRangeKernel(pc.qs[1], touch, 1, nullptr, &one_group, &one_group, 0, nullptr,
                               nullptr));
  CHECK(clFinish(pc.qs[1]));
  const char* ways[] = {"clFinish", "clWaitForEvents", "status polling", "blocking read",
                        "clFinish, then the event"};
  bool first = true;
  for (int way = 0; way < 5; ++way) {
    const auto start = pc.Start();
    std::thread releaser([&] {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(o.release_ms));
      pc.Release(2);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(o.settle_ms));
    const auto issued = Clock::now();
    cl_event ev = nullptr;
    CHECK(clEnqueueNDRangeKernel(pc.qs[1], touch, 1, nullptr, &one_group, &one_group, 0, nullptr,
                                 &ev));
    cl_long word = 0;
    cl_int status_after = 1, profiling_after = 1;
    double complete_ms = -1;
    switch (way) {
      case 0: CHECK(clFinish(pc.qs[1])); break;
      case 1: CHECK(clWaitForEvents(1, &ev)); break;
      case 2:
        CHECK(clFlush(pc.qs[1]));
        while (StatusOf(ev) > CL_COMPLETE) {
        }
        break;
      case 3:
        CHECK(clEnqueueReadBuffer(pc.qs[1], small, CL_TRUE, 0, sizeof(word), &word, 0, nullptr,
                                  nullptr));
        break;
      default: {
        // What the event says once its queue is finished: its status, whether its profiling
        // times can be read, and when it reads complete.
        CHECK(clFinish(pc.qs[1]));
        status_after = StatusOf(ev);
        cl_ulong t = 0;
        profiling_after =
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t), &t, nullptr);
        while (StatusOf(ev) > CL_COMPLETE) {
        }
        complete_ms = Ms(Clock::now() - issued);
      }
    }
    const auto waited = Clock::now();
    CHECK(clFinish(pc.qs[0]));
    const auto ended = Clock::now();
    releaser.join();
    CHECK(clFinish(pc.qs[2]));
    clReleaseEvent(ev);
    std::printf(
        "%s    {\"wait\": \"%s\", \"release_ms\": %d, \"wait_ms\": %.3f, "
        "\"polling_kernel_ms\": %.3f",
        first ? "" : ",\n", ways[way], o.release_ms, Ms(waited - issued), Ms(ended - start));
    if (way == 4)
      std::printf(
          ", \"status_after_finish\": %d, \"profiling_after_finish\": %d, \"complete_ms\": %.3f",
          status_after, profiling_after, complete_ms);
    std::printf("}");
    std::fflush(stdout);
    first = false;
  }
  clReleaseMemObject(small);
  clReleaseKernel(touch);
}

std::vector<int> ParseCounts(const char* s) {
  std::vector<int> out;
  for (const char* p = s; *p;) {
    char* end = nullptr;
    long v = std::strtol(p, &end, 10);
    if (end == p || v < 1 || v > 1024) {
      std::fprintf(stderr, "--counts: bad list %s\n", s);
      std::exit(2);
    }
    out.push_back(static_cast<int>(v));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--platform" && next)
      o.platform = argv[++i];
    else if (a == "--counts" && next)
      o.counts = ParseCounts(argv[++i]);
    else if (a == "--max-polls" && next)
      o.max_polls = std::atol(argv[++i]);
    else if (a == "--settle-ms" && next)
      o.settle_ms = std::atoi(argv[++i]);
    else if (a == "--write-queue" && next)
      o.write_queue = std::atoi(argv[++i]);
    else if (a == "--release-ms" && next)
      o.release_ms = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: rgpu-probe-queues [--platform NAME] [--counts N,N,...] [--max-polls P] "
                   "[--settle-ms MS] [--write-queue I] [--release-ms R]\n");
      return 2;
    }
  }
  ProbeDevice d = PickProbeDevice(o.platform);
  const char* conn = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  std::printf(
      "{\"platform\": \"%s\", \"device\": \"%s\", \"max_polls\": %ld, \"settle_ms\": %d, "
      "\"CUDA_DEVICE_MAX_CONNECTIONS\": \"%s\",\n  \"runs\": [\n",
      d.platform.c_str(), d.name.c_str(), o.max_polls, o.settle_ms, conn ? conn : "");
  bool first = true;
  if (o.release_ms > 0) {
    WaitsTest(d.device, o);
    std::printf("\n  ]\n}\n");
    return 0;
  }
  for (int n : o.counts) {
    RunOne(d.device, o, n, first);
    first = false;
  }
  std::printf("\n  ]\n}\n");
  return 0;
}
