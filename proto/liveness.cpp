#include "proto/liveness.h"

namespace rgpu::proto {

PeerWatch::PeerWatch(std::chrono::milliseconds timeout, Clock::time_point now)
    : timeout_(timeout), heard_(now), said_(now), taking_(now) {}

void PeerWatch::Observe(const Stream& s, Clock::time_point now) {
  const size_t unread = s.UnreadBytes();
  const uint64_t arrived = s.BytesReceived() + unread;
  if (arrived != arrived_) heard_ = now;
  arrived_ = arrived;
  unread_ = unread > 0;
  const uint64_t sent = s.BytesSent();
  if (sent != sent_) said_ = now;
  sent_ = sent;
  const size_t queued = s.UnsentBytes();
  const int64_t taken = static_cast<int64_t>(sent) - static_cast<int64_t>(queued);
  if (queued == 0 || taken != taken_) taking_ = now;
  taken_ = taken;
}

bool PeerWatch::Dead(Clock::time_point now) const {
  if (now - heard_ < timeout_) return false;
  // Our reader is behind (busy on the device): the peer spoke; it is dead only if it has
  // also stopped taking what we send.
  if (unread_ && now - taking_ < timeout_) return false;
  return true;
}

std::chrono::milliseconds PeerWatch::Silent(Clock::time_point now) const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - heard_);
}

bool PeerWatch::Quiet(Clock::time_point now, std::chrono::milliseconds interval) const {
  return now - said_ >= interval;
}

}  // namespace rgpu::proto
