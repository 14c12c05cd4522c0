// Where a latency-critical launch's time goes on the device, for diagnosis
// (RGPU_TRACE_REQUESTS=1; off otherwise, and then it costs nothing).
//
// Every kernel that the scheduler accounts reports its profiling times here. For each
// latency-critical (LC) kernel the trace then tells apart, from the device's own clock:
//   wait     submit to start: how long the device held the LC kernel back;
//   exec     start to end;
//   be_after the best-effort (BE) kernel that ended last before the LC kernel started:
//            how long after the LC kernel was queued it still ran (the drain of a stop),
//   gap      and from its end to the LC kernel's start (the device's switch between
//            contexts, or nothing when it ended long before).
// Logged (and cleared) when a session ends, as percentiles over the LC kernels since.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <string>
#include <vector>

#include "server/backend/backend.h"

namespace rgpu::server {

// Whether RGPU_TRACE_REQUESTS asks for the request traces (this one and Session's).
bool TraceRequests();

class LcTrace {
 public:
  // Not thread-safe: the scheduler calls it under its own lock.
  void Kernel(bool latency_critical, const ProfilingTimes& t);
  // Host time of one latency-critical Submit: waiting for the scheduler's lock, writing the
  // stop flags, from there to the launch (waiting for slices of its context: DrainSlices),
  // and the launch itself (microseconds).
  void Host(float lock_us, float stop_us, float drain_us, float launch_us);
  // Logs the figures since the last summary and starts over; nothing if no LC kernel ran.
  void Summarise(const std::string& why);

 private:
  // Kept as reported and matched at Summarise: a BE kernel's times arrive when its run's
  // read completes, which can be after the LC kernel that followed it reported.
  std::vector<ProfilingTimes> lc_;
  std::vector<float> lock_us_, stop_us_, drain_us_, launch_us_;
  std::deque<std::pair<uint64_t, uint64_t>> be_;  // (end, start), the latest ones
};

}  // namespace rgpu::server
