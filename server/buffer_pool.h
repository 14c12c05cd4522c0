// Host buffers for bulk transfers, reused across transfers.
//
// A fresh multi-megabyte allocation costs a page fault per 4 KiB page and the kernel's
// zeroing of each page; on a 256 MiB transfer that was a quarter of rgpud's time. Buffers
// come back here when their last user lets go (a write has reached the device, a read has
// been sent), and the next transfer of a similar size takes one already mapped.
// Thread-safe: buffers are released from device completion threads.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

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
        v = std::move(it->second);
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

 private:
  void Give(ByteVec* p) {
    std::unique_ptr<ByteVec> v(p);
    size_t cap = v->capacity();
    if (cap < (64 << 10)) return;  // small buffers are cheap to make
    std::lock_guard lk(mu_);
    if (pooled_ + cap > max_pooled_) return;
    pooled_ += cap;
    free_.emplace(cap, std::move(v));
  }

  const size_t max_pooled_;
  std::mutex mu_;
  std::multimap<size_t, std::unique_ptr<ByteVec>> free_;  // GUARDED_BY(mu_), by capacity
  size_t pooled_ = 0;                                      // GUARDED_BY(mu_)
};

}  // namespace rgpu::server
