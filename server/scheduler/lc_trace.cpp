#include "server/scheduler/lc_trace.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace rgpu::server {
namespace {

constexpr size_t kBeWindow = 1 << 18;
constexpr size_t kMaxSamples = 1'000'000;

float Us(uint64_t later, uint64_t earlier) {
  return later > earlier ? static_cast<float>(later - earlier) / 1000.0F : 0.0F;
}

std::string Percentiles(std::vector<float> v) {
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))]; };
  return fmt::format("{:.0f}/{:.0f}/{:.0f}/{:.0f}", at(0.5), at(0.9), at(0.99), v.back());
}

}  // namespace

bool TraceRequests() {
  const char* t = std::getenv("RGPU_TRACE_REQUESTS");
  return t && *t && std::string(t) != "0";
}

void LcTrace::Kernel(bool latency_critical, const ProfilingTimes& t) {
  if (t.end <= t.start) return;
  if (!latency_critical) {
    be_.emplace_back(t.end, t.start);
    if (be_.size() > kBeWindow) be_.pop_front();
  } else if (lc_.size() < kMaxSamples) {
    lc_.push_back(t);
  }
}

void LcTrace::Host(float lock_us, float stop_us, float drain_us, float launch_us) {
  if (lock_us_.size() >= kMaxSamples) return;
  lock_us_.push_back(lock_us);
  stop_us_.push_back(stop_us);
  drain_us_.push_back(drain_us);
  launch_us_.push_back(launch_us);
}

void LcTrace::Summarise(const std::string& why) {
  if (lc_.empty()) return;
  spdlog::info(
      "lc trace ({}): host us p50/p90/p99/max: scheduler lock {} stop flags {} slices drained {} "
      "launch {}",
      why, Percentiles(lock_us_), Percentiles(stop_us_), Percentiles(drain_us_),
      Percentiles(launch_us_));
  lock_us_.clear();
  stop_us_.clear();
  drain_us_.clear();
  launch_us_.clear();
  std::vector<std::pair<uint64_t, uint64_t>> be(be_.begin(), be_.end());
  std::sort(be.begin(), be.end());
  std::vector<float> wait, exec, after, gap;
  for (const ProfilingTimes& t : lc_) {
    wait.push_back(Us(t.start, t.submit));
    exec.push_back(Us(t.end, t.start));
    // The BE kernel that ended last before this one started (1 us of slack for clocks).
    auto it = std::upper_bound(be.begin(), be.end(), std::make_pair(t.start + 1000, UINT64_MAX));
    uint64_t be_end = 0;
    for (int look = 0; it != be.begin() && look < 8 && be_end == 0; ++look) {
      --it;
      if (it->second < t.start) be_end = it->first;
    }
    if (be_end <= t.queued) continue;  // nothing of BE was running when it was queued
    after.push_back(Us(be_end, t.queued));
    gap.push_back(Us(t.start, be_end));
  }
  spdlog::info("lc trace ({}): {} latency-critical kernels, {} queued while best-effort work ran; "
               "us p50/p90/p99/max: wait {} exec {}; behind best-effort: it ran on {} then the switch {}",
               why, lc_.size(), after.size(), Percentiles(wait), Percentiles(exec), Percentiles(after),
               Percentiles(gap));
  lc_.clear();
}

}  // namespace rgpu::server
