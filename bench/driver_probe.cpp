// rgpu-probe-driver: what the OpenCL calls rgpud makes per command cost on a platform.
//
// rgpud's launch rate and round trip are bounded by the driver calls it makes around each
// command (an event per launch for accounting, status and profiling queries, callbacks).
// This measures each of them natively, so docs/performance.md can say which ones matter:
//
//   rgpu-probe-driver [--platform NAME] [--count N] > probe.json
//
// Every figure is a mean over N calls (default 20000) in microseconds, after a warm-up.
// --pollers: what a second thread that watches events costs this thread's enqueues, by how
// it watches (status queries at several paces, of a finished or a pending event, or a
// blocking clWaitForEvents), and how much later clWaitForEvents sees a kernel's end than a
// thread that asks for its status without pause.
// --launch-only: only event-less enqueues, five times N, with the CPU each of the process's
// threads last ran on and the CPU time it used (where the driver's own threads sit).
// --events: enqueues with an event released at once (pyopencl's discarded results) and
// without one, or kept until the end, on a queue with profiling (as rgpud makes every
// queue) and on one without, and kept on a queue without profiling with one launch in 64 on
// the profiling queue (ordered across the two by events), also with a reference to the last
// event held (as rgpud's launch thread does), in alternating rounds of N; and what the
// release of N completed events costs.
// --gated: the profiling times a kernel gets when it waited for a user event (rgpud's gates,
// and a direct launch behind held work's marker), against the same kernel waiting for nothing
// or for a kernel of another queue: per case, 20 launches of `busy` (about 1 ms alone), each
// launch's queued, submit, start and end (ns, relative to its queued time where that is not 0)
// and the host's time from the event's release to the kernel's completion.
// --spaced: END - START of a kernel of about 50 us (528 work-groups of 256) launched back to
// back, against the same launched every 4 ms with a 4-byte blocking read after each (the
// sharing benchmark's LC requests): whether a kernel after an idle gap takes longer on the
// device, which rgpud's accounting of such a tenant then charges.
// --pending: what kernels waiting for user events in other contexts of the process (rgpud's
// gated launches of tenants waiting for their turn) cost a closed loop in this one: a loop of
// a ~30 us kernel two deep, N times, beside 0, 1 or 3 other contexts that each hold such a
// kernel, alone or with a thread in clWaitForEvents on it, or two on a queue with profiling
// (a tenant's two held launches in flight in rgpud); per case and round, µs per
// completion, µs per enqueue and flush, and the CPUs the process kept busy meanwhile (its CPU
// time over the wall time).
// --turns: four tenants, each a context of its own with a thread running a closed loop of a
// ~30 us kernel two deep on a queue with profiling, taking turns of 8 ms as rgpud's `fair`
// gives best-effort tenants, three ways: "free" (no turns: every launch at once, the driver
// time-slices the contexts, as under `fifo`), "gated" (a launch out of its tenant's turn is
// enqueued at once behind a user event that a turn keeper sets when the turn comes, and the
// tenant sleeps until then before it waits for it, as rgpud's gates and AwaitDispatch; in
// its turn a launch goes at once) and "held" (a launch out of turn waits in its tenant's
// thread until the turn comes, then goes at once: no user event). Per way and round:
// completions per second of all tenants, the mean enqueue of a launch that went at once,
// and the CPU% of each thread the driver made (the busiest first): whether kernels behind
// user events are what keeps a driver thread of each waiting tenant's context spinning
// under `fair` (bench/results/2026-12-03-session41).
// --trigger: which one thing done once in a fresh context leaves a driver thread of that
// context spinning afterwards (--turns found the threads of `gated` still spinning in the
// next `free` rounds, and a free loop's enqueue twice as slow): per variant (nothing; a user
// event made and set, waited on by nothing; a kernel behind a user event already set; a
// kernel behind a user event set later by this thread, or by another; a marker behind a user
// event; a thread waiting on a condition variable meanwhile) and round, in a context of its
// own, a closed loop of a ~30 us kernel two deep for 0.5 s after it: completions per second,
// µs per enqueue, and the CPU% of the driver's threads over the loop.
#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "bench/probe_check.h"
#include "bench/sharing_matrix.h"
#include "server/scheduler/slicer.h"

namespace {

using Clock = std::chrono::steady_clock;

const char* kSource =
    "__kernel void tiny(__global int* p) { if (get_global_id(0) == 0) p[0] += 1; }\n"
    "__kernel void busy(__global float* p, uint n) { float a = p[0];"
    " for (uint i = 0; i < n; ++i) a = a * 0.999f + 0.5f; if (a == 12345.f) p[1] = a; }";

double UsPer(Clock::time_point t0, int n) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
}

cl_kernel BuildKernel(cl_context ctx, cl_device_id dev, const std::string& source,
                      const char* name = "tiny") {
  const char* src = source.c_str();
  cl_int err;
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &dev, "", nullptr, nullptr));
  cl_kernel k = clCreateKernel(prog, name, &err);
  CHECK(err);
  clReleaseProgram(prog);  // the kernel keeps it
  return k;
}

// {"name": [round, ...], ...}: one row of rounds per name, in order.
std::string RoundsJson(const std::vector<std::string>& names,
                       const std::vector<std::vector<double>>& rounds) {
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    out += std::string(i ? ", " : "") + "\"" + names[i] + "\": [";
    for (size_t r = 0; r < rounds[i].size(); ++r)
      out += (r ? ", " : "") + std::to_string(rounds[i][r]);
    out += "]";
  }
  return out + "}";
}

// Every thread of this process: "tid name cpu ticks", from /proc/self/task/*/stat.
std::string Threads() {
  std::string out;
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return out;
  while (const dirent* d = readdir(tasks)) {
    if (d->d_name[0] == '.') continue;
    const std::string tid = d->d_name;
    std::ifstream f("/proc/self/task/" + tid + "/stat");
    if (!f) continue;
    std::string line;
    std::getline(f, line);
    const size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::vector<std::string> fields;
    for (std::string w; rest >> w;) fields.push_back(w);
    // After the name: state is field 3, utime 14, stime 15, processor 39 (1-based).
    if (fields.size() < 37) continue;
    const long ticks = std::atol(fields[11].c_str()) + std::atol(fields[12].c_str());
    out += (out.empty() ? "\"" : ", \"") + tid + " " + line.substr(open + 1, close - open - 1) +
           " cpu" + fields[36] + " " + std::to_string(ticks) + "\"";
  }
  closedir(tasks);
  return out;
}

