// A small client of etcd's v3 API through its JSON gateway (HTTP POST /v3/..., keys and
// values base64), over libcurl. Only the calls a pool needs: leases (grant, keep alive,
// revoke) and keys (put under a lease, read a prefix, delete). etcd does the coordination:
// a key put under a lease vanishes when the lease is not renewed within its TTL.
//
// Several endpoints of one etcd cluster may be given; each call tries them in turn, starting
// with the last one that answered. Every call is bounded by the timeout given at construction
// (per endpoint tried), and none ever throws.
//
// Thread safety: one client may be used from one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/status.h"

namespace rgpu::pool {

struct KeyValue {
  std::string key, value;
  int64_t lease = 0;
};

class EtcdClient {
 public:
  // `endpoints`: "host:port" (http) or "http://host:port".
  EtcdClient(std::vector<std::string> endpoints, std::chrono::milliseconds timeout);

  // A new lease that expires `ttl_s` seconds after its last renewal. Returns its id.
  Result<int64_t> Grant(int64_t ttl_s);
  // Renews the lease; returns the TTL etcd restarted it with, 0 if the lease is gone
  // (expired or revoked: grant a new one).
  Result<int64_t> KeepAlive(int64_t lease);
  Status Revoke(int64_t lease);
  // `lease` 0: the key does not expire.
  Status Put(const std::string& key, const std::string& value, int64_t lease);
  // Every key that starts with `prefix`, in key order.
  Result<std::vector<KeyValue>> Prefix(const std::string& prefix);
  Status Delete(const std::string& key);

  // The endpoint that answered last (for log lines).
  const std::string& endpoint() const { return endpoints_[current_]; }

 private:
  // POSTs `body` (JSON) to `path` on the endpoints in turn; the first JSON answer wins.
  Result<std::string> Post(const std::string& path, const std::string& body);

  std::vector<std::string> endpoints_;
  std::chrono::milliseconds timeout_;
  size_t current_ = 0;
};

std::string Base64Encode(const std::string& raw);
// Empty on malformed input.
std::string Base64Decode(const std::string& text);

}  // namespace rgpu::pool
