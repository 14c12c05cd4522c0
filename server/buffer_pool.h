// Host buffers for bulk transfers, reused across transfers.
//
// A fresh multi-megabyte allocation costs a page fault per 4 KiB page and the kernel's
// zeroing of each page; on a 256 MiB transfer that was a quarter of rgpud's time. Buffers
// come back here when their last user lets go (a write has reached the device, a read has
// been sent), and the next transfer of a similar size takes one already mapped.
// Buffers that wait unused for a while are freed (ReleaseIdle, from the heap trimmer), so
// that the pool holds what recent transfers needed rather than the most that was ever in
// flight at once: kept for good, that peak ratcheted rgpud's memory up under clients that
// come and go (each new peak of concurrent transfers added its buffers for ever).
// Thread-safe: buffers are released from device completion threads.
#pragma once

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "server/backend/backend.h"

namespace rgpu::server {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  explicit BufferPool(size_t max_pooled_bytes) : max_pooled_(max_pooled_bytes) {}

  // A buffer with capacity >= `capacity` and size 0 (contents unspecified beyond size).
  Bytes Acquire(size_t capacity) {
    std::unique_ptr<ByteVec> v;
    {
      std::lock_guard lk(mu_);
      // The smallest pooled buffer that fits, but not one more than twice too large.
      auto it = free_.lower_bound(capacity);
      if (it != free_.end() && it->first <= 2 * capacity + (1 << 20)) {
        v = std::move(it->second.buffer);
        pooled_ -= it->first;
        free_.erase(it);
      }
    }
    if (!v) {
      v = std::make_unique<ByteVec>();
      v->reserve(capacity);
    }
    v->clear();
    std::weak_ptr<BufferPool> self = weak_from_this();
    return Bytes(v.release(), [self](ByteVec* p) {
      if (auto pool = self.lock()) pool->Give(p);
      else delete p;
    });
  }

  // Frees the pooled buffers that have waited unused for `idle` or longer; returns the bytes.
  size_t ReleaseIdle(std::chrono::steady_clock::duration idle) {
    const auto cutoff = std::chrono::steady_clock::now() - idle;
    std::vector<std::unique_ptr<ByteVec>> released;  // freed once the lock is let go
    size_t bytes = 0, left = 0;
    {
      std::lock_guard lk(mu_);
      for (auto it = free_.begin(); it != free_.end();) {
        if (it->second.since > cutoff) {
          ++it;
          continue;
        }
        bytes += it->first;
        released.push_back(std::move(it->second.buffer));
        it = free_.erase(it);
      }
      pooled_ -= bytes;
      left = pooled_;
    }
    if (bytes > 0)
      spdlog::debug("transfer buffers: {} KiB idle released, {} KiB pooled", bytes >> 10, left >> 10);
    return bytes;
  }

 private:
  struct Pooled {
    std::unique_ptr<ByteVec> buffer;
    std::chrono::steady_clock::time_point since;  // given back
  };

  void Give(ByteVec* p) {
    std::unique_ptr<ByteVec> v(p);
    size_t cap = v->capacity();
    if (cap < (64 << 10)) return;  // small buffers are cheap to make
    std::lock_guard lk(mu_);
    if (pooled_ + cap > max_pooled_) return;
    pooled_ += cap;
    free_.emplace(cap, Pooled{std::move(v), std::chrono::steady_clock::now()});
  }

  const size_t max_pooled_;
  std::mutex mu_;
  std::multimap<size_t, Pooled> free_;  // GUARDED_BY(mu_), by capacity
  size_t pooled_ = 0;                                      // GUARDED_BY(mu_)
};

// The bytes of a session's socket read pieces that are staged: read from the device and not
// yet sent. The network, not the device, sets such a read's pace (NVIDIA copies 8-10 GB/s
// into pageable memory, loopback TCP carries 3-5), so pieces staged beyond a few only add
// memory; unbounded, a burst of non-blocking 64 MiB reads took hundreds of MiB of fresh,
// page-faulting buffers. Bounded, the pool's warm buffers serve every piece.
// Thread-safe: pieces are let go by the outbox's writer thread.
class StagingWindow : public std::enable_shared_from_this<StagingWindow> {
 public:
  explicit StagingWindow(size_t limit) : limit_(limit) {}

  // Takes room for `n` bytes, waiting up to `wait` for it; false if there was none. There is
  // always room while nothing is staged, whatever `n`.
  bool Take(size_t n, std::chrono::microseconds wait) {
    std::unique_lock lk(mu_);
    if (!room_.wait_for(lk, wait, [&] { return used_ == 0 || used_ + n <= limit_; })) return false;
    used_ += n;
    return true;
  }

  // Takes room for `n` bytes whether there is any or not.
  void TakeAnyway(size_t n) {
    std::lock_guard lk(mu_);
    used_ += n;
  }

  // `data`, whose `n` bytes taken with Take count until its last holder lets go.
  Bytes Hold(Bytes data, size_t n) {
    ByteVec* raw = data.get();
    return Bytes(raw, [inner = std::move(data), self = shared_from_this(), n](ByteVec*) mutable {
      inner.reset();
      self->Give(n);
    });
  }

  size_t used() {
    std::lock_guard lk(mu_);
    return used_;
  }

 private:
  void Give(size_t n) {
    std::lock_guard lk(mu_);
    used_ -= std::min(used_, n);
    room_.notify_all();
  }

  const size_t limit_;
  std::mutex mu_;
  std::condition_variable room_;
  size_t used_ = 0;  // GUARDED_BY(mu_)
};

}  // namespace rgpu::server