// Touches `bytes` of `mem` (a cache line at a time) and returns a value so it is not elided.
unsigned Touch(std::vector<unsigned char>& mem, size_t bytes) {
  unsigned sum = 0;
  for (size_t i = 0; i < bytes; i += 64) sum += ++mem[i];
  return sum;
}

// --gated (see the top of the file): JSON on stdout.
int GatedTimes(cl_context ctx, cl_device_id dev, cl_command_queue q, cl_program prog) {
  cl_int err;
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue q2 = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
  CHECK(err);
  cl_kernel busy = clCreateKernel(prog, "busy", &err);
  CHECK(err);
  cl_kernel busy2 = clCreateKernel(prog, "busy", &err);
  CHECK(err);
  cl_mem fbuf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
  CHECK(err);
  const size_t g = 1;
  auto times = [](cl_event ev) {
    cl_ulong t[4] = {};
    const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                       CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    for (int i = 0; i < 4; ++i)
      CHECK(clGetEventProfilingInfo(ev, what[i], sizeof(cl_ulong), &t[i], nullptr));
    return std::vector<cl_ulong>(t, t + 4);
  };
  auto set_iters = [&](cl_kernel kk, cl_uint iters) {
    CHECK(clSetKernelArg(kk, 0, sizeof(fbuf), &fbuf));
    CHECK(clSetKernelArg(kk, 1, sizeof(iters), &iters));
  };
  // About 1 ms alone.
  cl_uint iters = 100000;
  set_iters(busy, iters);
  for (int i = 0; i < 3; ++i) {
    cl_event ev;
    CHECK(clEnqueueNDRangeKernel(q, busy, 1, nullptr, &g, nullptr, 0, nullptr, &ev));
    CHECK(clWaitForEvents(1, &ev));
    auto t = times(ev);
    clReleaseEvent(ev);
    if (t[3] > t[2])
      iters = static_cast<cl_uint>(std::min<double>(4e9, 1e6 / (t[3] - t[2]) * 100000));
  }
  set_iters(busy, iters);
  set_iters(busy2, iters);
  const char* names[] = {"plain", "wait_list_user_event", "behind_marker_on_user_event",
                         "user_event_set_at_once", "wait_list_other_queue_kernel"};
  std::string json = "{\"busy_iters\": " + std::to_string(iters) + ", \"cases\": {";
  for (int c = 0; c < 5; ++c) {
    json += std::string(c ? ", " : "") + "\"" + names[c] + "\": [";
    for (int r = 0; r < 20; ++r) {
      cl_event user = nullptr, marker = nullptr, other = nullptr, ev;
      if (c >= 1 && c <= 3) {
        user = clCreateUserEvent(ctx, &err);
        CHECK(err);
      }
      if (c == 2) CHECK(clEnqueueMarkerWithWaitList(q, 1, &user, &marker));
      if (c == 4) {
        CHECK(clEnqueueNDRangeKernel(q2, busy2, 1, nullptr, &g, nullptr, 0, nullptr, &other));
        CHECK(clFlush(q2));
      }
      cl_event* waits = c == 1 || c == 3 ? &user : c == 4 ? &other : nullptr;
      CHECK(clEnqueueNDRangeKernel(q, busy, 1, nullptr, &g, nullptr, waits ? 1 : 0, waits, &ev));
      if (c == 3) CHECK(clSetUserEventStatus(user, CL_COMPLETE));
      CHECK(clFlush(q));
      Clock::time_point released = Clock::now();
      if (c == 1 || c == 2) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        released = Clock::now();
        CHECK(clSetUserEventStatus(user, CL_COMPLETE));
      }
      CHECK(clWaitForEvents(1, &ev));
      const double host_us =
          std::chrono::duration<double, std::micro>(Clock::now() - released).count();
      auto t = times(ev);
      const long long base = t[0] ? static_cast<long long>(t[0]) : 0;
      char row[256];
      std::snprintf(row, sizeof(row), "%s[%llu, %lld, %lld, %lld, %lld, %.1f]", r ? ", " : "",
                    static_cast<unsigned long long>(t[0]), static_cast<long long>(t[1]) - base,
                    static_cast<long long>(t[2]) - base, static_cast<long long>(t[3]) - base,
                    static_cast<long long>(t[3]) - static_cast<long long>(t[2]), host_us);
      json += row;
      for (cl_event e : {user, marker, other, ev})
        if (e) clReleaseEvent(e);
    }
    json += "]";
  }
  std::printf(
      "%s}, \"row\": \"queued, submit-queued, start-queued, end-queued, end-start (ns; "
      "relative to 0 where queued is 0), host us from release to completion\"}\n",
      json.c_str());
  clReleaseMemObject(fbuf);
  clReleaseKernel(busy);
  clReleaseKernel(busy2);
  clReleaseCommandQueue(q2);
  return 0;
}

