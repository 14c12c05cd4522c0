// Is the peer of a connection still there? Both ends ask the same question the same way
// (rgpud of each client, the ICD of each server), from a thread that never waits for the
// device, so a peer busy with a long kernel is not mistaken for a dead one.
//
// The evidence is read from the socket, not from what the connection's reader has taken:
// a reader may be blocked on the device for minutes while the peer's heartbeats pile up
// unread. A peer shows life when bytes arrive (read or still waiting in the socket). When
// bytes wait unread, the silence is ours, not the peer's, and the peer is not declared
// dead unless it also stopped taking what we send (the case of a peer frozen while our
// reader waits for room to answer it).
#pragma once

#include <chrono>
#include <cstdint>

#include "proto/transport.h"

namespace rgpu::proto {

class PeerWatch {
 public:
  using Clock = std::chrono::steady_clock;
  PeerWatch(std::chrono::milliseconds timeout, Clock::time_point now);

  // Looks at the socket once; called by one thread several times per timeout.
  void Observe(const Stream& s, Clock::time_point now);
  // After Observe: whether the peer has shown no life for the timeout.
  bool Dead(Clock::time_point now) const;
  // How long since the peer last showed life.
  std::chrono::milliseconds Silent(Clock::time_point now) const;
  // After Observe: whether we have sent nothing for `interval` (time for a Heartbeat).
  bool Quiet(Clock::time_point now, std::chrono::milliseconds interval) const;

 private:
  std::chrono::milliseconds timeout_;
  uint64_t arrived_ = 0;       // bytes read plus bytes waiting, as last seen
  uint64_t sent_ = 0;          // bytes we handed to the kernel, as last seen
  int64_t taken_ = 0;          // sent minus the send queue: what the peer took, as last seen
  bool unread_ = false;        // bytes were waiting unread at the last look
  Clock::time_point heard_;    // the peer last showed life
  Clock::time_point said_;     // we last sent something
  Clock::time_point taking_;   // the peer last took bytes we sent, or had none to take
};

}  // namespace rgpu::proto
