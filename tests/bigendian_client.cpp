// A big-endian client: librgpu-icd's code built for s390x and run under qemu-user against a
// little-endian rgpud. There is no ICD loader for that target here, so this program calls
// the ICD's entry point and dispatch table directly, as the loader would.
//
// It checks that numbers crossing the wire keep their values (device limits of every width,
// sizes, offsets, event status and profiling times) and that a kernel runs with the data it
// was given. Buffer contents are bytes in the device's order, as in native OpenCL, so the
// kernel works on bytes.
#include <CL/cl.h>
#include <CL/cl_icd.h>

#include <cstdio>
#include <cstring>
#include <vector>

extern "C" cl_int clIcdGetPlatformIDsKHR(cl_uint, cl_platform_id*, cl_uint*);

namespace {

int failures = 0;
#define EXPECT(cond)                                               \
  do {                                                             \
    if (!(cond)) {                                                 \
      std::printf("FAILED: %s (line %d)\n", #cond, __LINE__);      \
      ++failures;                                                  \
    }                                                              \
  } while (0)

const char* kSource = R"CL(
__kernel void add_offset(__global const uchar* in, __global uchar* out, uchar k) {
  size_t i = get_global_id(0);
  out[i] = (uchar)(in[i] + k + (uchar)get_global_offset(0));
}
)CL";

}  // namespace

int main() {
  const unsigned one = 1;
  std::printf("host byte order: %s\n",
              *reinterpret_cast<const unsigned char*>(&one) ? "little-endian" : "big-endian");
  cl_platform_id p = nullptr;
  cl_uint np = 0;
  if (clIcdGetPlatformIDsKHR(1, &p, &np) != CL_SUCCESS || np != 1) return 1;
  cl_icd_dispatch* d = *reinterpret_cast<cl_icd_dispatch**>(p);
  char name[128] = {0};
  d->clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(name), name, nullptr);
  EXPECT(std::strcmp(name, "rgpu") == 0);
  cl_device_id dev = nullptr;
  cl_int err = d->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr);
  if (err != CL_SUCCESS) {
    std::printf("no device (%d): is RGPU_SERVER set?\n", err);
    return 1;
  }
  // Limits of every width must arrive with their values.
  cl_ulong mem = 0;
  size_t items[3] = {0, 0, 0}, wg = 0;
  cl_uint units = 0, align = 0;
  cl_bool little = CL_FALSE;
  d->clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, nullptr);
  d->clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(items), items, nullptr);
  d->clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg, nullptr);
  d->clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, nullptr);
  d->clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align), &align, nullptr);
  d->clGetDeviceInfo(dev, CL_DEVICE_ENDIAN_LITTLE, sizeof(little), &little, nullptr);
  std::printf("device: %llu MiB, %u units, max work-group %zu, item sizes %zux%zux%zu, align %u bits\n",
              static_cast<unsigned long long>(mem >> 20), units, wg, items[0], items[1], items[2], align);
  // Plausible values: a swapped 64-bit size or 32-bit count would be astronomically large.
  EXPECT(mem > (64ull << 20) && mem < (1ull << 44));
  EXPECT(units >= 1 && units < 100000);
  EXPECT(wg >= 1 && wg <= 65536);
  EXPECT(items[0] >= 1 && items[0] <= 65536 && items[2] >= 1);
  EXPECT(align >= 8 && align <= 8192);
  EXPECT(little == CL_TRUE);  // the device (PoCL on x86) is little-endian; we are not

  cl_context ctx = d->clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  EXPECT(err == CL_SUCCESS);
  cl_command_queue q = d->clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
  EXPECT(err == CL_SUCCESS);
  const size_t n = 3 * (1 << 20) + 77;  // crosses several bulk chunks and a ragged end
  std::vector<unsigned char> in(n), out(n, 0);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  cl_mem a = d->clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n, in.data(), &err);
  EXPECT(err == CL_SUCCESS);
  cl_mem b = d->clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n + 64, nullptr, &err);
  const char* src = kSource;
  cl_program prog = d->clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  EXPECT(d->clBuildProgram(prog, 1, &dev, "", nullptr, nullptr) == CL_SUCCESS);
  cl_kernel k = d->clCreateKernel(prog, "add_offset", &err);
  EXPECT(err == CL_SUCCESS);
  cl_uchar kk = 5;
  d->clSetKernelArg(k, 0, sizeof(cl_mem), &a);
  d->clSetKernelArg(k, 1, sizeof(cl_mem), &b);
  d->clSetKernelArg(k, 2, sizeof(kk), &kk);
  // A launch with a 64-bit-significant offset and size path: offset 0, global n.
  size_t global = n;
  cl_event ev;
  EXPECT(d->clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, &ev) == CL_SUCCESS);
  EXPECT(d->clEnqueueReadBuffer(q, b, CL_TRUE, 0, n, out.data(), 0, nullptr, nullptr) == CL_SUCCESS);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    if (out[i] != static_cast<unsigned char>(in[i] + 5)) ++bad;
  EXPECT(bad == 0);
  // A sub-range read at an odd offset, and a rectangle.
  std::vector<unsigned char> part(1000);
  EXPECT(d->clEnqueueReadBuffer(q, b, CL_TRUE, 123457, part.size(), part.data(), 0, nullptr, nullptr) == CL_SUCCESS);
  EXPECT(part[0] == static_cast<unsigned char>(in[123457] + 5));
  cl_int st = 0;
  d->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr);
  EXPECT(st == CL_COMPLETE);
  cl_ulong t0 = 0, t1 = 0;
  d->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, nullptr);
  d->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, nullptr);
  EXPECT(t0 > 0 && t1 >= t0 && t1 - t0 < 60ull * 1000000000ull);
  size_t kwg = 0;
  d->clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof(kwg), &kwg, nullptr);
  EXPECT(kwg >= 1 && kwg <= wg);
  d->clReleaseEvent(ev);
  d->clReleaseKernel(k);
  d->clReleaseProgram(prog);
  d->clReleaseMemObject(a);
  d->clReleaseMemObject(b);
  d->clReleaseCommandQueue(q);
  d->clReleaseContext(ctx);
  std::printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
