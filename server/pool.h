// Registration in a pool (rgpud --pool etcd://HOST:PORT/NAME): one thread keeps this server's
// record in etcd under a lease (docs/pool.md). Every `refresh` it renews the lease and writes
// the record again with the load measured since the last write; should the server die, etcd
// drops the record when the lease's TTL runs out, and a clean stop revokes the lease at once.
//
// etcd being away never blocks or stops rgpud: sessions do not depend on it. The thread logs
// the outage once, keeps trying, and registers again (with a new lease when the old one
// expired meanwhile) as soon as etcd answers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pool/record.h"
#include "proto/status.h"

namespace rgpu::server {

class Server;

struct PoolOptions {
  std::string url;                      // etcd://HOST:PORT[,HOST:PORT...]/NAME; empty = no pool
  std::vector<std::string> advertise;   // addresses clients should dial; empty = derived
  std::chrono::seconds ttl{10};         // the lease's TTL
  std::chrono::milliseconds refresh{2000};  // how often the lease is renewed, the record rewritten
  std::chrono::seconds load_window{5};  // busy fraction over this much of the recent past
};

// What each device ran over the recent past, from the server's per-device kernel time.
class LoadWindow {
 public:
  explicit LoadWindow(std::chrono::seconds span) : span_(span) {}
  // Records the devices' cumulative busy ns at `now`; returns each device's busy fraction
  // since the oldest sample still within the span (0..1).
  std::vector<double> Sample(std::chrono::steady_clock::time_point now,
                             const std::vector<uint64_t>& busy_ns);

 private:
  struct Point {
    std::chrono::steady_clock::time_point at;
    std::vector<uint64_t> busy_ns;
  };
  std::chrono::seconds span_;
  std::deque<Point> points_;
};

class PoolMember {
 public:
  // Parses the options; the thread starts with Start().
  static Result<std::unique_ptr<PoolMember>> Create(Server* server, PoolOptions options);
  ~PoolMember();

  void Start();
  // Revokes the lease (the record vanishes at once) and ends the thread. Bounded by the etcd
  // timeout; safe to call more than once, and from a signal-watching thread.
  void Stop();

  // The record as it would be written now. Called by the thread only: it advances the load
  // window.
  pool::ServerRecord Describe();
  const std::string& key() const { return key_; }

 private:
  PoolMember(Server* server, PoolOptions options, pool::PoolUrl url);
  void Loop();
  // Renews the lease, or grants a new one (and logs how) when there is none or it expired.
  Status KeepRegistered();

  Server* server_;
  PoolOptions options_;
  pool::PoolUrl url_;
  std::string key_;
  pool::EtcdClient etcd_;  // used by the thread only, and by Stop() after it has ended
  LoadWindow load_;        // used by the thread only
  int64_t lease_ = 0;      // used by the thread only, and by Stop() after it has ended
  bool reachable_ = true;  // the last call succeeded (so an outage is logged once)
  int64_t started_ms_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

// The addresses clients should dial for a server bound to `bound` (its listen address with
// the real port): a wildcard host becomes this host's name; TLS adds the tls:// scheme.
std::vector<std::string> DefaultAdvertise(const std::string& bound, bool tls);

}  // namespace rgpu::server
