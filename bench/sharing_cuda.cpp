// rgpu-bench-sharing-cuda: a tenant of rgpu-bench-sharing in CUDA, for the modes that share
// the GPU without rgpud: `cuda` (separate CUDA processes, the GPU's time-slicing) and `mps`
// (the same processes as clients of a private MPS daemon). NVIDIA's OpenCL does not run under
// MPS (clCreateContext fails with -9999), so those comparisons need CUDA tenants.
//
// It runs the OpenCL tenant's work: the same spin kernel (bench/sharing_cuda_spin.cu), grid
// and spec/answer protocol (bench/sharing_tenant.h). Host latency is submission to the return
// of cudaStreamSynchronize, as the OpenCL tenant's is submission to the return of clFinish;
// the synchronisation uses CUDA's default scheduling (spin while the CPUs outnumber contexts).
//
//   rgpu-bench-sharing-cuda --tenant SPEC OUT
//
// with a spec of kind "calibrate" (iterations for the LC and BE targets, device time from CUDA
// events, and the device time of the OpenCL calibration's iterations for comparison) or a
// tenant run.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "bench/sharing_cuda_spin.h"
#include "bench/sharing_tenant.h"

namespace {

using nlohmann::json;
using rgpu::bench::sharing::Clock;

void Check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}
#define CUDA_CHECK(call) Check((call), #call)

class CudaSpin {
 public:
  CudaSpin(size_t groups, size_t local) : groups_(groups), local_(local) {
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&out_), 65536 * sizeof(float)));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&end_));
  }
  ~CudaSpin() {
    cudaEventDestroy(end_);
    cudaEventDestroy(start_);
    cudaFree(out_);
    cudaStreamDestroy(stream_);
  }
  CudaSpin(const CudaSpin&) = delete;
  CudaSpin& operator=(const CudaSpin&) = delete;

  // One launch of `waves` times the base grid, waited for; the host time it took in ms (and
  // the device time between events around the kernel, if asked).
  double Run(int iters, size_t waves, double* device_ms = nullptr) {
    const size_t blocks = groups_ * waves;
    if (blocks == 0 || blocks > std::numeric_limits<int>::max())
      throw std::runtime_error("grid of " + std::to_string(blocks) + " blocks");
    const auto t0 = Clock::now();
    if (device_ms) CUDA_CHECK(cudaEventRecord(start_, stream_));
    CUDA_CHECK(LaunchSpin(out_, iters, static_cast<unsigned>(blocks), static_cast<unsigned>(local_), stream_));
    if (device_ms) CUDA_CHECK(cudaEventRecord(end_, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (device_ms) {
      float d = 0;
      CUDA_CHECK(cudaEventElapsedTime(&d, start_, end_));
      *device_ms = d;
    }
    return ms;
  }

 private:
  size_t groups_, local_;
  cudaStream_t stream_ = nullptr;
  float* out_ = nullptr;
  cudaEvent_t start_ = nullptr, end_ = nullptr;
};

json Device() {
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return {{"name", p.name}, {"multiprocessors", p.multiProcessorCount},
          {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
          {"cuda_driver", version(driver)}, {"cuda_runtime", version(runtime)}};
}

json Calibrate(const json& spec) {
  CudaSpin s(spec.at("groups"), spec.at("local"));
  json out{{"device", Device()}};
  for (const std::string role : {"lc", "be"}) {
    const size_t waves = spec.at(role + "_waves");
    auto device_ms = [&](int iters) {
      double d = 0;
      s.Run(iters, waves, &d);
      return d;
    };
    json r = rgpu::bench::sharing::CalibrateIters(device_ms, spec.at("probe_iters"), spec.at(role + "_target_ms"));
    out[role + "_iters"] = r["iters"];
    out[role + "_device_ms"] = r["device_ms"];
    // The OpenCL calibration's iteration count run here: how the two compilers' loops compare.
    if (spec.contains("opencl_" + role + "_iters")) {
      std::vector<double> v;
      for (int i = 0; i < 5; ++i) v.push_back(device_ms(spec.at("opencl_" + role + "_iters")));
      out[role + "_device_ms_at_opencl_iters"] = rgpu::bench::sharing::MedianOf(v);
    }
  }
  return out;
}

json Handle(const json& spec) {
  if (spec.value("kind", "") == "calibrate") return Calibrate(spec);
  CudaSpin s(spec.at("groups"), spec.at("local"));
  const int iters = spec.at("iters");
  const size_t waves = spec.value("waves", 1);
  return rgpu::bench::sharing::RunTenant(spec, [&] { return s.Run(iters, waves); });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--tenant")
    return rgpu::bench::sharing::TenantProcess(argv[2], argv[3], Handle);
  std::fprintf(stderr,
               "usage: %s --tenant SPEC OUT\n"
               "A CUDA tenant of rgpu-bench-sharing (modes cuda and mps); that benchmark starts it.\n",
               argv[0]);
  return 2;
}
