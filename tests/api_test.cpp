// OpenCL API behaviour through the real ICD loader. The same tests run twice in CI: once on
// PoCL directly (RGPU_TEST_PLATFORM=Portable) and once through rgpud (=rgpu), so every
// expectation, error codes included, is one the native platform meets too.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string PlatformName(cl_platform_id p) {
  char buf[256] = {0};
  clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(buf) - 1, buf, nullptr);
  return buf;
}

class Api : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* want = std::getenv("RGPU_TEST_PLATFORM");
    std::string w = want ? want : "rgpu";
    cl_uint n = 0;
    ASSERT_EQ(clGetPlatformIDs(0, nullptr, &n), CL_SUCCESS);
    std::vector<cl_platform_id> ps(n);
    clGetPlatformIDs(n, ps.data(), nullptr);
    for (auto p : ps)
      if (PlatformName(p).find(w) != std::string::npos) platform_ = p;
    ASSERT_NE(platform_, nullptr) << "no platform named like " << w;
    ASSERT_EQ(clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr), CL_SUCCESS);
    cl_int err;
    ctx_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    q_ = clCreateCommandQueue(ctx_, device_, CL_QUEUE_PROFILING_ENABLE, &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }
  void TearDown() override {
    if (q_) clReleaseCommandQueue(q_);
    if (ctx_) clReleaseContext(ctx_);
  }
  cl_program Build(const char* src, const char* options = "") {
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx_, 1, &src, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(clBuildProgram(p, 1, &device_, options, nullptr, nullptr), CL_SUCCESS);
    return p;
  }
  // Bursts of launches with events: most released at once, one in 97 kept (`keep_most`: all
  // but one in 29 kept), some waited for, queried or named in a wait list mid-burst.
  void BurstWithEvents(cl_command_queue q, bool keep_most);
  cl_kernel Kernel(cl_program p, const char* name) {
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    EXPECT_EQ(err, CL_SUCCESS) << name;
    return k;
  }
  cl_mem Buffer(size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE, void* host = nullptr) {
    cl_int err;
    cl_mem m = clCreateBuffer(ctx_, flags, size, host, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return m;
  }

  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context ctx_ = nullptr;
  cl_command_queue q_ = nullptr;
};

const char* kKernels = R"CL(
typedef struct { int a; float b; long c; } params_t;
__kernel void fill_ids(__global int* out, int scale) {
  size_t i = get_global_id(0);
  out[i - get_global_offset(0)] = (int)i * scale;
}
__kernel void grid3(__global int* out) {
  size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  size_t w = get_global_size(0), h = get_global_size(1);
  out[(z * h + y) * w + x] = (int)(x + 10 * y + 100 * z);
}
__kernel void use_struct(__global float* out, params_t p) { out[0] = p.a + p.b + (float)p.c; }
__kernel void local_sum(__global const int* in, __global int* out, __local int* scratch) {
  size_t l = get_local_id(0), g = get_global_id(0);
  scratch[l] = in[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) {
    int s = 0;
    for (size_t i = 0; i < get_local_size(0); ++i) s += scratch[i];
    out[get_group_id(0)] = s;
  }
}
__kernel void maybe_null(__global int* p, __global int* out) { out[0] = p == 0 ? 7 : 9; }
__kernel void add_one(__global int* x) { x[get_global_id(0)] += 1; }
)CL";

TEST_F(Api, PlatformAndDeviceQueries) {
  char name[256];
  size_t got = 0;
  EXPECT_EQ(clGetDeviceInfo(device_, CL_DEVICE_NAME, sizeof(name), name, &got), CL_SUCCESS);
  EXPECT_GT(got, 1u);
  size_t sizes[3];
  EXPECT_EQ(clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(sizes), sizes, &got), CL_SUCCESS);
  EXPECT_EQ(got, 3 * sizeof(size_t));
  EXPECT_GT(sizes[0], 0u);
  cl_ulong mem = 0;
  EXPECT_EQ(clGetDeviceInfo(device_, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, nullptr), CL_SUCCESS);
  EXPECT_GT(mem, 0u);
  cl_platform_id p = nullptr;
  EXPECT_EQ(clGetDeviceInfo(device_, CL_DEVICE_PLATFORM, sizeof(p), &p, nullptr), CL_SUCCESS);
  EXPECT_EQ(p, platform_);
  // Too small a buffer, an unknown query, a bad device list.
  EXPECT_EQ(clGetDeviceInfo(device_, CL_DEVICE_NAME, 1, name, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(clGetDeviceInfo(device_, 0x7fff, sizeof(name), name, nullptr), CL_INVALID_VALUE);
  cl_device_id d;
  EXPECT_EQ(clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, &d, nullptr), CL_INVALID_VALUE);
}

