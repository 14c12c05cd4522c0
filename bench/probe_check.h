// The probes' (bench/*_probe.cpp) way out of a failed OpenCL call: name the call, its code
// and line, and exit. They measure; they do not recover. And how they find their device.
#pragma once

#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(x)                                                            \
  do {                                                                      \
    cl_int e_ = (x);                                                        \
    if (e_ != CL_SUCCESS) {                                                 \
      std::fprintf(stderr, "%s failed: %d (line %d)\n", #x, e_, __LINE__); \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

// The first device of the first platform whose name contains `want` (any platform if it is
// empty), with its platform's and its own name; exits when there is none.
struct ProbeDevice {
  cl_device_id device = nullptr;
  std::string platform, name;
};

inline ProbeDevice PickProbeDevice(const std::string& want) {
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(0, nullptr, &np));
  std::vector<cl_platform_id> ps(np);
  CHECK(clGetPlatformIDs(np, ps.data(), nullptr));
  for (cl_platform_id p : ps) {
    char pname[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(pname) - 1, pname, nullptr);
    if (!want.empty() && std::string(pname).find(want) == std::string::npos) continue;
    ProbeDevice out;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &out.device, nullptr) != CL_SUCCESS) continue;
    char dname[256] = {};
    clGetDeviceInfo(out.device, CL_DEVICE_NAME, sizeof(dname) - 1, dname, nullptr);
    out.platform = pname;
    out.name = dname;
    return out;
  }
  std::fprintf(stderr, "no OpenCL device%s%s\n", want.empty() ? "" : " on a platform named ",
               want.c_str());
  std::exit(1);
}