// --spaced (see the top of the file): JSON on stdout.
int SpacedTimes(cl_context ctx, cl_device_id dev, cl_command_queue q) {
  // The sharing benchmark's LC kernel, as its matrix launches it.
  cl_kernel k = BuildKernel(ctx, dev, rgpu::bench::matrix::kSpinSource, "spin");
  cl_int err;
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 65536 * sizeof(float), nullptr, &err);
  CHECK(err);
  const size_t global = 528 * 256, local = 256;
  auto run = [&](int iters, bool spaced, int count) {
    CHECK(clSetKernelArg(k, 0, sizeof(out), &out));
    CHECK(clSetKernelArg(k, 1, sizeof(iters), &iters));
    std::vector<cl_event> evs(count);
    float value;
    for (int i = 0; i < count; ++i) {
      if (spaced) std::this_thread::sleep_for(std::chrono::milliseconds(4));
      CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, &evs[i]));
      if (spaced)
        CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof(value), &value, 0, nullptr, nullptr));
    }
    CHECK(clFinish(q));
    std::vector<double> us;
    for (cl_event e : evs) {
      cl_ulong s = 0, e2 = 0;
      CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof(s), &s, nullptr));
      CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof(e2), &e2, nullptr));
      us.push_back((e2 - s) / 1e3);
      clReleaseEvent(e);
    }
    std::sort(us.begin(), us.end());
    return us;
  };
  // About 50 us back to back.
  int iters = 8000;
  for (int i = 0; i < 3; ++i) {
    auto us = run(iters, false, 20);
    iters = std::max(1, static_cast<int>(iters * 50.0 / std::max(us[us.size() / 2], 1e-3)));
  }
  std::string json = "{\"iters\": " + std::to_string(iters) + ", \"end_minus_start_us\": {";
  const char* names[] = {"back_to_back", "every_4ms_with_a_read"};
  for (int round = 0; round < 3; ++round)
    for (int c = 0; c < 2; ++c) {
      auto us = run(iters, c == 1, 200);
      char row[256];
      std::snprintf(row, sizeof(row),
                    "%s\"%s_%d\": {\"p10\": %.2f, \"p50\": %.2f, \"p90\": %.2f, \"mean\": %.2f}",
                    round || c ? ", " : "", names[c], round, us[us.size() / 10], us[us.size() / 2],
                    us[us.size() * 9 / 10], std::accumulate(us.begin(), us.end(), 0.0) / us.size());
      json += row;
    }
  std::printf("%s}}\n", json.c_str());
  clReleaseMemObject(out);
  clReleaseKernel(k);
  return 0;
}

// The `busy` kernel's iterations for about 30 us alone, measured on `q`.
cl_uint CalibrateBusy(cl_context ctx, cl_command_queue q, cl_program prog) {
  cl_int err;
  cl_uint iters = 3000;
  cl_kernel busy = clCreateKernel(prog, "busy", &err);
  CHECK(err);
  cl_mem fbuf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
  CHECK(err);
  const size_t g = 1;
  for (int i = 0; i < 4; ++i) {
    CHECK(clSetKernelArg(busy, 0, sizeof(cl_mem), &fbuf));
    CHECK(clSetKernelArg(busy, 1, sizeof(iters), &iters));
    cl_event ev;
    CHECK(clEnqueueNDRangeKernel(q, busy, 1, nullptr, &g, nullptr, 0, nullptr, &ev));
    CHECK(clWaitForEvents(1, &ev));
    cl_ulong st = 0, en = 0;
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(st), &st, nullptr));
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(en), &en, nullptr));
    clReleaseEvent(ev);
    if (en > st) iters = static_cast<cl_uint>(std::min<double>(4e9, 30e3 / (en - st) * iters));
  }
  clReleaseMemObject(fbuf);
  clReleaseKernel(busy);
  return iters;
}

