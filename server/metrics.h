// What rgpud counts, per tenant and per error kind, and the Prometheus endpoint that shows
// it (--metrics HOST:PORT, prometheus-cpp). Hot paths only bump atomics; the Prometheus
// text is built from them when a scraper asks, so metrics cost nothing between scrapes.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "proto/status.h"
#include "server/tenant.h"

namespace prometheus {
class Exposer;
}

namespace rgpu::server {

// What one tenant uses and has done, shared by all of its sessions.
struct TenantUsage {
  std::atomic<uint32_t> sessions{0};
  std::atomic<uint64_t> mem_bytes{0};   // device memory held by its buffers now
  std::atomic<uint64_t> device_ns{0};   // device busy time of its kernels (scheduler)
  std::atomic<uint64_t> commands{0};
  std::atomic<uint64_t> bytes_in{0};    // client -> server, frames included
  std::atomic<uint64_t> bytes_out{0};   // server -> client
  std::atomic<uint64_t> sessions_total{0};
};

enum class ErrorKind : uint8_t {
  Auth,      // Hello refused: unknown or missing token, too many sessions
  Protocol,  // a malformed or hostile request ended a session
  Quota,     // a buffer over the tenant's memory quota
  Command,   // a request failed with an OpenCL error (bad id, device error, ...)
  kCount,
};
const char* ErrorKindName(ErrorKind k);

// Why a connection was closed at accept, before reading a byte (server/gate.h).
enum class Refusal : uint8_t {
  Unauthenticated,  // max_unauthenticated connections are already waiting to authenticate
  PerAddress,       // as many from this peer address (max_unauthenticated_per_address)
  Blocked,          // the address failed to authenticate too often and is blocked for now
  kCount,
};
const char* RefusalName(Refusal r);

// Why a connection did not become a session.
enum class AuthFailure : uint8_t {
  NoToken,       // the server has tenants and Hello carried no token
  UnknownToken,  // no tenant has this token
  MaxSessions,   // the tenant already has max_sessions sessions
  HelloTimeout,  // no Hello (or no TLS handshake) within hello_timeout
  Handshake,     // the TLS handshake failed
  kCount,
};
const char* AuthFailureName(AuthFailure f);

class Metrics {
 public:
  explicit Metrics(const std::vector<std::shared_ptr<const Tenant>>& tenants);
  ~Metrics();

  TenantUsage& Usage(const Tenant* t) { return *usage_.at(t); }
  // For the scheduler: `seconds` of device time spent on `t`'s work.
  void AddDeviceTime(const Tenant* t, double seconds);
  void CountError(ErrorKind k) { errors_[static_cast<size_t>(k)].fetch_add(1); }
  uint64_t Errors(ErrorKind k) const { return errors_[static_cast<size_t>(k)].load(); }
  void CountRefusal(Refusal r) { refusals_[static_cast<size_t>(r)].fetch_add(1); }
  void CountAuthFailure(AuthFailure f) { auth_failures_[static_cast<size_t>(f)].fetch_add(1); }
  uint64_t Refusals(Refusal r) const { return refusals_[static_cast<size_t>(r)].load(); }
  uint64_t AuthFailures(AuthFailure f) const { return auth_failures_[static_cast<size_t>(f)].load(); }
  // Connections accepted and not (yet) authenticated, kept by the gate.
  std::atomic<uint64_t> unauthenticated{0};
  // Sessions ended because their peer went silent (heartbeat or keepalive).
  std::atomic<uint64_t> dead_peers{0};
  // Sessions busy-polling for their next request now, each keeping a CPU busy; the server
  // keeps it within --max-pollers (Server::BeginPoll).
  std::atomic<int> polling{0};

  // Starts the HTTP endpoint (path /metrics) on `address` ("127.0.0.1:9420").
  Status Serve(const std::string& address);
  // The Prometheus text format of everything above (what /metrics answers).
  std::string Text() const;

 private:
  class Collector;
  std::vector<std::shared_ptr<const Tenant>> tenants_;
  std::unordered_map<const Tenant*, std::unique_ptr<TenantUsage>> usage_;  // keys fixed
  std::array<std::atomic<uint64_t>, static_cast<size_t>(ErrorKind::kCount)> errors_{};
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Refusal::kCount)> refusals_{};
  std::array<std::atomic<uint64_t>, static_cast<size_t>(AuthFailure::kCount)> auth_failures_{};
  std::shared_ptr<Collector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace rgpu::server
