#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dirent.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>
#include <unistd.h>
#include <algorithm>
static void threads(const char* tag) {
  DIR* d = opendir("/proc/self/task");
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string base = std::string("/proc/self/task/") + e->d_name;
    std::ifstream c(base + "/comm");
    std::string comm;
    std::getline(c, comm);
    std::ifstream s(base + "/status");
    std::string line;
    long vol = 0, inv = 0;
    while (std::getline(s, line)) {
      if (!line.rfind("voluntary_ctxt_switches:", 0)) vol = atol(line.c_str() + 24);
      if (!line.rfind("nonvoluntary_ctxt_switches:", 0)) inv = atol(line.c_str() + 27);
    }
    printf("%s %s vol=%ld inv=%ld\n", tag, comm.c_str(), vol, inv);
  }
  closedir(d);
}
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5000;
  const char* want = argc > 2 ? argv[2] : "rgpu";
  cl_platform_id ps[8];
  cl_uint np;
  clGetPlatformIDs(8, ps, &np);
  cl_platform_id p = nullptr;
  for (cl_uint i = 0; i < np; ++i) {
    char name[256];
    clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, 256, name, nullptr);
    if (strstr(name, want)) p = ps[i];
  }
  if (!p) {
    fprintf(stderr, "no platform %s\n", want);
    return 1;
  }
  cl_device_id dev;
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr);
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  const char* src = "__kernel void k(__global int* a){ a[get_global_id(0)] += 1; }";
  cl_program pr = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  clBuildProgram(pr, 1, &dev, "", nullptr, nullptr);
  cl_kernel k = clCreateKernel(pr, "k", &err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, nullptr, &err);
  clSetKernelArg(k, 0, sizeof(b), &b);
  size_t g = 1;
  int v;
  for (int i = 0; i < 200; ++i) {
    clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr);
    clFinish(q);
  }
  threads("before");
  std::vector<double> lf, rd;
  for (int i = 0; i < n; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr);
    clFinish(q);
    auto t1 = std::chrono::steady_clock::now();
    lf.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  threads("after-lf");
  if (argc > 3) {
    std::sort(lf.begin(), lf.end());
    printf("launch+finish p50 %.1f\n", lf[n / 2]);
    fflush(stdout);
    sleep(2);
    return 0;
  }
  for (int i = 0; i < n; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    clEnqueueReadBuffer(q, b, CL_TRUE, 0, 4, &v, 0, nullptr, nullptr);
    auto t1 = std::chrono::steady_clock::now();
    rd.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  threads("after-rd");
  std::sort(lf.begin(), lf.end());
  std::sort(rd.begin(), rd.end());
  printf("launch+finish p50 %.1f p99 %.1f | read p50 %.1f p99 %.1f\n", lf[n / 2], lf[n * 99 / 100],
         rd[n / 2], rd[n * 99 / 100]);
}
