// Conformance: a program cannot tell an rgpu device from the device itself (issue 11).
// The same tests run natively on PoCL (RGPU_TEST_PLATFORM=Portable) and through rgpud over a
// Unix socket and TCP (=rgpu), with the same expectations. Where an answer is the device's
// own (a build log), the rgpu run also asks the native platform, made visible beside rgpu
// (RGPU_TEST_NATIVE_ICD names its .icd file), and compares byte for byte.
#include <CL/cl.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <numeric>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "native_icd.h"

namespace {

// The device's own platform, for the answers compared with rgpu's (PoCL unless told).
std::string NativePlatform() {
  const char* n = std::getenv("RGPU_TEST_NATIVE_PLATFORM");
  return n && *n ? n : "Portable";
}

std::string PlatformName(cl_platform_id p) {
  char buf[256] = {0};
  clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(buf) - 1, buf, nullptr);
  return buf;
}

cl_platform_id FindPlatform(const std::string& like) {
  cl_uint n = 0;
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS) return nullptr;
  std::vector<cl_platform_id> ps(n);
  clGetPlatformIDs(n, ps.data(), nullptr);
  for (auto p : ps)
    if (PlatformName(p).find(like) != std::string::npos) return p;
  return nullptr;
}

// One device of a platform with a context and a queue.
struct DeviceSetup {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context ctx = nullptr;
  cl_command_queue q = nullptr;
  bool Open(const std::string& like) {
    platform = FindPlatform(like);
    if (!platform || clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS)
      return false;
    cl_int err;
    ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) return false;
    q = clCreateCommandQueue(ctx, device, 0, &err);
    return err == CL_SUCCESS;
  }
  ~DeviceSetup() {
    if (q) clReleaseCommandQueue(q);
    if (ctx) clReleaseContext(ctx);
  }
};

class Conformance : public ::testing::Test {
 protected:
  void SetUp() override {
    rgpu::test::AddNativeIcd("conf");
    const char* want = std::getenv("RGPU_TEST_PLATFORM");
    ASSERT_TRUE(dev_.Open(want ? want : "rgpu")) << "no usable platform named like " << want;
    ctx_ = dev_.ctx;
    q_ = dev_.q;
    device_ = dev_.device;
  }
  cl_mem Buffer(size_t size, cl_mem_flags flags, void* host = nullptr) {
    cl_int err;
    cl_mem m = clCreateBuffer(ctx_, flags, size, host, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return m;
  }
  cl_program Build(const char* src) {
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx_, 1, &src, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(clBuildProgram(p, 1, &device_, "", nullptr, nullptr), CL_SUCCESS);
    return p;
  }
  DeviceSetup dev_;
  cl_context ctx_ = nullptr;
  cl_command_queue q_ = nullptr;
  cl_device_id device_ = nullptr;
};

// ------------------------------------------------------------------ host-access flags

// What every host-side command returns on a buffer created with `flags`.
struct HostAccessOutcome {
  cl_int read, write, read_rect, write_rect, fill, map_read, map_write, map_invalidate;
};

HostAccessOutcome TryHostCommands(cl_command_queue q, cl_mem m) {
  HostAccessOutcome o{};
  std::vector<uint8_t> host(64, 1);
  size_t origin[3] = {0, 0, 0}, region[3] = {8, 2, 1};
  o.read = clEnqueueReadBuffer(q, m, CL_TRUE, 0, 64, host.data(), 0, nullptr, nullptr);
  o.write = clEnqueueWriteBuffer(q, m, CL_TRUE, 0, 64, host.data(), 0, nullptr, nullptr);
  o.read_rect = clEnqueueReadBufferRect(q, m, CL_TRUE, origin, origin, region, 8, 16, 8, 16,
                                        host.data(), 0, nullptr, nullptr);
  o.write_rect = clEnqueueWriteBufferRect(q, m, CL_TRUE, origin, origin, region, 8, 16, 8, 16,
                                          host.data(), 0, nullptr, nullptr);
  int pattern = 7;
  o.fill = clEnqueueFillBuffer(q, m, &pattern, 4, 0, 64, 0, nullptr, nullptr);
  auto map = [&](cl_map_flags f) {
    cl_int err;
    void* p = clEnqueueMapBuffer(q, m, CL_TRUE, f, 0, 64, 0, nullptr, nullptr, &err);
    if (p) clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr);
    return err;
  };
  o.map_read = map(CL_MAP_READ);
  o.map_write = map(CL_MAP_WRITE);
  o.map_invalidate = map(CL_MAP_WRITE_INVALIDATE_REGION);
  clFinish(q);
  return o;
}

