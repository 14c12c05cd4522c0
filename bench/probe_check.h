// The probes' (bench/driver_probe.cpp, bench/read_probe.cpp) way out of a failed OpenCL call:
// name the call, its code and line, and exit. They measure; they do not recover.
#pragma once

#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                            \
  do {                                                                      \
    cl_int e_ = (x);                                                        \
    if (e_ != CL_SUCCESS) {                                                 \
      std::fprintf(stderr, "%s failed: %d (line %d)\n", #x, e_, __LINE__); \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)
