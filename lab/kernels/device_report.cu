// Device report: the two ceilings every lab number should be read against
// (memory bandwidth, arithmetic rate), in the precisions seed 003 discusses.
//
// - bandwidth: a large device-to-device copy kernel, counting bytes read plus
//   bytes written;
// - FMA rate on the ordinary cores (FP64, FP32, FP16x2, BF16x2): 8 independent
//   chains per thread so the pipelines stay full;
// - matrix rate through cuBLAS (tensor cores where the type has them).
#include <algorithm>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cublas_v2.h>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda_kernels.h"

namespace rgpu::lab::cuda {
namespace {

void CheckBlas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(status));
}

__global__ void CopyKernel(const float4* in, float4* out, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

template <typename V>
__device__ V Fma(V a, V b, V c);
template <> __device__ double Fma(double a, double b, double c) { return fma(a, b, c); }
template <> __device__ float Fma(float a, float b, float c) { return fmaf(a, b, c); }
template <> __device__ __half2 Fma(__half2 a, __half2 b, __half2 c) { return __hfma2(a, b, c); }
template <> __device__ __nv_bfloat162 Fma(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return __hfma2(a, b, c);
}

template <typename V> __device__ V FromFloat(float x);
template <> __device__ double FromFloat(float x) { return x; }
template <> __device__ float FromFloat(float x) { return x; }
template <> __device__ __half2 FromFloat(float x) { return __floats2half2_rn(x, x); }
template <> __device__ __nv_bfloat162 FromFloat(float x) { return __floats2bfloat162_rn(x, x); }

template <typename V> __device__ float ToFloat(V x);
template <> __device__ float ToFloat(double x) { return static_cast<float>(x); }
template <> __device__ float ToFloat(float x) { return x; }
template <> __device__ float ToFloat(__half2 x) { return __low2float(x) + __high2float(x); }
template <> __device__ float ToFloat(__nv_bfloat162 x) { return __low2float(x) + __high2float(x); }

constexpr int kChains = 8;

template <typename V>
__global__ void FmaKernel(float* sink, float seed, int iterations) {
  V chains[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) chains[j] = FromFloat<V>(seed + threadIdx.x * 1e-3f + j);
  const V scale = FromFloat<V>(0.999f);
  const V shift = FromFloat<V>(seed * 1e-3f);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) chains[j] = Fma(chains[j], scale, shift);
  }
  float total = 0.0f;
#pragma unroll
  for (int j = 0; j < kChains; ++j) total += ToFloat(chains[j]);
  // Never true for these inputs; the store keeps the chains alive.
  if (total == 12345.678f) sink[0] = total;
}

template <typename T>
__global__ void FillKernel(T* data, std::size_t count, unsigned seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    data[i] = T(static_cast<float>(h & 0xffff) / 65536.0f - 0.5f);
  }
}