void ExpectOutcome(const HostAccessOutcome& got, const HostAccessOutcome& want, const char* what) {
  EXPECT_EQ(got.read, want.read) << what << ": read";
  EXPECT_EQ(got.write, want.write) << what << ": write";
  EXPECT_EQ(got.read_rect, want.read_rect) << what << ": read rect";
  EXPECT_EQ(got.write_rect, want.write_rect) << what << ": write rect";
  EXPECT_EQ(got.fill, want.fill) << what << ": fill";
  EXPECT_EQ(got.map_read, want.map_read) << what << ": map read";
  EXPECT_EQ(got.map_write, want.map_write) << what << ": map write";
  EXPECT_EQ(got.map_invalidate, want.map_invalidate) << what << ": map write-invalidate";
}

constexpr cl_int OK = CL_SUCCESS, NO = CL_INVALID_OPERATION;
// The specification's rules: reads (and CL_MAP_READ) are refused on HOST_WRITE_ONLY and
// HOST_NO_ACCESS, writes (and CL_MAP_WRITE*) on HOST_READ_ONLY and HOST_NO_ACCESS; fills
// are device-side and always allowed.
const HostAccessOutcome kHostReadOnly{OK, NO, OK, NO, OK, OK, NO, NO};
const HostAccessOutcome kHostWriteOnly{NO, OK, NO, OK, OK, NO, OK, OK};
const HostAccessOutcome kHostNoAccess{NO, NO, NO, NO, OK, NO, NO, NO};
const HostAccessOutcome kHostAll{OK, OK, OK, OK, OK, OK, OK, OK};

// What rgpu must answer for a memory object made by `make` on a device's context: the
// specification's `spec` natively (or with no device platform beside rgpu), and through rgpu
// the device's own answers for the same object (a device may allow what the specification
// refuses: NVIDIA maps HOST_READ_ONLY buffers with CL_MAP_WRITE_INVALIDATE_REGION).
HostAccessOutcome Expected(cl_platform_id under_test, const HostAccessOutcome& spec,
                           const std::function<cl_mem(cl_context, std::vector<cl_mem>*)>& make) {
  DeviceSetup native;
  if (PlatformName(under_test).find("rgpu") == std::string::npos || !native.Open(NativePlatform()))
    return spec;
  std::vector<cl_mem> made;
  cl_mem m = make(native.ctx, &made);
  HostAccessOutcome o = m ? TryHostCommands(native.q, m) : spec;
  for (auto it = made.rbegin(); it != made.rend(); ++it) clReleaseMemObject(*it);
  return o;
}

cl_mem MakeBuffer(cl_context c, size_t size, cl_mem_flags flags, std::vector<cl_mem>* made) {
  cl_int err;
  cl_mem m = clCreateBuffer(c, flags, size, nullptr, &err);
  if (m) made->push_back(m);
  return m;
}

cl_mem MakeSubBuffer(cl_context c, size_t origin, cl_mem_flags parent_flags, cl_mem_flags sub_flags,
                     std::vector<cl_mem>* made) {
  cl_mem parent = MakeBuffer(c, origin + 128, CL_MEM_READ_WRITE | parent_flags, made);
  cl_buffer_region region{origin, 64};
  cl_int err;
  cl_mem sub =
      parent ? clCreateSubBuffer(parent, sub_flags, CL_BUFFER_CREATE_TYPE_REGION, &region, &err)
             : nullptr;
  if (sub) made->push_back(sub);
  return sub;
}

TEST_F(Conformance, HostAccessFlagsOnBuffers) {
  struct Case {
    cl_mem_flags flags;
    HostAccessOutcome want;
    const char* name;
  } cases[] = {{CL_MEM_HOST_READ_ONLY, kHostReadOnly, "HOST_READ_ONLY"},
               {CL_MEM_HOST_WRITE_ONLY, kHostWriteOnly, "HOST_WRITE_ONLY"},
               {CL_MEM_HOST_NO_ACCESS, kHostNoAccess, "HOST_NO_ACCESS"},
               {0, kHostAll, "no host flag"}};
  for (const auto& c : cases) {
    cl_mem m = Buffer(64, CL_MEM_READ_WRITE | c.flags);
    const auto want =
        Expected(dev_.platform, c.want, [&](cl_context ctx, std::vector<cl_mem>* made) {
          return MakeBuffer(ctx, 64, CL_MEM_READ_WRITE | c.flags, made);
        });
    ExpectOutcome(TryHostCommands(q_, m), want, c.name);
    clReleaseMemObject(m);
  }
}

