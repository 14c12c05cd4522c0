// Core-intensive kernel (seed 000, high_core.cu): little memory traffic, long
// dependent arithmetic chains. Each step depends on the previous one and on a
// value loaded at run time, so the compiler can neither fold nor reorder it;
// each round reads a different element of the small array (a rotation, i.e.
// a permutation of the array between rounds).
#include "kernels/cuda_kernels.h"

namespace rgpu::lab::cuda {
namespace {

__global__ void CoreIntensiveKernel(const float* input, float* output, int array_len,
                                    int rounds, int chain) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = input[tid % array_len];
  for (int round = 0; round < rounds; ++round) {
    // 7919 is prime, so the rotation visits every element over the rounds.
    const float v = input[(tid + round * 7919) % array_len];
    for (int step = 0; step < chain; ++step) {
      // All four arithmetic operations, as in the seed; the map is a
      // contraction on [-2, 2], so values stay normal for any chain length.
      acc = (acc * v + 0.25f) / (1.0f + v);
      acc = acc - 0.5f * v;
    }
  }
  output[tid] = acc;
}

}  // namespace

void LaunchCoreIntensive(const float* input, float* output, int array_len, int rounds,
                         int chain, int blocks, int threads, cudaStream_t stream) {
  CoreIntensiveKernel<<<blocks, threads, 0, stream>>>(input, output, array_len, rounds, chain);
  Check(cudaGetLastError(), "core-intensive launch");
}

}  // namespace rgpu::lab::cuda
