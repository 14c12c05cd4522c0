// Persistent kernel: the GPU packet-processing pattern (router / IPsec / NIDS)
// that seed 000 puts beside ordinary kernels. The kernel is launched once and
// never returns on its own: every block loops, polling device memory for work
// items, until the host raises a stop flag in mapped host memory.
//
// busy = 0 models a processor waiting for traffic (pure polling, the seed's
// setting); busy = 1 models one at full load: a work item is always waiting,
// and each is a 16 KB packet streamed from a buffer larger than L2.
#include "kernels/cuda_kernels.h"

namespace rgpu::lab::cuda {
namespace {

// The stop flag lives in host memory and every read of it crosses PCIe, so
// blocks look at it only every so many polls.
constexpr unsigned kPollsPerStopCheck = 64;

__device__ float BlockSum(float value) {
  __shared__ float warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  float total = 0.0f;
  if (warp == 0) {
    total = lane < (blockDim.x + 31) / 32 ? warp_sums[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) total += __shfl_down_sync(0xffffffffu, total, offset);
  }
  return total;  // valid in thread 0
}

__global__ void PersistentKernel(PersistentControl control) {
  __shared__ int stop;
  __shared__ unsigned long long item;
  constexpr unsigned long long kNoItem = ~0ull;
  if (threadIdx.x == 0) {
    stop = 0;
    control.block_started[blockIdx.x] = 1;
    __threadfence_system();
  }
  unsigned long long processed = 0;
  for (unsigned poll = 0;; ++poll) {
    if (threadIdx.x == 0) {
      if (poll % kPollsPerStopCheck == 0) stop = *control.stop_flag;
      if (control.busy) {
        item = atomicAdd(control.next_item, 1ull);
      } else {
        // Idle: read the doorbell; nobody rings it, so no item ever arrives.
        // Every block polls the same address, so flat-out polling makes one
        // L2 line a hot spot; poll_sleep_ns spaces the polls out.
        if (control.poll_sleep_ns) __nanosleep(control.poll_sleep_ns);
        volatile unsigned long long* doorbell = control.next_item;
        item = *doorbell > processed + (1ull << 62) ? *doorbell : kNoItem;
      }
    }
    __syncthreads();
    if (stop) break;
    if (item != kNoItem) {
      const float* packet = control.packets + (item % control.slots) * control.packet_len;
      float partial = 0.0f;
      for (int i = threadIdx.x; i < control.packet_len; i += blockDim.x)
        partial = fmaf(packet[i], 1.0001f, partial);
      const float sum = BlockSum(partial);
      if (threadIdx.x == 0) {
        control.results[item % control.slots] = sum;
        ++processed;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(control.items_done, processed);
}

}  // namespace

void LaunchPersistent(const PersistentControl& control, int blocks, int threads,
                      cudaStream_t stream) {
  PersistentKernel<<<blocks, threads, 0, stream>>>(control);
  Check(cudaGetLastError(), "persistent kernel launch");
}

}  // namespace rgpu::lab::cuda