TEST_F(Conformance, HostAccessFlagsOnSubBuffers) {
  cl_uint align_bits = 0;
  clGetDeviceInfo(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align_bits), &align_bits, nullptr);
  const size_t origin = align_bits / 8;
  cl_buffer_region region{origin, 64};
  cl_int err;
  // Inherited from the parent.
  for (auto [flags, want] : {std::pair{CL_MEM_HOST_READ_ONLY, kHostReadOnly},
                             std::pair{CL_MEM_HOST_WRITE_ONLY, kHostWriteOnly},
                             std::pair{CL_MEM_HOST_NO_ACCESS, kHostNoAccess}}) {
    cl_mem parent = Buffer(origin + 128, CL_MEM_READ_WRITE | flags);
    cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    cl_mem_flags got = 0;
    clGetMemObjectInfo(sub, CL_MEM_FLAGS, sizeof(got), &got, nullptr);
    EXPECT_EQ(got & flags, flags) << "sub-buffers inherit host access";
    const auto device_want =
        Expected(dev_.platform, want, [&](cl_context ctx, std::vector<cl_mem>* made) {
          return MakeSubBuffer(ctx, origin, flags, 0, made);
        });
    ExpectOutcome(TryHostCommands(q_, sub), device_want, "inherited");
    clReleaseMemObject(sub);
    clReleaseMemObject(parent);
  }
  // Chosen for the sub-buffer of an unrestricted parent.
  cl_mem parent = Buffer(origin + 128, CL_MEM_READ_WRITE);
  cl_mem sub = clCreateSubBuffer(parent, CL_MEM_HOST_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION,
                                 &region, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const auto want =
      Expected(dev_.platform, kHostReadOnly, [&](cl_context ctx, std::vector<cl_mem>* made) {
        return MakeSubBuffer(ctx, origin, 0, CL_MEM_HOST_READ_ONLY, made);
      });
  ExpectOutcome(TryHostCommands(q_, sub), want, "own HOST_READ_ONLY");
  clReleaseMemObject(sub);
  clReleaseMemObject(parent);
  // CL_INVALID_VALUE if the parent's host access forbids the sub-buffer's.
  struct {
    cl_mem_flags parent, sub;
  } conflicts[] = {{CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY},
                   {CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_WRITE_ONLY},
                   {CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_READ_ONLY},
                   {CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_WRITE_ONLY}};
  for (auto c : conflicts) {
    cl_mem p = Buffer(origin + 128, CL_MEM_READ_WRITE | c.parent);
    EXPECT_EQ(clCreateSubBuffer(p, c.sub, CL_BUFFER_CREATE_TYPE_REGION, &region, &err), nullptr);
    EXPECT_EQ(err, CL_INVALID_VALUE) << c.parent << " / " << c.sub;
    clReleaseMemObject(p);
  }
}

