// What every tenant process of rgpu-bench-sharing does, whatever API launches its kernel:
// the OpenCL tenant (rgpu-bench-sharing --tenant) and the CUDA one (rgpu-bench-sharing-cuda
// --tenant) differ only in how one launch of the spin kernel is made and timed.
//
// The orchestrator writes a spec (JSON) and reads the tenant's answer (JSON):
//   kind        "calibrate", or absent for a tenant run
//   role        "lc" (latency-critical: open loop at a fixed period, latency of each request)
//               or "be" (best-effort: launches back to back, kernels/s)
//   iters, waves, groups, local     the launch: `groups * waves` work-groups of `local`
//   period_ms, duration_s           LC request spacing; how long the run measures
//   ready_file, go_file             written by the tenant after warm-up / by the orchestrator
// A tenant run answers kernels, warmup_kernels, elapsed_s, kernels_per_s, latency_us
// (rgpu::bench::Summarise) and, for LC, late; a failure answers {"error": ...}.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/workloads.h"

namespace rgpu::bench::sharing {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Launches a tenant makes before it reports ready (first launches, rgpud's first slices).
// They are not in `kernels`, but the device (and rgpud's accounting) ran them.
constexpr int kWarmupKernels = 3;

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Readers poll for these files: they must never see one half written.
inline void WriteAtomically(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::path tmp = p.string() + ".tmp";
  std::ofstream(tmp) << text;
  std::filesystem::rename(tmp, p);
}

inline double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Iterations that make one launch take about `target_ms` on the device, alone. `device_ms`
// runs one launch of the given length and returns its device time.
inline json CalibrateIters(const std::function<double(int iters)>& device_ms, int probe_iters,
                           double target_ms) {
  auto median = [&](int iters, int reps) {
    std::vector<double> v;
    for (int i = 0; i < reps; ++i) v.push_back(device_ms(iters));
    return MedianOf(v);
  };
  median(100, 3);  // first launches pay for the driver's setup
  // Time is affine in iters (launch cost + per-iteration cost): two points give both.
  const int lo = probe_iters, hi = lo * 4;
  const double t_lo = median(lo, 5), t_hi = median(hi, 5);
  const double per_iter = std::max((t_hi - t_lo) / (hi - lo), 1e-9);
  const double fixed = std::max(t_lo - per_iter * lo, 0.0);
  int iters = std::max(1, static_cast<int>(std::lround((target_ms - fixed) / per_iter)));
  // One correction from a measurement at the chosen length.
  const double got = median(iters, 5);
  iters = std::max(1, static_cast<int>(std::lround(iters * target_ms / std::max(got, 1e-6))));
  return {{"iters", iters}, {"device_ms", median(iters, 5)}};
}

// A tenant's run. `launch_ms` makes one launch of the spec's kernel, waits for it and returns
// the host time it took (submission to the return of the wait), in ms.
// Reports the tenant ready (set up and warmed up) and waits for the orchestrator's go; the
// start of the measured run.
inline Clock::time_point ReadyThenGo(const json& spec) {
  WriteAtomically(spec.at("ready_file").get<std::string>(), "ready\n");
  const std::filesystem::path go = spec.at("go_file").get<std::string>();
  for (auto give_up = Clock::now() + std::chrono::seconds(120); !std::filesystem::exists(go);) {
    if (Clock::now() > give_up) throw std::runtime_error("no go signal");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return Clock::now();
}

inline json RunTenant(const json& spec, const std::function<double()>& launch_ms) {
  const std::string role = spec.at("role");
  for (int i = 0; i < kWarmupKernels; ++i) launch_ms();
  const auto t0 = ReadyThenGo(spec);
  const auto until = t0 + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(spec.at("duration_s").get<double>()));
  json out{{"role", role}};
  std::vector<double> ms;
  if (role == "lc") {
    // Open loop at a fixed rate: request i is due at t0 + i * period. A request that is late
    // (the previous one took longer than a period) goes at once; its latency counts from its
    // own submission, and the lateness is counted.
    const auto period = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double, std::milli>(spec.at("period_ms").get<double>()));
    auto due = t0;
    int late = 0;
    while (due < until) {
      std::this_thread::sleep_until(due);
      ms.push_back(launch_ms());
      due += period;
      if (due < Clock::now()) {
        ++late;
        due = Clock::now();
      }
    }
    out["late"] = late;
  } else {
    while (Clock::now() < until) ms.push_back(launch_ms());
  }
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<double> us;
  for (double m : ms) us.push_back(m * 1e3);
  out["kernels"] = ms.size();
  out["warmup_kernels"] = kWarmupKernels;
  out["elapsed_s"] = elapsed_s;
  out["kernels_per_s"] = ms.size() / elapsed_s;
  out["latency_us"] = Summarise(us);
  return out;
}

// `PROGRAM --tenant SPEC OUT`: runs `handle` on the spec and writes its answer, or the
// exception that ended it, to OUT. Exit status 0 unless the answer is an error.
inline int TenantProcess(const std::string& spec_path, const std::string& out_path,
                         const std::function<json(const json&)>& handle) {
  json out;
  try {
    out = handle(json::parse(ReadFile(spec_path)));
  } catch (const std::exception& e) {
    out = {{"error", e.what()}};
  }
  WriteAtomically(out_path, out.dump() + "\n");
  return out.contains("error") ? 1 : 0;
}

}  // namespace rgpu::bench::sharing
