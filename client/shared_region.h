// The client's end of a shared bulk region (proto/shared_region.h, docs/protocol.md
// "Shared memory"): a sealed memfd, mapped here and, after AttachShared, in rgpud.
//
// Its data area is cut into slots of kSlotBytes: the first half of them carry writes, the
// second half reads, each half used round robin by one transfer at a time (write_mu /
// read_mu), so that a write never waits behind a read that waits for the device.
#pragma once

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
  // The next slot of each direction (round robin); callers hold write_mu / read_mu.
  Slot NextWriteSlot();
  Slot ReadSlot(size_t i);
  // Waits until rgpud gave a write slot back; false once `alive()` says the connection died.
  bool WaitFree(const Slot& s, const std::function<bool()>& alive);
  // Marks a write slot as lent to a request (rgpud clears it when done).
  void Lend(const Slot& s);

  std::mutex write_mu, read_mu;

 private:
  SharedRegion(int fd, uint8_t* base, uint64_t size) : fd_(fd), base_(base), size_(size) {}
  Slot SlotAt(size_t index) const;
  int fd_;
  uint8_t* base_;
  uint64_t size_;
  size_t next_write_ = 0;  // GUARDED_BY(write_mu)
};

}  // namespace rgpu::client
