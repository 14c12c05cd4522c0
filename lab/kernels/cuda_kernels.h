// Host-side entry points of the lab's CUDA kernels. Plain C++ so that the
// worker's main program (CLI, JSON) is compiled by the host compiler and only
// the kernels go through nvcc.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace rgpu::lab::cuda {

// Throws std::runtime_error naming the call when a CUDA call failed.
void Check(cudaError_t status, const char* what);

// Fills `count` floats with uniform values in [0, 1) from a counter-based hash:
// random inputs without a host-side copy of 64 MB matrices.
void FillUniform(float* data, std::uint64_t count, std::uint64_t seed, cudaStream_t stream);

// C = A * B for n x n row-major floats, one output element per thread, every
// operand read from global memory ("G-mem", seed 000's mm_normal.cu).
// Computes output elements [first, first + count); grid-stride, so any launch
// shape covers the range. blocks == 0 means one thread per element.
void LaunchGmemMatmul(const float* a, const float* b, float* c, int n, std::uint64_t first,
                      std::uint64_t count, int threads, int blocks, cudaStream_t stream);

// The same product tiled through shared memory ("S-mem", mm_shared.cu):
// 16 x 16 tiles, one block of 256 threads per output tile; blocks == 0 means
// one block per tile.
inline constexpr int kSmemTile = 16;
void LaunchSmemMatmul(const float* a, const float* b, float* c, int n, int blocks,
                      cudaStream_t stream);

// Core-intensive (high_core.cu): each thread runs `chain` dependent arithmetic
// steps per round on an element of a small array, reading a different
// (rotated) element every round so the compiler cannot fold the work.
void LaunchCoreIntensive(const float* input, float* output, int array_len, int rounds,
                         int chain, int blocks, int threads, cudaStream_t stream);

// Persistent kernel: stays resident, polling for work items, until the host
// sets *stop_flag (mapped host memory). See persistent.cu.
struct PersistentControl {
  volatile int* stop_flag;        // host-mapped: host writes 1 to stop
  volatile int* block_started;    // host-mapped: one flag per block, set on entry
  unsigned long long* next_item;  // device: work-item counter (busy mode)
  unsigned long long* items_done; // device
  const float* packets;           // device: slots * packet_len floats
  float* results;                 // device: one result per slot
  int slots;
  int packet_len;
  int busy;                       // 1: a work item is always waiting; 0: idle polling
  unsigned poll_sleep_ns;         // idle: back-off between polls (0: poll flat out)
};
void LaunchPersistent(const PersistentControl& control, int blocks, int threads,
                      cudaStream_t stream);

// Device report kernels (device_report.cu).
struct ThroughputResult {
  const char* name;
  double value;
  const char* unit;
};
// Runs every device-report measurement and calls `emit` for each result.
void RunDeviceReport(int repeats, void (*emit)(const ThroughputResult&, void*), void* context);

}  // namespace rgpu::lab::cuda
