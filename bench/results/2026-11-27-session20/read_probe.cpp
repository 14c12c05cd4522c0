// Session 20: blocking reads of one size, back to back, through whichever OpenCL platform's
// name contains argv[3] (default: the first): the p10 / p50 / p90 time of a read.
//   read_probe SIZE N [PLATFORM]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  const size_t size = argc > 1 ? strtoull(argv[1], nullptr, 0) : (1 << 20);
  const int n = argc > 2 ? atoi(argv[2]) : 200;
  const char* want = argc > 3 ? argv[3] : "";
  cl_platform_id ps[8];
  cl_uint np = 0;
  clGetPlatformIDs(8, ps, &np);
  cl_platform_id p = nullptr;
  for (cl_uint i = 0; i < np && !p; ++i) {
    char name[256] = {};
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (strstr(name, want)) p = ps[i];
  }
  if (!p) return fprintf(stderr, "no platform named %s\n", want), 1;
  cl_device_id d;
  cl_int e = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr);
  cl_context c = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  std::vector<char> h(size, 1);
  cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size, h.data(), &e);
  if (e != CL_SUCCESS) return fprintf(stderr, "clCreateBuffer: %d\n", e), 1;
  std::vector<double> t;
  for (int i = 0; i < n; ++i) {
    auto a = std::chrono::steady_clock::now();
    e = clEnqueueReadBuffer(q, m, CL_TRUE, 0, size, h.data(), 0, nullptr, nullptr);
    if (e != CL_SUCCESS) return fprintf(stderr, "clEnqueueReadBuffer: %d\n", e), 1;
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  printf("%zu bytes: p50 %.1f us (%.2f GB/s), p10 %.1f, p90 %.1f\n", size, t[n / 2],
         size / t[n / 2] / 1e3, t[n / 10], t[n * 9 / 10]);
}