TEST_F(Conformance, MapWriteOfAHostWriteOnlyBufferKeepsUnwrittenBytes) {
  // CL_MAP_WRITE (not WRITE_INVALIDATE) must show the buffer's contents: bytes the host does
  // not touch keep their values after the unmap.
  std::vector<int> init(16);
  std::iota(init.begin(), init.end(), 100);
  cl_mem m = Buffer(64, CL_MEM_READ_WRITE | CL_MEM_HOST_WRITE_ONLY | CL_MEM_COPY_HOST_PTR, init.data());
  cl_int err;
  auto* p = static_cast<int*>(
      clEnqueueMapBuffer(q_, m, CL_TRUE, CL_MAP_WRITE, 0, 64, 0, nullptr, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  p[3] = -3;
  ASSERT_EQ(clEnqueueUnmapMemObject(q_, m, p, 0, nullptr, nullptr), CL_SUCCESS);
  cl_mem plain = Buffer(64, CL_MEM_READ_WRITE);
  ASSERT_EQ(clEnqueueCopyBuffer(q_, m, plain, 0, 0, 64, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<int> back(16);
  ASSERT_EQ(clEnqueueReadBuffer(q_, plain, CL_TRUE, 0, 64, back.data(), 0, nullptr, nullptr), CL_SUCCESS);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(back[i], i == 3 ? -3 : 100 + i) << i;
  clReleaseMemObject(plain);
  clReleaseMemObject(m);
}

// ------------------------------------------------------------------ user events, other threads

const char* kAddOne = "__kernel void add_one(__global int* x) { x[get_global_id(0)] += 1; }";

TEST_F(Conformance, UserEventSetByAnotherThreadReleasesAWait) {
  cl_program p = Build(kAddOne);
  cl_int err;
  cl_kernel k = clCreateKernel(p, "add_one", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  std::vector<int> init(64, 1), got(64, 0), src(64, 5);
  cl_mem a = Buffer(256, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.data());
  cl_mem b = Buffer(256, CL_MEM_READ_WRITE);
  clSetKernelArg(k, 0, sizeof(cl_mem), &a);
  cl_event gate = clCreateUserEvent(ctx_, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  size_t g = 64;
  cl_event evs[3];
  ASSERT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &g, nullptr, 1, &gate, &evs[0]), CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(q_, a, CL_FALSE, 0, 256, got.data(), 1, &gate, &evs[1]), CL_SUCCESS);
  ASSERT_EQ(clEnqueueWriteBuffer(q_, b, CL_FALSE, 0, 256, src.data(), 1, &gate, &evs[2]), CL_SUCCESS);
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  });
  // Natively this returns soon after the setter runs; a hang fails the test by timeout.
  auto waited = std::async(std::launch::async, [&] { return clWaitForEvents(3, evs); });
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "clWaitForEvents did not return after the user event completed";
  EXPECT_EQ(waited.get(), CL_SUCCESS);
  setter.join();
  for (int v : got) EXPECT_EQ(v, 2);
  std::vector<int> bb(64);
  clEnqueueReadBuffer(q_, b, CL_TRUE, 0, 256, bb.data(), 0, nullptr, nullptr);
  EXPECT_EQ(bb[63], 5);
  for (cl_event e : evs) clReleaseEvent(e);
  clReleaseEvent(gate);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

TEST_F(Conformance, UserEventSetByAnotherThreadReleasesAFinish) {
  cl_program p = Build(kAddOne);
  cl_int err;
  cl_kernel k = clCreateKernel(p, "add_one", &err);
  std::vector<int> init(64, 1);
  cl_mem a = Buffer(256, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.data());
  clSetKernelArg(k, 0, sizeof(cl_mem), &a);
  cl_event gate = clCreateUserEvent(ctx_, &err);
  size_t g = 64;
  ASSERT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &g, nullptr, 1, &gate, nullptr), CL_SUCCESS);
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    clSetUserEventStatus(gate, CL_COMPLETE);
  });
  auto finished = std::async(std::launch::async, [&] { return clFinish(q_); });
  ASSERT_EQ(finished.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(finished.get(), CL_SUCCESS);
  setter.join();
  std::vector<int> got(64);
  clEnqueueReadBuffer(q_, a, CL_TRUE, 0, 256, got.data(), 0, nullptr, nullptr);
  EXPECT_EQ(got[0], 2);
  clReleaseEvent(gate);
  clReleaseMemObject(a);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

// ------------------------------------------------------------------ kernel arguments

const char* const kArgsKernel = R"CL(
typedef struct { int a; float b; } pair_t;
__kernel void args(__global int* buf, int i, long l, float4 v, pair_t s, __local int* scratch,
                   __constant int* c, char ch) { buf[0] = i; }
)CL";

// What the device itself answers to a __local argument of size 0: the spec says
// CL_INVALID_ARG_SIZE, NVIDIA takes it. Through rgpu with the device's platform beside it, the
// device is asked; otherwise (natively, or no platform beside rgpu) the spec's answer.
cl_int DeviceAnswerToZeroLocalSize(cl_platform_id under_test) {
  DeviceSetup native;
  if (PlatformName(under_test).find("rgpu") == std::string::npos || !native.Open(NativePlatform()))
    return CL_INVALID_ARG_SIZE;
  cl_int err;
  const char* src = kArgsKernel;
  cl_program p = clCreateProgramWithSource(native.ctx, 1, &src, nullptr, &err);
  cl_int rc = clBuildProgram(p, 1, &native.device, "", nullptr, nullptr);
  cl_kernel k = rc == CL_SUCCESS ? clCreateKernel(p, "args", &err) : nullptr;
  rc = k ? clSetKernelArg(k, 5, 0, nullptr) : CL_INVALID_ARG_SIZE;
  if (k) clReleaseKernel(k);
  clReleaseProgram(p);
  return rc;
}

