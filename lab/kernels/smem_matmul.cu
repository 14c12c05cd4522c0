// S-mem: the G-mem product tiled through shared memory (seed 000, mm_shared.cu).
#include "kernels/cuda_kernels.h"

namespace rgpu::lab::cuda {
namespace {

constexpr int T = kSmemTile;

__global__ void SmemMatmulKernel(const float* a, const float* b, float* c, int n) {
  __shared__ float a_tile[T][T];
  __shared__ float b_tile[T][T + 1];  // +1: column reads hit 16 different banks
  const int tiles_per_row = (n + T - 1) / T;
  const int tile_count = tiles_per_row * tiles_per_row;
  const int ty = threadIdx.x / T;
  const int tx = threadIdx.x % T;
  for (int tile = blockIdx.x; tile < tile_count; tile += gridDim.x) {
    const int row = (tile / tiles_per_row) * T + ty;
    const int col = (tile % tiles_per_row) * T + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += T) {
      a_tile[ty][tx] = (row < n && k0 + tx < n) ? a[std::size_t(row) * n + k0 + tx] : 0.0f;
      b_tile[ty][tx] = (col < n && k0 + ty < n) ? b[std::size_t(k0 + ty) * n + col] : 0.0f;
      __syncthreads();
#pragma unroll
      for (int k = 0; k < T; ++k) acc += a_tile[ty][k] * b_tile[k][tx];
      __syncthreads();
    }
    if (row < n && col < n) c[std::size_t(row) * n + col] = acc;
  }
}

}  // namespace

void LaunchSmemMatmul(const float* a, const float* b, float* c, int n, int blocks,
                      cudaStream_t stream) {
  const int tiles_per_row = (n + T - 1) / T;
  if (blocks <= 0) blocks = tiles_per_row * tiles_per_row;
  SmemMatmulKernel<<<blocks, T * T, 0, stream>>>(a, b, c, n);
  Check(cudaGetLastError(), "S-mem matmul launch");
}

}  // namespace rgpu::lab::cuda
