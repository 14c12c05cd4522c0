// Which servers the ICD asks for devices: RGPU_SERVER names them (host:port, tls://host:port,
// unix:/path, a comma-separated list of those) or names a pool in etcd
// (etcd://HOST:PORT[,HOST:PORT...]/NAME, docs/pool.md), whose live servers are read from etcd
// together with their load, so that the least busy devices can be offered first.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rgpu::client {

struct Discovery {
  std::vector<std::string> servers;  // addresses to open (in parallel)
  // A pool: the place of each (server, server device index) in the order of load, least busy
  // first. Empty for a list: devices keep the order of the list.
  std::map<std::pair<size_t, uint32_t>, size_t> rank;
  std::string error;  // why there is no server (said under RGPU_DEBUG)
};

// Reads RGPU_SERVER's value. A pool is read from etcd within `budget` (all endpoints
// together), so an unreachable etcd costs no more than an unreachable server.
Discovery Discover(const std::string& rgpu_server, std::chrono::milliseconds budget);

}  // namespace rgpu::client