TEST_F(Conformance, SetKernelArgChecksSizes) {
  cl_program p = Build(kArgsKernel);
  cl_int err;
  cl_kernel k = clCreateKernel(p, "args", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem m = Buffer(64, CL_MEM_READ_WRITE);
  int i = 1;
  cl_long l = 2;
  cl_float4 v{};
  struct { cl_int a; cl_float b; } s{};
  char ch = 0;
  // CL_INVALID_ARG_SIZE if arg_size does not match the size of the data type for an
  // argument that is not a memory object, or if the argument is a memory object and
  // arg_size != sizeof(cl_mem), or if arg_size is zero and the argument is declared with
  // the local qualifier
  EXPECT_EQ(clSetKernelArg(k, 0, 4, &m), CL_INVALID_ARG_SIZE);
  EXPECT_EQ(clSetKernelArg(k, 1, 8, &l), CL_INVALID_ARG_SIZE);
  EXPECT_EQ(clSetKernelArg(k, 1, 2, &i), CL_INVALID_ARG_SIZE);
  EXPECT_EQ(clSetKernelArg(k, 2, 4, &i), CL_INVALID_ARG_SIZE);
  EXPECT_EQ(clSetKernelArg(k, 3, 8, &l), CL_INVALID_ARG_SIZE);
  // (Whether a struct's size is checked is the device's choice: PoCL takes any; rgpu
  // follows the device, so the struct argument is not checked here.)
  EXPECT_EQ(clSetKernelArg(k, 5, 0, nullptr), DeviceAnswerToZeroLocalSize(dev_.platform));
  EXPECT_EQ(clSetKernelArg(k, 6, 4, &m), CL_INVALID_ARG_SIZE);
  EXPECT_EQ(clSetKernelArg(k, 7, 4, &i), CL_INVALID_ARG_SIZE);
  // CL_INVALID_ARG_VALUE if arg_value is NULL for an argument not declared __local
  EXPECT_EQ(clSetKernelArg(k, 1, 4, nullptr), CL_INVALID_ARG_VALUE);
  // The right sizes pass, and the launch that uses them runs.
  EXPECT_EQ(clSetKernelArg(k, 0, sizeof(cl_mem), &m), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, 1, sizeof(i), &i), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, 2, sizeof(l), &l), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, 3, sizeof(v), &v), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, 4, sizeof(s), &s), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, 5, 64, nullptr), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, 6, sizeof(cl_mem), &m), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, 7, sizeof(ch), &ch), CL_SUCCESS);
  EXPECT_EQ(clEnqueueTask(q_, k, 0, nullptr, nullptr), CL_SUCCESS);
  int out = 0;
  EXPECT_EQ(clEnqueueReadBuffer(q_, m, CL_TRUE, 0, 4, &out, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(out, 1);
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

// ------------------------------------------------------------------ build logs

std::string BuildLog(cl_context ctx, cl_device_id d, const char* src, cl_int* rc) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  *rc = clBuildProgram(p, 1, &d, "", nullptr, nullptr);
  size_t len = 0;
  clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, nullptr, &len);
  std::string log(len, '\0');
  clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, len, log.data(), nullptr);
  clReleaseProgram(p);
  // PoCL compiles from a temporary file of a random name that its log names.
  return std::regex_replace(log, std::regex("tempfile_[A-Za-z0-9]+"), "tempfile");
}

