// Bulk transfers through a client's shared region (docs/protocol.md, "Shared memory"), against
// a real rgpud (tests/with_rgpud.sh) through the real ICD loader:
//
// - Exactness: writes and reads of sizes around the slot size (4 MiB), at offsets, blocking
//   and not, checked byte for byte, also against data the device made itself. The same
//   tests run over the shared region (Unix socket), with RGPU_SHM=0, with a server that takes
//   no region (--max-shared-bytes 0) and over TCP; tests/shared_test.sh then checks that the
//   daemon's log shows the region in use exactly on the first.
// - Hostile requests over a raw connection: descriptors that are not sealed memfds, too
//   small or too large, ranges outside the region, the shared flag without a region. Each
//   gets an error (a refused region: an error reply, the session goes on; a bad range: the
//   session ends with a Goodbye) and the daemon serves the next connection.
#include <CL/cl.h>
#include <fcntl.h>
#include <poll.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proto/ring.h"
#include "proto/shared_region.h"
#include "proto/transport.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace {

using namespace rgpu;
constexpr size_t kSlot = size_t{4} << 20;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct Cl {
  cl_context ctx = nullptr;
  cl_command_queue q = nullptr;
  cl_device_id dev = nullptr;
  Cl() {
    cl_platform_id ps[8];
    cl_uint n = 0;
    clGetPlatformIDs(8, ps, &n);
    for (cl_uint i = 0; i < n; ++i) {
      char name[64] = {0};
      clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof(name), name, nullptr);
      if (std::string(name) == "rgpu" && clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) == CL_SUCCESS)
        break;
      dev = nullptr;
    }
    if (!dev) return;
    cl_int err;
    ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    q = clCreateCommandQueue(ctx, dev, 0, &err);
  }
  ~Cl() {
    if (q) clReleaseCommandQueue(q);
    if (ctx) clReleaseContext(ctx);
  }
};

std::vector<uint8_t> Random(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Sizes at the slot's edges, one that needs every write slot twice, and small ones that take
// the socket whatever the mode.
const size_t kSizes[] = {1, 4096, 65536, kSlot - 1, kSlot, kSlot + 1, 3 * kSlot + 7, 9 * kSlot + 5};

TEST(Shared, WritesAndReadsAreExactAtSlotEdges) {
  Cl cl;
  ASSERT_NE(cl.dev, nullptr) << "no rgpu device";
  for (size_t size : kSizes) {
    for (size_t offset : {size_t{0}, size_t{13}}) {
      SCOPED_TRACE("size " + std::to_string(size) + " offset " + std::to_string(offset));
      cl_int err;
      cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, size + offset + 64, nullptr, &err);
      ASSERT_EQ(err, CL_SUCCESS);
      const auto data = Random(size, static_cast<uint32_t>(size + offset));
      for (cl_bool blocking : {CL_TRUE, CL_FALSE}) {
        ASSERT_EQ(clEnqueueWriteBuffer(cl.q, m, blocking, offset, size, data.data(), 0, nullptr, nullptr), CL_SUCCESS);
        std::vector<uint8_t> back(size + 2, 0xee);
        cl_event ev = nullptr;
        ASSERT_EQ(clEnqueueReadBuffer(cl.q, m, blocking, offset, size, back.data() + 1, 0, nullptr, &ev), CL_SUCCESS);
        ASSERT_EQ(clWaitForEvents(1, &ev), CL_SUCCESS);
        cl_int status = 1;
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
        EXPECT_EQ(status, CL_COMPLETE);
        clReleaseEvent(ev);
        EXPECT_EQ(back[0], 0xee) << "byte before the read's destination written";
        EXPECT_EQ(back[size + 1], 0xee) << "byte after the read's destination written";
        EXPECT_EQ(0, std::memcmp(back.data() + 1, data.data(), size));
      }
      clReleaseMemObject(m);
    }
  }
}

