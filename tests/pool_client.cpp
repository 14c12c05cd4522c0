// An ordinary OpenCL program for the pool tests (tests/pool_test.sh): it takes the first
// device of the first platform, as most programs do, and keeps it busy with short kernels
// until the file named by its argument exists. Through RGPU_SERVER=etcd://... the first
// device is the pool's least busy one.
//
//   pool_client STOP_FILE [MAX_SECONDS [WORK_ITEMS]]
//
// WORK_ITEMS (default 256, sized for PoCL on a CPU) sets each kernel's global size: about a
// million keeps a GPU busy (bench/pool_on_device.sh).
// Prints "devices N" once, then "done K kernels" and exits 0 when STOP_FILE appears, or
// "error CODE at STEP after S s" and exits 3 on the first OpenCL error (a server that died).
#include <CL/cl.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point g_start = Clock::now();

// About ten milliseconds of one core per work-item group on PoCL: enough to show as load,
// short enough that an error surfaces at once.
const char* kSource = R"CLC(
__kernel void spin(__global float* out, int iters) {
  size_t i = get_global_id(0);
  float x = (float)i;
  for (int k = 0; k < iters; ++k) x = x * 0.999f + 0.5f;
  out[i] = x;
}
)CLC";

[[noreturn]] void Fail(cl_int code, const char* step) {
  double s = std::chrono::duration<double>(Clock::now() - g_start).count();
  std::printf("error %d at %s after %.2f s\n", code, step, s);
  std::fflush(stdout);
  std::_Exit(3);
}

void Check(cl_int err, const char* step) {
  if (err != CL_SUCCESS) Fail(err, step);
}

bool Exists(const char* path) {
  struct stat st;
  return ::stat(path, &st) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pool_client STOP_FILE [MAX_SECONDS [WORK_ITEMS]]\n");
    return 2;
  }
  const char* stop = argv[1];
  const double max_s = argc > 2 ? std::atof(argv[2]) : 100.0;
  cl_platform_id platform;
  cl_uint np = 0;
  Check(clGetPlatformIDs(1, &platform, &np), "clGetPlatformIDs");
  cl_uint nd = 0;
  Check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd), "clGetDeviceIDs");
  std::printf("devices %u\n", nd);
  std::fflush(stdout);
  cl_device_id dev;
  Check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr), "clGetDeviceIDs");
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  Check(err, "clCreateContext");
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  Check(err, "clCreateCommandQueue");
  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, nullptr, &err);
  Check(err, "clCreateProgramWithSource");
  Check(clBuildProgram(prog, 1, &dev, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel k = clCreateKernel(prog, "spin", &err);
  Check(err, "clCreateKernel");
  const size_t n = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 256;
  if (n == 0) Fail(CL_INVALID_VALUE, "WORK_ITEMS");
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), nullptr, &err);
  Check(err, "clCreateBuffer");
  cl_int iters = 20000;
  Check(clSetKernelArg(k, 0, sizeof(out), &out), "clSetKernelArg");
  Check(clSetKernelArg(k, 1, sizeof(iters), &iters), "clSetKernelArg");
  std::vector<float> host(n);
  long kernels = 0;
  while (!Exists(stop)) {
    if (std::chrono::duration<double>(Clock::now() - g_start).count() > max_s) Fail(1, "timeout");
    Check(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
    // A blocking read every round: the program notices a dead server at its next call.
    Check(clEnqueueReadBuffer(q, out, CL_TRUE, 0, n * sizeof(float), host.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    ++kernels;
  }
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  std::printf("done %ld kernels\n", kernels);
  return 0;
}