TEST_F(Api, BufferArgumentErrors) {
  cl_int err;
  EXPECT_EQ(clCreateBuffer(ctx_, CL_MEM_READ_WRITE, 0, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_BUFFER_SIZE);
  EXPECT_EQ(clCreateBuffer(ctx_, CL_MEM_USE_HOST_PTR, 64, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_HOST_PTR);
  int x[4];
  EXPECT_EQ(clCreateBuffer(ctx_, CL_MEM_READ_WRITE, 16, x, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_HOST_PTR);
  EXPECT_EQ(clCreateBuffer(ctx_, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 16, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  cl_mem m = Buffer(64);
  EXPECT_EQ(clEnqueueReadBuffer(q_, m, CL_TRUE, 32, 64, x, 0, nullptr, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(clEnqueueReadBuffer(q_, m, CL_TRUE, 0, 16, x, 1, nullptr, nullptr), CL_INVALID_EVENT_WAIT_LIST);
  EXPECT_EQ(clEnqueueReadBuffer(q_, nullptr, CL_TRUE, 0, 16, x, 0, nullptr, nullptr), CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(clEnqueueCopyBuffer(q_, m, m, 0, 8, 16, 0, nullptr, nullptr), CL_MEM_COPY_OVERLAP);
  clReleaseMemObject(m);
}

TEST_F(Api, WriteCopyFillReadAndSubBuffers) {
  const size_t n = 1024;
  std::vector<int> src(n), dst(n, -1);
  std::iota(src.begin(), src.end(), 0);
  cl_mem a = Buffer(n * 4, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, src.data());
  cl_mem b = Buffer(n * 4);
  ASSERT_EQ(clEnqueueCopyBuffer(q_, a, b, 0, 0, n * 4, 0, nullptr, nullptr), CL_SUCCESS);
  int pattern = 0x5a5a5a5a;
  ASSERT_EQ(clEnqueueFillBuffer(q_, b, &pattern, 4, 16 * 4, 16 * 4, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(q_, b, CL_TRUE, 0, n * 4, dst.data(), 0, nullptr, nullptr), CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(dst[i], (i >= 16 && i < 32) ? pattern : int(i)) << i;

  cl_uint align_bits = 0;
  clGetDeviceInfo(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align_bits), &align_bits, nullptr);
  size_t origin = align_bits / 8;
  cl_buffer_region region{origin, 64};
  cl_int err;
  cl_mem sub = clCreateSubBuffer(a, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  std::vector<int> part(16);
  ASSERT_EQ(clEnqueueReadBuffer(q_, sub, CL_TRUE, 0, 64, part.data(), 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(part[0], int(origin / 4));
  size_t got_off = 0;
  clGetMemObjectInfo(sub, CL_MEM_OFFSET, sizeof(got_off), &got_off, nullptr);
  EXPECT_EQ(got_off, origin);
  cl_buffer_region bad{1, 64};
  EXPECT_EQ(clCreateSubBuffer(a, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &bad, &err), nullptr);
  EXPECT_EQ(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);
  clReleaseMemObject(sub);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
}

TEST_F(Api, LargeTransfersRoundTrip) {
  const size_t n = (24u << 20) / 4 + 3;  // several protocol chunks and a ragged end
  std::vector<int> src(n), dst(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = int(i * 2654435761u);
  cl_mem m = Buffer(n * 4);
  ASSERT_EQ(clEnqueueWriteBuffer(q_, m, CL_FALSE, 0, n * 4, src.data(), 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(q_, m, CL_FALSE, 0, n * 4, dst.data(), 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clFinish(q_), CL_SUCCESS);
  EXPECT_EQ(src, dst);
  clReleaseMemObject(m);
}

TEST_F(Api, PiecedTransfersAtOffsetsAreExact) {
  // Over the socket, writes of 8 MiB and more and reads of 512 KiB and more go in pieces
  // whose size follows the transfer's (proto::PieceBytes, proto::ReadPieceBytes): ragged
  // sizes, offsets and sizes either side of each cut, each read back alone and with
  // everything around it.
  const size_t total = size_t{40} << 20, mib = size_t{1} << 20;
  std::vector<uint8_t> model(total, 0xa5), got;
  cl_mem m = Buffer(total, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, model.data());
  struct Case {
    size_t offset, size;
    cl_bool blocking;
  };
  const Case cases[] = {{5, 9 * mib + 3, CL_TRUE},
                        {mib + 7, 16 * mib, CL_FALSE},
                        {3, 33 * mib - 1, CL_FALSE},
                        {0, 8 * mib - 1, CL_TRUE},
                        {total - 8 * mib, 8 * mib, CL_TRUE},
                        {2 * mib, 32 * mib + 5, CL_TRUE},
                        {9, mib / 2, CL_TRUE},
                        {mib + 1, mib / 2 - 1, CL_FALSE},
                        {3, mib + 3, CL_FALSE},
                        {total - 3 * mib - 65537, 3 * mib + 65537, CL_TRUE},
                        {mib - 5, 4 * mib - 1, CL_TRUE}};
  // Where two equal-sized byte vectors first differ (their size if nowhere).
  auto first_diff = [](const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    return static_cast<size_t>(std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin());
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "offset " << c.offset << ", size " << c.size);
    std::vector<uint8_t> src(c.size);
    for (size_t i = 0; i < c.size; ++i) src[i] = uint8_t((i * 2654435761u + seed * 40503u) >> 24);
    ++seed;
    std::copy(src.begin(), src.end(), model.begin() + static_cast<std::ptrdiff_t>(c.offset));
    cl_event written = nullptr;
    ASSERT_EQ(clEnqueueWriteBuffer(q_, m, c.blocking, c.offset, c.size, src.data(), 0, nullptr,
                                   &written),
              CL_SUCCESS);
    got.assign(c.size, 0);
    ASSERT_EQ(clEnqueueReadBuffer(q_, m, !c.blocking, c.offset, c.size, got.data(), 1, &written,
                                  nullptr),
              CL_SUCCESS);
    ASSERT_EQ(clFinish(q_), CL_SUCCESS);
    clReleaseEvent(written);
    EXPECT_EQ(first_diff(got, src), c.size);
    got.assign(total, 0);
    ASSERT_EQ(clEnqueueReadBuffer(q_, m, CL_TRUE, 0, total, got.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(first_diff(got, model), total);
  }
  clReleaseMemObject(m);
}

TEST_F(Api, ReadsIntoTheSameMemoryLandInQueueOrder) {
  // Two reads of an in-order queue into the same memory, the first non-blocking: the later
  // one's bytes are what stays, whichever answer rgpud sends first. Sizes that go over the
  // socket and through the shared region; the later read non-blocking, blocking, rectangular
  // (packed, then scattered), or small and into part of the memory.
  for (size_t size : {size_t{4} << 10, size_t{200} << 10, size_t{2} << 20}) {
    SCOPED_TRACE(testing::Message() << size << " bytes");
    std::vector<uint8_t> ones(size, 1), twos(size, 2), into(size);
    cl_mem a = Buffer(size, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, ones.data());
    cl_mem b = Buffer(size, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, twos.data());
    int wrong = 0;
    for (int round = 0; round < 48; ++round) {
      ASSERT_EQ(clEnqueueReadBuffer(q_, a, CL_FALSE, 0, size, into.data(), 0, nullptr, nullptr),
                CL_SUCCESS);
      std::vector<uint8_t> expect = twos;
      if (round % 4 < 2) {  // non-blocking, then blocking (a read in the call)
        const cl_bool blocking = round % 4 == 1 ? CL_TRUE : CL_FALSE;
        ASSERT_EQ(clEnqueueReadBuffer(q_, b, blocking, 0, size, into.data(), 0, nullptr, nullptr),
                  CL_SUCCESS);
      } else if (round % 4 == 2) {
        const size_t origin[3] = {0, 0, 0}, region[3] = {size / 4, 4, 1};
        ASSERT_EQ(clEnqueueReadBufferRect(q_, b, CL_FALSE, origin, origin, region, 0, 0, 0, 0,
                                          into.data(), 0, nullptr, nullptr),
                  CL_SUCCESS);
      } else {  // a small read (over the socket) into part of the memory
        const size_t part = std::min<size_t>(size, 1000);
        ASSERT_EQ(clEnqueueReadBuffer(q_, b, CL_FALSE, 0, part, into.data() + 8, 0, nullptr,
                                      nullptr),
                  CL_SUCCESS);
        expect = ones;
        std::fill(expect.begin() + 8, expect.begin() + 8 + part, 2);
      }
      ASSERT_EQ(clFinish(q_), CL_SUCCESS);
      if (into != expect) ++wrong;
    }
    EXPECT_EQ(wrong, 0) << "rounds in which the earlier read's bytes stayed";
    clReleaseMemObject(a);
    clReleaseMemObject(b);
  }
}

TEST_F(Api, ReadsOnAnInOrderQueueCompleteInOrder) {
  // On an in-order queue a later command completes after an earlier one: once a small read's
  // or a marker's event is complete, a larger read enqueued before it is complete too, with
  // its data in place. (rgpud may answer them in another order: over the socket a large
  // read's data comes in pieces, a small one in one frame.)
  const size_t sizes[] = {64 << 10, 1 << 20, 9 << 20};
  for (size_t big : sizes) {
    SCOPED_TRACE(testing::Message() << "first read " << big << " bytes");
    std::vector<uint8_t> src(big);
    for (size_t i = 0; i < big; ++i) src[i] = uint8_t((i * 2654435761u) >> 24);
    cl_mem a = Buffer(big, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, src.data());
    const int word = 0x5eed;
    cl_mem b =
        Buffer(sizeof word, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, const_cast<int*>(&word));
    for (int round = 0; round < 20; ++round) {
      std::vector<uint8_t> got(big, 0);
      int small = 0;
      cl_event first = nullptr, second = nullptr;
      ASSERT_EQ(clEnqueueReadBuffer(q_, a, CL_FALSE, 0, big, got.data(), 0, nullptr, &first),
                CL_SUCCESS);
      // A small read after it, or (odd rounds) a marker: any later command of the queue.
      if (round % 2 == 0) {
        ASSERT_EQ(clEnqueueReadBuffer(q_, b, CL_FALSE, 0, sizeof small, &small, 0, nullptr,
                                      &second),
                  CL_SUCCESS);
      } else {
        ASSERT_EQ(clEnqueueMarkerWithWaitList(q_, 0, nullptr, &second), CL_SUCCESS);
      }
      if (round < 10) {
        ASSERT_EQ(clWaitForEvents(1, &second), CL_SUCCESS);
      } else {  // seen complete by asking for its status
        cl_int st = CL_QUEUED;
        while (st != CL_COMPLETE)
          ASSERT_EQ(clGetEventInfo(second, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
                                   nullptr),
                    CL_SUCCESS);
      }
      cl_int status = CL_QUEUED;
      ASSERT_EQ(clGetEventInfo(first, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                               nullptr),
                CL_SUCCESS);
      EXPECT_EQ(status, CL_COMPLETE) << "round " << round << ": the later command completed first";
      EXPECT_TRUE(got == src) << "round " << round << ": the read's data had not all landed";
      if (round % 2 == 0) {
        EXPECT_EQ(small, word);
      }
      ASSERT_EQ(clWaitForEvents(1, &first), CL_SUCCESS);
      clReleaseEvent(first);
      clReleaseEvent(second);
    }
    // After clFinish every read of the queue is complete, its data in place.
    for (int round = 0; round < 10; ++round) {
      std::vector<uint8_t> got(big, 0);
      int small = 0;
      cl_event first = nullptr, second = nullptr;
      ASSERT_EQ(clEnqueueReadBuffer(q_, a, CL_FALSE, 0, big, got.data(), 0, nullptr, &first),
                CL_SUCCESS);
      ASSERT_EQ(clEnqueueReadBuffer(q_, b, CL_FALSE, 0, sizeof small, &small, 0, nullptr, &second),
                CL_SUCCESS);
      ASSERT_EQ(clFinish(q_), CL_SUCCESS);
      for (cl_event ev : {first, second}) {
        cl_int status = CL_QUEUED;
        ASSERT_EQ(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                 nullptr),
                  CL_SUCCESS);
        EXPECT_EQ(status, CL_COMPLETE)
            << "round " << round << ": a read not complete after clFinish";
      }
      EXPECT_TRUE(got == src) << "round " << round;
      EXPECT_EQ(small, word);
      clReleaseEvent(first);
      clReleaseEvent(second);
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
  }
}

TEST_F(Api, RectReadWrite) {
  // A 8x6x2 box inside a 16x8x3 buffer of bytes, host rows padded to 10.
  const size_t bw = 16, bh = 8, bd = 3;
  std::vector<uint8_t> zero(bw * bh * bd, 0), host(10 * 6 * 2), back(10 * 6 * 2, 0), all(bw * bh * bd);
  for (size_t i = 0; i < host.size(); ++i) host[i] = uint8_t(i + 1);
  cl_mem m = Buffer(zero.size(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, zero.data());
  size_t borigin[3] = {4, 1, 1}, horigin[3] = {1, 0, 0}, region[3] = {8, 6, 2};
  ASSERT_EQ(clEnqueueWriteBufferRect(q_, m, CL_TRUE, borigin, horigin, region, bw, bw * bh, 10, 60,
                                     host.data(), 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBufferRect(q_, m, CL_TRUE, borigin, horigin, region, bw, bw * bh, 10, 60,
                                    back.data(), 0, nullptr, nullptr), CL_SUCCESS);
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 6; ++y)
      for (size_t x = 1; x < 9; ++x) EXPECT_EQ(back[z * 60 + y * 10 + x], host[z * 60 + y * 10 + x]);
  ASSERT_EQ(clEnqueueReadBuffer(q_, m, CL_TRUE, 0, all.size(), all.data(), 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(all[(1 * bh + 1) * bw + 4], host[1]);
  EXPECT_EQ(all[0], 0);
  clReleaseMemObject(m);
}

TEST_F(Api, MapAndUnmap) {
  const size_t n = 256;
  std::vector<int> init(n, 3);
  cl_mem m = Buffer(n * 4, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.data());
  cl_int err;
  auto* p = static_cast<int*>(clEnqueueMapBuffer(q_, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n * 4,
                                                 0, nullptr, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(p[10], 3);
  cl_uint maps = 0;
  clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof(maps), &maps, nullptr);
  EXPECT_EQ(maps, 1u);
  for (size_t i = 0; i < n; ++i) p[i] = int(i);
  ASSERT_EQ(clEnqueueUnmapMemObject(q_, m, p, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<int> back(n);
  ASSERT_EQ(clEnqueueReadBuffer(q_, m, CL_TRUE, 0, n * 4, back.data(), 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(back[100], 100);
  EXPECT_EQ(clEnqueueUnmapMemObject(q_, m, p, 0, nullptr, nullptr), CL_INVALID_VALUE);
  // USE_HOST_PTR: mapping returns the application's own memory, up to date.
  std::vector<int> mine(n, 1);
  cl_mem u = Buffer(n * 4, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, mine.data());
  int seven = 7;
  ASSERT_EQ(clEnqueueFillBuffer(q_, u, &seven, 4, 0, n * 4, 0, nullptr, nullptr), CL_SUCCESS);
  auto* up = static_cast<int*>(clEnqueueMapBuffer(q_, u, CL_TRUE, CL_MAP_READ, 0, n * 4, 0, nullptr, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(up, mine.data());
  EXPECT_EQ(mine[5], 7);
  clEnqueueUnmapMemObject(q_, u, up, 0, nullptr, nullptr);
  clFinish(q_);
  clReleaseMemObject(u);
  clReleaseMemObject(m);
}

TEST_F(Api, MapAgainShowsTheDevicesContents) {
  // Maps of one buffer one after another (rgpu keeps the host memory of the last one for the
  // next): each shows what the device holds at that point, whatever size and offset.
  const size_t n = 64 * 1024;
  std::vector<int> init(n, 1);
  cl_mem m = Buffer(n * 4, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.data());
  cl_int err;
  auto* p = static_cast<int*>(clEnqueueMapBuffer(q_, m, CL_TRUE, CL_MAP_WRITE, 0, n * 4, 0, nullptr,
                                                 nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) p[i] = int(i);
  ASSERT_EQ(clEnqueueUnmapMemObject(q_, m, p, 0, nullptr, nullptr), CL_SUCCESS);
  int nine = 9;
  ASSERT_EQ(clEnqueueFillBuffer(q_, m, &nine, 4, 4096, 4096, 0, nullptr, nullptr), CL_SUCCESS);
  // Smaller, at an offset: the filled words and the written ones around them.
  p = static_cast<int*>(clEnqueueMapBuffer(q_, m, CL_TRUE, CL_MAP_READ, 4000, 8192, 0, nullptr, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(p[0], 1000);
  EXPECT_EQ(p[24], 9);           // byte 4096
  EXPECT_EQ(p[(8192 - 4) / 4], 3047);  // byte 12188: word 3047, past the fill
  ASSERT_EQ(clEnqueueUnmapMemObject(q_, m, p, 0, nullptr, nullptr), CL_SUCCESS);
  // The whole buffer again, after the device changed it once more.
  int five = 5;
  ASSERT_EQ(clEnqueueFillBuffer(q_, m, &five, 4, 0, 16, 0, nullptr, nullptr), CL_SUCCESS);
  p = static_cast<int*>(clEnqueueMapBuffer(q_, m, CL_TRUE, CL_MAP_READ, 0, n * 4, 0, nullptr, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(p[0], 5);
  EXPECT_EQ(p[3], 5);
  EXPECT_EQ(p[4], 4);
  EXPECT_EQ(p[1024], 9);
  EXPECT_EQ(p[n - 1], int(n - 1));
  ASSERT_EQ(clEnqueueUnmapMemObject(q_, m, p, 0, nullptr, nullptr), CL_SUCCESS);
  clFinish(q_);
  clReleaseMemObject(m);
}

TEST_F(Api, KernelArgumentKindsAndLaunchShapes) {
  cl_program p = Build(kKernels);
  cl_int err;
  // 1D with a global offset.
  cl_kernel k = clCreateKernel(p, "fill_ids", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem out = Buffer(64 * 4);
  int scale = 3;
  clSetKernelArg(k, 0, sizeof(cl_mem), &out);
  clSetKernelArg(k, 1, sizeof(int), &scale);
  size_t off = 5, global = 64, local = 16;
  ASSERT_EQ(clEnqueueNDRangeKernel(q_, k, 1, &off, &global, &local, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<int> v(64);
  clEnqueueReadBuffer(q_, out, CL_TRUE, 0, 256, v.data(), 0, nullptr, nullptr);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(v[i], (i + 5) * 3);
  // 3D, no local size.
  cl_kernel g3 = clCreateKernel(p, "grid3", &err);
  cl_mem grid = Buffer(4 * 3 * 2 * 4);
  clSetKernelArg(g3, 0, sizeof(cl_mem), &grid);
  size_t gsz[3] = {4, 3, 2};
  ASSERT_EQ(clEnqueueNDRangeKernel(q_, g3, 3, nullptr, gsz, nullptr, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<int> gv(24);
  clEnqueueReadBuffer(q_, grid, CL_TRUE, 0, 96, gv.data(), 0, nullptr, nullptr);
  EXPECT_EQ(gv[(1 * 3 + 2) * 4 + 3], 3 + 20 + 100);
  // A struct by value.
  struct { cl_int a; cl_float b; cl_long c; } params{2, 0.5f, 40};
  cl_kernel ks = clCreateKernel(p, "use_struct", &err);
  cl_mem f = Buffer(4);
  clSetKernelArg(ks, 0, sizeof(cl_mem), &f);
  ASSERT_EQ(clSetKernelArg(ks, 1, sizeof(params), &params), CL_SUCCESS);
  ASSERT_EQ(clEnqueueTask(q_, ks, 0, nullptr, nullptr), CL_SUCCESS);
  float fv = 0;
  clEnqueueReadBuffer(q_, f, CL_TRUE, 0, 4, &fv, 0, nullptr, nullptr);
  EXPECT_FLOAT_EQ(fv, 42.5f);
  // __local memory by size.
  cl_kernel kl = clCreateKernel(p, "local_sum", &err);
  std::vector<int> ones(128, 1);
  cl_mem in = Buffer(512, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, ones.data());
  cl_mem sums = Buffer(4 * 4);
  clSetKernelArg(kl, 0, sizeof(cl_mem), &in);
  clSetKernelArg(kl, 1, sizeof(cl_mem), &sums);
  ASSERT_EQ(clSetKernelArg(kl, 2, 32 * sizeof(int), nullptr), CL_SUCCESS);
  size_t g128 = 128, l32 = 32;
  ASSERT_EQ(clEnqueueNDRangeKernel(q_, kl, 1, nullptr, &g128, &l32, 0, nullptr, nullptr), CL_SUCCESS);
  int sv[4];
  clEnqueueReadBuffer(q_, sums, CL_TRUE, 0, 16, sv, 0, nullptr, nullptr);
  for (int s : sv) EXPECT_EQ(s, 32);
  // A NULL buffer argument.
  cl_kernel kn = clCreateKernel(p, "maybe_null", &err);
  cl_mem nothing = nullptr, flag = Buffer(4);
  ASSERT_EQ(clSetKernelArg(kn, 0, sizeof(cl_mem), &nothing), CL_SUCCESS);
  clSetKernelArg(kn, 1, sizeof(cl_mem), &flag);
  clEnqueueTask(q_, kn, 0, nullptr, nullptr);
  int fl = 0;
  clEnqueueReadBuffer(q_, flag, CL_TRUE, 0, 4, &fl, 0, nullptr, nullptr);
  EXPECT_EQ(fl, 7);
  for (cl_mem m : {out, grid, f, in, sums, flag}) clReleaseMemObject(m);
  for (cl_kernel x : {k, g3, ks, kl, kn}) clReleaseKernel(x);
  clReleaseProgram(p);
}

// rgpud sets again only the arguments that changed since a kernel's last launch: every kind
// of change must still reach the device, also to a buffer made where a released one was.
TEST_F(Api, ArgumentsChangedBetweenLaunchesAreSeen) {
  cl_program p = Build(kKernels);
  cl_int err;
  cl_kernel k = clCreateKernel(p, "fill_ids", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_kernel kl = clCreateKernel(p, "local_sum", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  size_t global = 16;
  cl_mem a = Buffer(64), b = Buffer(64);
  auto run = [&](cl_mem out, int scale) {
    EXPECT_EQ(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
    EXPECT_EQ(clSetKernelArg(k, 1, sizeof(int), &scale), CL_SUCCESS);
    EXPECT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), CL_SUCCESS);
    int v[16] = {};
    EXPECT_EQ(clEnqueueReadBuffer(q_, out, CL_TRUE, 0, sizeof(v), v, 0, nullptr, nullptr), CL_SUCCESS);
    return v[15];
  };
  EXPECT_EQ(run(a, 1), 15);
  EXPECT_EQ(run(a, 1), 15);   // nothing changed
  EXPECT_EQ(run(a, 2), 30);   // the value changed
  EXPECT_EQ(run(b, 2), 30);   // the buffer changed
  EXPECT_EQ(run(a, 3), 45);   // both, back to the first buffer
  // Buffers released and made again, many times: one is bound to take a released one's place
  // in rgpud, and must not pass for it.
  for (int i = 0; i < 50; ++i) {
    cl_mem c = Buffer(64);
    ASSERT_EQ(run(c, i + 1), 15 * (i + 1)) << "round " << i;
    int first = -1;
    clEnqueueReadBuffer(q_, c, CL_TRUE, 0, 4, &first, 0, nullptr, nullptr);
    EXPECT_EQ(first, 0);
    clReleaseMemObject(c);
  }
  // __local sizes: the same kernel with two work-group sizes and scratch sizes.
  std::vector<int> ones(64, 1);
  cl_mem in = Buffer(256, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, ones.data());
  cl_mem sums = Buffer(64);
  clSetKernelArg(kl, 0, sizeof(cl_mem), &in);
  clSetKernelArg(kl, 1, sizeof(cl_mem), &sums);
  for (size_t local : {8, 16, 8}) {
    ASSERT_EQ(clSetKernelArg(kl, 2, local * sizeof(int), nullptr), CL_SUCCESS);
    size_t g = 64;
    ASSERT_EQ(clEnqueueNDRangeKernel(q_, kl, 1, nullptr, &g, &local, 0, nullptr, nullptr), CL_SUCCESS);
    int s0 = 0;
    clEnqueueReadBuffer(q_, sums, CL_TRUE, 0, 4, &s0, 0, nullptr, nullptr);
    EXPECT_EQ(s0, static_cast<int>(local)) << "local size " << local;
  }
  for (cl_mem m : {a, b, in, sums}) clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseKernel(kl);
  clReleaseProgram(p);
}

// The kernels of the burst tests: each launch folds its argument into a[0], so the value read
// back tells whether every launch ran, once, in order.
const char* kChainKernels =
    "__kernel void chain(__global uint* a, uint k) { a[0] = a[0] * 31u + k; }\n"
    "__kernel void twice(__global uint* a) { a[0] = a[0] * 2u + 1u; }\n";

// Bursts of launches (which rgpud may hand to its launch thread, server/scheduler/
// launch_pipe.h) run in the order enqueued, with each launch's own argument values, and the
// commands between them (a read, a write, a copy, a release) keep their places.
TEST_F(Api, BurstsOfLaunchesRunInOrder) {
  cl_program p = Build(kChainKernels);
  cl_kernel step = Kernel(p, "chain");
  cl_kernel twice = Kernel(p, "twice");
  ASSERT_TRUE(step && twice);
  cl_uint zero[2] = {0, 0};
  cl_mem a = Buffer(8, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, zero);
  cl_mem b = Buffer(8, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, zero);
  size_t one = 1;
  cl_uint want_a = 0, want_b = 0, mid = 0, want_mid = 0;
  constexpr cl_uint kLaunches = 3000;
  for (cl_uint i = 0; i < kLaunches; ++i) {
    // Alternate buffers now and then, so the lane also sees memory arguments change.
    const bool on_b = (i / 7) % 3 == 2;
    cl_mem target = on_b ? b : a;
    cl_uint& want = on_b ? want_b : want_a;
    ASSERT_EQ(clSetKernelArg(step, 0, sizeof(cl_mem), &target), CL_SUCCESS);
    ASSERT_EQ(clSetKernelArg(step, 1, sizeof(cl_uint), &i), CL_SUCCESS);
    ASSERT_EQ(clEnqueueNDRangeKernel(q_, step, 1, nullptr, &one, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
    want = want * 31u + i;
    if (i % 5 == 0) {
      ASSERT_EQ(clSetKernelArg(twice, 0, sizeof(cl_mem), &a), CL_SUCCESS);
      ASSERT_EQ(clEnqueueNDRangeKernel(q_, twice, 1, nullptr, &one, nullptr, 0, nullptr, nullptr),
                CL_SUCCESS);
      want_a = want_a * 2u + 1u;
    }
    if (i == kLaunches / 2) {  // a non-blocking read in the middle sees exactly what came before
      ASSERT_EQ(clEnqueueReadBuffer(q_, a, CL_FALSE, 0, 4, &mid, 0, nullptr, nullptr), CL_SUCCESS);
      want_mid = want_a;
    }
    if (i == kLaunches / 3) {  // a write and a copy between launches land in their place
      const cl_uint seven = 7;
      ASSERT_EQ(clEnqueueWriteBuffer(q_, b, CL_FALSE, 0, 4, &seven, 0, nullptr, nullptr),
                CL_SUCCESS);
      ASSERT_EQ(clEnqueueCopyBuffer(q_, b, a, 0, 4, 4, 0, nullptr, nullptr), CL_SUCCESS);
      want_b = 7;
    }
  }
  cl_uint got[2] = {}, got_b[2] = {};
  ASSERT_EQ(clEnqueueReadBuffer(q_, a, CL_TRUE, 0, 8, got, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(q_, b, CL_TRUE, 0, 8, got_b, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(mid, want_mid);
  EXPECT_EQ(got[0], want_a);
  EXPECT_EQ(got[1], 7u);  // the copy
  EXPECT_EQ(got_b[0], want_b);
  // A kernel released right after a burst of its launches: they still run, all of them.
  cl_uint before = got[0];
  clSetKernelArg(twice, 0, sizeof(cl_mem), &a);
  for (int i = 0; i < 200; ++i)
    ASSERT_EQ(clEnqueueNDRangeKernel(q_, twice, 1, nullptr, &one, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
  clReleaseKernel(twice);
  for (int i = 0; i < 200; ++i) before = before * 2u + 1u;
  ASSERT_EQ(clEnqueueReadBuffer(q_, a, CL_TRUE, 0, 4, got, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(got[0], before);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(step);
  clReleaseProgram(p);
}

// Bursts of launches that each ask for an event, as pyopencl's and CLBlast's do (rgpud's
// launch thread makes those events too, and the session enters them later): released at
// once or kept, waited for in the middle of the burst, queried, named in a later launch's
// wait list; the launches run in order, and every kept event ends complete.
void Api::BurstWithEvents(cl_command_queue q, bool keep_most) {
  cl_program p = Build(kChainKernels);
  cl_kernel step = Kernel(p, "chain");
  cl_kernel twice = Kernel(p, "twice");
  ASSERT_TRUE(step && twice);
  cl_uint zero = 0;
  cl_mem a = Buffer(4, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &zero);
  ASSERT_EQ(clSetKernelArg(step, 0, sizeof(cl_mem), &a), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(twice, 0, sizeof(cl_mem), &a), CL_SUCCESS);
  size_t one = 1;
  cl_uint want = 0;
  std::vector<cl_event> kept;
  constexpr cl_uint kLaunches = 2000;
  kept.reserve(kLaunches + 1);
  for (cl_uint i = 0; i < kLaunches; ++i) {
    ASSERT_EQ(clSetKernelArg(step, 1, sizeof(cl_uint), &i), CL_SUCCESS);
    cl_event e = nullptr;
    ASSERT_EQ(clEnqueueNDRangeKernel(q, step, 1, nullptr, &one, nullptr, 0, nullptr, &e),
              CL_SUCCESS);
    ASSERT_NE(e, nullptr);
    want = want * 31u + i;
    if (keep_most ? i % 29 != 3 : i % 97 == 0)
      kept.push_back(e);
    else
      ASSERT_EQ(clReleaseEvent(e), CL_SUCCESS);  // pyopencl's discarded results
    if (i == 700) {  // a kept event asked about in the middle of the burst
      cl_command_type type = 0;
      ASSERT_EQ(clGetEventInfo(kept.back(), CL_EVENT_COMMAND_TYPE, sizeof(type), &type, nullptr),
                CL_SUCCESS);
      EXPECT_EQ(type, static_cast<cl_command_type>(CL_COMMAND_NDRANGE_KERNEL));
      cl_int status = -1;
      ASSERT_EQ(clGetEventInfo(kept.back(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                               &status, nullptr),
                CL_SUCCESS);
      EXPECT_GE(status, CL_COMPLETE);
    }
    if (i == 1000) {  // waited for in the middle of the burst
      ASSERT_EQ(clWaitForEvents(1, &kept.back()), CL_SUCCESS);
      cl_int status = -1;
      clGetEventInfo(kept.back(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                     nullptr);
      EXPECT_EQ(status, CL_COMPLETE);
    }
    if (i == 1500) {  // a later launch waits for one made moments ago
      cl_event after = nullptr;
      ASSERT_EQ(clEnqueueNDRangeKernel(q, twice, 1, nullptr, &one, nullptr, 1, &kept.back(),
                                       &after),
                CL_SUCCESS);
      want = want * 2u + 1u;
      kept.push_back(after);
    }
  }
  ASSERT_EQ(clWaitForEvents(static_cast<cl_uint>(kept.size()), kept.data()), CL_SUCCESS);
  for (cl_event e : kept) {
    cl_int status = -1;
    ASSERT_EQ(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                             nullptr),
              CL_SUCCESS);
    EXPECT_EQ(status, CL_COMPLETE);
    clReleaseEvent(e);
  }
  cl_uint got = 0;
  ASSERT_EQ(clEnqueueReadBuffer(q, a, CL_TRUE, 0, 4, &got, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(got, want);
  clReleaseMemObject(a);
  clReleaseKernel(twice);
  clReleaseKernel(step);
  clReleaseProgram(p);
}

TEST_F(Api, BurstsOfLaunchesWithEventsRunInOrder) { BurstWithEvents(q_, false); }

// A closed loop as a best-effort tenant runs one (the sharing benchmark's): each launch asks
// for an event and is flushed, then the loop waits for the launch `depth` before it; now and
// then for the one just made. Under fair with a second tenant about, its launches are held
// and go on the device at once or behind gates; such a loop starts rgpud's launch thread,
// and the held launches that go at once go through it (launch_thread_closed_loop_fair). The
// launches run in order, each waited event is complete, and so is everything at the end.
TEST_F(Api, ClosedLoopsOfLaunchesRunInOrder) {
  cl_program p = Build(kChainKernels);
  cl_kernel step = Kernel(p, "chain");
  ASSERT_TRUE(step);
  cl_uint zero = 0;
  cl_mem a = Buffer(4, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &zero);
  ASSERT_EQ(clSetKernelArg(step, 0, sizeof(cl_mem), &a), CL_SUCCESS);
  size_t one = 1;
  cl_uint want = 0;
  cl_uint i = 0;
  cl_command_queue q = q_;
  auto launch = [&](cl_event* e) {
    ASSERT_EQ(clSetKernelArg(step, 1, sizeof(cl_uint), &i), CL_SUCCESS);
    ASSERT_EQ(clEnqueueNDRangeKernel(q, step, 1, nullptr, &one, nullptr, 0, nullptr, e),
              CL_SUCCESS);
    want = want * 31u + i++;
  };
  // On the fixture's queue (with profiling), then on one without (which has an unprofiled
  // twin in rgpud for launches whose events only the application reads).
  cl_int err = CL_SUCCESS;
  cl_command_queue plain = clCreateCommandQueue(ctx_, device_, 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  for (auto [queue, depth] : {std::pair{q_, size_t{2}}, std::pair{q_, size_t{3}},
                              std::pair{plain, size_t{2}}, std::pair{plain, size_t{3}}}) {
    q = queue;
    std::deque<cl_event> in_flight;
    for (int n = 0; n < 1500; ++n) {
      cl_event e = nullptr;
      launch(&e);
      ASSERT_NE(e, nullptr);
      ASSERT_EQ(clFlush(q), CL_SUCCESS);
      in_flight.push_back(e);
      // Mostly the oldest, whose launch the launch thread has long made; every 101st the
      // newest, which it may still be making.
      const bool newest = n % 101 == 100;
      while (in_flight.size() >= depth || (newest && !in_flight.empty())) {
        cl_event w = newest ? in_flight.back() : in_flight.front();
        ASSERT_EQ(clWaitForEvents(1, &w), CL_SUCCESS);
        cl_int status = -1;
        ASSERT_EQ(clGetEventInfo(w, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                                 nullptr),
                  CL_SUCCESS);
        EXPECT_EQ(status, CL_COMPLETE);
        if (newest) {  // everything before it is complete too (in order)
          for (cl_event x : in_flight) clReleaseEvent(x);
          in_flight.clear();
          break;
        }
        clReleaseEvent(w);
        in_flight.pop_front();
      }
    }
    for (cl_event x : in_flight) {
      ASSERT_EQ(clWaitForEvents(1, &x), CL_SUCCESS);
      clReleaseEvent(x);
    }
    cl_uint got = 0;
    ASSERT_EQ(clEnqueueReadBuffer(q, a, CL_TRUE, 0, 4, &got, 0, nullptr, nullptr), CL_SUCCESS);
    EXPECT_EQ(got, want) << "depth " << depth << (q == plain ? ", without profiling" : "");
  }
  clReleaseCommandQueue(plain);
  clReleaseMemObject(a);
  clReleaseKernel(step);
  clReleaseProgram(p);
}

// The same with most events kept, on a queue without profiling: rgpud puts those launches on
// a twin of the queue without profiling (server/scheduler/launch_pipe.h, "Twins") and the
// others back on the queue, ordered across the two.
TEST_F(Api, BurstsOfLaunchesWithKeptEventsRunInOrderWithoutProfiling) {
  cl_int err;
  cl_command_queue q = clCreateCommandQueue(ctx_, device_, 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  BurstWithEvents(q, true);
  clReleaseCommandQueue(q);
}

TEST_F(Api, KernelErrorsAreTheNativeOnes) {
  cl_program p = Build(kKernels);
  cl_int err;
  EXPECT_EQ(clCreateKernel(p, "no_such_kernel", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_KERNEL_NAME);
  cl_kernel k = clCreateKernel(p, "fill_ids", &err);
  int x = 1;
  EXPECT_EQ(clSetKernelArg(k, 5, sizeof(int), &x), CL_INVALID_ARG_INDEX);
  size_t global = 64, local = 48;
  EXPECT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr), CL_INVALID_KERNEL_ARGS);
  cl_mem out = Buffer(256);
  clSetKernelArg(k, 0, sizeof(cl_mem), &out);
  clSetKernelArg(k, 1, sizeof(int), &x);
  EXPECT_EQ(clEnqueueNDRangeKernel(q_, k, 0, nullptr, &global, nullptr, 0, nullptr, nullptr), CL_INVALID_WORK_DIMENSION);
  EXPECT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &global, &local, 0, nullptr, nullptr), CL_INVALID_WORK_GROUP_SIZE);
  size_t info = 0;
  EXPECT_EQ(clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof(info), &info, nullptr), CL_SUCCESS);
  EXPECT_GT(info, 0u);
  cl_uint nargs = 0;
  clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, nullptr);
  EXPECT_EQ(nargs, 2u);
  char fname[64] = {0};
  clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof(fname), fname, nullptr);
  EXPECT_STREQ(fname, "fill_ids");
  size_t nk = 0;
  EXPECT_EQ(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof(nk), &nk, nullptr), CL_SUCCESS);
  EXPECT_EQ(nk, 6u);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

TEST_F(Api, BuildFailureHasALog) {
  const char* bad = "__kernel void broken(__global int* x) { x[0] = undefined_thing; }";
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx_, 1, &bad, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(clBuildProgram(p, 1, &device_, "", nullptr, nullptr), CL_BUILD_PROGRAM_FAILURE);
  size_t len = 0;
  ASSERT_EQ(clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &len), CL_SUCCESS);
  std::string log(len, '\0');
  clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, len, log.data(), nullptr);
  EXPECT_NE(log.find("undefined_thing"), std::string::npos) << log;
  cl_build_status st;
  clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_STATUS, sizeof(st), &st, nullptr);
  EXPECT_EQ(st, CL_BUILD_ERROR);
  EXPECT_EQ(clCreateKernel(p, "broken", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_PROGRAM_EXECUTABLE);
  clReleaseProgram(p);
}

TEST_F(Api, ProgramFromBinaryAndCompileLink) {
  cl_program p = Build(kKernels);
  size_t bsize = 0;
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(bsize), &bsize, nullptr), CL_SUCCESS);
  ASSERT_GT(bsize, 0u);
  std::vector<unsigned char> bin(bsize);
  unsigned char* ptr = bin.data();
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr), CL_SUCCESS);
  const unsigned char* cptr = bin.data();
  cl_int status = 1, err;
  cl_program pb = clCreateProgramWithBinary(ctx_, 1, &device_, &bsize, &cptr, &status, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(status, CL_SUCCESS);
  ASSERT_EQ(clBuildProgram(pb, 1, &device_, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel k = clCreateKernel(pb, "add_one", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  std::vector<int> v(32, 41);
  cl_mem m = Buffer(128, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, v.data());
  clSetKernelArg(k, 0, sizeof(cl_mem), &m);
  size_t g = 32;
  clEnqueueNDRangeKernel(q_, k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr);
  clEnqueueReadBuffer(q_, m, CL_TRUE, 0, 128, v.data(), 0, nullptr, nullptr);
  EXPECT_EQ(v[31], 42);
  clReleaseKernel(k);
  clReleaseProgram(pb);

  const char* lib = "int twice(int x) { return 2 * x; }";
  const char* main_src = "int twice(int x);\n__kernel void k(__global int* a) { a[0] = twice(a[0]); }";
  cl_program pl = clCreateProgramWithSource(ctx_, 1, &lib, nullptr, &err);
  cl_program pm = clCreateProgramWithSource(ctx_, 1, &main_src, nullptr, &err);
  ASSERT_EQ(clCompileProgram(pl, 1, &device_, "", 0, nullptr, nullptr, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clCompileProgram(pm, 1, &device_, "", 0, nullptr, nullptr, nullptr, nullptr), CL_SUCCESS);
  cl_program both[2] = {pm, pl};
  cl_program linked = clLinkProgram(ctx_, 1, &device_, "", 2, both, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_kernel lk = clCreateKernel(linked, "k", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  int val = 21;
  cl_mem one = Buffer(4, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &val);
  clSetKernelArg(lk, 0, sizeof(cl_mem), &one);
  clEnqueueTask(q_, lk, 0, nullptr, nullptr);
  clEnqueueReadBuffer(q_, one, CL_TRUE, 0, 4, &val, 0, nullptr, nullptr);
  EXPECT_EQ(val, 42);
  clReleaseKernel(lk);
  for (cl_program x : {linked, pm, pl, p}) clReleaseProgram(x);
  clReleaseMemObject(m);
  clReleaseMemObject(one);
}

void CL_CALLBACK CountCallback(cl_event, cl_int status, void* data) {
  if (status == CL_COMPLETE) static_cast<std::atomic<int>*>(data)->fetch_add(1);
}

TEST_F(Api, EventsAcrossQueuesUserEventsCallbacksProfiling) {
  cl_program p = Build(kKernels);
  cl_int err;
  cl_kernel k = clCreateKernel(p, "add_one", &err);
  std::vector<int> zeros(64, 0);
  cl_mem m = Buffer(256, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, zeros.data());
  clSetKernelArg(k, 0, sizeof(cl_mem), &m);
  cl_command_queue q2 = clCreateCommandQueue(ctx_, device_, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_event gate = clCreateUserEvent(ctx_, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  size_t g = 64;
  cl_event first, second, marker;
  ASSERT_EQ(clEnqueueNDRangeKernel(q2, k, 1, nullptr, &g, nullptr, 1, &gate, &first), CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &g, nullptr, 1, &first, &second), CL_SUCCESS);
  std::atomic<int> called{0};
  ASSERT_EQ(clSetEventCallback(second, CL_COMPLETE, CountCallback, &called), CL_SUCCESS);
  cl_int st = 0;
  clGetEventInfo(first, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr);
  EXPECT_GT(st, CL_COMPLETE);  // held back by the user event
  EXPECT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  EXPECT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_INVALID_OPERATION);
  ASSERT_EQ(clEnqueueMarkerWithWaitList(q_, 1, &second, &marker), CL_SUCCESS);
  ASSERT_EQ(clWaitForEvents(1, &marker), CL_SUCCESS);
  std::vector<int> v(64);
  clEnqueueReadBuffer(q_, m, CL_TRUE, 0, 256, v.data(), 0, nullptr, nullptr);
  EXPECT_EQ(v[0], 2);
  clGetEventInfo(second, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr);
  EXPECT_EQ(st, CL_COMPLETE);
  cl_ulong start = 0, end = 0;
  EXPECT_EQ(clGetEventProfilingInfo(second, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr), CL_SUCCESS);
  EXPECT_EQ(clGetEventProfilingInfo(second, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr), CL_SUCCESS);
  EXPECT_LE(start, end);
  EXPECT_EQ(clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr),
            CL_PROFILING_INFO_NOT_AVAILABLE);  // q2 has no profiling
  cl_command_type type;
  clGetEventInfo(second, CL_EVENT_COMMAND_TYPE, sizeof(type), &type, nullptr);
  EXPECT_EQ(type, cl_command_type(CL_COMMAND_NDRANGE_KERNEL));
  for (int i = 0; i < 200 && called.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(called.load(), 1);
  ASSERT_EQ(clEnqueueBarrierWithWaitList(q2, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(clFinish(q2), CL_SUCCESS);
  for (cl_event e : {gate, first, second, marker}) clReleaseEvent(e);
  clReleaseCommandQueue(q2);
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

// Commands queued without any call that waits (or clFlush) still reach the device: a lone
// one, a burst larger than one gathering, and a lone one again after a call that waited wrote
// everything out itself. The only sign is the completion callback, which rgpud sends when
// the command ran.
TEST_F(Api, QueuedCommandsGoOutWithoutAFlush) {
  cl_program p = Build(kKernels);
  cl_int err;
  cl_kernel k = clCreateKernel(p, "add_one", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  int zero = 0;
  cl_mem m = Buffer(sizeof zero, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &zero);
  clSetKernelArg(k, 0, sizeof(cl_mem), &m);
  const size_t g = 1;
  int expected = 0;
  auto launch_and_wait_for_callback = [&](int launches, const char* what) {
    cl_event last = nullptr;
    for (int i = 0; i < launches; ++i)
      ASSERT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &g, nullptr, 0, nullptr,
                                       i + 1 == launches ? &last : nullptr),
                CL_SUCCESS);
    expected += launches;
    std::atomic<int> called{0};
    ASSERT_EQ(clSetEventCallback(last, CL_COMPLETE, CountCallback, &called), CL_SUCCESS);
    for (int i = 0; i < 1000 && called.load() == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(called.load(), 1) << what << ": not run 5 s after it was queued";
    clReleaseEvent(last);
  };
  launch_and_wait_for_callback(1, "a lone launch");
  launch_and_wait_for_callback(5000, "a burst of 5000 launches");
  int got = -1;
  ASSERT_EQ(clEnqueueReadBuffer(q_, m, CL_TRUE, 0, sizeof got, &got, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(got, expected);
  // The blocking read above wrote out what was queued and stood the flusher down.
  launch_and_wait_for_callback(1, "a lone launch after a blocking read");
  ASSERT_EQ(clEnqueueReadBuffer(q_, m, CL_TRUE, 0, sizeof got, &got, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(got, expected);
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

TEST_F(Api, FailedUserEventFailsItsDependents) {
  cl_int err;
  cl_event gate = clCreateUserEvent(ctx_, &err);
  cl_event after;
  ASSERT_EQ(clEnqueueMarkerWithWaitList(q_, 1, &gate, &after), CL_SUCCESS);
  ASSERT_EQ(clSetUserEventStatus(gate, -1234), CL_SUCCESS);
  EXPECT_EQ(clWaitForEvents(1, &after), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  cl_int st = 0;
  clGetEventInfo(after, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr);
  EXPECT_LT(st, 0);
  clReleaseEvent(after);
  clReleaseEvent(gate);
}

// One thread's own queue, `add_one` kernel of `p` and buffer (made from `init`, the kernel's
// argument) in a shared context; released when it goes.
struct ThreadQueue {
  cl_command_queue q;
  cl_kernel k;
  cl_mem m;
  ThreadQueue(cl_context ctx, cl_device_id device, cl_program p, std::vector<int> init) {
    cl_int err;
    q = clCreateCommandQueue(ctx, device, 0, &err);
    k = clCreateKernel(p, "add_one", &err);
    m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.size() * sizeof(int),
                       init.data(), &err);
    clSetKernelArg(k, 0, sizeof(cl_mem), &m);
  }
  ~ThreadQueue() {
    clReleaseMemObject(m);
    clReleaseKernel(k);
    clReleaseCommandQueue(q);
  }
  ThreadQueue(const ThreadQueue&) = delete;
  ThreadQueue& operator=(const ThreadQueue&) = delete;
};

TEST_F(Api, ThreadsShareAContext) {
  cl_program p = Build(kKernels);
  const int threads = 4, rounds = 50;
  std::vector<std::thread> ts;
  std::atomic<int> bad{0};
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::vector<int> v(256, t);
      ThreadQueue tq(ctx_, device_, p, v);
      size_t g = 256;
      for (int r = 0; r < rounds; ++r)
        clEnqueueNDRangeKernel(tq.q, tq.k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr);
      clEnqueueReadBuffer(tq.q, tq.m, CL_TRUE, 0, 1024, v.data(), 0, nullptr, nullptr);
      for (int x : v)
        if (x != t + rounds) bad++;
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  clReleaseProgram(p);
}

// Several threads in synchronous calls on one connection at once, each waiting for its own
// answer (over TCP on a small host each reads it from the socket itself, the receiver thread
// standing aside: Connection::SpinReceiving): every answer reaches its own caller.
TEST_F(Api, ThreadsWaitingAtOnceEachGetTheirOwnAnswer) {
  cl_program p = Build(kKernels);
  const int threads = 4, rounds = 150;
  std::vector<std::thread> ts;
  std::atomic<int> bad{0};
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      ThreadQueue tq(ctx_, device_, p, {1000 * t});
      size_t g = 1;
      for (int r = 1; r <= rounds; ++r) {
        clEnqueueNDRangeKernel(tq.q, tq.k, 1, nullptr, &g, nullptr, 0, nullptr, nullptr);
        if (r % 2) {
          if (clFinish(tq.q) != CL_SUCCESS) bad++;
        }
        int got = -1;
        if (clEnqueueReadBuffer(tq.q, tq.m, CL_TRUE, 0, sizeof(got), &got, 0, nullptr, nullptr) !=
                CL_SUCCESS ||
            got != 1000 * t + r)
          bad++;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  clReleaseProgram(p);
}

// A wait in one thread leaves the connection's other threads served: natively another thread's
// calls go on while one sits in clFinish. Through rgpud the session's reader waits in the
// driver for a blocking wait; a wait that lasts hands the session's other frames to its aside
// thread (Session::Park), and with --inline-waits=0 the reader never waits
// (api_rgpu_unix_waits_apart). One thread finishes a queue whose kernel spins for a while;
// meanwhile the main thread makes a call that is a round trip to rgpud (a context's first
// query of image formats), which must return before the finish does.
TEST_F(Api, AWaitInOneThreadLeavesTheOthersServed) {
  const char* src = R"CL(
__kernel void spin(__global float* out, long n) {
  float x = out[0];
  for (long i = 0; i < n; ++i) x = x * 1.0000001f + 1e-7f;
  out[0] = x;
}
)CL";
  cl_program p = Build(src);
  cl_kernel k = Kernel(p, "spin");
  float zero = 0;
  cl_mem m = Buffer(sizeof(float), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &zero);
  // About a second on one CPU core (a dependent chain: no vectorising it away), a few on a busy
  // CI host; the round trip beside it takes milliseconds.
  const cl_long n = 400'000'000;
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(cl_mem), &m), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(k, 1, sizeof(n), &n), CL_SUCCESS);
  size_t one = 1;
  ASSERT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &one, &one, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clFlush(q_), CL_SUCCESS);
  std::atomic<bool> finished{false};
  std::thread waiter([&] {
    EXPECT_EQ(clFinish(q_), CL_SUCCESS);
    finished = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the waiter is in clFinish
  cl_uint formats = 0;
  const cl_int err = clGetSupportedImageFormats(ctx_, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0,
                                                nullptr, &formats);
  const bool before = !finished.load();
  waiter.join();
  EXPECT_TRUE(err == CL_SUCCESS || err == CL_INVALID_VALUE) << err;
  EXPECT_TRUE(before) << "the other thread's call was answered only after the wait";
  clReleaseMemObject(m);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

// A kernel that ends when another thread of the client writes a flag (a persistent kernel's
// stop, say): one thread waits for it, in clFinish, in clWaitForEvents or in a blocking read
// behind it, while the other writes the flag on a second queue 100 ms later. Natively the
// kernel sees the write and ends; through rgpud the write must reach the device while the
// first thread's wait is in the driver (Session::Park). The kernel gives up after about
// 2^31 polls (seconds), and says how it ended.
TEST_F(Api, AKernelEndsOnAnotherThreadsWrite) {
  const char* src = R"CL(
__kernel void wait_flag(volatile __global int* flag, __global int* out) {
  uint i = 0;
  while (flag[0] == 0 && i < 0x80000000u) ++i;
  out[0] = flag[0] != 0 ? 1 : 2;
}
)CL";
  cl_program p = Build(src);
  cl_kernel k = Kernel(p, "wait_flag");
  cl_int err;
  cl_command_queue q2 = clCreateCommandQueue(ctx_, device_, 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  for (int how = 0; how < 3; ++how) {
    SCOPED_TRACE(how == 0 ? "clFinish" : how == 1 ? "clWaitForEvents" : "blocking read");
    int zero = 0;
    cl_mem flag = Buffer(sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &zero);
    cl_mem out = Buffer(sizeof(int), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &zero);
    ASSERT_EQ(clSetKernelArg(k, 0, sizeof(cl_mem), &flag), CL_SUCCESS);
    ASSERT_EQ(clSetKernelArg(k, 1, sizeof(cl_mem), &out), CL_SUCCESS);
    size_t one = 1;
    cl_event done = nullptr;
    ASSERT_EQ(clEnqueueNDRangeKernel(q_, k, 1, nullptr, &one, &one, 0, nullptr, &done), CL_SUCCESS);
    ASSERT_EQ(clFlush(q_), CL_SUCCESS);
    const auto start = std::chrono::steady_clock::now();
    int ended = 0;
    std::thread waiter([&] {
      if (how == 0) EXPECT_EQ(clFinish(q_), CL_SUCCESS);
      if (how == 1) EXPECT_EQ(clWaitForEvents(1, &done), CL_SUCCESS);
      if (how == 2)
        EXPECT_EQ(clEnqueueReadBuffer(q_, out, CL_TRUE, 0, sizeof(int), &ended, 0, nullptr,
                                      nullptr),
                  CL_SUCCESS);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // Objects made and released meanwhile (rgpud releases them once the wait's frame is done).
    cl_mem scratch = Buffer(64, CL_MEM_READ_WRITE, nullptr);
    EXPECT_EQ(clReleaseMemObject(scratch), CL_SUCCESS);
    const int one_flag = 1;
    EXPECT_EQ(clEnqueueWriteBuffer(q2, flag, CL_TRUE, 0, sizeof(int), &one_flag, 0, nullptr,
                                   nullptr),
              CL_SUCCESS);
    waiter.join();
    const double waited_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (how != 2)
      EXPECT_EQ(clEnqueueReadBuffer(q_, out, CL_TRUE, 0, sizeof(int), &ended, 0, nullptr, nullptr),
                CL_SUCCESS);
    EXPECT_EQ(ended, 1) << "the kernel never saw the other thread's write (waited " << waited_ms
                        << " ms)";
    clReleaseEvent(done);
    clReleaseMemObject(flag);
    clReleaseMemObject(out);
  }
  clReleaseCommandQueue(q2);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

}  // namespace
