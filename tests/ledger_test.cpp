// Tests of concurrency-aware accounting (server/scheduler/ledger.h): each instant of device
// time is charged in equal parts to the tenants running a kernel at that instant, and an
// interval is charged only once every launch that could overlap it is known.

#include "server/scheduler/ledger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace rgpu::server {
namespace {

// The ledger and what it has charged so far, by tenant.
struct Books {
  DeviceLedger ledger;
  std::map<std::string, uint64_t> charged;

  explicit Books(size_t max_intervals = DeviceLedger::kDefaultMaxIntervals) : ledger(max_intervals) {}
  void Add(const std::vector<DeviceLedger::Charge>& charges) {
    for (const auto& c : charges) charged[c.tenant] += c.ns;
  }
  uint64_t Submit() { return ledger.Submit(); }
  void Report(uint64_t seq, const std::string& tenant, uint64_t start, uint64_t end) {
    Add(ledger.Report(seq, tenant, start, end));
  }
  void Drop(uint64_t seq) { Add(ledger.Drop(seq)); }
  uint64_t Of(const std::string& tenant) const {
    auto it = charged.find(tenant);
    return it == charged.end() ? 0 : it->second;
  }
};

TEST(Ledger, TenantAloneIsChargedItsInterval) {
  Books b;
  auto s = b.Submit();
  b.Report(s, "a", 1'000'000'000'000'000'000ull, 1'000'000'000'000'123'457ull);  // device clocks count from far
  EXPECT_EQ(b.Of("a"), 123'457u);
  EXPECT_EQ(b.ledger.retained(), 0u);  // nothing left that anything could overlap
}

TEST(Ledger, TwoTenantsFullyOverlappingAreChargedHalfEach) {
  Books b;
  auto s0 = b.Submit(), s1 = b.Submit();
  b.Report(s0, "a", 100, 1100);
  EXPECT_TRUE(b.charged.empty());  // s1 may overlap it
  b.Report(s1, "b", 100, 1100);
  EXPECT_EQ(b.Of("a"), 500u);
  EXPECT_EQ(b.Of("b"), 500u);
}

TEST(Ledger, FourTenantsAtOnceAddUpToBusyTime) {
  Books b;
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 4; ++i) seqs.push_back(b.Submit());
  for (int i = 0; i < 4; ++i) b.Report(seqs[i], "t" + std::to_string(i), 0, 4000);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b.Of("t" + std::to_string(i)), 1000u);
}

TEST(Ledger, PartialOverlapIsSharedOnlyWhereBothRun) {
  Books b;
  auto s0 = b.Submit(), s1 = b.Submit();
  b.Report(s0, "a", 0, 100);
  b.Report(s1, "b", 50, 150);
  EXPECT_EQ(b.Of("a"), 75u);  // 50 alone + 50 shared
  EXPECT_EQ(b.Of("b"), 75u);
}

TEST(Ledger, NestedIntervalIsSharedWithTheOuterOne) {
  Books b;
  auto s0 = b.Submit(), s1 = b.Submit(), s2 = b.Submit();
  b.Report(s1, "b", 25, 75);
  b.Report(s0, "a", 0, 100);
  b.Report(s2, "c", 40, 60);
  // [0,25) a; [25,40) a b; [40,60) a b c; [60,75) a b; [75,100) a.
  EXPECT_EQ(b.Of("a"), 72u);  // 25 + 7.5 + 6.67 + 7.5 + 25 = 71.67
  EXPECT_EQ(b.Of("b"), 22u);  // 7.5 + 6.67 + 7.5 = 21.67
  EXPECT_EQ(b.Of("c"), 7u);   // 6.67
}

TEST(Ledger, OutOfOrderArrivalGivesTheSameCharges) {
  for (bool reversed : {false, true}) {
    Books b;
    std::vector<uint64_t> seqs = {b.Submit(), b.Submit(), b.Submit()};
    struct R {
      const char* tenant;
      uint64_t start, end;
    } rs[] = {{"a", 0, 300}, {"b", 100, 400}, {"a", 500, 600}};
    for (int k = 0; k < 3; ++k) {
      int i = reversed ? 2 - k : k;
      b.Report(seqs[i], rs[i].tenant, rs[i].start, rs[i].end);
    }
    EXPECT_EQ(b.Of("a"), 100u + 100u + 100u) << "reversed " << reversed;
    EXPECT_EQ(b.Of("b"), 100u + 100u) << "reversed " << reversed;
  }
}

