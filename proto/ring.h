// Control rings: a same-host connection's frames through shared memory instead of the socket
// (docs/protocol.md, "Control rings").
//
// The client creates a sealed memfd of kRingFileBytes, passes it with AttachRing, and from the
// server's accepting answer on, every frame in both directions goes through two
// single-producer single-consumer byte rings in it. The socket stays: a reader with nothing
// to read sleeps in poll() on it and the writer sends one wake byte when it sees a sleeper;
// a hang-up is still the socket closing. A request then costs a memcpy and a store at each
// end where both ends are awake (polling), instead of two system calls and a wake-up.
//
// Layout of the file (both ends use these offsets, nothing else):
//
//   [0, 256)                              half 0: client -> server
//   [256, 512)                            half 1: server -> client
//   [kRingHeader, + kRingBytes)           data of half 0
//   [kRingHeader + kRingBytes, + kRingBytes) data of half 1
//
// Each half: u64 tail (bytes ever written; only its producer stores it), u64 head (bytes ever
// read; only its consumer stores it), u32 sleepers (consumer threads asleep on the socket),
// u32 space (a futex word the consumer bumps when the producer waits for room), u32 waiting
// (the producer waits for room), u32 spinners (consumer threads polling the ring: while one
// does, a sleeper needs no wake byte). The indices are little-endian (an emulated client of
// the other byte order may share the host); the u32 words are only compared with 0 or watched
// for change, so their byte order does not matter. An end trusts nothing its peer wrote: it keeps
// its own index privately, and an index of the peer's that is out of range (more than kRingBytes
// apart from its own) is a protocol error on that connection. The other words only decide who wakes
// whom; a peer that scribbles on them only delays itself (every wait also times out).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "proto/status.h"

namespace rgpu::proto {

inline constexpr uint64_t kRingHeader = 4096;
inline constexpr uint64_t kRingBytes = uint64_t{1} << 20;
inline constexpr uint64_t kRingFileBytes = kRingHeader + 2 * kRingBytes;

class Ring {
 public:
  enum class End { kClient, kServer };
  // Takes over a mapping of kRingFileBytes at `base` (unmapped when the ring goes).
  Ring(uint8_t* base, End end);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // Copies up to `n` bytes in, as many as there is room for now; how many. An error if the
  // peer's index is out of range.
  Result<size_t> Put(const uint8_t* p, size_t n);
  // Copies up to `max` bytes out, as many as have arrived; how many.
  Result<size_t> Take(uint8_t* p, size_t max);
  // Bytes waiting to be taken / put and not yet taken by the peer (0 if the peer's index is
  // out of range: the next Take or Put reports it).
  size_t Readable() const;
  size_t Unsent() const;

  // The consumer side's sleep protocol: count ourselves asleep before the last look at the
  // ring, then sleep on the socket; the producer sends a wake byte when it sees a sleeper
  // after publishing (PeerAsleep).
  void Sleeping(bool asleep);
  // A consumer thread that polls the ring (it takes what comes, or hands it on) counts itself
  // here; the producer then sends no wake byte. After it stops it must look at the ring once
  // more: what came after the producer saw it spinning is its to hand on.
  void Spinning(bool spinning);
  // The peer has a sleeper and nobody polling: a wake byte is needed.
  bool PeerAsleep() const;
  // Consumer threads of ours counted as spinning now: while there is one, the peer sends no
  // wake byte, so a thread of ours that must wait for the rest of a frame cannot sleep long.
  uint32_t LocalSpinners() const;
  // The producer side's wait for room: at most `ms` milliseconds, or until the consumer takes
  // bytes (WakeIfWaiting) or Interrupt().
  void WaitForRoom(long ms);
  void Interrupt();

 private:
  struct Half;
  Half* tx_;
  Half* rx_;
  uint8_t* tx_data_;
  uint8_t* rx_data_;
  uint8_t* base_;
  // Ours: bytes we put in tx_ and took from rx_ (the shared copies are only for the peer).
  // Atomic only because the liveness watch reads them from another thread.
  std::atomic<uint64_t> tail_{0}, head_{0};
};

}  // namespace rgpu::proto
