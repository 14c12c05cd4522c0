// Pinned staging alone (server/pinned_staging.h): slots are handed out in ring order, come
// back as the sender lets go of them (in any order), wait for room when the ring is full, and
// the registration with the device context lasts until the last slot is let go.
#include "server/pinned_staging.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/support/fake_backend.h"

namespace rgpu::server {
namespace {

using namespace std::chrono_literals;

// A backend that registers host memory (or refuses to) and counts the registrations it holds.
class RegisteringBackend : public fake::FakeBackend {
 public:
  bool refuse = false;
  std::atomic<int> held{0};
  void* registered_at = nullptr;

  Result<BkMem*> RegisterHostMemory(BkContext*, void* p, size_t) override {
    if (refuse) return Status::Error(-6, "refused");
    registered_at = p;
    ++held;
    return reinterpret_cast<BkMem*>(&held);
  }
  void Release(proto::ObjType type, void* handle) override {
    if (handle == &held)
      --held;
    else
      FakeBackend::Release(type, handle);
  }
};

constexpr size_t kKiB = 1024;
auto* const kCtx = reinterpret_cast<BkContext*>(uintptr_t{0x1000});

TEST(PinnedStaging, SlotsGoRoundTheRingAndComeBackInAnyOrder) {
  RegisteringBackend bk;
  auto st = PinnedStaging::Make(bk, kCtx, 16 * kKiB);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->context(), kCtx);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(bk.registered_at) % 4096, 0u);  // whole pages
  auto a = st->Take(6 * kKiB, 0us), b = st->Take(6 * kKiB, 0us);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->data, bk.registered_at);
  EXPECT_EQ(b->data, a->data + 6 * kKiB);
  EXPECT_EQ(b->data, b->hold->data() + b->offset);  // what the outbox will send from
  EXPECT_FALSE(st->Take(6 * kKiB, 0us));            // 4 KiB left at the end; none wraps
  auto c = st->Take(4 * kKiB, 0us);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->data, a->data + 12 * kKiB);
  b.reset();  // the second given back first: the first still holds the start
  EXPECT_FALSE(st->Take(6 * kKiB, 0us));
  a.reset();
  auto d = st->Take(12 * kKiB, 0us);  // the start again
  ASSERT_TRUE(d);
  EXPECT_EQ(d->data, static_cast<uint8_t*>(bk.registered_at));
  EXPECT_FALSE(st->Take(17 * kKiB, 0us));  // never more than the whole
}

TEST(PinnedStaging, AllGivenBackTheWholeRingIsFree) {
  RegisteringBackend bk;
  auto st = PinnedStaging::Make(bk, kCtx, 16 * kKiB);
  ASSERT_NE(st, nullptr);
  st->Take(4 * kKiB, 0us).reset();  // taken and given back: the next slot no longer starts at 0
  auto whole = st->Take(16 * kKiB, 0us);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->data, static_cast<uint8_t*>(bk.registered_at));
  whole.reset();
  st->Take(4 * kKiB, 0us).reset();
  EXPECT_TRUE(st->Take(13 * kKiB, 0us));
}

TEST(PinnedStaging, TakeWaitsForTheSenderToGiveBack) {
  RegisteringBackend bk;
  auto st = PinnedStaging::Make(bk, kCtx, 16 * kKiB);
  ASSERT_NE(st, nullptr);
  auto full = st->Take(16 * kKiB, 0us);
  ASSERT_TRUE(full);
  EXPECT_FALSE(st->Take(kKiB, 10ms));
  std::thread sender([&] {
    std::this_thread::sleep_for(30ms);
    full.reset();
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto next = st->Take(8 * kKiB, 5s);
  const auto waited = std::chrono::steady_clock::now() - t0;
  sender.join();
  ASSERT_TRUE(next);
  EXPECT_GE(waited, 20ms);
  EXPECT_LT(waited, 2s);
}

TEST(PinnedStaging, RegistrationLastsUntilTheLastSlotGoes) {
  RegisteringBackend bk;
  auto st = PinnedStaging::Make(bk, kCtx, 16 * kKiB);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(bk.held.load(), 1);
  Bytes kept;
  {
    auto s = st->Take(kKiB, 0us);
    ASSERT_TRUE(s);
    kept = s->hold;  // as the outbox holds a piece not yet sent
  }
  st.reset();  // the session ends first
  EXPECT_EQ(bk.held.load(), 1);
  kept.reset();
  EXPECT_EQ(bk.held.load(), 0);
}

TEST(PinnedStaging, UnregisteredNothingCallsTheBackendAgain) {
  RegisteringBackend bk;
  auto st = PinnedStaging::Make(bk, kCtx, 16 * kKiB);
  ASSERT_NE(st, nullptr);
  auto s = st->Take(kKiB, 0us);
  ASSERT_TRUE(s);
  Bytes kept = s->hold;
  s.reset();
  st->Unregister();  // the session's queues have drained
  EXPECT_EQ(bk.held.load(), 0);
  st.reset();
  kept.reset();  // as late as the backend's teardown: no second release
  EXPECT_EQ(bk.held.load(), 0);
}

TEST(PinnedStaging, NoneWhereTheDeviceRefuses) {
  RegisteringBackend bk;
  bk.refuse = true;
  EXPECT_EQ(PinnedStaging::Make(bk, kCtx, 16 * kKiB), nullptr);
  EXPECT_EQ(bk.held.load(), 0);
}

}  // namespace
}  // namespace rgpu::server
