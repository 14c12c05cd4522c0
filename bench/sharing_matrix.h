// The workload matrix of rgpu-bench-sharing (issue 15): latency-critical (LC) tenants with
// several arrival processes and kernel lengths beside best-effort (BE) tenants of several
// shapes, so that no single shape can stand for "sharing works".
//
// Scenario names (what --scenarios takes; --matrix lists them all):
//   mx_lc_<arrival>_<us>          one LC tenant alone
//   mx_be_<kind>                  one BE tenant alone
//   mx_<arrival>_<us>_<kind>      one LC tenant beside one BE tenant
//   mx_2lc2be_<arrival>_<us>      LC tenants lc, lc2 beside BE tenants be (short), be2 (membound)
//   mx_equal<n>_<kind>            n (2 or 4) equal BE tenants t0.. of one kind (no LC): does
//                                 sharing waste device time? (EqualScenarios)
// arrival: periodic | poisson | bursty | pareto; us: the LC kernel's device time alone, in
// microseconds; kind: short | membound | long | opaque.
//
// An LC request is one kernel launch then a 4-byte blocking clEnqueueReadBuffer; its latency
// runs from the request's due time (open loop: a request whose predecessor is still running
// is issued as soon as it returns, and its wait counts). A BE tenant launches its kernel in a
// closed loop, `depth` launches in flight; its figure is kernels/s.
//
// The tenant processes (rgpu-bench-sharing --tenant) run `Calibrate` and `RunTenant`; the
// orchestrator (bench/sharing.cpp) names scenarios, builds specs and renders `Markdown`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rgpu::bench::matrix {

using nlohmann::json;

// A dependent FMA chain with a run-time length the compiler cannot fold. It uses only
// get_global_id, so the slicer's rewrite accepts it (unless it comes from a binary).
inline constexpr const char* kSpinSource = R"CL(
__kernel void spin(__global float* out, const int iters) {
  const size_t gid = get_global_id(0);
  float x = (float)(gid & 1023) * 1e-3f;
  const float a = 0.999999f, b = 1e-6f;
  for (int i = 0; i < iters; ++i) x = fma(x, a, b);
  out[gid & 65535] = x;
}
)CL";

inline const std::vector<std::string> kArrivals{"periodic", "poisson", "bursty", "pareto"};
// short: many work-groups, launches of 15 ms; brief: launches of one wave (every work-group
// on the device at once) of 0.2 ms; tiny: the same of 30 us; membound: saxpy over 2 GiB; long:
// one work-group of 25 ms per compute unit; opaque: short's grid from a program binary, which
// rgpud cannot cut.
inline const std::vector<std::string> kBeKinds{"short",  "membound", "long",
                                               "opaque", "brief",    "tiny"};

// Due times of the requests of one LC tenant, in ms from the start, up to `duration_s`, with
// a mean gap of `mean_gap_ms` (the same for every process):
//   periodic  every mean_gap_ms
//   poisson   exponential gaps
//   bursty    bursts of 5-10 requests mean_gap_ms/10 apart, then an exponential pause that
//             keeps the overall mean
//   pareto    Pareto gaps, alpha 1.5 (infinite variance), truncated at 50x the mean and
//             scaled so that the truncated mean is mean_gap_ms
// Deterministic for a seed (its own generator, not std::*_distribution, so every build agrees).
std::vector<double> ArrivalOffsetsMs(const std::string& process, double mean_gap_ms, double duration_s,
                                     uint64_t seed);

struct Tenant {
  std::string name;  // also its tenant id in rgpud's config
  std::string role;  // "lc" or "be"
  std::string arrival;
  int lc_us = 0;
  std::string be_kind;
  uint64_t seed_offset = 0;  // added to the run's seed (a second LC tenant arrives differently)
};

bool IsMatrix(const std::string& scenario);
// The tenants of a matrix scenario; throws on a name that is not one.
std::vector<Tenant> TenantsOf(const std::string& scenario);

// What the matrix covers.
struct Shape {
  std::vector<std::string> arrivals = kArrivals, be_kinds = kBeKinds;
  std::vector<int> lc_us{50, 370, 2000};
  int default_lc_us = 370;
};
// Every solo run, then: the default LC length under every arrival beside every BE kind; the
// other lengths with Poisson arrivals beside every BE kind; 2 LC + 2 BE.
std::vector<std::string> FullScenarios(const Shape& s);
// The CI smoke subset: every arrival and every BE kind at least once, at one LC length, and
// one run of equal tenants.
std::vector<std::string> QuickScenarios(int lc_us);
// For each BE kind: the kind alone, then 2 and 4 equal tenants of it (issue 15: one tenant
// alone within 3% of fifo; 2-4 equal tenants' total at least 95% of fifo's).
std::vector<std::string> EqualScenarios(const Shape& s);

// Tenant processes. `Calibrate` (native, profiling on) finds the iteration counts of every spin
// shape and times the membound and opaque kernels; `RunTenant` runs one LC or BE tenant.
json Calibrate(const json& spec);
json RunTenant(const json& spec);

// The first run of `mode` and `scenario` in a sharing.json, or null if none, or if it failed.
const nlohmann::json* FindRun(const nlohmann::json& doc, const std::string& mode,
                              const std::string& scenario);

// The "## Matrix ..." sections of sharing.md: ratios against native solo, per mode.
std::string Markdown(const json& doc);

}  // namespace rgpu::bench::matrix
