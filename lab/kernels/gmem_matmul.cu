// G-mem: naive matrix product reading global memory only (seed 000, mm_normal.cu).
#include <stdexcept>
#include <string>

#include "kernels/cuda_kernels.h"

namespace rgpu::lab::cuda {

void Check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

namespace {

__global__ void FillUniformKernel(float* data, std::uint64_t count, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    // splitmix64: a different, well-mixed value for every index and seed.
    std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    data[i] = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
  }
}

__global__ void GmemMatmulKernel(const float* a, const float* b, float* c, int n,
                                 std::uint64_t first, std::uint64_t end) {
  for (std::uint64_t e = first + blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; e < end;
       e += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t row = e / n;
    const std::uint64_t col = e % n;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[std::uint64_t(k) * n + col];
    c[e] = acc;
  }
}

}  // namespace

void FillUniform(float* data, std::uint64_t count, std::uint64_t seed, cudaStream_t stream) {
  FillUniformKernel<<<1024, 256, 0, stream>>>(data, count, seed);
  Check(cudaGetLastError(), "FillUniform launch");
}

void LaunchGmemMatmul(const float* a, const float* b, float* c, int n, std::uint64_t first,
                      std::uint64_t count, int threads, int blocks, cudaStream_t stream) {
  const std::uint64_t total = std::uint64_t(n) * n;
  const std::uint64_t end = first + count < total ? first + count : total;
  if (blocks <= 0) {
    std::uint64_t needed = (count + threads - 1) / threads;
    blocks = needed > 0x7fffffffull ? 0x7fffffff : static_cast<int>(needed);
  }
  GmemMatmulKernel<<<blocks, threads, 0, stream>>>(a, b, c, n, first, end);
  Check(cudaGetLastError(), "G-mem matmul launch");
}

}  // namespace rgpu::lab::cuda
