// What a benchmark worker process measures. Each worker is a fresh process with its own
// OCL_ICD_VENDORS and RGPU_SERVER, so native, rgpu (unix, tcp, emulated links) and the raw
// floor never share a loader, a connection or a CPU-time account.
#pragma once

#include <nlohmann/json.hpp>

namespace rgpu::bench {

using nlohmann::json;

// The steps of one end-to-end multiply (the "matmul" task), in order: the keys of each size's
// `phases_us`, where each step's time is measured with a clFinish after it.
inline constexpr const char* kMatmulSteps[] = {"create_a", "create_b", "create_c",
                                               "launch",   "read",     "release"};

// What to run, written by the orchestrator:
//   kind             "probe" (platform and device facts), "cl" (OpenCL) or "raw" (the floor)
//   platform         platform name substring ("rgpu", "NVIDIA", "Portable")
//   address          raw floor server address (kind "raw")
//   tasks            any of "sync", "async", "bandwidth", "matmul", "requests"
//   iterations       synchronous round trips per operation
//   async_launches   launches before the one clFinish
//   sizes            transfer sizes in bytes
//   matmul_sizes     N of the N x N multiplies
//   matmul_budget_s  stop repeating a multiply after this long (at least one timed run)
//   request_us       requests: kernel lengths (device µs) of the kernel + 4-byte read requests
//   request_iters    requests: {"<target>": iterations} from an earlier run (else calibrated)
//   request_budget_s requests: about this long per kernel length
json RunWorker(const json& spec);

// Percentiles of a sample in microseconds: {"n", "p50", "p99", "p999", "max", "min", "mean"}.
json Summarise(std::vector<double> us);

}  // namespace rgpu::bench
