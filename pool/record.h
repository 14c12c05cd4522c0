// A pool of rgpud servers in etcd: the address syntax, where each server's record lives,
// what the record says (JSON), and the order in which clients are offered the devices.
// docs/pool.md is the specification; rgpud writes records (server/pool.cpp), the ICD and
// `rgpu status --pool` read them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pool/etcd.h"
#include "proto/status.h"

namespace rgpu::pool {

// etcd://HOST:PORT[,HOST:PORT...]/NAME: the endpoints of one etcd cluster and the pool's name
// (letters, digits, '.', '_', '-').
struct PoolUrl {
  std::vector<std::string> endpoints;
  std::string name;
};
bool IsPoolUrl(const std::string& text);
Result<PoolUrl> ParsePoolUrl(const std::string& text);
// Every server record of pool `name` lives under this prefix, keyed by its first address.
std::string ServersPrefix(const std::string& name);

constexpr int kRecordVersion = 1;

struct DeviceLoad {
  uint32_t index = 0;  // the server's device index (what its clients call the device)
  std::string name;
  std::string type;    // "gpu", "cpu", "accelerator", "other"
  uint32_t compute_units = 0;
  uint64_t global_mem = 0;
  uint64_t max_alloc = 0;
  double busy = 0;     // fraction of the last few seconds the device ran kernels, 0..1
  uint32_t queues = 0; // command queues open on it now (programs using it)
  std::vector<std::string> tenants;  // tenants that may use it (the config's `devices`)
};

struct TenantLoad {
  std::string id;
  uint32_t sessions = 0;
  uint64_t mem_bytes = 0;  // device memory its buffers hold now
};

struct ServerRecord {
  int version = kRecordVersion;
  std::string name;
  std::vector<std::string> addresses;  // what clients dial, best first (RGPU_SERVER forms)
  std::vector<DeviceLoad> devices;
  std::vector<TenantLoad> tenants;
  uint32_t sessions = 0;
  uint64_t mem_used = 0;      // device memory held by all buffers on this server
  int64_t started_ms = 0;     // Unix time in ms
  int64_t updated_ms = 0;
  std::string key;            // the etcd key it was read from (not part of the JSON)
};

std::string ToJson(const ServerRecord& r);
// Refuses records that are not JSON objects of a known version or lack an address.
Result<ServerRecord> FromJson(const std::string& text);

// Reads every live record of a pool. Malformed records are skipped (and counted).
struct PoolListing {
  std::vector<ServerRecord> servers;
  size_t malformed = 0;
};
Result<PoolListing> ReadPool(EtcdClient& etcd, const std::string& name);

// The devices of a pool in the order clients are offered them: least busy first, then fewest
// open queues, then server and device order (so that equal loads give a stable order).
struct Placement {
  size_t server = 0;  // index into the listing
  uint32_t device = 0;
};
std::vector<Placement> OrderByLoad(const std::vector<ServerRecord>& servers);

}  // namespace rgpu::pool