TEST_F(Conformance, BuildLogIsTheDevicesOwn) {
  struct {
    const char* src;
    cl_int rc;
  } sources[] = {
      {"__kernel void broken(__global int* x) { x[0] = undefined_thing; }", CL_BUILD_PROGRAM_FAILURE},
      {"__kernel void two(__global int* x) { x[0] = a; x[1] = b; }", CL_BUILD_PROGRAM_FAILURE},
      {"__kernel void semi(__global int* x) { int unused; x[0] = 1 }", CL_BUILD_PROGRAM_FAILURE},
      {"__kernel void warns(__global int* x) { int y; x[0] = y; }", CL_SUCCESS},
      {"__kernel void fine(__global int* x) { x[get_global_id(0)] = 1; }", CL_SUCCESS}};
  DeviceSetup native;
  const bool compare = PlatformName(dev_.platform).find("rgpu") != std::string::npos &&
                       native.Open(NativePlatform());
  for (const auto& [src, want_rc] : sources) {
    cl_int rc, native_rc;
    std::string log = BuildLog(ctx_, device_, src, &rc);
    EXPECT_EQ(rc, want_rc) << log;
    if (!compare) continue;
    std::string native_log = BuildLog(native.ctx, native.device, src, &native_rc);
    EXPECT_EQ(rc, native_rc);
    EXPECT_EQ(log, native_log) << "rgpu's log differs from the device's for:\n" << src;
  }
  if (PlatformName(dev_.platform).find("rgpu") != std::string::npos && !compare)
    GTEST_SKIP() << "no native platform beside rgpu to compare logs with";
}

}  // namespace

// ------------------------------------------------------------------ OpenCL 3.0 (issue 11, outcome 2)

