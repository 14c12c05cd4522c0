// Control rings (proto/ring.h) under two Streams of a socketpair, as a client and rgpud use
// them: bytes exact in both directions across the wrap and a full ring, a sleeping reader
// woken, a spinning one that waits inside a frame not left asleep, hang-ups and shutdowns
// seen, and a peer's out-of-range index answered with a protocol error instead of a read or
// write outside the ring.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "proto/ring.h"
#include "proto/transport.h"

namespace rgpu {
namespace {

using proto::kRingBytes;
using proto::kRingFileBytes;
using proto::kRingHeader;
using proto::Ring;
using proto::Stream;

uint8_t* MapRingFile(int fd) {
  void* p = mmap(nullptr, kRingFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

// A connected pair with rings, each end with its own mapping of one file (as two processes
// have), plus a third mapping for the test to play a hostile peer with.
struct Pair {
  std::unique_ptr<Stream> client, server;
  uint8_t* spy = nullptr;
  Pair() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
    const int fd = memfd_create("ring_test", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(kRingFileBytes)) != 0) return;
    uint8_t* c = MapRingFile(fd);
    uint8_t* s = MapRingFile(fd);
    spy = MapRingFile(fd);
    close(fd);
    client = std::make_unique<Stream>(sv[0]);
    server = std::make_unique<Stream>(sv[1]);
    client->UseRing(std::make_unique<Ring>(c, Ring::End::kClient));
    server->UseRing(std::make_unique<Ring>(s, Ring::End::kServer));
  }
  ~Pair() {
    if (spy) munmap(spy, kRingFileBytes);
  }
  // The shared u64 at `off` of the file (a half's tail at 0, head at 64; half 1 at 256).
  std::atomic<uint64_t>* Word(size_t off) {
    return reinterpret_cast<std::atomic<uint64_t>*>(spy + off);
  }
};

std::vector<uint8_t> Random(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(g());
  return v;
}

Status Send(Stream& s, const std::vector<uint8_t>& v) {
  iovec iov{const_cast<uint8_t*>(v.data()), v.size()};
  return s.SendAll(&iov, 1);
}

TEST(Ring, BytesArriveExactInBothDirectionsAcrossWrapsAndAFullRing) {
  Pair p;
  ASSERT_TRUE(p.client && p.server);
  // Sizes that fill the ring several times over, wrap at odd places, and exceed it whole.
  const std::vector<size_t> sizes =
      {1, 7, 4096, 65537, kRingBytes - 3, kRingBytes, kRingBytes + 11, 3 * kRingBytes + 5, 100, 1};
  for (Stream* from : {p.client.get(), p.server.get()}) {
    Stream* to = from == p.client.get() ? p.server.get() : p.client.get();
    std::vector<std::vector<uint8_t>> sent;
    for (size_t i = 0; i < sizes.size(); ++i)
      sent.push_back(Random(sizes[i], static_cast<unsigned>(i)));
    std::thread writer([&] {
      for (const auto& v : sent) ASSERT_TRUE(Send(*from, v).ok());
    });
    for (const auto& v : sent) {
      std::vector<uint8_t> got(v.size());
      ASSERT_TRUE(to->RecvAll(got.data(), got.size()).ok());
      EXPECT_EQ(got, v) << v.size() << " bytes";
    }
    writer.join();
    EXPECT_EQ(to->UnreadBytes(), 0u);
  }
  EXPECT_EQ(p.client->BytesSent(), p.server->BytesReceived());
  EXPECT_EQ(p.server->BytesSent(), p.client->BytesReceived());
}

TEST(Ring, ASleepingReaderIsWokenByTheWriter) {
  Pair p;
  ASSERT_TRUE(p.client && p.server);
  // The reader naps at most 100 ms at a time; written 30 ms into a nap, it must wake at once
  // (by the byte on the socket), not when the nap ends.
  for (int trial = 0; trial < 3; ++trial) {
    std::atomic<bool> got{false};
    std::chrono::steady_clock::time_point woke;
    std::thread reader([&] {
      uint8_t b[16];
      auto n = p.server->RecvSome(b, sizeof b);
      woke = std::chrono::steady_clock::now();
      got = n.ok() && *n == 5 && std::memcmp(b, "hello", 5) == 0;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(Send(*p.client, {'h', 'e', 'l', 'l', 'o'}).ok());
    reader.join();
    EXPECT_TRUE(got);
    EXPECT_LT(woke - t0, std::chrono::milliseconds(25));
  }
  // WaitReadable sleeps the same way and wakes the same way.
  std::thread waiter([&] { p.client->WaitReadable(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(Send(*p.server, {'x'}).ok());
  waiter.join();
  EXPECT_TRUE(p.client->Readable());
}

// A thread that counts itself as spinning (a client caller polling for its answer) keeps the
// writer from sending wake bytes; if that thread then waits inside a frame, for a body that
// the writer publishes after its header, it must not sleep until its nap ends (100 ms: more
// than 1% of an H200's watcher-answered Unix reads did, session 49).
TEST(Ring, ASpinnerWaitingInsideAFrameSeesTheRestSoon) {
  Pair p;
  ASSERT_TRUE(p.client && p.server);
  for (int trial = 0; trial < 3; ++trial) {
    p.client->Spinning(true);
    std::chrono::steady_clock::time_point got_at;
    bool ok = false;
    std::thread reader([&] {
      uint8_t b[8];
      ok = p.client->RecvAll(b, sizeof b).ok() && std::memcmp(b, "headbody", 8) == 0;
      got_at = std::chrono::steady_clock::now();
    });
    ASSERT_TRUE(Send(*p.server, {'h', 'e', 'a', 'd'}).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the reader waits inside
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(Send(*p.server, {'b', 'o', 'd', 'y'}).ok());
    reader.join();
    p.client->Spinning(false);
    EXPECT_TRUE(ok);
    EXPECT_LT(got_at - t0, std::chrono::milliseconds(25));
  }
}

TEST(Ring, HangUpsAndShutdownsEndWaitsOnBothSides) {
  {
    Pair p;
    ASSERT_TRUE(p.client && p.server);
    // Bytes written before the hang-up are still read, then the end is seen.
    ASSERT_TRUE(Send(*p.client, {1, 2, 3}).ok());
    p.client.reset();
    uint8_t b[8];
    auto n = p.server->RecvSome(b, sizeof b);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 3u);
    EXPECT_FALSE(p.server->RecvSome(b, sizeof b).ok());
  }
  {
    Pair p;
    ASSERT_TRUE(p.client && p.server);
    // A writer waiting for room while nobody reads: the reader's hang-up ends its wait.
    std::atomic<bool> done{false};
    Status s;
    std::thread writer([&] {
      s = Send(*p.server, std::vector<uint8_t>(2 * kRingBytes, 7));
      done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(done);
    p.client.reset();
    writer.join();
    EXPECT_FALSE(s.ok());
  }
  {
    Pair p;
    ASSERT_TRUE(p.client && p.server);
    // Shutdown wakes our own blocked reader and writer.
    Status r, w;
    std::thread reader([&] {
      uint8_t b[8];
      r = p.server->RecvAll(b, sizeof b);
    });
    std::thread writer([&] { w = Send(*p.server, std::vector<uint8_t>(2 * kRingBytes, 7)); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    p.server->Shutdown();
    reader.join();
    writer.join();
    EXPECT_FALSE(r.ok());
    EXPECT_FALSE(w.ok());
  }
}

TEST(Ring, APeersIndexOutOfRangeIsAProtocolErrorNotAnAccess) {
  // The client's tail (half 0, offset 0) far ahead of what the server read: the server must
  // not read past its ring.
  for (const uint64_t bad : {kRingBytes + 1, uint64_t{1} << 40, UINT64_MAX}) {
    Pair p;
    ASSERT_TRUE(p.client && p.server);
    p.Word(0)->store(bad);
    uint8_t b[64];
    auto n = p.server->RecvSome(b, sizeof b);
    ASSERT_FALSE(n.ok());
    EXPECT_TRUE(n.status().is_protocol()) << n.status().message();
    EXPECT_EQ(p.server->UnreadBytes(), 0u);
  }
  // The client's head of the server's half (half 1, offset 256 + 64) ahead of what the server
  // wrote, or far behind: the server must not write outside its ring.
  for (const uint64_t bad : {uint64_t{5}, UINT64_MAX - kRingBytes}) {
    Pair p;
    ASSERT_TRUE(p.client && p.server);
    p.Word(256 + 64)->store(bad);
    Status s = Send(*p.server, {1, 2, 3});
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(s.is_protocol()) << s.message();
    iovec iov{const_cast<char*>("x"), 1};
    EXPECT_EQ(p.server->TrySend(&iov, 1), 0u);
  }
  // Wake-up words scribbled on only cost the scribbler: the server still reads what comes.
  {
    Pair p;
    ASSERT_TRUE(p.client && p.server);
    for (size_t off = 128; off < 256; off += 4)
      reinterpret_cast<std::atomic<uint32_t>*>(p.spy + off)->store(~0u);
    ASSERT_TRUE(Send(*p.client, {9, 9}).ok());
    uint8_t b[2];
    ASSERT_TRUE(p.server->RecvAll(b, 2).ok());
    EXPECT_EQ(b[0], 9);
  }
}

}  // namespace
}  // namespace rgpu
