// A tenant: who a session belongs to, and what the scheduler and quotas need to know of it.
// Tenants come from rgpud's config (server/config.*); without one, every session belongs to
// the anonymous tenant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rgpu::server {

enum class Priority : uint8_t {
  BestEffort = 0,
  LatencyCritical = 1,  // launches go before best-effort work (scheduler policy "fair")
};

struct Tenant {
  std::string id = "anonymous";
  double weight = 1.0;                // share of device time under "fair"
  Priority priority = Priority::BestEffort;
  uint64_t mem_quota_bytes = 0;       // 0 = no quota
  uint32_t max_sessions = 0;          // 0 = no limit
  std::vector<int> devices;           // empty = all devices
};

}  // namespace rgpu::server