namespace v30 {

std::vector<uint8_t> DeviceValue(cl_device_id d, cl_device_info p, cl_int* rc) {
  size_t n = 0;
  *rc = clGetDeviceInfo(d, p, 0, nullptr, &n);
  std::vector<uint8_t> v(n);
  if (*rc == CL_SUCCESS && n) *rc = clGetDeviceInfo(d, p, n, v.data(), nullptr);
  return v;
}

template <typename T>
T Get(cl_device_id d, cl_device_info p) {
  T v{};
  clGetDeviceInfo(d, p, sizeof(v), &v, nullptr);
  return v;
}

std::string Str(const std::vector<uint8_t>& v) {
  std::string s(v.begin(), v.end());
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

// What rgpu presents differently from the device, each for a stated reason: sub-devices, built-in kernels, extensions needing entry points it lacks, and the
// 3.0 features it cannot carry over a network (SVM, pipes, device-side enqueue, sub-groups, IL).
bool PresentedDifferently(cl_device_info p) {
  switch (p) {
    case CL_DEVICE_PLATFORM: case CL_DEVICE_EXTENSIONS: case CL_DEVICE_BUILT_IN_KERNELS:
    case CL_DEVICE_PARENT_DEVICE: case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
    case CL_DEVICE_PARTITION_PROPERTIES: case CL_DEVICE_PARTITION_AFFINITY_DOMAIN:
    case CL_DEVICE_PARTITION_TYPE: case CL_DEVICE_REFERENCE_COUNT:
    case CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES:
    case CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE: case CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE:
    case CL_DEVICE_MAX_ON_DEVICE_QUEUES: case CL_DEVICE_MAX_ON_DEVICE_EVENTS:
    case CL_DEVICE_SVM_CAPABILITIES: case CL_DEVICE_MAX_PIPE_ARGS:
    case CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS: case CL_DEVICE_PIPE_MAX_PACKET_SIZE:
    case CL_DEVICE_IL_VERSION: case CL_DEVICE_MAX_NUM_SUB_GROUPS:
    case CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS: case CL_DEVICE_EXTENSIONS_WITH_VERSION:
    case CL_DEVICE_ILS_WITH_VERSION: case CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION:
    case CL_DEVICE_OPENCL_C_FEATURES: case CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES:
    case CL_DEVICE_PIPE_SUPPORT:
      return true;
    default:
      return false;
  }
}

}  // namespace v30

TEST_F(Conformance, DeviceReportsItsOwnVersionAndQueries) {
  DeviceSetup native;
  if (PlatformName(dev_.platform).find("rgpu") == std::string::npos || !native.Open(NativePlatform()))
    GTEST_SKIP() << "compares rgpu with the native device it serves";
  // Every standard device query answers as the device does, except those rgpu presents
  // differently for a stated reason.
  for (cl_device_info p = CL_DEVICE_TYPE; p <= CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED; ++p) {
    if (v30::PresentedDifferently(p)) continue;
    cl_int rc, native_rc;
    auto got = v30::DeviceValue(device_, p, &rc);
    auto want = v30::DeviceValue(native.device, p, &native_rc);
    EXPECT_EQ(rc, native_rc) << std::hex << "query 0x" << p;
    if (rc == CL_SUCCESS && native_rc == CL_SUCCESS) {
      EXPECT_EQ(got, want) << std::hex << "query 0x" << p << ": " << v30::Str(got) << " vs "
                           << v30::Str(want);
    }
  }
  cl_int rc;
  const std::string version = v30::Str(v30::DeviceValue(device_, CL_DEVICE_VERSION, &rc));
  EXPECT_EQ(version.rfind("OpenCL 3.0", 0), 0u) << version;
  // What cannot be carried is absent, the way OpenCL 3.0 allows.
  EXPECT_EQ(v30::Get<cl_device_svm_capabilities>(device_, CL_DEVICE_SVM_CAPABILITIES), 0u);
  EXPECT_EQ(v30::Get<cl_bool>(device_, CL_DEVICE_PIPE_SUPPORT), CL_FALSE);
  EXPECT_EQ(v30::Get<cl_device_device_enqueue_capabilities>(device_, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES), 0u);
  EXPECT_EQ(v30::Get<cl_uint>(device_, CL_DEVICE_MAX_NUM_SUB_GROUPS), 0u);
  const std::string features = [&] {
    std::string s;
    auto v = v30::DeviceValue(device_, CL_DEVICE_OPENCL_C_FEATURES, &rc);
    for (size_t at = 0; at + sizeof(cl_name_version) <= v.size(); at += sizeof(cl_name_version))
      s += std::string(reinterpret_cast<const cl_name_version*>(v.data() + at)->name) + " ";
    return s;
  }();
  for (const char* f : {"__opencl_c_pipes", "__opencl_c_device_enqueue", "__opencl_c_subgroups"})
    EXPECT_EQ(features.find(f), std::string::npos) << f;
  // The platform carries OpenCL 3.0.
  cl_version pv = 0;
  EXPECT_EQ(clGetPlatformInfo(dev_.platform, CL_PLATFORM_NUMERIC_VERSION, sizeof(pv), &pv, nullptr), CL_SUCCESS);
  EXPECT_EQ(pv, CL_MAKE_VERSION(3, 0, 0));
}

TEST_F(Conformance, ObjectQueriesOfOpenCL30) {
  cl_int err;
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx_, device_, props, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_queue_properties back[3] = {};
  size_t n = 0;
  EXPECT_EQ(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, sizeof(back), back, &n), CL_SUCCESS);
  EXPECT_EQ(n, sizeof(props));
  EXPECT_EQ(back[1], props[1]);
  // No device queue: the answer is NULL. NVIDIA writes it in 4 bytes (its size_ret is 4), so
  // the bytes it says it wrote are checked, not a whole pointer.
  uint8_t def[sizeof(cl_command_queue)];
  std::memset(def, 0xab, sizeof(def));
  n = 0;
  EXPECT_EQ(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE_DEFAULT, sizeof(def), def, &n), CL_SUCCESS);
  EXPECT_GE(n, 4u);
  EXPECT_LE(n, sizeof(def));
  for (size_t i = 0; i < n && i < sizeof(def); ++i) EXPECT_EQ(def[i], 0) << "byte " << i;
  clReleaseCommandQueue(q);
  cl_mem m = Buffer(64, CL_MEM_READ_WRITE);
  cl_bool svm = CL_TRUE;
  EXPECT_EQ(clGetMemObjectInfo(m, CL_MEM_USES_SVM_POINTER, sizeof(svm), &svm, nullptr), CL_SUCCESS);
  EXPECT_EQ(svm, CL_FALSE);
  EXPECT_EQ(clGetMemObjectInfo(m, CL_MEM_PROPERTIES, 0, nullptr, &n), CL_SUCCESS);
  EXPECT_EQ(n, 0u);
  clReleaseMemObject(m);
  // Program-scope global variables: the total size query answers (0 without any).
  cl_program p = Build(kAddOne);
  size_t total = 1;
  EXPECT_EQ(clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
                                  sizeof(total), &total, nullptr), CL_SUCCESS);
  EXPECT_EQ(total, 0u);
  clReleaseProgram(p);
  // IL programs only where the device takes an IL.
  cl_int rc;
  const std::string il = v30::Str(v30::DeviceValue(device_, CL_DEVICE_IL_VERSION, &rc));
  if (il.empty()) {
    const uint32_t junk[4] = {0x07230203, 0, 0, 0};
    // The spec says CL_INVALID_OPERATION; PoCL answers CL_INVALID_VALUE. rgpu does not ask
    // the device here (IL is not carried), so only the refusal itself is common to both.
    EXPECT_EQ(clCreateProgramWithIL(ctx_, junk, sizeof(junk), &err), nullptr);
    EXPECT_NE(err, CL_SUCCESS);
  }
}

