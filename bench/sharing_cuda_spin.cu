// The spin kernel of rgpu-bench-sharing in CUDA: the same dependent FMA chain as kSpinSource
// in bench/sharing.cpp, so that CUDA tenants (time-slicing, MPS) run the OpenCL tenants' work.
#include <cuda_runtime.h>

#include "bench/sharing_cuda_spin.h"

namespace {

__global__ void Spin(float* out, int iters) {
  const unsigned long long gid = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  float x = static_cast<float>(gid & 1023) * 1e-3f;
  const float a = 0.999999f, b = 1e-6f;
  for (int i = 0; i < iters; ++i) x = fmaf(x, a, b);
  out[gid & 65535] = x;
}

}  // namespace

cudaError_t LaunchSpin(float* out, int iters, unsigned groups, unsigned local, cudaStream_t stream) {
  Spin<<<groups, local, 0, stream>>>(out, iters);
  return cudaGetLastError();
}
