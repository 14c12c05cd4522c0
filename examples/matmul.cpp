// An ordinary OpenCL program: C = A x B for N x N floats, checked against the CPU.
// It knows nothing about rgpu; pick the platform with --platform (a name substring).
//
//   matmul [--platform NAME] [--n 512] [--repeat 3]
#include <CL/cl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

const char* kSource = R"CL(
__kernel void matmul(__global const float* a, __global const float* b, __global float* c,
                     const int n) {
  const int row = get_global_id(1), col = get_global_id(0);
  if (row >= n || col >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
)CL";

#define CHECK(call)                                                             \
  do {                                                                          \
    cl_int err_ = (call);                                                       \
    if (err_ != CL_SUCCESS) {                                                   \
      std::fprintf(stderr, "%s failed: %d (line %d)\n", #call, err_, __LINE__); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

std::string Info(cl_platform_id p, cl_platform_info what) {
  char buf[512] = {0};
  clGetPlatformInfo(p, what, sizeof(buf) - 1, buf, nullptr);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string want;
  int n = 512, repeat = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--platform" && i + 1 < argc) want = argv[++i];
    else if (a == "--n" && i + 1 < argc) n = std::atoi(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--platform NAME] [--n N] [--repeat R]\n", argv[0]);
      return 2;
    }
  }
  cl_uint np = 0;
  clGetPlatformIDs(0, nullptr, &np);
  std::vector<cl_platform_id> ps(np);
  clGetPlatformIDs(np, ps.data(), nullptr);
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  for (auto p : ps) {
    if (!want.empty() && Info(p, CL_PLATFORM_NAME).find(want) == std::string::npos) continue;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) {
      platform = p;
      break;
    }
  }
  if (!platform) {
    std::fprintf(stderr, "no OpenCL platform with devices matches '%s'\n", want.c_str());
    return 1;
  }
  char dev_name[256] = {0};
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(dev_name) - 1, dev_name, nullptr);

  std::vector<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n), ref(size_t(n) * n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& x : a) x = dist(rng);
  for (auto& x : b) x = dist(rng);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      float aik = a[size_t(i) * n + k];
      for (int j = 0; j < n; ++j) ref[size_t(i) * n + j] += aik * b[size_t(k) * n + j];
    }

  cl_int err;
  auto t0 = std::chrono::steady_clock::now();
  cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &device, "", nullptr, nullptr));
  cl_kernel k = clCreateKernel(prog, "matmul", &err);
  CHECK(err);
  auto t_setup = std::chrono::steady_clock::now();
  const size_t bytes = sizeof(float) * a.size();
  double best_ms = 1e30, kernel_ms = 0;
  for (int r = 0; r < repeat; ++r) {
    auto t1 = std::chrono::steady_clock::now();
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a.data(), &err);
    CHECK(err);
    cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b.data(), &err);
    CHECK(err);
    cl_mem dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, bytes, nullptr, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &da));
    CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &db));
    CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &dc));
    CHECK(clSetKernelArg(k, 3, sizeof(int), &n));
    size_t global[2] = {size_t(n), size_t(n)};
    cl_event ev;
    CHECK(clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, &ev));
    CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, bytes, c.data(), 0, nullptr, nullptr));
    auto t2 = std::chrono::steady_clock::now();
    cl_ulong start = 0, end = 0;
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
    double ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
    if (ms < best_ms) {
      best_ms = ms;
      kernel_ms = (end - start) / 1e6;
    }
    clReleaseEvent(ev);
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
  }
  double max_err = 0;
  for (size_t i = 0; i < c.size(); ++i) max_err = std::max(max_err, double(std::fabs(c[i] - ref[i])));
  bool ok = max_err < 1e-3 * n;
  std::printf("%-8s %-44s n=%d  end-to-end %.2f ms (best of %d), kernel %.2f ms, setup+build %.0f ms, max error %.2e %s\n",
              Info(platform, CL_PLATFORM_NAME).c_str(), dev_name, n, best_ms, repeat, kernel_ms,
              std::chrono::duration<double, std::milli>(t_setup - t0).count(), max_err,
              ok ? "OK" : "WRONG");
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return ok ? 0 : 1;
}