TEST_F(Conformance, ContextDestructorCallbacksRunInReverseOrder) {
  struct Log {
    std::mutex mu;
    std::vector<int> order;
  } log;
  struct Tagged {
    Log* log;
    int tag;
  } first{&log, 1}, second{&log, 2};
  auto record = [](cl_context, void* d) {
    auto* t = static_cast<Tagged*>(d);
    std::lock_guard lk(t->log->mu);
    t->log->order.push_back(t->tag);
  };
  cl_int err;
  cl_context c = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 64, nullptr, &err);
  ASSERT_EQ(clSetContextDestructorCallback(c, record, &first), CL_SUCCESS);
  ASSERT_EQ(clSetContextDestructorCallback(c, record, &second), CL_SUCCESS);
  EXPECT_EQ(clSetContextDestructorCallback(c, nullptr, nullptr), CL_INVALID_VALUE);
  clReleaseContext(c);
  clReleaseMemObject(m);  // the context goes with its last object
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard lk(log.mu);
      if (log.order.size() == 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::lock_guard lk(log.mu);
  EXPECT_EQ(log.order, (std::vector<int>{2, 1}));
}

TEST_F(Conformance, NonUniformWorkGroupsWhereTheDeviceHasThem) {
  if (!v30::Get<cl_bool>(device_, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT))
    GTEST_SKIP() << "the device has no non-uniform work-groups";
  const char* src =
      "__kernel void sizes(__global int* out) { out[get_global_id(0)] = (int)get_local_size(0); }";
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx_, 1, &src, nullptr, &err);
  ASSERT_EQ(clBuildProgram(p, 1, &device_, "-cl-std=CL3.0", nullptr, nullptr), CL_SUCCESS);
  cl_kernel k = clCreateKernel(p, "sizes", &err);
  cl_mem out = Buffer(100 * 4, CL_MEM_READ_WRITE);
  clSetKernelArg(k, 0, sizeof(cl_mem), &out);
  size_t global = 100, local = 32;
  ASSERT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &global, &local, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<int> v(100);
  clEnqueueReadBuffer(q_, out, CL_TRUE, 0, 400, v.data(), 0, nullptr, nullptr);
  EXPECT_EQ(v[0], 32);
  EXPECT_EQ(v[99], 4);  // the last group holds the remainder
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

TEST_F(Conformance, CloneKernelKeepsTheArgumentsSetSoFar) {
  cl_program p = Build("__kernel void put(__global int* out, int v) { out[get_global_id(0)] = v; }");
  cl_int err;
  cl_kernel k = clCreateKernel(p, "put", &err);
  cl_mem a = Buffer(16, CL_MEM_READ_WRITE), b = Buffer(16, CL_MEM_READ_WRITE);
  int seven = 7, nine = 9;
  clSetKernelArg(k, 0, sizeof(cl_mem), &a);
  clSetKernelArg(k, 1, sizeof(int), &seven);
  cl_kernel c = clCloneKernel(k, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  // Changing the source's arguments afterwards leaves the clone's alone.
  clSetKernelArg(k, 0, sizeof(cl_mem), &b);
  clSetKernelArg(k, 1, sizeof(int), &nine);
  size_t g = 4;
  ASSERT_EQ(clEnqueueNDRangeKernel(q_, c, 1, nullptr, &g, nullptr, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr), CL_SUCCESS);
  int va[4] = {}, vb[4] = {};
  clEnqueueReadBuffer(q_, a, CL_TRUE, 0, 16, va, 0, nullptr, nullptr);
  clEnqueueReadBuffer(q_, b, CL_TRUE, 0, 16, vb, 0, nullptr, nullptr);
  EXPECT_EQ(va[3], 7);
  EXPECT_EQ(vb[3], 9);
  char name[16] = {};
  clGetKernelInfo(c, CL_KERNEL_FUNCTION_NAME, sizeof(name), name, nullptr);
  EXPECT_STREQ(name, "put");
  EXPECT_EQ(clCloneKernel(nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_KERNEL);
  clReleaseKernel(c);
  clReleaseKernel(k);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseProgram(p);
}
