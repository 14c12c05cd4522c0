// The CUDA spin kernel (bench/sharing_cuda_spin.cu), callable from host code that nvcc does
// not compile.
#pragma once

#include <cuda_runtime_api.h>

// `groups` blocks of `local` threads; out holds 65536 floats.
cudaError_t LaunchSpin(float* out, int iters, unsigned groups, unsigned local, cudaStream_t stream);