TEST(Ledger, PendingEarlierLaunchBlocksSettlementUntilItCompletes) {
  Books b;
  auto early = b.Submit();
  auto late = b.Submit();
  b.Report(late, "b", 0, 1000);
  EXPECT_TRUE(b.charged.empty());  // the early launch may have run beside it
  EXPECT_EQ(b.ledger.unsettled(), 1u);
  b.Report(early, "a", 500, 1500);
  EXPECT_EQ(b.Of("a"), 750u);
  EXPECT_EQ(b.Of("b"), 750u);
}

TEST(Ledger, DroppedLaunchUnblocksSettlement) {
  Books b;
  auto failed = b.Submit();    // a launch that fails
  auto no_event = b.Submit();  // a launch charged an estimate: no interval
  auto timed = b.Submit();
  b.Report(timed, "a", 0, 1000);
  EXPECT_TRUE(b.charged.empty());
  b.Drop(no_event);
  EXPECT_TRUE(b.charged.empty());
  b.Drop(failed);
  EXPECT_EQ(b.Of("a"), 1000u);
  EXPECT_EQ(b.ledger.retained(), 0u);
}

TEST(Ledger, LaunchSubmittedAfterTheReportDoesNotBlockIt) {
  Books b;
  auto s0 = b.Submit();
  b.Report(s0, "a", 0, 1000);
  EXPECT_EQ(b.Of("a"), 1000u);
  auto s1 = b.Submit();  // still running, but it cannot have overlapped s0
  auto s2 = b.Submit();
  b.Report(s2, "b", 2000, 2500);
  EXPECT_EQ(b.Of("b"), 0u);  // s1 may overlap s2
  b.Report(s1, "a", 1500, 3000);
  EXPECT_EQ(b.Of("a"), 1000u + 500u + 250u + 500u);
  EXPECT_EQ(b.Of("b"), 250u);
}

TEST(Ledger, OwnOverlappingKernelsAreChargedOnce) {
  Books b;
  auto s0 = b.Submit(), s1 = b.Submit();
  b.Report(s1, "a", 50, 150);  // an out-of-order queue: two kernels of one tenant at once
  b.Report(s0, "a", 0, 100);
  EXPECT_EQ(b.Of("a"), 150u);  // the union, not 200
}

TEST(Ledger, OwnOverlapCountsOnceAgainstAnotherTenant) {
  Books b;
  auto s0 = b.Submit(), s1 = b.Submit(), s2 = b.Submit();
  b.Report(s0, "a", 0, 100);
  b.Report(s2, "b", 0, 150);
  b.Report(s1, "a", 50, 150);
  // Over [0,150) two tenants run, a with one or two kernels: half each.
  EXPECT_EQ(b.Of("a"), 75u);
  EXPECT_EQ(b.Of("b"), 75u);
}

TEST(Ledger, OwnOverlapChargedOnceAcrossSeparateSettlements) {
  Books b;
  auto s0 = b.Submit(), s1 = b.Submit();
  b.Report(s0, "a", 0, 100);  // settles once s1 is done
  auto s2 = b.Submit();
  b.Report(s1, "a", 50, 200);  // waits for s2 too
  EXPECT_EQ(b.Of("a"), 100u);  // s0 settled alone; s1 waits
  b.Drop(s2);
  EXPECT_EQ(b.Of("a"), 200u);  // s1 adds only [100,200)
  EXPECT_EQ(b.ledger.retained(), 0u);
}

TEST(Ledger, SettledIntervalIsKeptWhileAnUnsettledOneOverlapsIt) {
  Books b;
  auto sa = b.Submit(), sb = b.Submit();
  b.Report(sa, "a", 0, 100);  // waits for sb
  auto sc = b.Submit();
  b.Report(sb, "b", 50, 150);  // waits for sc
  EXPECT_EQ(b.Of("a"), 75u);   // a settled: 50 alone, 50 beside b
  EXPECT_EQ(b.Of("b"), 0u);
  EXPECT_EQ(b.ledger.retained(), 2u);  // a kept: b still needs it
  b.Report(sc, "c", 120, 200);
  // b: [50,100) beside a, [100,120) alone, [120,150) beside c.
  EXPECT_EQ(b.Of("b"), 25u + 20u + 15u);
  EXPECT_EQ(b.Of("c"), 15u + 50u);
  EXPECT_EQ(b.Of("a") + b.Of("b") + b.Of("c"), 200u);  // the device's busy time
  EXPECT_EQ(b.ledger.retained(), 0u);
}

