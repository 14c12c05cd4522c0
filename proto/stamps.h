// Request stamps: where a request's time goes between a client and rgpud, seen from both ends.
//
// With RGPU_STAMPS=PREFIX in its environment, a process (the ICD inside an application, or
// rgpud) records the CLOCK_MONOTONIC time at which each request passes the points below and
// writes them at exit to PREFIX.PID, one "point arg nanoseconds" line each. Both ends of a
// same-host connection share that clock, so bench/stamps.py can join a client's file with
// rgpud's and say, per request, how long each step took (docs/performance.md, "Where a
// request's time goes"). Without the variable a mark is one load and a branch.
//
// Threading: Mark may be called from any thread, also while the process exits: the log is
// never freed (its memory exists only with the variable set). At most kMax stamps are kept.
#pragma once

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace rgpu::stamps {

// The numbers are the file format (bench/stamps.py reads them; 5, 11 and 12 are in the raw
// files of bench/results/2026-11-27-session15/ only and are skipped).
enum class Point : uint32_t {
  // The client (the ICD).
  kLaunchCall = 1,      // clEnqueueNDRangeKernel entered
  kLaunchQueued = 2,    // its request appended for the flusher
  kReadCall = 3,        // a blocking clEnqueueReadBuffer entered
  kReadWritten = 4,     // its request (and all queued before it) written to the socket
  kReadReturns = 6,     // clEnqueueReadBuffer returns
  kReadLanded = 7,      // the answer's data is in the application's memory
  kWaitCall = 20,       // clWaitForEvents entered
  kWaitReturns = 21,    // clWaitForEvents returns
  kFinishCall = 23,     // clFinish entered
  kFinishReturns = 24,  // clFinish returns
  kWritten = 25,        // gathered requests handed to the socket or ring (arg: bytes)
  // rgpud (a session's reader thread; the argument's upper 12 bits are the session's id).
  kFrameIn = 13,       // a frame read whole (arg: its op)
  kFrameDone = 14,     // its handler returned (arg: its op)
  kReadAnswered = 15,  // a read waited for inline is done on the device
  kReadSent = 16,      // its data and reply handed to the socket
  kSubmit = 17,        // a launch handed to the scheduler
  kSubmitted = 18,     // the scheduler returned (the driver's enqueue, for a direct launch)
  kReadIssued = 19,    // a read handed to the driver (arg: 1 when waited for inline)
  kWaitDone = 22,      // a wait for events done inline returned from the driver
  // rgpud's scheduler, in a held launch that goes on the device at once (Scheduler::Hold,
  // LaunchAtOnce; the argument is 0): where the step from kSubmit to kSubmitted goes.
  kHoldEntered = 26,     // Hold entered (Submit's own work before it)
  kHoldPlanned = 27,     // planned, the launch before it found; next: TakeAtOnce
  kAtOnceTaken = 28,     // TakeAtOnce said yes
  kAtOnceNamed = 29,     // what it names retained (KeepNamed)
  kAtOnceEnqueued = 30,  // the driver's enqueue returned
  kAtOnceFlushed = 31,   // the driver's flush returned
  kAtOnceWatched = 32,   // counted as launched, handed to the completion watcher
  // rgpud's scheduler, in a direct launch (Scheduler::Direct; the argument is 0).
  kDirectEntered = 33,   // Direct entered (Submit's own work before it, under its lock)
  kDirectChosen = 34,    // its event chosen (ChooseEvent, under the scheduler's lock)
  kDirectLaunched = 35,  // the driver's enqueue returned (or the launch thread took it)
};

class Log {
 public:
  static constexpr size_t kMax = size_t{1} << 20;
  static Log& Get() {
    // Neither the log nor its memory is ever destroyed (a thread may mark while statics
    // are being destroyed); the file is written when `dump`, a static, is destroyed.
    static Log* const log = new Log;
    static const Dumper dump{log};
    return *log;
  }
  bool on() const { return entries_ != nullptr; }
  void Mark(Point p, uint32_t arg) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i < kMax)
      entries_[i] = {static_cast<uint32_t>(p), arg,
                     static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
                         static_cast<uint64_t>(ts.tv_nsec)};
  }
  void Dump() const {
    if (!entries_) return;
    FILE* f = std::fopen(path_.c_str(), "w");
    if (!f) return;
    const size_t n = std::min(next_.load(), kMax);
    for (size_t i = 0; i < n; ++i)
      std::fprintf(f, "%u %u %llu\n", entries_[i].point, entries_[i].arg,
                   static_cast<unsigned long long>(entries_[i].ns));
    std::fclose(f);
  }

 private:
  struct Dumper {
    const Log* log;
    ~Dumper() { log->Dump(); }
  };
  struct Entry {
    uint32_t point, arg;
    uint64_t ns;
  };
  Log() {
    if (const char* prefix = std::getenv("RGPU_STAMPS"); prefix && *prefix) {
      path_ = std::string(prefix) + "." + std::to_string(getpid());
      entries_ = new Entry[kMax];
    }
  }
  Entry* entries_ = nullptr;
  std::atomic<size_t> next_{0};
  std::string path_;
};

// The log when RGPU_STAMPS is set, else null; read without a guard on every mark. A mark
// made before this is initialised (from another static initialiser) is not kept.
inline Log* const g_log = Log::Get().on() ? &Log::Get() : nullptr;

inline void Mark(Point p, uint32_t arg = 0) {
  if (Log* log = g_log) log->Mark(p, arg);
}

}  // namespace rgpu::stamps
