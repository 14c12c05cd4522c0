// Host memory registered with one device context, where rgpud lands the pieces of the reads a
// client waits for over the socket (issue 12, outcome 3: "pinned staging").
//
// NVIDIA's driver copies into pageable memory through a bounce buffer of its own: on an H200 a
// blocking read of 256 KiB took 35-47 us alone and 70-80 us as one piece of a larger read
// while the previous piece was being sent (bench/results/2026-11-27-session20), so the device
// side, not the socket, paced reads of 1-16 MiB. Memory registered with the context (a
// CL_MEM_USE_HOST_PTR buffer over it, as the shared region is) is copied into directly.
//
// A ring of bytes: slots are taken in order and given back when the outbox has sent them
// (in order, but any order is tolerated). Registered with the first context it is used for,
// as SharedRegion is, and only then; a read in another context uses the session's ordinary
// buffers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "server/backend/backend.h"

namespace rgpu::server {

class PinnedStaging : public std::enable_shared_from_this<PinnedStaging> {
 public:
  // `bytes` of memory registered with `ctx`; null if the backend refused the registration.
  static std::shared_ptr<PinnedStaging> Make(Backend& bk, BkContext* ctx, size_t bytes);
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  BkContext* context() const { return ctx_; }
  size_t size() const { return size_; }

  // `len` bytes at `data`, held until the last copy of `hold` goes (the outbox drops it once
  // the bytes are sent): `hold` points at the whole staging vector and the slot starts
  // `offset` bytes into it, as Outbox::PushBulk takes them.
  struct Slot {
    Bytes hold;
    size_t offset;
    uint8_t* data;
  };
  // A slot of `len` bytes (at most size()), waiting up to `wait` for the sender to give some
  // back; nullopt if none came free by then.
  std::optional<Slot> Take(size_t len, std::chrono::microseconds wait);

  // Ends the registration now, once no device command copies to or from the memory any more
  // (the session's queues have drained). The memory itself lives on while a slot is held, but
  // nothing touches the backend after this: a slot may be let go as late as the backend's own
  // teardown (a completion callback's last reference), when calling it would be too late.
  void Unregister();

 private:
  PinnedStaging(Backend& bk, BkContext* ctx, size_t bytes);
  void Give(uint64_t at);

  Backend& bk_;
  BkContext* ctx_;
  size_t size_;
  std::unique_ptr<ByteVec> mem_;
  size_t base_ = 0;  // the first page-aligned byte of mem_
  BkMem* registered_ = nullptr;

  std::mutex mu_;
  std::condition_variable freed_;
  uint64_t head_ = 0;  // GUARDED_BY(mu_): ring position of the next slot (never wraps back)
  uint64_t tail_ = 0;  // GUARDED_BY(mu_): ring position of the oldest slot still taken
  // GUARDED_BY(mu_): slots from tail_ on, by ring position: their end, and whether given back.
  std::map<uint64_t, std::pair<uint64_t, bool>> taken_;
};

}  // namespace rgpu::server
