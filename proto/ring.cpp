#include "proto/ring.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "proto/shared_region.h"

namespace rgpu::proto {

namespace {
// The indices are little-endian in the file, as everything on the wire is: a client of the
// other byte order on the same host (an emulated one, as the big-endian test runs) shares it.
uint64_t Le(uint64_t v) {
  return std::endian::native == std::endian::little ? v : __builtin_bswap64(v);
}
}  // namespace

struct Ring::Half {
  alignas(64) std::atomic<uint64_t> tail;
  alignas(64) std::atomic<uint64_t> head;
  alignas(64) std::atomic<uint32_t> sleepers;
  std::atomic<uint32_t> space;
  std::atomic<uint32_t> waiting;
  std::atomic<uint32_t> spinners;
};
Ring::Ring(uint8_t* base, End end) : base_(base) {
  static_assert(sizeof(Half) <= 256 && std::atomic<uint64_t>::is_always_lock_free);
  auto* h0 = reinterpret_cast<Half*>(base);
  auto* h1 = reinterpret_cast<Half*>(base + 256);
  uint8_t* d0 = base + kRingHeader;
  uint8_t* d1 = d0 + kRingBytes;
  const bool client = end == End::kClient;
  tx_ = client ? h0 : h1;
  rx_ = client ? h1 : h0;
  tx_data_ = client ? d0 : d1;
  rx_data_ = client ? d1 : d0;
}

Ring::~Ring() { munmap(base_, kRingFileBytes); }

Result<size_t> Ring::Put(const uint8_t* p, size_t n) {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  const uint64_t used = tail - Le(tx_->head.load(std::memory_order_acquire));
  if (used > kRingBytes)
    return Status::Protocol("control ring: the peer's read index is out of range");
  n = std::min<uint64_t>(n, kRingBytes - used);
  if (n == 0) return size_t{0};
  const uint64_t at = tail % kRingBytes;
  const size_t first = std::min<uint64_t>(n, kRingBytes - at);
  std::memcpy(tx_data_ + at, p, first);
  std::memcpy(tx_data_, p + first, n - first);
  tail_.store(tail + n, std::memory_order_relaxed);
  // Published before we look for a sleeper (PeerAsleep), which counted itself before its
  // last look at the ring: one of us sees the other.
  tx_->tail.store(Le(tail + n), std::memory_order_seq_cst);
  return n;
}

Result<size_t> Ring::Take(uint8_t* p, size_t max) {
  const uint64_t head = head_.load(std::memory_order_relaxed);
  const uint64_t avail = Le(rx_->tail.load(std::memory_order_acquire)) - head;
  if (avail > kRingBytes)
    return Status::Protocol("control ring: the peer's write index is out of range");
  const size_t n = std::min<uint64_t>(max, avail);
  if (n == 0) return size_t{0};
  const uint64_t at = head % kRingBytes;
  const size_t first = std::min<uint64_t>(n, kRingBytes - at);
  // Copied out before the index moves: the peer may overwrite the bytes once it has.
  std::memcpy(p, rx_data_ + at, first);
  std::memcpy(p + first, rx_data_, n - first);
  head_.store(head + n, std::memory_order_relaxed);
  rx_->head.store(Le(head + n), std::memory_order_seq_cst);
  if (rx_->waiting.load(std::memory_order_seq_cst) != 0) {
    rx_->waiting.store(0, std::memory_order_relaxed);
    rx_->space.fetch_add(1, std::memory_order_release);
    SharedWake(&rx_->space);
  }
  return n;
}

size_t Ring::Readable() const {
  const uint64_t avail =
      Le(rx_->tail.load(std::memory_order_acquire)) - head_.load(std::memory_order_relaxed);
  return avail > kRingBytes ? 0 : static_cast<size_t>(avail);
}

size_t Ring::Unsent() const {
  const uint64_t used =
      tail_.load(std::memory_order_relaxed) - Le(tx_->head.load(std::memory_order_acquire));
  return used > kRingBytes ? 0 : static_cast<size_t>(used);
}

void Ring::Sleeping(bool asleep) {
  if (asleep)
    rx_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  else
    rx_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void Ring::Spinning(bool spinning) {
  if (spinning)
    rx_->spinners.fetch_add(1, std::memory_order_seq_cst);
  else
    rx_->spinners.fetch_sub(1, std::memory_order_seq_cst);
}

uint32_t Ring::LocalSpinners() const { return rx_->spinners.load(std::memory_order_seq_cst); }

bool Ring::PeerAsleep() const {
  return tx_->sleepers.load(std::memory_order_seq_cst) != 0 &&
         tx_->spinners.load(std::memory_order_seq_cst) == 0;
}

void Ring::WaitForRoom(long ms) {
  const uint32_t seen = tx_->space.load(std::memory_order_acquire);
  tx_->waiting.store(1, std::memory_order_seq_cst);
  // Room made after we said we wait has bumped `space` (or is seen here).
  if (Unsent() < kRingBytes) return;
  SharedWait(&tx_->space, seen, ms);
}

void Ring::Interrupt() {
  tx_->space.fetch_add(1, std::memory_order_release);
  SharedWake(&tx_->space);
}

}  // namespace rgpu::proto
