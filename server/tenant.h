// A tenant: who a session belongs to, and what the scheduler and quotas need to know of it.
// Tenants come from rgpud's config (server/config.*); without one, every session belongs to
// the anonymous tenant.
//
// A Tenant's settings never change while the server runs, so sessions and the scheduler
// read them through `const Tenant*` without a lock. What a tenant currently uses (sessions,
// memory) is kept by the server (Server::Usage), not here, so Tenant stays a plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rgpu::server {

enum class Priority : uint8_t {
  BestEffort = 0,
  LatencyCritical = 1,  // launches go before best-effort work (scheduler policy "fair")
};
const char* PriorityName(Priority p);  // "best-effort", "latency-critical" (as in the config)

struct Tenant {
  std::string id = "anonymous";
  double weight = 1.0;                // share of device time under "fair"
  Priority priority = Priority::BestEffort;
  uint64_t mem_quota_bytes = 0;       // 0 = no quota
  uint32_t max_sessions = 0;          // 0 = no limit
  std::vector<int> devices;           // empty = all devices
  // "sha256$<salt hex>$<digest hex>": SHA-256 over the salt's hex text followed by the
  // token. Empty only for the anonymous tenant of a server without config (no token needed).
  std::string token_hash;
  bool admin = false;  // Stats (rgpu status) shows it every tenant, not only itself
  // Tenants naming the same group trust each other: their sessions share one device context
  // per set of devices, so their kernels can run on the device at once (no context switch
  // between them). Empty: every session has contexts of its own. docs/security.md says
  // what sharing gives up.
  std::string context_group;

  bool MayUse(int device) const;
};

// Salted SHA-256 as stored in `token_hash`; HashToken draws a fresh random salt.
std::string HashToken(const std::string& token);
// Compares in constant time.
bool TokenMatches(const std::string& token, const std::string& token_hash);

}  // namespace rgpu::server
