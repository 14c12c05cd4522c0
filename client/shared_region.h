// The client's end of a shared bulk region (proto/shared_region.h, docs/protocol.md
// "Shared memory"): a sealed memfd, mapped here and, after AttachShared, in rgpud.
//
// Its data area has two halves, so that a write never waits behind a read that waits for the
// device. Writes take as many granules (proto::kSharedGranule, 1 MiB) of their half as a piece
// needs, round robin, so that many small writes can be in flight at once. Reads take a range
// of the read half in units of kReadUnit (ReadRange): a read that fits takes what it needs, so
// that many non-blocking reads are in flight at once; a larger one takes the whole half and
// streams through it in slots of kSlotBytes.
#pragma once

#include <bitset>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "proto/status.h"

namespace rgpu::client {

// A memfd of `size` bytes, sealed against shrinking and growing (what rgpud requires of the
// memory a client shares with it), and mapped; with `populate`, every page at once. The
// caller owns both.
struct SealedMemfd {
  int fd;
  uint8_t* base;
};
Result<SealedMemfd> MakeSealedMemfd(const char* name, uint64_t size, bool populate);

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
  // A part of the read half, held by one read from its enqueue until its data is copied out
  // (for a non-blocking read, on whichever thread sees its last reply).
  struct ReadRange {
    uint64_t off = 0;  // region offset of its first byte
    uint8_t* p = nullptr;
    size_t first = 0, units = 0;  // which kReadUnit units of the read half
    // Where piece i of the read goes: pieces of kSlotBytes, in order; a range of the whole
    // half holds kSlotsPerDirection of them and is used round robin.
    Slot Piece(size_t i) const {
      const size_t slots = (units * kReadUnit + kSlotBytes - 1) / kSlotBytes;
      const uint64_t at = (i % slots) * kSlotBytes;
      return Slot{off + at, p + at};
    }
  };
  static constexpr uint64_t kReadUnit = uint64_t{64} << 10;
  static constexpr size_t kReadUnits = kSlotsPerDirection * kSlotBytes / kReadUnit;
  // Room for a read of `bytes`: the units it needs, contiguous (the whole half when it does
  // not fit). Waits until they are free; waiters are served in the order they came, so that a
  // large read is not passed over forever by small ones.
  ReadRange AcquireRead(size_t bytes);
  void ReleaseRead(const ReadRange& r);

  std::mutex write_mu;

 private:
  SharedRegion(int fd, uint8_t* base, uint64_t size) : fd_(fd), base_(base), size_(size) {}
  Slot SlotAt(size_t index) const;
  static constexpr size_t kWriteGranules = kSlotsPerDirection * kSlotBytes / (size_t{1} << 20);
  int fd_;
  uint8_t* base_;
  uint64_t size_;
  size_t next_granule_ = 0;  // GUARDED_BY(write_mu): where the next write piece starts
  std::mutex read_mu_;
  std::condition_variable read_cv_;
  std::bitset<kReadUnits> read_busy_;  // GUARDED_BY(read_mu_)
  uint64_t read_tickets_ = 0;          // GUARDED_BY(read_mu_): AcquireRead calls so far
  uint64_t read_serving_ = 0;          // GUARDED_BY(read_mu_): the ticket whose turn it is
};

}  // namespace rgpu::client
