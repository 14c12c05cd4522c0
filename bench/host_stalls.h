// How much the benchmark host itself held threads back during a run: a thread that wakes on
// a 1 ms grid and notes how late each wake-up came, and the hypervisor's steal time
// (/proc/stat) over the same span. A tenant that waits milliseconds for no reason of rgpu's
// shows here too: the sharing benchmark records both for every run (docs/scheduling.md,
// "Host stalls"), so that a tail that the host made is not read as the scheduler's.
//
//   HostStallMeter m;       // starts measuring
//   ... run ...
//   json h = m.Stop();      // {"wakeups", "late_p50_ms", "late_p999_ms", "late_max_ms",
//                           //  "late_over_1ms", "steal_ms"}
#pragma once

#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace rgpu::bench {

class HostStallMeter {
 public:
  static constexpr int64_t kPeriodNs = 1'000'000;

  HostStallMeter() : steal_before_(StealTicks()), thread_([this] { Run(); }) {}
  ~HostStallMeter() {
    if (thread_.joinable()) Stop();
  }
  HostStallMeter(const HostStallMeter&) = delete;
  HostStallMeter& operator=(const HostStallMeter&) = delete;

  // Ends the measurement and says what it found; call it once (the destructor stops a meter
  // that was not).
  nlohmann::json Stop() {
    stop_.store(true, std::memory_order_relaxed);
    thread_.join();
    const int64_t steal = StealTicks();
    std::vector<int64_t> late = std::move(late_ns_);
    std::sort(late.begin(), late.end());
    auto at = [&](double q) {
      return late.empty()
                 ? 0.0
                 : late[std::min(late.size() - 1, static_cast<size_t>(q * late.size()))] / 1e6;
    };
    const auto over = late.end() - std::upper_bound(late.begin(), late.end(), int64_t{1'000'000});
    nlohmann::json out{{"wakeups", late.size()},
                       {"late_p50_ms", at(0.5)},
                       {"late_p999_ms", at(0.999)},
                       {"late_max_ms", late.empty() ? 0.0 : late.back() / 1e6},
                       {"late_over_1ms", over}};
    if (steal_before_ >= 0 && steal >= 0)
      out["steal_ms"] = static_cast<double>(steal - steal_before_) * 1e3 /
                        static_cast<double>(sysconf(_SC_CLK_TCK));
    return out;
  }

  // The hypervisor's steal time of all CPUs so far (clock ticks), or -1 where /proc/stat
  // does not say.
  static int64_t StealTicks() {
    std::ifstream in("/proc/stat");
    std::string line;
    if (!std::getline(in, line) || line.rfind("cpu ", 0) != 0) return -1;
    std::istringstream f(line.substr(4));
    int64_t v[8] = {};
    for (int64_t& x : v)
      if (!(f >> x)) return -1;
    return v[7];  // user nice system idle iowait irq softirq steal
  }

 private:
  void Run() {
    // The kernel's default timer slack (50 us) would read as lateness.
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    late_ns_.reserve(1 << 16);
    timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!stop_.load(std::memory_order_relaxed)) {
      next.tv_nsec += kPeriodNs;
      if (next.tv_nsec >= 1'000'000'000) {
        next.tv_nsec -= 1'000'000'000;
        ++next.tv_sec;
      }
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
      timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      const int64_t late =
          (now.tv_sec - next.tv_sec) * 1'000'000'000 + (now.tv_nsec - next.tv_nsec);
      late_ns_.push_back(late);
      if (late > kPeriodNs) next = now;  // a stall counts once, not once per missed period
    }
  }

  const int64_t steal_before_;
  std::atomic<bool> stop_{false};
  std::vector<int64_t> late_ns_;  // the thread's until Stop joins it
  std::thread thread_;
};

}  // namespace rgpu::bench
