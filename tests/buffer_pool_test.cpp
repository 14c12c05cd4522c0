// The transfer buffer pool alone (server/buffer_pool.h): buffers come back for reuse, and
// those left unused for a while are freed rather than kept for good.
#include "server/buffer_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace rgpu::server {
namespace {

using namespace std::chrono_literals;

TEST(BufferPool, ReusesAGivenBackBuffer) {
  auto pool = std::make_shared<BufferPool>(size_t{64} << 20);
  const uint8_t* first;
  {
    Bytes b = pool->Acquire(1 << 20);
    first = b->data();
  }
  Bytes again = pool->Acquire(1 << 20);
  EXPECT_EQ(again->data(), first);
}

TEST(BufferPool, FreesOnlyBuffersIdleLongEnough) {
  auto pool = std::make_shared<BufferPool>(size_t{64} << 20);
  { Bytes a = pool->Acquire(1 << 20), b = pool->Acquire(2 << 20); }
  EXPECT_EQ(pool->ReleaseIdle(1h), 0u);  // given back just now
  std::this_thread::sleep_for(20ms);
  { Bytes c = pool->Acquire(4 << 20); }  // given back after the other two
  const size_t freed = pool->ReleaseIdle(10ms);
  EXPECT_GE(freed, size_t{3} << 20);
  EXPECT_LT(freed, size_t{4} << 20);  // the recent one stays
  EXPECT_GE(pool->ReleaseIdle(0s), size_t{4} << 20);
  EXPECT_EQ(pool->ReleaseIdle(0s), 0u);  // nothing left
}

TEST(BufferPool, SmallBuffersAreNotPooled) {
  auto pool = std::make_shared<BufferPool>(size_t{64} << 20);
  { Bytes small = pool->Acquire(1 << 10); }
  EXPECT_EQ(pool->ReleaseIdle(0s), 0u);
}

TEST(StagingWindow, HoldsBytesUntilTheLastHolderLetsGo) {
  auto pool = std::make_shared<BufferPool>(size_t{64} << 20);
  auto window = std::make_shared<StagingWindow>(size_t{8} << 20);
  ASSERT_TRUE(window->Take(size_t{5} << 20, 0us));
  Bytes a = window->Hold(pool->Acquire(size_t{5} << 20), size_t{5} << 20);
  Bytes copy = a;  // a queued chunk's reference
  EXPECT_EQ(window->used(), size_t{5} << 20);
  EXPECT_FALSE(window->Take(size_t{4} << 20, 1ms));  // 9 MiB would not fit
  a.reset();
  EXPECT_FALSE(window->Take(size_t{4} << 20, 0us));  // still held by `copy`
  copy.reset();
  EXPECT_EQ(window->used(), 0u);
  EXPECT_TRUE(window->Take(size_t{4} << 20, 0us));
}

TEST(StagingWindow, AnythingFitsAnEmptyWindowAndAWaiterWakesWhenRoomComes) {
  auto window = std::make_shared<StagingWindow>(size_t{1} << 20);
  ASSERT_TRUE(window->Take(size_t{3} << 20, 0us));  // larger than the window, but it was empty
  Bytes held = window->Hold(std::make_shared<ByteVec>(16), size_t{3} << 20);
  std::thread later([&] {
    std::this_thread::sleep_for(20ms);
    held.reset();
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(window->Take(size_t{1} << 20, 5s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);  // woken, not timed out
  later.join();
  window->TakeAnyway(size_t{2} << 20);  // over the limit on purpose
  EXPECT_EQ(window->used(), size_t{3} << 20);
}

}  // namespace
}  // namespace rgpu::server