// --pending (see the top of the file): JSON on stdout.
int PendingTimes(cl_device_id dev, cl_context ctx, cl_command_queue q, cl_program prog, int n) {
  cl_int err;
  cl_kernel busy = clCreateKernel(prog, "busy", &err);
  CHECK(err);
  cl_mem fbuf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
  CHECK(err);
  const size_t g = 1;
  auto set_iters = [&](cl_uint iters) {
    CHECK(clSetKernelArg(busy, 0, sizeof(fbuf), &fbuf));
    CHECK(clSetKernelArg(busy, 1, sizeof(iters), &iters));
  };
  const cl_uint iters = CalibrateBusy(ctx, q, prog);
  set_iters(iters);
  // The other contexts, each with a queue and a kernel of its own.
  struct Other {
    cl_context ctx;
    cl_command_queue q, profiled;
    cl_kernel k;
    cl_mem buf;
  };
  std::vector<Other> others;
  for (int i = 0; i < 3; ++i) {
    Other o;
    o.ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    CHECK(err);
    o.q = clCreateCommandQueueWithProperties(o.ctx, dev, nullptr, &err);
    CHECK(err);
    cl_queue_properties prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    o.profiled = clCreateCommandQueueWithProperties(o.ctx, dev, prof, &err);
    CHECK(err);
    cl_program p = clCreateProgramWithSource(o.ctx, 1, &kSource, nullptr, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, "", nullptr, nullptr));
    o.k = clCreateKernel(p, "tiny", &err);
    CHECK(err);
    clReleaseProgram(p);
    o.buf = clCreateBuffer(o.ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
    CHECK(err);
    CHECK(clSetKernelArg(o.k, 0, sizeof(o.buf), &o.buf));
    others.push_back(o);
  }
  auto cpu_s = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  // kind 0: nothing pending; 1: a kernel behind a user event in each of `count` contexts;
  // 2: the same with a thread in clWaitForEvents on each; 3: two such kernels, each behind a
  // user event of its own, on a queue with profiling (as a tenant's two held launches in
  // flight wait on its application's queue in rgpud).
  auto run = [&](int count, int kind) {
    std::vector<cl_event> users, pending;
    std::vector<std::thread> waiters;
    for (int i = 0; kind > 0 && i < count; ++i) {
      for (int j = 0; j < (kind == 3 ? 2 : 1); ++j) {
        cl_event u = clCreateUserEvent(others[i].ctx, &err);
        CHECK(err);
        cl_event e;
        cl_command_queue oq = kind == 3 ? others[i].profiled : others[i].q;
        CHECK(clEnqueueNDRangeKernel(oq, others[i].k, 1, nullptr, &g, nullptr, 1, &u, &e));
        CHECK(clFlush(oq));
        users.push_back(u);
        pending.push_back(e);
      }
    }
    if (kind == 2)
      for (cl_event e : pending) waiters.emplace_back([e] { clWaitForEvents(1, &e); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const double c0 = cpu_s();
    const auto t0 = Clock::now();
    std::vector<cl_event> in_flight;
    Clock::duration enqueue{};
    for (int i = 0; i < n; ++i) {
      cl_event ev;
      const auto e0 = Clock::now();
      CHECK(clEnqueueNDRangeKernel(q, busy, 1, nullptr, &g, nullptr, 0, nullptr, &ev));
      CHECK(clFlush(q));
      enqueue += Clock::now() - e0;
      in_flight.push_back(ev);
      if (in_flight.size() >= 2) {
        CHECK(clWaitForEvents(1, &in_flight.front()));
        clReleaseEvent(in_flight.front());
        in_flight.erase(in_flight.begin());
      }
    }
    for (cl_event e : in_flight) {
      CHECK(clWaitForEvents(1, &e));
      clReleaseEvent(e);
    }
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const double cpus = (cpu_s() - c0) / wall;
    for (cl_event u : users) CHECK(clSetUserEventStatus(u, CL_COMPLETE));
    for (auto& w : waiters) w.join();
    for (size_t i = 0; i < pending.size(); ++i) {
      CHECK(clWaitForEvents(1, &pending[i]));
      clReleaseEvent(pending[i]);
      clReleaseEvent(users[i]);
    }
    return std::make_tuple(wall * 1e6 / n, cpus,
                           std::chrono::duration<double, std::micro>(enqueue).count() / n);
  };
  const std::vector<std::pair<int, int>> cases = {{0, 0}, {1, 1}, {3, 1}, {1, 2}, {3, 2}, {3, 3}};
  const char* names[] = {"alone",
                         "1_pending",
                         "3_pending",
                         "1_pending_waited",
                         "3_pending_waited",
                         "3_two_pending_profiled"};
  std::vector<std::vector<double>> us(cases.size()), cpus(cases.size()), enq(cases.size());
  for (int round = 0; round < 3; ++round)
    for (size_t c = 0; c < cases.size(); ++c) {
      auto [per, busy_cpus, enqueue_us] = run(cases[c].first, cases[c].second);
      us[c].push_back(per);
      cpus[c].push_back(busy_cpus);
      enq[c].push_back(enqueue_us);
    }
  std::vector<std::string> keys(names, names + cases.size());
  std::printf(
      "{\"busy_iters\": %u, \"us_per_completion\": %s, \"enqueue_and_flush_us\": %s, "
      "\"cpus_busy\": %s}\n",
      iters, RoundsJson(keys, us).c_str(), RoundsJson(keys, enq).c_str(),
      RoundsJson(keys, cpus).c_str());
  for (auto& o : others) {
    clReleaseMemObject(o.buf);
    clReleaseKernel(o.k);
    clReleaseCommandQueue(o.q);
    clReleaseCommandQueue(o.profiled);
    clReleaseContext(o.ctx);
  }
  clReleaseMemObject(fbuf);
  clReleaseKernel(busy);
  return 0;
}

// Per thread of this process: tid -> (name, user+system ticks).
std::map<int, std::pair<std::string, long>> ThreadTicks() {
  std::map<int, std::pair<std::string, long>> out;
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return out;
  while (const dirent* d = readdir(tasks)) {
    if (d->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + d->d_name + "/stat");
    std::string line;
    if (!f || !std::getline(f, line)) continue;
    const size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::vector<std::string> fields;
    for (std::string w; rest >> w;) fields.push_back(w);
    if (fields.size() < 13) continue;
    out[std::atoi(d->d_name)] = {line.substr(open + 1, close - open - 1),
                                 std::atol(fields[11].c_str()) + std::atol(fields[12].c_str())};
  }
  closedir(tasks);
  return out;
}

// --turns (see the top of the file): JSON on stdout. held_first: the ways in the order held,
// free, gated (a process whose contexts never saw a user event before `held`).
int TurnTimes(cl_device_id dev, cl_context ctx, cl_command_queue q, cl_program prog,
              bool held_first) {
  constexpr int kTenants = 4;
  constexpr auto kTurn = std::chrono::milliseconds(8);
  constexpr auto kRun = std::chrono::seconds(2);
  cl_int err;
  const cl_uint iters = CalibrateBusy(ctx, q, prog);
  struct Tenant {
    cl_context ctx;
    cl_command_queue q;
    cl_kernel k;
    cl_mem buf;
  };
  std::vector<Tenant> tenants;
  for (int i = 0; i < kTenants; ++i) {
    Tenant t;
    t.ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    CHECK(err);
    cl_queue_properties prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    t.q = clCreateCommandQueueWithProperties(t.ctx, dev, prof, &err);
    CHECK(err);
    t.k = BuildKernel(t.ctx, dev, kSource, "busy");
    t.buf = clCreateBuffer(t.ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
    CHECK(err);
    CHECK(clSetKernelArg(t.k, 0, sizeof(cl_mem), &t.buf));
    CHECK(clSetKernelArg(t.k, 1, sizeof(iters), &iters));
    tenants.push_back(t);
  }
  enum Way { kFree, kGated, kHeld };
  const char* way_names[] = {"free", "gated", "held"};
  const long hz = sysconf(_SC_CLK_TCK);
  std::vector<std::vector<double>> rate(3), enqueue(3), driver_sum(3), driver_top(3), ours(3);
  std::string threads_json;
  auto run = [&](Way way, int round) {
    std::mutex mu;
    std::condition_variable cv;
    int turn = 0;
    bool stop = false;
    std::vector<std::vector<cl_event>> gates(kTenants);  // user events to set at the turn
    std::atomic<long> completions{0}, direct{0};
    std::atomic<long long> direct_ns{0};
    std::vector<int> our_tids(kTenants, 0);
    our_tids.push_back(static_cast<int>(syscall(SYS_gettid)));
    std::atomic<bool> measuring{false};
    std::vector<std::thread> threads;
    threads.reserve(kTenants);
    for (int i = 0; i < kTenants; ++i)
      threads.emplace_back([&, i] {
        our_tids[i] = static_cast<int>(syscall(SYS_gettid));
        const Tenant& t = tenants[i];
        const size_t g = 1;
        std::deque<std::pair<cl_event, cl_event>> in_flight;  // (kernel, its gate or null)
        for (;;) {
          cl_event gate = nullptr;
          {
            std::unique_lock lk(mu);
            if (way == kHeld) cv.wait(lk, [&] { return stop || turn == i; });
            if (stop) break;
            if (way == kGated && turn != i) {
              cl_int rc;
              gate = clCreateUserEvent(t.ctx, &rc);
              CHECK(rc);
              clRetainEvent(gate);  // one reference for the turn keeper, one for this loop
              gates[i].push_back(gate);
            }
          }
          cl_event ev;
          const auto e0 = Clock::now();
          CHECK(clEnqueueNDRangeKernel(t.q, t.k, 1, nullptr, &g, nullptr, gate ? 1 : 0,
                                       gate ? &gate : nullptr, &ev));
          CHECK(clFlush(t.q));
          if (!gate && measuring.load(std::memory_order_relaxed)) {
            direct_ns +=
                std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - e0).count();
            ++direct;
          }
          in_flight.emplace_back(ev, gate);
          while (in_flight.size() >= 2) {
            cl_event front = in_flight.front().first;
            cl_event front_gate = in_flight.front().second;
            in_flight.pop_front();
            if (front_gate) {
              // Sleep until the turn keeper has set the gate (rgpud's AwaitDispatch).
              std::unique_lock lk(mu);
              cv.wait(lk, [&] {
                return std::find(gates[i].begin(), gates[i].end(), front_gate) == gates[i].end();
              });
            }
            CHECK(clWaitForEvents(1, &front));
            clReleaseEvent(front);
            if (front_gate) clReleaseEvent(front_gate);
            if (measuring.load(std::memory_order_relaxed)) ++completions;
          }
        }
        for (auto [front, front_gate] : in_flight) {
          CHECK(clWaitForEvents(1, &front));
          clReleaseEvent(front);
          if (front_gate) clReleaseEvent(front_gate);
        }
      });
    auto keep_turns = [&](Clock::time_point until) {
      while (Clock::now() < until) {
        std::this_thread::sleep_for(kTurn);
        if (way == kFree) continue;
        {
          std::lock_guard lk(mu);
          turn = (turn + 1) % kTenants;
          for (cl_event u : gates[turn]) {
            CHECK(clSetUserEventStatus(u, CL_COMPLETE));
            clReleaseEvent(u);
          }
          gates[turn].clear();
        }
        cv.notify_all();
      }
    };
    keep_turns(Clock::now() + std::chrono::milliseconds(200));  // warm-up
    const auto before = ThreadTicks();
    const auto t0 = Clock::now();
    measuring = true;
    keep_turns(t0 + kRun);
    measuring = false;
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const auto after = ThreadTicks();
    {
      std::lock_guard lk(mu);
      stop = true;
      for (auto& list : gates) {
        for (cl_event u : list) {
          CHECK(clSetUserEventStatus(u, CL_COMPLETE));
          clReleaseEvent(u);
        }
        list.clear();
      }
    }
    cv.notify_all();
    for (auto& th : threads) th.join();
    std::vector<double> driver;
    double our = 0;
    std::string listed;
    for (const auto& [tid, named] : after) {
      auto b = before.find(tid);
      const double pct =
          100.0 * (named.second - (b == before.end() ? 0 : b->second.second)) / hz / wall;
      if (std::find(our_tids.begin(), our_tids.end(), tid) != our_tids.end()) {
        our += pct;
        continue;
      }
      driver.push_back(pct);
      if (round == 0 && pct >= 5)
        listed += (listed.empty() ? "" : ", ") + std::string("\"") + named.first + " " +
                  std::to_string(tid) + " " + std::to_string(static_cast<int>(pct)) + "%\"";
    }
    std::sort(driver.rbegin(), driver.rend());
    rate[way].push_back(completions / wall);
    enqueue[way].push_back(direct ? direct_ns / 1e3 / direct : 0);
    driver_sum[way].push_back(std::accumulate(driver.begin(), driver.end(), 0.0));
    driver_top[way].push_back(driver.empty() ? 0 : driver.front());
    ours[way].push_back(our);
    if (round == 0)
      threads_json += std::string(threads_json.empty() ? "" : ", ") + "\"" + way_names[way] +
                      "\": [" + listed + "]";
  };
  for (int round = 0; round < 3; ++round)
    for (Way way : held_first ? std::vector<Way>{kHeld, kFree, kGated}
                              : std::vector<Way>{kFree, kGated, kHeld})
      run(way, round);
  std::vector<std::string> keys(way_names, way_names + 3);
  std::printf(
      "{\"busy_iters\": %u, \"completions_per_s\": %s, \"direct_enqueue_us\": %s, "
      "\"driver_threads_cpu_pct_sum\": %s, \"busiest_driver_thread_cpu_pct\": %s, "
      "\"tenant_threads_cpu_pct_sum\": %s, \"driver_threads_over_5pct_round0\": {%s}}\n",
      iters, RoundsJson(keys, rate).c_str(), RoundsJson(keys, enqueue).c_str(),
      RoundsJson(keys, driver_sum).c_str(), RoundsJson(keys, driver_top).c_str(),
      RoundsJson(keys, ours).c_str(), threads_json.c_str());
  for (auto& t : tenants) {
    clReleaseMemObject(t.buf);
    clReleaseKernel(t.k);
    clReleaseCommandQueue(t.q);
    clReleaseContext(t.ctx);
  }
  return 0;
}

// --trigger (see the top of the file): JSON on stdout.
int TriggerTimes(cl_device_id dev, cl_uint iters) {
  const char* names[] = {"nothing",
                         "user_event_set",
                         "kernel_behind_set_user_event",
                         "kernel_behind_user_event_set_here",
                         "kernel_behind_user_event_set_by_another",
                         "marker_behind_user_event_set_later"};
  constexpr int kVariants = 6;
  const long hz = sysconf(_SC_CLK_TCK);
  std::vector<std::vector<double>> rate(kVariants), enqueue(kVariants), driver(kVariants);
  for (int round = 0; round < 2; ++round)
    for (int v = 0; v < kVariants; ++v) {
      cl_int err;
      cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
      CHECK(err);
      cl_queue_properties prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
      cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, prof, &err);
      CHECK(err);
      cl_kernel k = BuildKernel(ctx, dev, kSource, "busy");
      cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
      CHECK(err);
      CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &buf));
      CHECK(clSetKernelArg(k, 1, sizeof(iters), &iters));
      const size_t g = 1;
      // A few launches first: the context's own threads are made by now.
      for (int i = 0; i < 20; ++i)
        CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
      CHECK(clFinish(q));
      if (v >= 1) {
        cl_event u = clCreateUserEvent(ctx, &err);
        CHECK(err);
        if (v == 1 || v == 2) CHECK(clSetUserEventStatus(u, CL_COMPLETE));
        cl_event e = nullptr;
        if (v >= 2 && v <= 4)
          CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 1, &u, &e));
        if (v == 5) CHECK(clEnqueueMarkerWithWaitList(q, 1, &u, &e));
        if (e) CHECK(clFlush(q));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (v == 3 || v == 5) CHECK(clSetUserEventStatus(u, CL_COMPLETE));
        if (v == 4) std::thread([u] { CHECK(clSetUserEventStatus(u, CL_COMPLETE)); }).join();
        if (e) {
          CHECK(clWaitForEvents(1, &e));
          clReleaseEvent(e);
        }
        clReleaseEvent(u);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const int self = static_cast<int>(syscall(SYS_gettid));
      const auto before = ThreadTicks();
      const auto t0 = Clock::now();
      long done = 0;
      Clock::duration enq{};
      std::deque<cl_event> in_flight;
      while (Clock::now() - t0 < std::chrono::milliseconds(500)) {
        cl_event ev;
        const auto e0 = Clock::now();
        CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, &ev));
        CHECK(clFlush(q));
        enq += Clock::now() - e0;
        in_flight.push_back(ev);
        if (in_flight.size() >= 2) {
          CHECK(clWaitForEvents(1, &in_flight.front()));
          clReleaseEvent(in_flight.front());
          in_flight.pop_front();
          ++done;
        }
      }
      const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
      const auto after = ThreadTicks();
      for (cl_event e : in_flight) {
        CHECK(clWaitForEvents(1, &e));
        clReleaseEvent(e);
      }
      double others = 0;
      for (const auto& [tid, named] : after) {
        if (tid == self) continue;
        auto b = before.find(tid);
        others += 100.0 * (named.second - (b == before.end() ? 0 : b->second.second)) / hz / wall;
      }
      rate[v].push_back(done / wall);
      enqueue[v].push_back(std::chrono::duration<double, std::micro>(enq).count() /
                           std::max(1L, done));
      driver[v].push_back(others);
      clReleaseMemObject(buf);
      clReleaseKernel(k);
      clReleaseCommandQueue(q);
      clReleaseContext(ctx);
    }
  std::vector<std::string> keys(names, names + kVariants);
  std::printf(
      "{\"busy_iters\": %u, \"completions_per_s\": %s, \"enqueue_and_flush_us\": %s, "
      "\"other_threads_cpu_pct\": %s}\n",
      iters, RoundsJson(keys, rate).c_str(), RoundsJson(keys, enqueue).c_str(),
      RoundsJson(keys, driver).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string want;
  int n = 20000;
  bool launch_only = false, pollers = false, events = false, gated = false, spaced = false,
       pending = false, turns = false, trigger = false, held_first = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--platform") && i + 1 < argc) want = argv[++i];
    else if (!std::strcmp(argv[i], "--launch-only"))
      launch_only = true;
    else if (!std::strcmp(argv[i], "--pollers"))
      pollers = true;
    else if (!std::strcmp(argv[i], "--events"))
      events = true;
    else if (!std::strcmp(argv[i], "--gated"))
      gated = true;
    else if (!std::strcmp(argv[i], "--spaced"))
      spaced = true;
    else if (!std::strcmp(argv[i], "--pending"))
      pending = true;
    else if (!std::strcmp(argv[i], "--turns"))
      turns = true;
    else if (!std::strcmp(argv[i], "--trigger"))
      trigger = true;
    else if (!std::strcmp(argv[i], "--held-first"))
      held_first = true;
    else if (!std::strcmp(argv[i], "--count") && i + 1 < argc) n = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--platform NAME] [--count N] [--launch-only | --pollers | --events "
                   "| --gated | --spaced | --pending | --turns [--held-first] | --trigger]\n",
                   argv[0]);
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

  if (gated) return GatedTimes(ctx, dev, q, prog);
  if (spaced) return SpacedTimes(ctx, dev, q);
  if (pending) return PendingTimes(dev, ctx, q, prog, n);
  if (turns) return TurnTimes(dev, ctx, q, prog, held_first);
  if (trigger) return TriggerTimes(dev, CalibrateBusy(ctx, q, prog));
  if (pollers) {
    // A pending event: a marker behind a user event, set only at the end.
    cl_event gate = clCreateUserEvent(ctx, &err);
    CHECK(err);
    cl_command_queue side = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &err);
    CHECK(err);
    cl_event pending, finished;
    CHECK(clEnqueueMarkerWithWaitList(side, 1, &gate, &pending));
    CHECK(clEnqueueMarkerWithWaitList(q, 0, nullptr, &finished));
    CHECK(clFinish(q));
    CHECK(clFlush(side));
    // kind: 0 none, 1 status of `finished`, 2 status of `pending`, 3 clWaitForEvents(pending)
    auto with_watcher = [&](int kind, int pause_us) {
      std::atomic<bool> stop{false};
      std::thread watcher([&] {
        if (kind == 0) return;
        if (kind == 3) {
          clWaitForEvents(1, &pending);
          return;
        }
        cl_int status;
        while (!stop.load(std::memory_order_relaxed)) {
          clGetEventInfo(kind == 1 ? finished : pending, CL_EVENT_COMMAND_EXECUTION_STATUS,
                         sizeof(status), &status, nullptr);
          const auto until = Clock::now() + std::chrono::microseconds(pause_us);
          while (Clock::now() < until) {
          }
        }
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const auto t = Clock::now();
      for (int i = 0; i < n; ++i)
        CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
      const double us = UsPer(t, n);
      CHECK(clFinish(q));
      stop = true;
      if (kind == 3) {
        // Wake the blocked waiter with a fresh pending marker left for the next round.
        CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
        watcher.join();
        clReleaseEvent(gate);
        clReleaseEvent(pending);
        gate = clCreateUserEvent(ctx, &err);
        CHECK(err);
        CHECK(clEnqueueMarkerWithWaitList(side, 1, &gate, &pending));
        CHECK(clFlush(side));
      } else {
        watcher.join();
      }
      return us;
    };
    struct Case {
      const char* name;
      int kind, pause_us;
    };
    const Case cases[] = {{"none", 0, 0},          {"finished_2us", 1, 2},
                          {"pending_2us", 2, 2},   {"pending_10us", 2, 10},
                          {"pending_50us", 2, 50}, {"blocked_in_clWaitForEvents", 3, 0}};
    std::vector<std::vector<double>> rounds(std::size(cases));
    std::vector<std::string> names;
    for (const Case& c : cases) names.push_back(c.name);
    for (int r = 0; r < 5; ++r)
      for (size_t c = 0; c < std::size(cases); ++c)
        rounds[c].push_back(with_watcher(cases[c].kind, cases[c].pause_us));
    std::string json = "{\"enqueue_us_beside_a_watcher\": " + RoundsJson(names, rounds);
    // How much later a thread blocked in clWaitForEvents returns than one that asks the
    // status without pause, both watching one kernel of about 100-300 us.
    cl_kernel busy = clCreateKernel(prog, "busy", &err);
    CHECK(err);
    cl_mem fbuf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
    CHECK(err);
    const cl_uint iters = 20000;
    CHECK(clSetKernelArg(busy, 0, sizeof(fbuf), &fbuf));
    CHECK(clSetKernelArg(busy, 1, sizeof(iters), &iters));
    std::vector<double> later, polled_after_end;
    for (int t = 0; t < 300; ++t) {
      cl_event ev;
      CHECK(clEnqueueNDRangeKernel(q, busy, 1, nullptr, &g, nullptr, 0, nullptr, &ev));
      CHECK(clFlush(q));
      Clock::time_point waited, polled;
      std::thread waiter([&] {
        clWaitForEvents(1, &ev);
        waited = Clock::now();
      });
      cl_int status = CL_QUEUED;
      while (status > CL_COMPLETE)
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
      polled = Clock::now();
      waiter.join();
      later.push_back(std::chrono::duration<double, std::micro>(waited - polled).count());
      clReleaseEvent(ev);
    }
    std::sort(later.begin(), later.end());
    json += ", \"clWaitForEvents_returns_after_polling_sees_it_us\": {\"p10\": " +
            std::to_string(later[later.size() / 10]) +
            ", \"p50\": " + std::to_string(later[later.size() / 2]) +
            ", \"p90\": " + std::to_string(later[later.size() * 9 / 10]) +
            ", \"max\": " + std::to_string(later.back()) + "}}";
    std::printf("%s\n", json.c_str());
    clSetUserEventStatus(gate, CL_COMPLETE);
    clFinish(side);
    return 0;
  }
  if (events) {
    cl_command_queue plain = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &err);
    CHECK(err);
    // kept_*: each launch's event kept until after clFinish (CLBlast's routines, anything that
    // waits per launch). kept_twin: launches on the queue without profiling, one in 64 on the
    // profiling queue, each switch ordered by the other queue's last event in a wait list
    // (how rgpud could keep sampling device times for accounting without profiling every one).
    const std::vector<std::string> names{"event_released_profiling",
                                         "event_released_plain",
                                         "no_event_profiling",
                                         "no_event_plain",
                                         "kept_profiling",
                                         "kept_plain",
                                         "kept_twin",
                                         "kept_twin_retained"};
    std::vector<std::vector<double>> rounds(names.size()), totals(names.size()),
        releases(names.size());
    std::vector<cl_event> kept(n);
    for (int r = 0; r < 5; ++r)
      for (size_t v = 0; v < names.size(); ++v) {
        // kept_twin_retained: the launch thread's way, a reference to the last event held.
        const bool keep = v >= 4, twin = v >= 6, retained = v == 7;
        cl_command_queue vq = v % 2 == 0 && !twin ? q : plain;
        const bool with_event = v < 2 || keep;
        const auto t = Clock::now();
        cl_event last = nullptr;  // the previous launch's event, when kept
        bool on_profiling = false;
        for (int i = 0; i < n; ++i) {
          cl_event e = nullptr;
          cl_command_queue lq = vq;
          const bool sample = twin && i % 64 == 63;
          if (sample) lq = q;
          // A switch of queue waits for the other queue's last launch.
          const bool switched = twin && last && sample != on_profiling;
          on_profiling = sample;
          CHECK(clEnqueueNDRangeKernel(lq, k, 1, nullptr, &g, nullptr, switched ? 1 : 0,
                                       switched ? &last : nullptr, with_event ? &e : nullptr));
          if (keep) {
            kept[i] = e;
            if (retained) {
              clRetainEvent(e);
              if (last) clReleaseEvent(last);
            }
            last = e;
          } else if (e) {
            clReleaseEvent(e);
          }
        }
        rounds[v].push_back(UsPer(t, n));
        CHECK(clFinish(vq));
        if (twin) CHECK(clFinish(q));
        totals[v].push_back(UsPer(t, n));
        if (retained && last) clReleaseEvent(last);
        // The last release of events that have completed (rgpud makes them when the
        // application releases its own).
        const auto r0 = Clock::now();
        if (keep)
          for (cl_event e : kept) clReleaseEvent(e);
        releases[v].push_back(keep ? UsPer(r0, n) : 0.0);
      }
    std::printf(
        "{\"enqueue_us_rounds\": %s, \"with_finish_us_rounds\": %s, "
        "\"release_complete_us_rounds\": %s}\n",
        RoundsJson(names, rounds).c_str(), RoundsJson(names, totals).c_str(),
        RoundsJson(names, releases).c_str());
    clReleaseCommandQueue(plain);
    return 0;
  }
  if (launch_only) {
    const int first_cpu = sched_getcpu();
    std::string rounds;
    for (int r = 0; r < 5; ++r) {
      const auto t = Clock::now();
      for (int i = 0; i < n; ++i)
        CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
      rounds += (r ? ", " : "") + std::to_string(UsPer(t, n));
      CHECK(clFinish(q));
    }
    std::printf(
        "{\"launch_no_event_rounds\": [%s], \"cpu_first\": %d, \"cpu_last\": %d, "
        "\"threads\": [%s]}\n",
        rounds.c_str(), first_cpu, sched_getcpu(), Threads().c_str());
    return 0;
  }
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

  // What changes the cost of one event-less enqueue of `tiny` on the driver, in rounds that
  // alternate the variants (a variant's n enqueues, then an untimed clFinish): the kernel as
  // rgpud builds it (rewritten for slicing: a ulong16 and a pointer argument more), the
  // original with the two parameters only, and work between enqueues of the kind rgpud's
  // thread does (touching memory, a system call, another thread asking the driver for an
  // event's status). Work between enqueues is timed alone in the same round and subtracted.
  auto rewritten = rgpu::slicer::RewriteForSlicing(kSource, "");
  if (!rewritten.ok()) {
    std::fprintf(stderr, "the slicer refused tiny: %s\n", rewritten.status().message().c_str());
    return 1;
  }
  cl_kernel k_rewritten = BuildKernel(ctx, dev, rewritten->source);
  cl_kernel k_padded =
      BuildKernel(ctx, dev,
                  "__kernel void tiny(__global int* p, ulong16 h, volatile __global uint* c) "
                  "{ if (get_global_id(0) == 0) p[0] += 1; }");
  const cl_ulong16 whole = rgpu::slicer::HiddenArgForWholeLaunch();
  const cl_mem no_mem = nullptr;
  for (cl_kernel kk : {k_rewritten, k_padded}) {
    CHECK(clSetKernelArg(kk, 0, sizeof(buf), &buf));
    CHECK(clSetKernelArg(kk, 1, sizeof(whole), &whole));
    CHECK(clSetKernelArg(kk, 2, sizeof(cl_mem), &no_mem));
    for (int i = 0; i < 1000; ++i)
      CHECK(clEnqueueNDRangeKernel(q, kk, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
    CHECK(clFinish(q));
  }
  std::vector<unsigned char> scratch(1 << 20);
  unsigned sink = 0;
  cl_event done_event;
  CHECK(clEnqueueMarkerWithWaitList(q, 0, nullptr, &done_event));
  CHECK(clFinish(q));
  auto enqueue = [&](cl_kernel kk) {
    CHECK(clEnqueueNDRangeKernel(q, kk, 1, nullptr, &g, nullptr, 0, nullptr, nullptr));
  };
  // Mean µs per enqueue of `kk` with `between` run after each; minus `between` alone.
  auto variant = [&](cl_kernel kk, const auto& between) {
    auto t = Clock::now();
    for (int i = 0; i < n; ++i) between();
    const double alone = UsPer(t, n);
    t = Clock::now();
    for (int i = 0; i < n; ++i) {
      enqueue(kk);
      between();
    }
    const double with = UsPer(t, n);
    CHECK(clFinish(q));
    return with - alone;
  };
  auto nothing = [] {};
  const char* variant_names[] =
      {"plain", "rewritten", "padded", "touch_64k", "touch_1m", "syscall", "status_poller_thread"};
  constexpr int kVariants = 7, kRounds = 5;
  std::vector<double> rounds[kVariants];
  for (int r = 0; r < kRounds; ++r) {
    rounds[0].push_back(variant(k, nothing));
    rounds[1].push_back(variant(k_rewritten, nothing));
    rounds[2].push_back(variant(k_padded, nothing));
    rounds[3].push_back(variant(k, [&] { sink += Touch(scratch, 64 << 10); }));
    rounds[4].push_back(variant(k, [&] { sink += Touch(scratch, 1 << 20); }));
    rounds[5].push_back(variant(k, [] { syscall(SYS_getppid); }));
    std::atomic<bool> stop{false};
    std::thread poller([&] {
      cl_int status;
      while (!stop.load(std::memory_order_relaxed)) {
        clGetEventInfo(done_event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                       nullptr);
        const auto until = Clock::now() + std::chrono::microseconds(2);
        while (Clock::now() < until) {
        }
      }
    });
    rounds[6].push_back(variant(k, nothing));
    stop = true;
    poller.join();
  }
  clReleaseEvent(done_event);
  clReleaseKernel(k_rewritten);
  clReleaseKernel(k_padded);
  const std::string variants_json =
      RoundsJson(std::vector<std::string>(std::begin(variant_names), std::end(variant_names)),
                 std::vector<std::vector<double>>(std::begin(rounds), std::end(rounds)));

  std::printf(
      "{\"platform\": \"%s\", \"device\": \"%s\", \"count\": %d, \"us\": {\n"
      "  \"launch_no_event\": %.3f,\n  \"launch_no_event_no_profiling\": %.3f,\n"
      "  \"launch_no_event_two_more_queues\": %.3f,\n"
      "  \"launch_with_event\": %.3f,\n"
      "  \"launch_with_event_and_setarg\": %.3f,\n  \"launch_with_event_and_callback\": %.3f,\n"
      "  \"status_query_in_flight\": %.3f,\n  \"status_query_complete\": %.3f,\n"
      "  \"profiling_start_end_complete\": %.3f,\n  \"retain_release\": %.3f,\n"
      "  \"launch_then_finish\": %.3f\n}, \"callbacks_fired\": %d,\n"
      "\"launch_no_event_variants_rounds\": %s, \"sink\": %u}\n",
      pd.platform.c_str(), pd.name.c_str(), n, launch_no_event, launch_no_event_no_profiling,
      launch_no_event_two_more_queues, launch_event, launch_event_setarg, launch_event_callback,
      status_pending, status_complete, profiling_two, retain_release, launch_finish, fired.load(),
      variants_json.c_str(), sink);
  clReleaseMemObject(buf);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return 0;
}
