// Device time per tenant when tenants' kernels share the device (docs/scheduling.md,
// "Accounting").
//
// Each instant of device time is charged in equal parts to the tenants that had a kernel
// running at that instant; a tenant with several kernels running at once counts once. So the
// tenants' charges add up to the time the device was busy, and a tenant alone is charged
// exactly what it ran. (A kernel's own END - START would not do: contexts on one device
// time-slice, so with N tenants' kernels on the device each END - START spans about N times
// the kernel's own work.)
//
// An interval can be charged only once every interval that could overlap it is known, and
// intervals arrive out of order, as launches complete. Every launch takes a sequence number
// before it goes to the device (Submit) and, once complete, reports its interval (Report) or
// that it has none (Drop: it failed, or it was launched without an event and is charged an
// estimate elsewhere). A kernel overlapping interval I started before I ended, so it was
// submitted before I was reported: the ledger notes at Report how many sequence numbers have
// been handed out, and settles I once every one of them is done. An instant that several of
// one tenant's intervals cover is charged with the first of them to settle.
//
// Charges are made only at settlement and never revised: a counter fed with them only grows.
// A settled interval is kept while an unsettled one may still overlap it: no later launch can
// (it was submitted after everything up to its settlement mark was done), so once it ends
// before every unsettled interval starts it is pruned, and the result stays exact. If a launch
// never completes, settlement would wait forever: past `max_intervals` retained intervals the
// oldest settled ones are forgotten, then the unsettled interval waiting for the fewest
// launches is settled with what is known (counted in forced(); its charge may be off).
//
// Threading: not thread-safe; the owner serialises every call (Scheduler: under its mu_).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace rgpu::server {

class DeviceLedger {
 public:
  struct Charge {
    std::string tenant;
    uint64_t ns = 0;
  };

  static constexpr size_t kDefaultMaxIntervals = 16384;
  explicit DeviceLedger(size_t max_intervals = kDefaultMaxIntervals);

  // A launch is about to go to the device: its sequence number.
  uint64_t Submit();
  // Launch `seq` of `tenant` ran on the device from `start` to `end` (profiling times, ns).
  // Returns what this settled, one entry per tenant charged.
  std::vector<Charge> Report(uint64_t seq, const std::string& tenant, uint64_t start, uint64_t end);
  // Launch `seq` is done without an interval (failed, or no event to time it by).
  std::vector<Charge> Drop(uint64_t seq);

  size_t retained() const { return intervals_.size(); }  // settled history and unsettled
  size_t unsettled() const;
  uint64_t forced() const { return forced_; }  // intervals settled before all was known

 private:
  struct Interval {
    std::string tenant;
    uint64_t start = 0, end = 0;
    uint64_t settles_at = 0;  // settled once every sequence number below this is done
    bool settled = false;
  };

  void MarkDone(uint64_t seq);
  void AdvanceTo(uint64_t seq);  // every sequence number below `seq` counts as done
  std::vector<Charge> Settle();
  double ShareOf(size_t i) const;  // the device ns interval i is charged
  void Prune();

  size_t max_intervals_;
  uint64_t next_seq_ = 0;
  uint64_t done_below_ = 0;   // every sequence number below this is done
  std::deque<bool> done_;     // done flags from done_below_ to next_seq_
  std::vector<Interval> intervals_;
  // The smallest settles_at of the unsettled intervals (UINT64_MAX: none): until done_below_
  // reaches it nothing can settle, so Settle returns without looking at the intervals. With
  // thousands of launches in flight, that scan on every completion took most of rgpud's CPU
  // and held the scheduler's lock against new launches.
  uint64_t next_settle_ = UINT64_MAX;
  // intervals_ is sorted by start, and no interval is longer than this: ShareOf looks only at
  // the few that can overlap the one it charges (it scanned them all, for every settlement).
  uint64_t longest_ = 0;
  uint64_t forced_ = 0;
};

}  // namespace rgpu::server