class EventTimer {
 public:
  EventTimer() {
    Check(cudaEventCreate(&start_), "cudaEventCreate");
    Check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  // Median of `repeats` timed calls of `body`, after one untimed warm-up.
  template <typename F>
  double MedianMs(int repeats, F body) {
    body();
    Check(cudaDeviceSynchronize(), "warm-up");
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
      Check(cudaEventRecord(start_), "cudaEventRecord");
      body();
      Check(cudaEventRecord(stop_), "cudaEventRecord");
      Check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
      float ms = 0;
      Check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

template <typename V>
double FmaTflops(EventTimer& timer, int repeats, int sm_count, int lanes_per_value) {
  constexpr int kThreads = 256;
  constexpr int kIterations = 1 << 16;
  const int blocks = sm_count * 16;
  float* sink = nullptr;
  Check(cudaMalloc(&sink, sizeof(float)), "cudaMalloc");
  const double ms = timer.MedianMs(repeats, [&] {
    FmaKernel<V><<<blocks, kThreads>>>(sink, 1.0f, kIterations);
    Check(cudaGetLastError(), "FMA kernel launch");
  });
  cudaFree(sink);
  const double flops = 2.0 * kChains * lanes_per_value * double(kIterations) * blocks * kThreads;
  return flops / (ms * 1e-3) / 1e12;
}

template <typename T>
T* AllocFilled(std::size_t count, unsigned seed) {
  T* data = nullptr;
  Check(cudaMalloc(&data, count * sizeof(T)), "cudaMalloc");
  FillKernel<T><<<1024, 256>>>(data, count, seed);
  Check(cudaGetLastError(), "fill launch");
  return data;
}

// One n x n x n product through cublasGemmEx; returns TFLOP/s.
template <typename In, typename Out>
double GemmTflops(EventTimer& timer, cublasHandle_t handle, int repeats, int n,
                  cudaDataType in_type, cudaDataType out_type, cublasComputeType_t compute) {
  const std::size_t count = std::size_t(n) * n;
  In* a = AllocFilled<In>(count, 1);
  In* b = AllocFilled<In>(count, 2);
  Out* c = AllocFilled<Out>(count, 3);
  double alpha_d = 1.0, beta_d = 0.0;
  float alpha_f = 1.0f, beta_f = 0.0f;
  const bool double_scalars = compute == CUBLAS_COMPUTE_64F;
  const void* alpha = double_scalars ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = double_scalars ? static_cast<const void*>(&beta_d) : &beta_f;
  const double ms = timer.MedianMs(repeats, [&] {
    CheckBlas(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, alpha, a, in_type, n, b,
                           in_type, n, beta, c, out_type, n, compute, CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
  });
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 2.0 * double(n) * n * n / (ms * 1e-3) / 1e12;
}

}  // namespace

void RunDeviceReport(int repeats, void (*emit)(const ThroughputResult&, void*), void* context) {
  int device = 0;
  Check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp props{};
  Check(cudaGetDeviceProperties(&props, device), "cudaGetDeviceProperties");
  EventTimer timer;

  {  // 512 MiB each way: far beyond L2, so this is DRAM (HBM) bandwidth.
    const std::size_t bytes = std::size_t(512) << 20;
    float4 *in = nullptr, *out = nullptr;
    Check(cudaMalloc(&in, bytes), "cudaMalloc");
    Check(cudaMalloc(&out, bytes), "cudaMalloc");
    Check(cudaMemset(in, 1, bytes), "cudaMemset");
    const std::size_t count = bytes / sizeof(float4);
    const double ms = timer.MedianMs(repeats, [&] {
      CopyKernel<<<props.multiProcessorCount * 8, 512>>>(in, out, count);
      Check(cudaGetLastError(), "copy launch");
    });
    emit({"copy_bandwidth", 2.0 * bytes / (ms * 1e-3) / 1e9, "GB/s"}, context);
    cudaFree(in);
    cudaFree(out);
  }

  const int sms = props.multiProcessorCount;
  emit({"fma_fp64", FmaTflops<double>(timer, repeats, sms, 1), "TFLOP/s"}, context);
  emit({"fma_fp32", FmaTflops<float>(timer, repeats, sms, 1), "TFLOP/s"}, context);
  emit({"fma_fp16x2", FmaTflops<__half2>(timer, repeats, sms, 2), "TFLOP/s"}, context);
  emit({"fma_bf16x2", FmaTflops<__nv_bfloat162>(timer, repeats, sms, 2), "TFLOP/s"}, context);

  cublasHandle_t handle = nullptr;
  CheckBlas(cublasCreate(&handle), "cublasCreate");
  constexpr int n = 8192;
  emit({"gemm_fp64", GemmTflops<double, double>(timer, handle, repeats, n, CUDA_R_64F, CUDA_R_64F,
                                                CUBLAS_COMPUTE_64F), "TFLOP/s"}, context);
  emit({"gemm_fp32", GemmTflops<float, float>(timer, handle, repeats, n, CUDA_R_32F, CUDA_R_32F,
                                              CUBLAS_COMPUTE_32F_PEDANTIC), "TFLOP/s"}, context);
  emit({"gemm_tf32", GemmTflops<float, float>(timer, handle, repeats, n, CUDA_R_32F, CUDA_R_32F,
                                              CUBLAS_COMPUTE_32F_FAST_TF32), "TFLOP/s"}, context);
  emit({"gemm_fp16", GemmTflops<__half, float>(timer, handle, repeats, n, CUDA_R_16F, CUDA_R_32F,
                                               CUBLAS_COMPUTE_32F), "TFLOP/s"}, context);
  emit({"gemm_bf16", GemmTflops<__nv_bfloat16, float>(timer, handle, repeats, n, CUDA_R_16BF,
                                                      CUDA_R_32F, CUBLAS_COMPUTE_32F), "TFLOP/s"},
       context);
  cublasDestroy(handle);
}

}  // namespace rgpu::lab::cuda
