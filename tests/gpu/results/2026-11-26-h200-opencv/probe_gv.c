// One-off probe: how NVIDIA answers two OpenCL 3.0 queries that differ through rgpu.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char** argv) {
  cl_platform_id ps[8]; cl_uint np = 0; clGetPlatformIDs(8, ps, &np);
  for (cl_uint i = 0; i < np; ++i) {
    char name[256] = {0}; clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, 255, name, NULL);
    if (argc > 1 && !strstr(name, argv[1])) continue;
    cl_device_id d; if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &d, NULL)) continue;
    cl_int err; cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    const char* src[] = {"__kernel void k(__global int* a) { a[get_global_id(0)] += 1; }\n",
                         "__global int g[4];\n__kernel void k(__global int* a) { a[0] += g[1]; }\n"};
    for (int s = 0; s < 2; ++s) {
      cl_program p = clCreateProgramWithSource(c, 1, &src[s], NULL, &err);
      err = clBuildProgram(p, 1, &d, s ? "-cl-std=CL2.0" : "", NULL, NULL);
      size_t r = 12345, total = 1;
      cl_int e1 = clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE, 0, NULL, &r);
      cl_int e2 = clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE, sizeof(total), &total, NULL);
      printf("%s src%d build=%d: size query rc=%d size_ret=%zu; value query rc=%d value=%zu\n", name, s, err, e1, r, e2, total);
      clReleaseProgram(p);
    }
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &err);
    cl_command_queue def = (cl_command_queue)1; size_t r = 999;
    cl_int e = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE_DEFAULT, sizeof(def), &def, &r);
    cl_device_device_enqueue_capabilities caps = 77;
    clGetDeviceInfo(d, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, sizeof(caps), &caps, NULL);
    printf("%s CL_QUEUE_DEVICE_DEFAULT rc=%d size_ret=%zu value=%p; device enqueue caps=%llu\n", name, e, r, (void*)def, (unsigned long long)caps);
  }
  return 0;
}
