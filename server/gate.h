// What a connection may cost before it has authenticated, and what failing to
// authenticate costs (docs/security.md, "Before authentication").
//
// - Admission: at most `max_unauthenticated` connections wait for their Hello at once, at
//   most `max_unauthenticated_per_address` from one peer address; the rest are closed at
//   accept, before a thread or a buffer is spent on them.
// - Deadline: a connection that has not authenticated `hello_timeout` after accept (TLS
//   handshake included) is shut down by the server's watchdog (Expire).
// - Throttling: each failed authentication from an address waits longer before it is
//   answered (auth_delay, doubling); after `auth_block_after` failures in one burst the
//   address is refused at accept for `auth_block`, and again after each further failure. A
//   burst ends when the address has been neither failing nor blocked for `auth_block`. It
//   is logged when it starts, when the address is blocked and when it ends.
//
// Unix-socket peers have no address: each user is one, "local uid N" (from the kernel's
// SO_PEERCRED), throttled like any other but not held to the per-address limit.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "server/metrics.h"

namespace rgpu::server {

struct GateOptions {
  std::chrono::milliseconds hello_timeout{10000};
  size_t max_unauthenticated = 256;
  size_t max_unauthenticated_per_address = 32;
  std::chrono::milliseconds auth_delay{100};  // before the first refusal; doubles each time
  std::chrono::milliseconds auth_delay_max{5000};
  uint32_t auth_block_after = 10;               // failures in a burst; 0 = never block
  std::chrono::milliseconds auth_block{60000};  // how long a blocked address is refused
};

class Gate {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr const char* kLocal = "local";

  Gate(GateOptions options, Metrics* metrics) : o_(options), metrics_(metrics) {}
  ~Gate();
  const GateOptions& options() const { return o_; }

  // At accept. Admits connection `id` from `address` (held until Authenticated or Ended) or
  // says why not; the caller then closes `fd`. The gate keeps its own descriptor of the
  // socket, so that it can shut it down at the deadline whoever owns `fd` by then.
  bool Admit(uint64_t id, int fd, const std::string& address, Refusal* why);
  // The connection authenticated: it no longer counts against the limits above.
  void Authenticated(uint64_t id);
  // The connection ended (any time; idempotent). True if it was closed by Expire.
  bool Ended(uint64_t id);
  // The time left before connection `id` must have authenticated.
  std::chrono::milliseconds TimeLeft(uint64_t id);

  // A failed authentication of connection `id`: counts it, logs the first of a burst and
  // the block, and returns how long to wait before refusing (0 for failures that guess
  // nothing: a full tenant, a failed TLS handshake).
  std::chrono::milliseconds Failed(uint64_t id, AuthFailure why, const std::string& detail);

  // The watchdog's call: shuts down connections past their deadline, forgets old bursts,
  // and logs what was refused or expired since the last summary. Returns how many expired.
  size_t Expire(Clock::time_point now);

 private:
  struct Arrival {
    std::string address;
    int fd = -1;  // the gate's own descriptor of the socket (dup)
    Clock::time_point deadline;
    bool expired = false;
  };
  struct Burst {
    uint32_t failures = 0;
    Clock::time_point last;
    Clock::time_point blocked_until;
  };
  void Forget(std::unordered_map<uint64_t, Arrival>::iterator it);  // requires mu_
  void Summarize(Clock::time_point now);                            // requires mu_

  const GateOptions o_;
  Metrics* metrics_;
  std::mutex mu_;
  std::unordered_map<uint64_t, Arrival> arrivals_;       // GUARDED_BY(mu_)
  std::unordered_map<std::string, size_t> per_address_;  // GUARDED_BY(mu_)
  std::unordered_map<std::string, Burst> bursts_;        // GUARDED_BY(mu_)
  // For the periodic summary line: what was refused or expired since the last one.
  uint64_t refused_since_ = 0, expired_since_ = 0;  // GUARDED_BY(mu_)
  Clock::time_point last_summary_{};               // GUARDED_BY(mu_)
};

}  // namespace rgpu::server
