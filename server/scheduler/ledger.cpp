#include "server/scheduler/ledger.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rgpu::server {

DeviceLedger::DeviceLedger(size_t max_intervals) : max_intervals_(std::max<size_t>(max_intervals, 1)) {}

uint64_t DeviceLedger::Submit() {
  done_.push_back(false);
  return next_seq_++;
}

std::vector<DeviceLedger::Charge> DeviceLedger::Report(uint64_t seq, const std::string& tenant,
                                                       uint64_t start, uint64_t end) {
  if (seq >= next_seq_) return {};  // never handed out: nothing to match it with
  if (end > start) {
    // Kept in order of start (reports come nearly in that order: the insert is near the end).
    auto at = std::upper_bound(intervals_.begin(), intervals_.end(), start,
                               [](uint64_t s, const Interval& iv) { return s < iv.start; });
    intervals_.insert(at, Interval{tenant, start, end, next_seq_, false});
    next_settle_ = std::min(next_settle_, next_seq_);
    longest_ = std::max(longest_, end - start);
  }
  MarkDone(seq);
  return Settle();
}

std::vector<DeviceLedger::Charge> DeviceLedger::Drop(uint64_t seq) {
  if (seq >= next_seq_) return {};
  MarkDone(seq);
  return Settle();
}

size_t DeviceLedger::unsettled() const {
  return std::count_if(intervals_.begin(), intervals_.end(), [](const Interval& iv) { return !iv.settled; });
}

void DeviceLedger::MarkDone(uint64_t seq) {
  if (seq < done_below_) return;  // already counted as done by a forced settlement
  done_[seq - done_below_] = true;
  AdvanceTo(done_below_);
}

void DeviceLedger::AdvanceTo(uint64_t seq) {
  while (done_below_ < seq || (!done_.empty() && done_.front())) {
    done_.pop_front();
    ++done_below_;
  }
}

std::vector<DeviceLedger::Charge> DeviceLedger::Settle() {
  if (done_below_ < next_settle_ && intervals_.size() <= max_intervals_) return {};
  std::vector<Charge> out;
  auto charge = [&out](const std::string& tenant, double ns) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Charge& c) { return c.tenant == tenant; });
    if (it == out.end()) it = out.insert(out.end(), Charge{tenant, 0});
    it->ns += static_cast<uint64_t>(std::llround(ns));
  };
  for (;;) {
    for (size_t i = 0; i < intervals_.size(); ++i) {
      Interval& iv = intervals_[i];
      if (iv.settled || iv.settles_at > done_below_) continue;
      charge(iv.tenant, ShareOf(i));
      iv.settled = true;  // from here on, later intervals of its tenant skip what it covers
    }
    Prune();
    next_settle_ = UINT64_MAX;
    for (const auto& iv : intervals_)
      if (!iv.settled) next_settle_ = std::min(next_settle_, iv.settles_at);
    if (intervals_.size() <= max_intervals_) break;
    // Over the bound (a launch that never completes holds everything after it): forget the
    // oldest settled history first, then settle the interval nearest to settling anyway.
    auto settled_end = [](const Interval& a, const Interval& b) {
      if (a.settled != b.settled) return a.settled;
      return a.end < b.end;
    };
    std::sort(intervals_.begin(), intervals_.end(), settled_end);
    while (intervals_.size() > max_intervals_ && intervals_.front().settled) intervals_.erase(intervals_.begin());
    std::sort(intervals_.begin(), intervals_.end(),
              [](const Interval& a, const Interval& b) { return a.start < b.start; });
    if (intervals_.size() <= max_intervals_) break;
    uint64_t nearest = std::numeric_limits<uint64_t>::max();
    for (const auto& iv : intervals_) nearest = std::min(nearest, iv.settles_at);
    AdvanceTo(nearest);
    ++forced_;
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const Charge& c) { return c.ns == 0; }), out.end());
  return out;
}

double DeviceLedger::ShareOf(size_t i) const {
  const Interval& self = intervals_[i];
  // Sweep [start, end) of interval i: at each instant, the distinct tenants with a kernel
  // running (i's own counts once), and whether a settled interval of i's tenant has already
  // been charged for the instant.
  struct Edge {
    uint64_t at;
    int delta;
    int who;  // index into `others`; -1: a settled interval of i's own tenant
  };
  std::vector<Edge> edges;
  std::vector<const std::string*> others;
  // Only intervals starting in [self.start - longest_, self.end) can overlap it.
  const uint64_t from = self.start > longest_ ? self.start - longest_ : 0;
  auto by_start = [](const Interval& iv, uint64_t s) { return iv.start < s; };
  const size_t lo = std::lower_bound(intervals_.begin(), intervals_.end(), from, by_start) - intervals_.begin();
  const size_t hi = std::lower_bound(intervals_.begin(), intervals_.end(), self.end, by_start) - intervals_.begin();
  for (size_t j = lo; j < hi; ++j) {
    const Interval& o = intervals_[j];
    if (j == i || o.end <= self.start || o.start >= self.end) continue;
    int who;
    if (o.tenant == self.tenant) {
      if (!o.settled) continue;  // it will skip what i is charged for now
      who = -1;
    } else {
      auto it = std::find_if(others.begin(), others.end(), [&](const std::string* t) { return *t == o.tenant; });
      who = static_cast<int>(it - others.begin());
      if (it == others.end()) others.push_back(&o.tenant);
    }
    edges.push_back({std::max(o.start, self.start), +1, who});
    edges.push_back({std::min(o.end, self.end), -1, who});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
  std::vector<int> running(others.size(), 0);
  int tenants_running = 1;  // i's tenant
  int own_charged = 0;
  uint64_t at = self.start;
  double ns = 0;
  for (size_t e = 0; e <= edges.size(); ++e) {
    const uint64_t next = e < edges.size() ? edges[e].at : self.end;
    if (next > at && own_charged == 0) ns += static_cast<double>(next - at) / tenants_running;
    at = std::max(at, next);
    if (e == edges.size()) break;
    const Edge& edge = edges[e];
    if (edge.who < 0) {
      own_charged += edge.delta;
    } else {
      int& r = running[edge.who];
      if (r == 0 && edge.delta > 0) ++tenants_running;
      r += edge.delta;
      if (r == 0) --tenants_running;
    }
  }
  return ns;
}

void DeviceLedger::Prune() {
  // A settled interval matters only to unsettled ones that overlap it (any later launch was
  // submitted after it was settled, so after it ended): keep it while one may.
  uint64_t first_unsettled = std::numeric_limits<uint64_t>::max();
  for (const auto& iv : intervals_)
    if (!iv.settled) first_unsettled = std::min(first_unsettled, iv.start);
  intervals_.erase(std::remove_if(intervals_.begin(), intervals_.end(),
                                  [&](const Interval& iv) { return iv.settled && iv.end <= first_unsettled; }),
                   intervals_.end());
}

}  // namespace rgpu::server
