// The layout of a shared bulk region (docs/protocol.md, "Shared memory"): a memfd the
// client creates, seals against shrinking and passes to rgpud over the Unix socket
// (AttachShared). Both ends map it; both ends use these offsets, nothing else.
//
//   [0, 4)                     u32 generation: the server adds 1 after every release
//   [64 + 4 g, 68 + 4 g)       u32 busy word of granule g: the client sets 1 when it lends the
//                              granule to a write, the server stores 0 when it is done with
//                              every granule the write's range touches
//   [kSharedHeader, size)      data: requests name (offset, length) ranges here
//
// The words are the only thing the server writes outside the ranges requests name, and it
// never reads them: a client that scribbles on them only confuses itself.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>

namespace rgpu::proto {

inline constexpr uint64_t kSharedHeader = 4096;
inline constexpr uint64_t kSharedGranule = uint64_t{1} << 20;
inline constexpr uint64_t kSharedBusyAt = 64;
// Busy words that fit in the header: the most granules, hence data bytes, a region may have.
inline constexpr uint64_t kSharedMaxGranules = (kSharedHeader - kSharedBusyAt) / 4;
inline constexpr uint64_t kSharedMaxBytes = kSharedHeader + kSharedMaxGranules * kSharedGranule;

// The busy word of the granule where data offset `off` (>= kSharedHeader) lies.
inline std::atomic<uint32_t>* SharedBusyWord(uint8_t* base, uint64_t off) {
  const uint64_t g = (off - kSharedHeader) / kSharedGranule;
  return reinterpret_cast<std::atomic<uint32_t>*>(base + kSharedBusyAt + 4 * g);
}
inline std::atomic<uint32_t>* SharedGeneration(uint8_t* base) {
  return reinterpret_cast<std::atomic<uint32_t>*>(base);
}
static_assert(sizeof(std::atomic<uint32_t>) == 4 && std::atomic<uint32_t>::is_always_lock_free);

// Futex calls on the shared mapping (not FUTEX_PRIVATE: the waiter is another process).
inline void SharedWake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}
// Sleeps while *word == seen, at most `ms` milliseconds.
inline void SharedWait(std::atomic<uint32_t>* word, uint32_t seen, long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

}  // namespace rgpu::proto
