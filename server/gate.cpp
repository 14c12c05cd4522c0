#include "server/gate.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include <spdlog/spdlog.h>

namespace rgpu::server {
namespace {
// More addresses than this in failure bursts at once (a spoofing flood of IPv6 sources,
// say) are not tracked further: they get the longest delay, but the table stays bounded.
constexpr size_t kMaxBursts = 100000;
constexpr auto kSummaryEvery = std::chrono::seconds(10);

double Seconds(std::chrono::milliseconds d) { return d.count() / 1000.0; }
}  // namespace

Gate::~Gate() {
  for (auto& [id, a] : arrivals_) ::close(a.fd);
}

bool Gate::Admit(uint64_t id, int fd, const std::string& address, Refusal* why) {
  const auto now = Clock::now();
  std::lock_guard lk(mu_);
  auto refuse = [&](Refusal r) {
    *why = r;
    metrics_->CountRefusal(r);
    ++refused_since_;
    return false;
  };
  if (auto b = bursts_.find(address); b != bursts_.end() && now < b->second.blocked_until)
    return refuse(Refusal::Blocked);
  if (arrivals_.size() >= o_.max_unauthenticated) return refuse(Refusal::Unauthenticated);
  size_t& mine = per_address_[address];
  const bool local = address.rfind(kLocal, 0) == 0;
  if (!local && mine >= o_.max_unauthenticated_per_address) {
    if (mine == 0) per_address_.erase(address);
    return refuse(Refusal::PerAddress);
  }
  const int own = ::dup(fd);
  if (own < 0) {  // out of descriptors: the cheapest answer is no
    if (mine == 0) per_address_.erase(address);
    return refuse(Refusal::Unauthenticated);
  }
  ++mine;
  arrivals_[id] = Arrival{address, own, now + o_.hello_timeout, false};
  metrics_->unauthenticated.store(arrivals_.size());
  return true;
}

void Gate::Forget(std::unordered_map<uint64_t, Arrival>::iterator it) {
  ::close(it->second.fd);
  auto pa = per_address_.find(it->second.address);
  if (pa != per_address_.end() && --pa->second == 0) per_address_.erase(pa);
  arrivals_.erase(it);
  metrics_->unauthenticated.store(arrivals_.size());
}

void Gate::Authenticated(uint64_t id) {
  std::lock_guard lk(mu_);
  if (auto it = arrivals_.find(id); it != arrivals_.end()) Forget(it);
}

bool Gate::Ended(uint64_t id) {
  std::lock_guard lk(mu_);
  auto it = arrivals_.find(id);
  if (it == arrivals_.end()) return false;
  const bool expired = it->second.expired;
  Forget(it);
  return expired;
}

std::chrono::milliseconds Gate::TimeLeft(uint64_t id) {
  std::lock_guard lk(mu_);
  auto it = arrivals_.find(id);
  if (it == arrivals_.end()) return o_.hello_timeout;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(it->second.deadline - Clock::now());
  return std::max(left, std::chrono::milliseconds(1));
}

std::chrono::milliseconds Gate::Failed(uint64_t id, AuthFailure why, const std::string& detail) {
  const auto now = Clock::now();
  std::lock_guard lk(mu_);
  auto arrival = arrivals_.find(id);
  // A connection past its deadline fails for that reason (counted once, here or by Expire).
  if (arrival != arrivals_.end() && (arrival->second.expired || now >= arrival->second.deadline)) {
    if (!arrival->second.expired) {
      arrival->second.expired = true;
      metrics_->CountAuthFailure(AuthFailure::HelloTimeout);
      ++expired_since_;
    }
    return std::chrono::milliseconds(0);
  }
  metrics_->CountAuthFailure(why);
  const std::string address = arrival == arrivals_.end() ? "?" : arrival->second.address;
  if (why == AuthFailure::MaxSessions) {  // a tenant with a valid token: nothing to slow down
    spdlog::warn("connection {} from {} refused: {}", id, address, detail);
    return std::chrono::milliseconds(0);
  }
  // Failed TLS handshakes guess no secret: logged once per burst, never delayed or blocked.
  const bool guess = why != AuthFailure::Handshake;
  const std::string key = guess ? address : address + " (TLS)";
  auto b = bursts_.find(key);
  if (b == bursts_.end()) {
    if (bursts_.size() >= kMaxBursts) return guess ? o_.auth_delay_max : std::chrono::milliseconds(0);
    b = bursts_.emplace(key, Burst{}).first;
  }
  Burst& burst = b->second;
  if (burst.failures > 0 && now - std::max(burst.last, burst.blocked_until) > o_.auth_block)
    burst.failures = 0;  // quiet for long enough: a new burst
  burst.last = now;
  if (++burst.failures == 1)
    spdlog::warn("connection {} from {} refused: {}; further failures from {} are counted "
                 "(rgpu_auth_failures_total), not logged, until it has been quiet for {} s",
                 id, address, detail, key, Seconds(o_.auth_block));
  if (!guess) return std::chrono::milliseconds(0);
  // Blocked at the limit, and again by each failure after it: past the limit an address
  // gets one guess per block.
  if (o_.auth_block_after != 0 && burst.failures >= o_.auth_block_after) {
    burst.blocked_until = now + o_.auth_block;
    if (burst.failures == o_.auth_block_after)
      spdlog::warn("{}: {} failed authentications in a row; its connections are refused for "
                   "{} s, and again after each further failure",
                   address, burst.failures, Seconds(o_.auth_block));
  }
  const uint32_t doublings = std::min<uint32_t>(burst.failures - 1, 20);
  return std::min(o_.auth_delay * (1u << doublings), o_.auth_delay_max);
}

size_t Gate::Expire(Clock::time_point now) {
  std::lock_guard lk(mu_);
  size_t expired = 0;
  for (auto& [id, a] : arrivals_) {
    if (a.expired || now < a.deadline) continue;
    // Wakes whichever thread waits on the socket (the TLS handshake or the session's
    // reader); that thread ends the connection and calls Ended.
    a.expired = true;
    metrics_->CountAuthFailure(AuthFailure::HelloTimeout);
    ::shutdown(a.fd, SHUT_RDWR);
    ++expired;
  }
  expired_since_ += expired;
  for (auto it = bursts_.begin(); it != bursts_.end();) {
    const Burst& b = it->second;
    if (now - std::max(b.last, b.blocked_until) > o_.auth_block) {
      if (b.failures > 1)
        spdlog::info("{}: burst of {} failed authentications over", it->first, b.failures);
      it = bursts_.erase(it);
    } else {
      ++it;
    }
  }
  Summarize(now);
  return expired;
}

void Gate::Summarize(Clock::time_point now) {
  if (refused_since_ + expired_since_ == 0 || now - last_summary_ < kSummaryEvery) return;
  spdlog::info("before authentication: {} connections refused at accept, {} closed after {} s "
               "without Hello (rgpu_connections_refused_total, rgpu_auth_failures_total); {} "
               "waiting now",
               refused_since_, expired_since_, Seconds(o_.hello_timeout), arrivals_.size());
  refused_since_ = expired_since_ = 0;
  last_summary_ = now;
}

}  // namespace rgpu::server