// The device's own data comes back exactly (a fill, then a copy on the device of what a
// shared write put there), so a path that only echoed the client's bytes would fail.
TEST(Shared, DeviceDataComesBackExactly) {
  Cl cl;
  ASSERT_NE(cl.dev, nullptr);
  const size_t size = 3 * kSlot + 7;
  cl_int err;
  cl_mem a = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
  cl_mem b = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
  const uint8_t pattern = 0xa7;
  ASSERT_EQ(clEnqueueFillBuffer(cl.q, a, &pattern, 1, 0, size, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<uint8_t> back(size);
  ASSERT_EQ(clEnqueueReadBuffer(cl.q, a, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(std::vector<uint8_t>(size, pattern), back);
  const auto data = Random(size, 7);
  ASSERT_EQ(clEnqueueWriteBuffer(cl.q, a, CL_FALSE, 0, size, data.data(), 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueCopyBuffer(cl.q, a, b, 0, 0, size, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(cl.q, b, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(data, back);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
}

// Non-blocking reads that fit in the read slots take the region too (their data is copied out
// when the last reply comes): each keeps its place among the queue's commands, and the
// next one waits for the slots instead of overwriting them.
TEST(Shared, NonBlockingReadsKeepTheirPlaceInTheQueue) {
  Cl cl;
  ASSERT_NE(cl.dev, nullptr);
  const size_t size = 2 * kSlot + 3;
  cl_int err;
  cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  std::vector<std::vector<uint8_t>> wrote, read(4, std::vector<uint8_t>(size, 0));
  std::vector<cl_event> events;
  for (uint32_t round = 0; round < 4; ++round) {
    wrote.push_back(Random(size, 100 + round));
    ASSERT_EQ(clEnqueueWriteBuffer(cl.q, m, CL_FALSE, 0, size, wrote.back().data(), 0, nullptr, nullptr), CL_SUCCESS);
    cl_event ev = nullptr;
    ASSERT_EQ(clEnqueueReadBuffer(cl.q, m, CL_FALSE, 0, size, read[round].data(), 0, nullptr, &ev), CL_SUCCESS);
    events.push_back(ev);
  }
  ASSERT_EQ(clFinish(cl.q), CL_SUCCESS);
  ASSERT_EQ(clWaitForEvents(static_cast<cl_uint>(events.size()), events.data()), CL_SUCCESS);
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(wrote[i], read[i]) << "read " << i;
    clReleaseEvent(events[i]);
  }
  clReleaseMemObject(m);
}

// Non-blocking reads that fit in the read half share it: each takes a range of its own, so
// many are in flight at once. Reads of mixed sizes (more than the half holds in all, so that
// ranges are waited for and reused) from two queues at once, each into memory of its own,
// must each bring back exactly their buffer's bytes; and on one queue, a later read into the
// same memory must leave its own bytes there.
TEST(Shared, NonBlockingReadsInFlightTogetherStayApart) {
  Cl cl;
  ASSERT_NE(cl.dev, nullptr);
  const std::vector<size_t> sizes = {64 << 10, (64 << 10) + 1, 300 << 10, 1 << 20, 3 * kSlot / 2,
                                     5 << 20,  kSlot,          100 << 10, 2 << 20, (1 << 20) - 7};
  std::atomic<int> bad{0};
  auto reader = [&](uint32_t seed) {
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(cl.ctx, cl.dev, 0, &err);
    std::vector<cl_mem> bufs;
    std::vector<std::vector<uint8_t>> data, back;
    for (size_t i = 0; i < sizes.size(); ++i) {
      data.push_back(Random(sizes[i], seed + static_cast<uint32_t>(i)));
      bufs.push_back(clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizes[i],
                                    data[i].data(), &err));
      if (err != CL_SUCCESS) ++bad;
    }
    for (int round = 0; round < 3; ++round) {
      back.assign(sizes.size(), {});
      for (size_t i = 0; i < sizes.size(); ++i) {
        back[i].assign(sizes[i], 0);
        if (clEnqueueReadBuffer(q, bufs[i], CL_FALSE, 0, sizes[i], back[i].data(), 0, nullptr,
                                nullptr) != CL_SUCCESS)
          ++bad;
      }
      if (clFinish(q) != CL_SUCCESS) ++bad;
      for (size_t i = 0; i < sizes.size(); ++i)
        if (back[i] != data[i]) ++bad;
    }
    // Two reads into the same memory, in order: the second one's bytes stay.
    const size_t n = 200 << 10;
    std::vector<uint8_t> into(n, 0);
    for (int round = 0; round < 20; ++round) {
      clEnqueueReadBuffer(q, bufs[2], CL_FALSE, 0, n, into.data(), 0, nullptr, nullptr);
      clEnqueueReadBuffer(q, bufs[8], CL_FALSE, 0, n, into.data(), 0, nullptr, nullptr);
      clFinish(q);
      if (!std::equal(into.begin(), into.end(), data[8].begin())) ++bad;
    }
    for (cl_mem m : bufs) clReleaseMemObject(m);
    clReleaseCommandQueue(q);
  };
  std::thread other(reader, 1000);
  reader(2000);
  other.join();
  EXPECT_EQ(bad.load(), 0);
}

// A write and a blocking read that wait on a user event another thread sets later: neither
// may hang on the shared slots.
TEST(Shared, TransfersGatedOnAUserEventFinish) {
  Cl cl;
  ASSERT_NE(cl.dev, nullptr);
  const size_t size = 6 * kSlot + 3;
  cl_int err;
  cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
  cl_event gate = clCreateUserEvent(cl.ctx, &err);
  const auto data = Random(size, 11);
  ASSERT_EQ(clEnqueueWriteBuffer(cl.q, m, CL_FALSE, 0, size, data.data(), 1, &gate, nullptr), CL_SUCCESS);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    clSetUserEventStatus(gate, CL_COMPLETE);
  });
  std::vector<uint8_t> back(size);
  EXPECT_EQ(clEnqueueReadBuffer(cl.q, m, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr), CL_SUCCESS);
  opener.join();
  EXPECT_EQ(data, back);
  clReleaseEvent(gate);
  clReleaseMemObject(m);
}

// Reads larger than rgpud's window of staged read pieces (32 MiB, Session::PipelinedRead):
// one gated on a user event this thread sets only after the read has returned (rgpud may not
// wait for room then, or it never reads the request that sets the event), then three back to
// back, which do wait for room. Every byte must land where it belongs.
TEST(Shared, ReadsPastTheStagingWindowFinishExactly) {
  Cl cl;
  ASSERT_NE(cl.dev, nullptr);
  const size_t size = (size_t{40} << 20) + 5;
  cl_int err;
  cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const auto data = Random(size, 17);
  ASSERT_EQ(clEnqueueWriteBuffer(cl.q, m, CL_TRUE, 0, size, data.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  cl_event gate = clCreateUserEvent(cl.ctx, &err);
  std::vector<uint8_t> gated(size);
  ASSERT_EQ(clEnqueueReadBuffer(cl.q, m, CL_FALSE, 0, size, gated.data(), 1, &gate, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  std::vector<std::vector<uint8_t>> back(3, std::vector<uint8_t>(size));
  for (auto& b : back)
    ASSERT_EQ(clEnqueueReadBuffer(cl.q, m, CL_FALSE, 0, size, b.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
  ASSERT_EQ(clFinish(cl.q), CL_SUCCESS);
  EXPECT_TRUE(gated == data);
  for (auto& b : back) EXPECT_TRUE(b == data);
  clReleaseEvent(gate);
  clReleaseMemObject(m);
}

// A write larger than all write slots, gated on a user event this same thread sets only after
// the write has returned: rgpud must give the slots back without waiting for the device, or
// the write never returns.
TEST(Shared, AWriteGatedOnThisThreadsUserEventReturns) {
  Cl cl;
  ASSERT_NE(cl.dev, nullptr);
  const size_t size = 7 * kSlot + 1;
  cl_int err;
  cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
  cl_event gate = clCreateUserEvent(cl.ctx, &err);
  const auto data = Random(size, 13);
  ASSERT_EQ(clEnqueueWriteBuffer(cl.q, m, CL_FALSE, 0, size, data.data(), 1, &gate, nullptr), CL_SUCCESS);
  ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  std::vector<uint8_t> back(size);
  ASSERT_EQ(clEnqueueReadBuffer(cl.q, m, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(data, back);
  clReleaseEvent(gate);
  clReleaseMemObject(m);
}

// Several threads, each with its own queue, move data at once through the one region.
// clCreateBuffer with host data: the contents go through the region (from 256 KiB up to one
// slot) or the socket (others), and are the host's as they were when the call returned. Many
// creations in a row take more granules than the write half has, so each must be given back.
TEST(Shared, BuffersMadeFromHostDataAreExact) {
  Cl cl;
  ASSERT_NE(cl.dev, nullptr);
  const size_t sizes[] = {4096,  (256 << 10) - 1, 256 << 10,    (1 << 20) + 3,
                          kSlot, kSlot + 1,       9 * kSlot + 5};
  for (size_t size : sizes) {
    for (cl_mem_flags how : {CL_MEM_COPY_HOST_PTR, CL_MEM_USE_HOST_PTR}) {
      SCOPED_TRACE("size " + std::to_string(size) +
                   (how == CL_MEM_COPY_HOST_PTR ? " copy" : " use"));
      auto host = Random(size, static_cast<uint32_t>(size * 3 + how));
      const auto want = host;
      cl_int err;
      cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE | how, size, host.data(), &err);
      ASSERT_EQ(err, CL_SUCCESS);
      // A copied buffer no longer depends on the host's memory.
      if (how == CL_MEM_COPY_HOST_PTR) std::fill(host.begin(), host.end(), uint8_t{0x5a});
      std::vector<uint8_t> back(size, 0xee);
      ASSERT_EQ(clEnqueueReadBuffer(cl.q, m, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr),
                CL_SUCCESS);
      EXPECT_EQ(0, std::memcmp(back.data(), want.data(), size));
      clReleaseMemObject(m);
    }
  }
  std::vector<cl_mem> many;
  std::vector<std::vector<uint8_t>> contents;
  for (int i = 0; i < 40; ++i) {
    contents.push_back(Random(kSlot / 2 + i, 1000 + i));
    cl_int err;
    many.push_back(clCreateBuffer(cl.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                  contents.back().size(), contents.back().data(), &err));
    ASSERT_EQ(err, CL_SUCCESS);
  }
  for (size_t i = 0; i < many.size(); ++i) {
    std::vector<uint8_t> back(contents[i].size());
    ASSERT_EQ(clEnqueueReadBuffer(cl.q, many[i], CL_TRUE, 0, back.size(), back.data(), 0, nullptr,
                                  nullptr),
              CL_SUCCESS);
    EXPECT_EQ(back, contents[i]) << "buffer " << i;
    clReleaseMemObject(many[i]);
  }
}

TEST(Shared, ThreadsShareTheRegion) {
  Cl cl;
  ASSERT_NE(cl.dev, nullptr);
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      cl_int err;
      cl_command_queue q = clCreateCommandQueue(cl.ctx, cl.dev, 0, &err);
      const size_t size = 2 * kSlot + 1000 * t + 1;
      cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
      for (int round = 0; round < 3; ++round) {
        const auto data = Random(size, 100 * t + round);
        std::vector<uint8_t> back(size);
        if (clEnqueueWriteBuffer(q, m, CL_FALSE, 0, size, data.data(), 0, nullptr, nullptr) != CL_SUCCESS ||
            clEnqueueReadBuffer(q, m, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr) != CL_SUCCESS ||
            back != data)
          ++bad;
      }
      clReleaseMemObject(m);
      clReleaseCommandQueue(q);
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
}

// ---------------------------------------------------------------- hostile requests

// A raw connection to the daemon's Unix socket, after a Hello that asks for shared memory.
class Raw {
 public:
  Raw() {
    const std::string server = Env("RGPU_SERVER");
    if (server.rfind("unix:", 0) != 0) return;
    auto a = proto::ParseAddress(server);
    auto s = proto::Connect(*a, std::chrono::milliseconds(2000));
    if (!s.ok()) return;
    stream_ = std::move(s.value());
    stream_->SetRecvTimeout(std::chrono::milliseconds(5000));
    proto::HelloRequest hello;
    hello.features = proto::kFeatureShared;
    hello.token = Env("RGPU_TOKEN");
    hello.client_name = "shared_test raw";
    Send(proto::Op::Hello, 1, hello.Encode());
    proto::FrameHeader h;
    std::vector<uint8_t> rb;
    if (!stream_->RecvFrame(&h, &rb, 64 << 20).ok()) stream_.reset();
  }
  bool ok() const { return stream_ != nullptr; }
  void Send(proto::Op op, uint64_t tag, const std::vector<uint8_t>& body, uint16_t flags = 0, int fd = -1) {
    uint8_t hdr[proto::kHeaderSize];
    proto::EncodeHeader(proto::FrameHeader{static_cast<uint32_t>(body.size()), static_cast<uint16_t>(op), flags, tag}, hdr);
    iovec iov[2] = {{hdr, sizeof(hdr)}, {const_cast<uint8_t*>(body.data()), body.size()}};
    if (fd >= 0) stream_->SendWithFd(iov, body.empty() ? 1 : 2, fd);
    else stream_->SendAll(iov, body.empty() ? 1 : 2);
  }
  // The status of the next reply; INT32_MIN for a Goodbye or a closed connection.
  int32_t NextStatus(std::string* message = nullptr) {
    proto::FrameHeader h;
    std::vector<uint8_t> rb;
    for (;;) {
      if (!stream_->RecvFrame(&h, &rb, 64 << 20).ok()) return INT32_MIN;
      proto::Reader r(rb.data(), rb.size());
      if (h.op == static_cast<uint16_t>(proto::Op::Goodbye)) {
        proto::GoodbyeNotice bye;
        proto::GoodbyeNotice::Decode(r, &bye);
        if (message) *message = bye.reason;
        return INT32_MIN;
      }
      if (!(h.flags & proto::kFlagReply)) continue;  // notifications
      proto::ReplyStatus head;
      proto::ReplyStatus::Decode(r, &head);
      if (message) *message = head.message;
      return head.code;
    }
  }
  // AttachShared of `size` bytes with `fd` (or none); the reply's status.
  int32_t Attach(uint64_t size, int fd, std::string* message = nullptr) {
    Send(proto::Op::AttachShared, 7, proto::EncodeBody(proto::AttachSharedRequest{size}), 0, fd);
    return NextStatus(message);
  }
  // AttachRing of `size` bytes with `fd` (or none); the reply's status. Accepted, the answer
  // came through the rings, and so does everything after (`map` is this end's mapping of
  // the file, which the ring takes over).
  int32_t AttachRing(uint64_t size, int fd, uint8_t* map, std::string* message = nullptr) {
    Send(proto::Op::AttachRing, 8, proto::EncodeBody(proto::AttachRingRequest{size}), 0, fd);
    auto ring = map ? std::make_unique<proto::Ring>(map, proto::Ring::End::kClient) : nullptr;
    for (int waited = 0; waited < 5000 && !stream_->HasRing(); ++waited) {
      if (ring && ring->Readable() > 0) {
        stream_->UseRing(std::move(ring));
        break;
      }
      pollfd pf{stream_->fd(), POLLIN, 0};
      if (poll(&pf, 1, 1) > 0) break;
    }
    return NextStatus(message);
  }
  // A session that still answers.
  bool Alive() {
    Send(proto::Op::Stats, 9, {});
    return NextStatus() == CL_SUCCESS;
  }

 private:
  std::unique_ptr<proto::Stream> stream_;
};

int SealedMemfd(uint64_t size, int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) {
  const int fd = memfd_create("shared_test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0 || (seals && fcntl(fd, F_ADD_SEALS, seals) != 0)) {
    close(fd);
    return -1;
  }
  return fd;
}

const uint64_t kRegion = proto::kSharedHeader + 2 * kSlot;

#define RAW_OR_SKIP(raw)                                                      \
  Raw raw;                                                                    \
  if (Env("RGPU_SERVER").rfind("unix:", 0) != 0 || Env("RGPUD_ARGS").find("max-shared-bytes 0") != std::string::npos) \
    GTEST_SKIP() << "needs a Unix socket to a server that takes shared regions"; \
  ASSERT_TRUE(raw.ok())

TEST(SharedHostile, RefusedRegionsGetAnErrorAndTheSessionGoesOn) {
  RAW_OR_SKIP(raw);
  std::string why;
  EXPECT_EQ(raw.Attach(kRegion, -1, &why), CL_INVALID_VALUE) << why;  // no descriptor
  char path[] = "/tmp/shared_test.XXXXXX";
  const int file = mkstemp(path);
  ASSERT_GE(file, 0);
  unlink(path);
  ASSERT_EQ(ftruncate(file, static_cast<off_t>(kRegion)), 0);
  EXPECT_EQ(raw.Attach(kRegion, file, &why), CL_INVALID_VALUE) << "a plain file: " << why;
  close(file);
  const int unsealed = SealedMemfd(kRegion, 0);
  EXPECT_EQ(raw.Attach(kRegion, unsealed, &why), CL_INVALID_VALUE) << "unsealed: " << why;
  close(unsealed);
  const int small = SealedMemfd(8192);
  EXPECT_EQ(raw.Attach(kRegion, small, &why), CL_INVALID_VALUE) << "smaller than announced: " << why;
  close(small);
  const int big = SealedMemfd(uint64_t{1} << 30);  // sparse: costs nothing
  EXPECT_EQ(raw.Attach(uint64_t{1} << 30, big, &why), CL_INVALID_VALUE) << "over the cap: " << why;
  close(big);
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  EXPECT_EQ(raw.Attach(kRegion, pipefd[0], &why), CL_INVALID_VALUE) << "a pipe: " << why;
  close(pipefd[0]);
  close(pipefd[1]);
  EXPECT_TRUE(raw.Alive());
  const int good = SealedMemfd(kRegion);
  EXPECT_EQ(raw.Attach(kRegion, good, &why), CL_SUCCESS) << why;
  EXPECT_EQ(raw.Attach(kRegion, good, &why), CL_INVALID_OPERATION) << "a second region: " << why;
  close(good);
  EXPECT_TRUE(raw.Alive());
}

// A WriteBuffer or ReadBuffer naming shared data: command header (queue, no event, no waits),
// buffer id, offset, size, region offset.
std::vector<uint8_t> SharedBody(uint64_t size, uint64_t region_off, uint64_t queue = 1) {
  std::vector<uint8_t> body;
  proto::Writer w(&body);
  proto::CommandHeader{queue, 0, {}}.EncodeTo(w);
  proto::SharedTransferRequest{/*mem*/ 2, 0, size, region_off}.EncodeTo(w);
  return body;
}

// Each hostile range on a fresh session: it must end that session (Goodbye), and the next
// connection must be served.
TEST(SharedHostile, RangesOutsideTheRegionEndTheSession) {
  struct Case {
    const char* what;
    uint64_t size, off;
    bool attach;
    proto::Op op;
    uint64_t tag;
  };
  const uint64_t data_end = kRegion;
  const Case cases[] = {
      {"past the end", 4096, data_end - 100, true, proto::Op::WriteBuffer, 0},
      {"offset past the end", 1, data_end + 1, true, proto::Op::ReadBuffer, 5},
      {"in the header", 100, 64, true, proto::Op::WriteBuffer, 0},
      {"empty", 0, proto::kSharedHeader, true, proto::Op::WriteBuffer, 0},
      {"wrapping", UINT64_MAX - 10, proto::kSharedHeader + 20, true, proto::Op::ReadBuffer, 5},
      {"no region attached", 4096, proto::kSharedHeader, false, proto::Op::WriteBuffer, 0},
      {"read without a tag", 4096, proto::kSharedHeader, true, proto::Op::ReadBuffer, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    RAW_OR_SKIP(raw);
    if (c.attach) {
      const int fd = SealedMemfd(kRegion);
      ASSERT_EQ(raw.Attach(kRegion, fd), CL_SUCCESS);
      close(fd);
    }
    raw.Send(c.op, c.tag, SharedBody(c.size, c.off), proto::kFlagShared);
    std::string why;
    EXPECT_EQ(raw.NextStatus(&why), INT32_MIN) << "expected a Goodbye, got an answer: " << why;
  }
  Raw next;
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next.Alive());
}

// A CreateBuffer whose contents are in the region: the buffer request (id 2 in context 1,
// data_size normally the size), then the region offset.
std::vector<uint8_t> SharedCreateBody(uint64_t size, uint64_t data_size, uint64_t region_off,
                                      uint64_t ctx = 1) {
  std::vector<uint8_t> body;
  proto::Writer w(&body);
  proto::CreateBufferRequest{2, ctx, CL_MEM_READ_WRITE, size, data_size}.EncodeTo(w);
  proto::SharedInitRequest{region_off}.EncodeTo(w);
  return body;
}

TEST(SharedHostile, BufferContentsOutsideTheRegionEndTheSession) {
  struct Case {
    const char* what;
    uint64_t size, data_size, off;
    bool attach;
  };
  const Case cases[] = {
      {"past the end", 4096, 4096, kRegion - 100, true},
      {"in the header", 100, 100, 64, true},
      {"wrapping", UINT64_MAX - 10, UINT64_MAX - 10, proto::kSharedHeader + 20, true},
      {"contents shorter than the buffer", 8192, 4096, proto::kSharedHeader, true},
      {"no contents", 4096, 0, proto::kSharedHeader, true},
      {"no region attached", 4096, 4096, proto::kSharedHeader, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    RAW_OR_SKIP(raw);
    if (c.attach) {
      const int fd = SealedMemfd(kRegion);
      ASSERT_EQ(raw.Attach(kRegion, fd), CL_SUCCESS);
      close(fd);
    }
    raw.Send(proto::Op::CreateBuffer, 0, SharedCreateBody(c.size, c.data_size, c.off),
             proto::kFlagShared);
    std::string why;
    EXPECT_EQ(raw.NextStatus(&why), INT32_MIN) << "expected a Goodbye, got an answer: " << why;
  }
  Raw next;
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next.Alive());
}

// The chunks of one staged blob must name one size: a chunk naming a larger one than the
// first would write past what was taken for it (1 MiB and more land in pinned staging once
// the session has a context). The session ends; the next one is served.
TEST(SharedHostile, StagedChunksNamingAnotherSizeEndTheSession) {
  RAW_OR_SKIP(raw);
  raw.Send(proto::Op::CreateContext, 0, proto::EncodeBody(proto::CreateContextRequest{1, {0}}));
  auto chunk = [](uint64_t total, size_t n, uint8_t fill) {
    std::vector<uint8_t> body = proto::EncodeBody(proto::PutDataRequest{total});
    body.resize(body.size() + n, fill);
    return body;
  };
  const size_t mib = size_t{1} << 20;
  raw.Send(proto::Op::PutData, 0, chunk(mib, mib, 0x11));
  raw.Send(proto::Op::PutData, 0, chunk(64 * mib, mib, 0x22));
  EXPECT_FALSE(raw.Alive());
  Raw next;
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next.Alive());
}

// A shared CreateBuffer in a context that does not exist fails as the application's error (the
// session goes on), and its granules are given back.
TEST(SharedHostile, AFailedSharedCreateGivesItsGranulesBack) {
  RAW_OR_SKIP(raw);
  const int fd = SealedMemfd(kRegion);
  ASSERT_EQ(raw.Attach(kRegion, fd), CL_SUCCESS);
  auto* base =
      static_cast<uint8_t*>(mmap(nullptr, kRegion, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  close(fd);
  ASSERT_NE(base, MAP_FAILED);
  const uint64_t off = proto::kSharedHeader + (uint64_t{1} << 20);
  const uint64_t size = (uint64_t{1} << 20) + 4096;  // two granules
  proto::SharedBusyWord(base, off)->store(1);
  proto::SharedBusyWord(base, off + size - 1)->store(1);
  raw.Send(proto::Op::CreateBuffer, 0, SharedCreateBody(size, size, off, /*ctx=*/777),
           proto::kFlagShared);
  EXPECT_TRUE(raw.Alive());  // answered after the create was handled
  EXPECT_EQ(proto::SharedBusyWord(base, off)->load(), 0u);
  EXPECT_EQ(proto::SharedBusyWord(base, off + size - 1)->load(), 0u);
  munmap(base, kRegion);
}

// A well-formed shared write that names unknown objects fails as a command, and its slot is
// given back (the busy word cleared), or the client would wait for it for ever.
TEST(SharedHostile, AFailedWriteGivesItsSlotBack) {
  RAW_OR_SKIP(raw);
  const int fd = SealedMemfd(kRegion);
  ASSERT_EQ(raw.Attach(kRegion, fd), CL_SUCCESS);
  auto* base = static_cast<uint8_t*>(mmap(nullptr, kRegion, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  close(fd);
  ASSERT_NE(base, MAP_FAILED);
  const uint64_t off = proto::kSharedHeader + kSlot;
  proto::SharedBusyWord(base, off)->store(1);
  raw.Send(proto::Op::WriteBuffer, 0, SharedBody(4096, off, /*queue=*/12345), proto::kFlagShared);
  EXPECT_TRUE(raw.Alive());  // answered after the write was handled
  EXPECT_EQ(proto::SharedBusyWord(base, off)->load(), 0u);
  munmap(base, kRegion);
}

// A shared read that names unknown objects is answered with the error, and the session goes on.
TEST(SharedHostile, AFailedReadIsAnswered) {
  RAW_OR_SKIP(raw);
  const int fd = SealedMemfd(kRegion);
  ASSERT_EQ(raw.Attach(kRegion, fd), CL_SUCCESS);
  close(fd);
  raw.Send(proto::Op::ReadBuffer, 5, SharedBody(4096, proto::kSharedHeader, /*queue=*/12345),
           proto::kFlagShared | proto::kFlagWaiting);
  EXPECT_EQ(raw.NextStatus(), CL_INVALID_COMMAND_QUEUE);
  EXPECT_TRUE(raw.Alive());
}

// ---------------------------------------------------------------- control rings

uint8_t* MapRing(int fd) {
  void* p = mmap(nullptr, proto::kRingFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

// Rings that rgpud must not take are refused through the socket, and the session goes on;
// taken, the session answers through them, and a second AttachRing is refused.
TEST(SharedHostile, RingsRefusedGetAnErrorAndTakenOnesCarryTheSession) {
  RAW_OR_SKIP(raw);
  std::string why;
  EXPECT_EQ(raw.AttachRing(proto::kRingFileBytes, -1, nullptr, &why), CL_INVALID_VALUE) << why;
  const int big = SealedMemfd(proto::kRingFileBytes + 4096);
  EXPECT_EQ(raw.AttachRing(proto::kRingFileBytes + 4096, big, nullptr, &why), CL_INVALID_VALUE)
      << "another size: " << why;
  close(big);
  const int unsealed = SealedMemfd(proto::kRingFileBytes, 0);
  EXPECT_EQ(raw.AttachRing(proto::kRingFileBytes, unsealed, nullptr, &why), CL_INVALID_VALUE)
      << "unsealed: " << why;
  close(unsealed);
  const int small = SealedMemfd(4096);
  EXPECT_EQ(raw.AttachRing(proto::kRingFileBytes, small, nullptr, &why), CL_INVALID_VALUE)
      << "smaller than announced: " << why;
  close(small);
  EXPECT_TRUE(raw.Alive());
  const int good = SealedMemfd(proto::kRingFileBytes);
  ASSERT_EQ(raw.AttachRing(proto::kRingFileBytes, good, MapRing(good), &why), CL_SUCCESS) << why;
  close(good);
  EXPECT_TRUE(raw.Alive());  // through the rings now
  // A second one (its frame through the ring, so without a descriptor).
  EXPECT_EQ(raw.AttachRing(proto::kRingFileBytes, -1, nullptr, &why), CL_INVALID_OPERATION) << why;
  EXPECT_TRUE(raw.Alive());
}

// A client that sets the rings' indices out of range ends its own session (a protocol error),
// never makes rgpud read or write outside the file; the next connection is served.
TEST(SharedHostile, RingIndicesOutOfRangeEndTheSession) {
  struct Case {
    const char* what;
    size_t at;  // the u64 index the client scribbles on (proto/ring.h: half 0 at 0, half 1 at 256)
    uint64_t value;
    bool ask;  // send a request after (through the intact half), for rgpud to answer into the other
  };
  const Case cases[] = {
      {"requests' write index ahead by more than the ring", 0, proto::kRingBytes + 100, false},
      {"requests' write index far ahead", 0, UINT64_MAX - 7, false},
      {"answers' read index ahead of what was written", 256 + 64, uint64_t{1} << 40, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    RAW_OR_SKIP(raw);
    const int fd = SealedMemfd(proto::kRingFileBytes);
    uint8_t* spy = MapRing(fd);
    ASSERT_EQ(raw.AttachRing(proto::kRingFileBytes, fd, MapRing(fd)), CL_SUCCESS);
    close(fd);
    ASSERT_TRUE(raw.Alive());
    reinterpret_cast<std::atomic<uint64_t>*>(spy + c.at)->fetch_add(c.value);
    // rgpud finds out when it next looks for a request (at the latest when its nap ends) or
    // answers one.
    if (c.ask) raw.Send(proto::Op::Stats, 9, {});
    std::string why;
    EXPECT_EQ(raw.NextStatus(&why), INT32_MIN)
        << "expected the end of the session, got an answer: " << why;
    munmap(spy, proto::kRingFileBytes);
  }
  Raw next;
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next.Alive());
}

}  // namespace
