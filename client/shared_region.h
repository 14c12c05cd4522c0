// The client's end of a shared bulk region (proto/shared_region.h, docs/protocol.md
// "Shared memory"): a sealed memfd, mapped here and, after AttachShared, in rgpud.
//
// Its data area has two halves, each used by one transfer at a time (write_mu / the read
// lease), so that a write never waits behind a read that waits for the device. Writes take as many
// granules (proto::kSharedGranule, 1 MiB) of their half as a piece needs, round robin, so
// that many small writes can be in flight at once; reads use slots of kSlotBytes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "proto/status.h"

namespace rgpu::client {

class SharedRegion {
 public:
  static constexpr uint64_t kSlotBytes = uint64_t{4} << 20;
  static constexpr size_t kSlotsPerDirection = 4;

  // A memfd of the header plus 2 * kSlotsPerDirection slots, sealed against shrinking and
  // growing, and mapped.
  static Result<std::unique_ptr<SharedRegion>> Create();
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  // The descriptor is not needed once rgpud has its own copy.
  void CloseFd();

  struct Slot {
    uint64_t off;  // offset in the region, as requests name it
    uint8_t* p;
  };
  // Room for a write piece of `len` <= kSlotBytes bytes: the next granules of the write half
  // that rgpud has given back, marked lent (rgpud clears them when it is done with them).
  // Waits for them; false once `alive()` says the connection died. Holds write_mu.
  bool LendForWrite(size_t len, const std::function<bool()>& alive, Slot* slot);
  // Read slot i (of kSlotsPerDirection, round robin); callers hold the read lease.
  Slot ReadSlot(size_t i);

  // The read half belongs to one read at a time. A blocking read holds it for its call; a
  // non-blocking one from its enqueue until its data is copied out, on whichever thread sees
  // its last reply, so it is a lease any thread may give back, not a mutex.
  void AcquireReadLease() {
    std::unique_lock lk(lease_mu_);
    lease_cv_.wait(lk, [this] { return !read_leased_; });
    read_leased_ = true;
  }
  void ReleaseReadLease() {
    {
      std::lock_guard lk(lease_mu_);
      read_leased_ = false;
    }
    lease_cv_.notify_one();
  }

  std::mutex write_mu;

 private:
  SharedRegion(int fd, uint8_t* base, uint64_t size) : fd_(fd), base_(base), size_(size) {}
  Slot SlotAt(size_t index) const;
  static constexpr size_t kWriteGranules = kSlotsPerDirection * kSlotBytes / (size_t{1} << 20);
  int fd_;
  uint8_t* base_;
  uint64_t size_;
  size_t next_granule_ = 0;  // GUARDED_BY(write_mu): where the next write piece starts
  std::mutex lease_mu_;
  std::condition_variable lease_cv_;
  bool read_leased_ = false;  // GUARDED_BY(lease_mu_)
};

}  // namespace rgpu::client
