// Round trips of one thread while another sits in clFinish of a long kernel (ad-hoc, session 49).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
int main(int argc, char** argv) {
  const char* want = argc > 1 ? argv[1] : "";
  cl_uint np;
  clGetPlatformIDs(0, nullptr, &np);
  std::vector<cl_platform_id> ps(np);
  clGetPlatformIDs(np, ps.data(), nullptr);
  cl_platform_id p = nullptr;
  for (auto x : ps) {
    char n[256];
    clGetPlatformInfo(x, CL_PLATFORM_NAME, 256, n, nullptr);
    if (strstr(n, want)) {
      p = x;
      break;
    }
  }
  if (!p) {
    puts("no platform");
    return 1;
  }
  cl_device_id d;
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr);
  cl_int e;
  cl_context c = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e), q2 = clCreateCommandQueue(c, d, 0, &e);
  const char* src =
      "__kernel void spin(__global float* o, long n){float x=o[0];for(long "
      "i=0;i<n;++i)x=x*1.0000001f+1e-7f;o[0]=x;}";
  cl_program pr = clCreateProgramWithSource(c, 1, &src, nullptr, &e);
  clBuildProgram(pr, 1, &d, "", nullptr, nullptr);
  cl_kernel k = clCreateKernel(pr, "spin", &e);
  float z = 0;
  cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &z, &e);
  cl_mem m2 = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &z, &e);
  cl_long n = argc > 2 ? atol(argv[2]) : 600000000;
  clSetKernelArg(k, 0, sizeof m, &m);
  clSetKernelArg(k, 1, sizeof n, &n);
  for (int round = 0; round < 2; ++round) {
    size_t one = 1;
    clEnqueueNDRangeKernel(q, k, 1, nullptr, &one, &one, 0, nullptr, nullptr);
    clFlush(q);
    std::atomic<bool> done{false};
    auto t0 = std::chrono::steady_clock::now();
    std::thread a([&] {
      clFinish(q);
      done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::vector<double> us;
    while (!done && us.size() < 2000) {
      float v;
      auto s = std::chrono::steady_clock::now();
      clEnqueueReadBuffer(q2, m2, CL_TRUE, 0, 4, &v, 0, nullptr, nullptr);
      us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count());
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    a.join();
    double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::sort(us.begin(), us.end());
    auto q_ = [&](double f) {
      return us.empty() ? 0 : us[std::min(us.size() - 1, size_t(f * us.size()))];
    };
    printf(
        "round %d: kernel wait %.0f ms, %zu reads beside it: first-sorted p50 %.0f p90 %.0f p99 "
        "%.0f max %.0f us\n",
        round, wall, us.size(), q_(0.5), q_(0.9), q_(0.99), us.back());
  }
}
