// Session 17 probe: what a buffer creation from host data costs, natively and through rgpu.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using C = std::chrono::steady_clock;
static double us(C::time_point a, C::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}
int main(int argc, char** argv) {
  const char* want = argv[1];
  size_t bytes = size_t(atoi(argv[2])) * 1024;
  cl_platform_id ps[8];
  cl_uint np;
  clGetPlatformIDs(8, ps, &np);
  cl_platform_id p = nullptr;
  for (cl_uint i = 0; i < np; ++i) {
    char n[256];
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, 256, n, nullptr);
    if (strstr(n, want)) p = ps[i];
  }
  if (!p) {
    printf("no platform %s\n", want);
    return 1;
  }
  cl_device_id d;
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr);
  cl_int e;
  cl_context ctx = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &e);
  cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &e);
  std::vector<char> a(bytes, 1), c(bytes);
  std::vector<double> t[6];
  cl_mem keep = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &e);
  for (int it = 0; it < 120; ++it) {
    auto t0 = C::now();
    clFinish(q);
    auto t1 = C::now();
    cl_mem m1 = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a.data(), &e);
    clFinish(q);
    auto t2 = C::now();
    cl_mem m2 = clCreateBuffer(ctx, CL_MEM_READ_ONLY, bytes, nullptr, &e);
    clFinish(q);
    auto t3 = C::now();
    clEnqueueWriteBuffer(q, keep, CL_TRUE, 0, bytes, a.data(), 0, nullptr, nullptr);
    clFinish(q);
    auto t4 = C::now();
    clEnqueueWriteBuffer(q, m2, CL_TRUE, 0, bytes, a.data(), 0, nullptr, nullptr);
    clFinish(q);
    auto t5 = C::now();
    clReleaseMemObject(m1);
    clReleaseMemObject(m2);
    clFinish(q);
    auto t6 = C::now();
    if (it >= 20) {
      t[0].push_back(us(t0, t1));
      t[1].push_back(us(t1, t2));
      t[2].push_back(us(t2, t3));
      t[3].push_back(us(t3, t4));
      t[4].push_back(us(t4, t5));
      t[5].push_back(us(t5, t6));
    }
  }
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  auto p90 = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() * 9 / 10];
  };
  const char* names[] = {"finish",     "create+copy", "create",
                         "write kept", "write fresh", "release2"};
  printf("%-6s %5zu KiB:", want, bytes >> 10);
  for (int i = 0; i < 6; ++i) printf("  %s %.0f/%.0f", names[i], med(t[i]), p90(t[i]));
  printf("  (us p50/p90, each with clFinish)\n");
}