TEST(Ledger, HistoryStaysSmallOverALongRun) {
  // Two tenants alternating and overlapping, completions reported a launch late: what is kept
  // stays bounded by what is in flight, and every charge is exact.
  Books b;
  uint64_t prev = b.Submit();
  std::string prev_tenant = "a";
  uint64_t prev_start = 0;
  size_t most = 0;
  for (int i = 1; i <= 10000; ++i) {
    uint64_t seq = b.Submit();
    // Launch i-1 ran [100(i-1), 100(i-1)+150): it overlaps launch i by 50.
    b.Report(prev, prev_tenant, prev_start, prev_start + 150);
    most = std::max(most, b.ledger.retained());
    prev = seq;
    prev_tenant = i % 2 ? "b" : "a";
    prev_start = 100u * i;
  }
  b.Report(prev, prev_tenant, prev_start, prev_start + 150);
  EXPECT_LE(most, 3u);
  EXPECT_EQ(b.ledger.retained(), 0u);
  EXPECT_EQ(b.ledger.forced(), 0u);
  // Busy [0, 100*10000 + 150): each tenant's 5000+ launches share their 50 ns overlaps.
  EXPECT_EQ(b.Of("a") + b.Of("b"), 100u * 10000 + 150);
  EXPECT_EQ(b.Of("a"), 5001u * 150 - 10000u * 25);
  EXPECT_EQ(b.Of("b"), 5000u * 150 - 10000u * 25);
}

TEST(Ledger, LaunchThatNeverCompletesForcesSettlementPastTheBound) {
  Books b(8);
  b.Submit();  // never reported
  for (int i = 0; i < 100; ++i) {
    auto s = b.Submit();
    b.Report(s, "a", 1000u * i, 1000u * i + 500);
  }
  EXPECT_LE(b.ledger.retained(), 8u);
  EXPECT_GT(b.ledger.forced(), 0u);
  EXPECT_EQ(b.Of("a"), 500u * (100 - b.ledger.unsettled()));  // alone: each exact anyway
}

// Against a brute-force count over every nanosecond, with launches submitted before they
// start and reported after they end in a random order, some failing or without an event.
TEST(Ledger, MatchesBruteForceOnRandomTimelines) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 200; ++round) {
    struct Launch {
      std::string tenant;
      uint64_t submit, start, end, report;
      bool timed;
      uint64_t seq = 0;
    };
    std::vector<Launch> launches;
    const int n = 1 + static_cast<int>(rng() % 12);
    const int tenants = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      Launch l;
      l.tenant = "t" + std::to_string(rng() % tenants);
      l.start = rng() % 1000;
      l.end = l.start + 1 + rng() % 400;
      l.submit = l.start - std::min<uint64_t>(l.start, rng() % 100);
      l.report = l.end + rng() % 300;
      l.timed = rng() % 5 != 0;
      launches.push_back(l);
    }
    // Host events in time order; a submission comes before a report at the same instant.
    struct Ev {
      uint64_t at;
      int kind;  // 0 submit, 1 report
      int launch;
    };
    std::vector<Ev> evs;
    for (int i = 0; i < n; ++i) {
      evs.push_back({launches[i].submit, 0, i});
      evs.push_back({launches[i].report, 1, i});
    }
    std::sort(evs.begin(), evs.end(),
              [](const Ev& a, const Ev& b) { return a.at != b.at ? a.at < b.at : a.kind < b.kind; });
    Books b;
    for (const Ev& e : evs) {
      Launch& l = launches[e.launch];
      if (e.kind == 0) {
        l.seq = b.Submit();
      } else if (l.timed) {
        b.Report(l.seq, l.tenant, l.start, l.end);
      } else {
        b.Drop(l.seq);
      }
    }
    std::map<std::string, double> expect;
    double busy = 0;
    for (uint64_t t = 0; t < 1500; ++t) {
      std::set<std::string> running;
      for (const auto& l : launches)
        if (l.timed && l.start <= t && t < l.end) running.insert(l.tenant);
      for (const auto& who : running) expect[who] += 1.0 / running.size();
      if (!running.empty()) busy += 1;
    }
    uint64_t sum = 0;
    for (const auto& [who, ns] : expect) {
      // Each interval's charge is rounded to the nanosecond.
      EXPECT_NEAR(static_cast<double>(b.Of(who)), ns, n) << "round " << round << " tenant " << who;
      sum += b.Of(who);
    }
    EXPECT_NEAR(static_cast<double>(sum), busy, n) << "round " << round;
    EXPECT_EQ(b.ledger.retained(), 0u) << "round " << round;
    EXPECT_EQ(b.ledger.forced(), 0u) << "round " << round;
  }
}

}  // namespace
}  // namespace rgpu::server
