// rgpu-probe-switch-cuda: bench/switch_probe.cpp's question asked of CUDA. How long does the
// GPU take from one context's kernel to another's? If CUDA contexts switch as slowly as
// NVIDIA's OpenCL contexts do, the cost is the GPU's (and a CUDA path in rgpud would meet it
// too); if not, it is the OpenCL driver's.
//
//   rgpu-probe-switch-cuda [--count N] [--be-us US] > switch-cuda.json
//
// Two contexts of one process (cuCtxCreate), as rgpud has one OpenCL context per tenant.
// Kernels stamp the GPU's global timer (%globaltimer, ns) at their first block's start and
// at every block's end, so that times compare across contexts. Cases as the OpenCL probe's:
// same_context, other_context (the LC kernel submitted while the BE kernel runs), same_idle
// and other_idle (submitted once the host saw the BE kernel end). Figures are p50/p90/p99/max
// in microseconds of switch_us, from the BE kernel's last block end to the LC kernel's first
// block start. In the idle cases that includes the host's wake-up and launch, the same in
// both: other_idle minus same_idle is what the other context costs.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

#define CU_CHECK(x)                                                             \
  do {                                                                          \
    CUresult r_ = (x);                                                          \
    if (r_ != CUDA_SUCCESS) {                                                   \
      std::fprintf(stderr, "%s failed: %d (line %d)\n", #x, int(r_), __LINE__); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)
#define RT_CHECK(x)                                                                            \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s failed: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

__device__ unsigned long long Now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

// stamps[0]: the first block's start; stamps[1]: the latest block end.
__global__ void Spin(unsigned long long* stamps, unsigned iters, unsigned* sink) {
  if (threadIdx.x == 0 && blockIdx.x == 0) stamps[0] = Now();
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned i = 0; i < iters; ++i) x = x * 1664525u + 1013904223u;
  if (x == 0u) sink[0] = x;
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(&stamps[1], Now());
}

struct Side {
  CUcontext ctx = nullptr;
  cudaStream_t stream = nullptr;
  unsigned long long* stamps = nullptr;  // mapped host memory: [0] start, [1] end
  unsigned* sink = nullptr;
};

Side MakeSide(CUdevice dev) {
  Side s;
  CU_CHECK(cuCtxCreate(&s.ctx, nullptr, 0, dev));  // CUDA 13: (ctx, params, flags, device)
  RT_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  RT_CHECK(cudaHostAlloc(&s.stamps, 2 * sizeof(unsigned long long), cudaHostAllocMapped));
  RT_CHECK(cudaMalloc(&s.sink, sizeof(unsigned)));
  return s;
}

int g_blocks = 0;

void Launch(Side& s, unsigned iters) {
  CU_CHECK(cuCtxSetCurrent(s.ctx));
  s.stamps[0] = s.stamps[1] = 0;
  Spin<<<g_blocks, 256, 0, s.stream>>>(s.stamps, iters, s.sink);
  RT_CHECK(cudaGetLastError());
}

void Sync(Side& s) {
  CU_CHECK(cuCtxSetCurrent(s.ctx));
  RT_CHECK(cudaStreamSynchronize(s.stream));
}

double KernelUs(Side& s, unsigned iters) {
  Launch(s, iters);
  Sync(s);
  return (s.stamps[1] - s.stamps[0]) / 1e3;
}

unsigned Calibrate(Side& s, double us) {
  unsigned iters = 1024;
  double t = KernelUs(s, iters);
  while (t < us / 4 && iters < (1u << 30)) t = KernelUs(s, iters *= 2);
  iters = static_cast<unsigned>(std::max(1.0, iters * us / std::max(t, 1.0)));
  KernelUs(s, iters);
  return iters;
}

void Print(const char* name, std::vector<double> sw, int before_end, bool last) {
  auto q = [&](double p) {
    return sw[std::min(sw.size() - 1, static_cast<size_t>(p * (sw.size() - 1) + 0.5))];
  };
  std::sort(sw.begin(), sw.end());
  std::printf(
      "  \"%s\": {\"switch_us\": {\"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f, \"max\": %.1f}, "
      "\"lc_started_before_be_end\": %d}%s\n",
      name, q(.5), q(.9), q(.99), sw.back(), before_end, last ? "" : ",");
}

}  // namespace

int main(int argc, char** argv) {
  int n = 200;
  double be_us = 2000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--count") && i + 1 < argc)
      n = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--be-us") && i + 1 < argc)
      be_us = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--count N] [--be-us US]\n", argv[0]);
      return 2;
    }
  }
  CU_CHECK(cuInit(0));
  CUdevice dev;
  CU_CHECK(cuDeviceGet(&dev, 0));
  char name[256] = {0};
  CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
  int sms = 0;
  CU_CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  g_blocks = sms * 4;  // one wave of blocks of 256, as the OpenCL probe's
  Side be = MakeSide(dev), lc = MakeSide(dev), be2 = be;
  CU_CHECK(cuCtxSetCurrent(be.ctx));
  RT_CHECK(cudaStreamCreateWithFlags(&be2.stream, cudaStreamNonBlocking));
  RT_CHECK(cudaHostAlloc(&be2.stamps, 2 * sizeof(unsigned long long), cudaHostAllocMapped));
  const unsigned be_iters = Calibrate(be, be_us), lc_iters = Calibrate(lc, 100);
  Calibrate(be2, 100);
  std::printf(
      "{\"device\": \"%s\", \"api\": \"CUDA driver %s\", \"count\": %d, \"be_us\": %.0f, "
      "\"be_kernel_us\": %.1f, \"lc_kernel_us\": %.1f, \"cases\": {\n",
      name, "cuCtxCreate x2", n, be_us, KernelUs(be, be_iters), KernelUs(lc, lc_iters));
  const char* cases[] = {"same_context", "other_context", "same_idle", "other_idle"};
  for (int c = 0; c < 4; ++c) {
    const bool same = c == 0 || c == 2, idle = c >= 2;
    Side& l = same ? be2 : lc;
    std::vector<double> sw;
    int before_end = 0;
    for (int t = 0; t < n; ++t) {
      Launch(be, be_iters);
      if (idle)
        Sync(be);
      else
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(be_us / 4)));
      Launch(l, lc_iters);
      Sync(l);
      Sync(be);
      sw.push_back((static_cast<double>(l.stamps[0]) - static_cast<double>(be.stamps[1])) / 1e3);
      if (l.stamps[0] < be.stamps[1]) before_end++;
    }
    Print(cases[c], sw, before_end, c == 3);
    std::fflush(stdout);
  }
  std::printf("}}\n");
  return 0;
}
