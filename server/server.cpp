#include "server/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>

#include <CL/cl.h>
#include <spdlog/spdlog.h>

#include "proto/thread_name.h"
#include "server/session.h"

namespace rgpu::server {

Server::Server(ServerOptions options, std::unique_ptr<Backend> backend)
    : options_(std::move(options)),
      backend_(std::move(backend)),
      tenants_(options_.tenants.empty()
                   ? std::vector<std::shared_ptr<const Tenant>>{std::make_shared<Tenant>()}
                   : options_.tenants),
      metrics_(tenants_),
      gate_(options_.gate, &metrics_) {
  const auto& devices = backend_->Devices();
  for (size_t i = 0; i < std::max<size_t>(devices.size(), 1); ++i) {
    uint32_t cores = 1, units = 1;
    size_t wave = 1;
    bool gpu = false;
    if (i < devices.size()) {
      const auto& d = devices[i];
      gpu = d.type & CL_DEVICE_TYPE_GPU;
      // Seed 001 compares a launch with "the cores of the GPU": a GPU compute unit (an NVIDIA
      // SM) holds 128 FP32 lanes on recent parts; a CPU compute unit is one core. A full wave
      // keeps 2048 work-items resident per SM (NVIDIA's limit since Volta).
      cores = d.compute_units * (gpu ? 128 : 1);
      units = d.compute_units;
      wave = size_t{d.compute_units} * (gpu ? 2048 : 64);
    }
    auto counters = std::make_unique<DeviceCounters>();
    SchedulerOptions sched_options = options_.sched;
    sched_options.be_turns = options_.be_turns < 0 ? gpu : options_.be_turns != 0;
    auto sched = std::make_unique<Scheduler>(backend_.get(), sched_options, cores, wave, units);
    sched->on_device_time = [this, c = counters.get()](const Tenant* t, uint64_t ns) {
      c->busy_ns.fetch_add(ns, std::memory_order_relaxed);
      if (t) metrics_.AddDeviceTime(t, ns / 1e9);
    };
    schedulers_.push_back(std::move(sched));
    device_counters_.push_back(std::move(counters));
  }
}

Server::~Server() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  for (auto& [key, ctx] : shared_contexts_) backend_->Release(proto::ObjType::Context, ctx);
}

Result<BkContext*> Server::SharedContext(const std::string& group, std::span<const int> devices) {
  std::lock_guard lock(shared_mu_);
  auto key = std::make_pair(group, std::vector<int>(devices.begin(), devices.end()));
  auto it = shared_contexts_.find(key);
  if (it == shared_contexts_.end()) {
    auto ctx = backend_->CreateContext(devices);
    if (!ctx.ok()) return ctx.status();
    it = shared_contexts_.emplace(std::move(key), *ctx).first;
    spdlog::info("context group '{}': one device context for its tenants' sessions", group);
  }
  backend_->Retain(proto::ObjType::Context, it->second);
  return it->second;
}

Status Server::Bind() {
  auto addr = proto::ParseAddress(options_.listen);
  if (!addr.ok()) return addr.status();
  // Off loopback, tokens and data cross a network: both authentication (tenants in the
  // config) and TLS are required unless the operator says otherwise.
  const bool authenticated = !options_.tenants.empty();
  const bool encrypted = !options_.tls_cert.empty();
  if (!addr->IsLoopbackOrLocal() && !options_.insecure && !(authenticated && encrypted))
    return Status::Error(-30, "refusing to listen on " + addr->ToString() + " without " +
                                  (authenticated ? "TLS" : "authentication") +
                                  "; configure tenants and [tls] (--config), use a loopback "
                                  "address or a unix: socket, or pass --insecure");
  if (encrypted && !addr->is_unix) {
    auto tls = proto::TlsServer::Create(options_.tls_cert, options_.tls_key, options_.tls_client_ca);
    if (!tls.ok()) return tls.status();
    tls_ = *tls;
    spdlog::info("TLS on: certificate {}{}", options_.tls_cert,
                 options_.tls_client_ca.empty() ? "" : ", client certificates required");
  }
  auto fd = proto::Listen(*addr);
  if (!fd.ok()) return fd.status();
  listen_fd_ = *fd;
  if (addr->is_unix) {
    bound_ = addr->ToString();
  } else {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    uint16_t port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                             : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    proto::Address a = *addr;
    a.port = port;
    bound_ = a.ToString();
  }
  return Status::Ok();
}

namespace {

// "1.2.3.4:5678" / "[::1]:5678" for the log, and the address alone for the gate; a Unix
// peer is "unix" in the log and "local uid N" at the gate (its user, from the kernel).
void DescribePeer(int fd, const sockaddr_storage& ss, std::string* peer, std::string* address) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf));
    *address = buf;
    *peer = *address + ":" + std::to_string(ntohs(sin->sin_port));
  } else if (ss.ss_family == AF_INET6) {
    auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf));
    *address = buf;
    *peer = "[" + *address + "]:" + std::to_string(ntohs(sin6->sin6_port));
  } else {
    ucred cred{};
    socklen_t len = sizeof(cred);
    *address = Gate::kLocal;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
      *address += " uid " + std::to_string(cred.uid);
    *peer = "unix";
  }
}

}  // namespace

void Server::Run() {
  watchdog_ = std::thread(&Server::Watch, this);
  if (options_.inline_waits && options_.serve_aside.count() > 0)
    park_watcher_ = std::thread(&Server::WatchParked, this);
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, 200);
    if (rc > 0) AcceptOne();
  }
  // Graceful stop. New clients are refused from here on.
  ::close(listen_fd_);
  listen_fd_ = -1;
  const auto grace = options_.stop_grace;
  auto deadline = std::chrono::steady_clock::now() + grace;
  std::unique_lock lk(mu_);
  // Let the commands that are running finish, for at most the grace period.
  spdlog::info("stopping: waiting up to {} ms for {} sessions' commands", grace.count(),
               sessions_.size());
  while (std::chrono::steady_clock::now() < deadline) {
    bool busy = false;
    for (auto& [id, s] : sessions_) busy |= s->CommandsInFlight() > 0;
    if (!busy) break;
    lk.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lk.lock();
  }
  // Tell every client, then stop reading: each session releases its objects and ends
  // once its answers (the Goodbye last) are written.
  for (auto& [id, s] : sessions_) {
    s->SayGoodbye("the server is shutting down");
    s->StopReading();
  }
  if (!sessions_cv_.wait_for(lk, grace + std::chrono::seconds(2),
                             [&] { return session_threads_ == 0; })) {
    for (auto& [id, s] : sessions_) s->Stop();
    sessions_cv_.wait_for(lk, std::chrono::seconds(5), [&] { return session_threads_ == 0; });
  }
  if (!sessions_.empty())
    spdlog::warn("{} sessions did not end in time (commands still running on the device)",
                 sessions_.size());
  // Handshakes still running end within their own timeout; they must not outlive us.
  lk.unlock();
  while (handshaking_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  watch_stop_ = true;
  watchdog_.join();
  if (park_watcher_.joinable()) park_watcher_.join();
}

void Server::AcceptOne() {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
  if (fd < 0) return;
  std::string peer, address;
  DescribePeer(fd, ss, &peer, &address);
  const uint64_t id = next_session_++;
  // Refused before a thread, a buffer or a TLS handshake is spent on it.
  Refusal why;
  if (!gate_.Admit(id, fd, address, &why)) {
    spdlog::debug("connection {} from {} refused at accept: {}", id, peer, RefusalName(why));
    ::close(fd);
    return;
  }
  if (ss.ss_family != AF_UNIX) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, 1 /*TCP_NODELAY*/, &one, sizeof(one));
    proto::SetKeepAlive(fd, options_.peer_timeout);
  }
  int buf = 4 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  if (tls_ && ss.ss_family != AF_UNIX) {
    // The handshake runs on the connection's own thread, never on this one, and must end
    // by the Hello deadline (the watchdog shuts the socket down then).
    handshaking_.fetch_add(1);
    std::thread(&Server::Handshake, this, id, fd, peer).detach();
    return;
  }
  std::thread(&Server::SessionThread, this, id, std::make_unique<proto::Stream>(fd), peer).detach();
}

void Server::Handshake(uint64_t id, int fd, std::string peer) {
  proto::NameThread("rgpud-hello");
  std::string client;
  // Its own timeout is a backstop: the watchdog cuts it at the deadline (Gate::Expire).
  auto stream = tls_->Accept(fd, gate_.TimeLeft(id) + std::chrono::seconds(1), &client);
  if (!stream.ok()) {
    gate_.Failed(id, AuthFailure::Handshake, "TLS: " + stream.status().message());
    metrics_.CountError(ErrorKind::Auth);
    gate_.Ended(id);
    handshaking_.fetch_sub(1);
    return;
  }
  handshaking_.fetch_sub(1);  // from here on a session like any other
  SessionThread(id, std::move(stream.value()), client.empty() ? peer : peer + " (" + client + ")");
}

void Server::Watch() {
  proto::NameThread("rgpud-watchdog");
  using namespace std::chrono;
  const auto tick = std::clamp(std::min(options_.peer_timeout, options_.gate.hello_timeout) / 8,
                               milliseconds(20), milliseconds(250));
  while (!watch_stop_) {
    std::this_thread::sleep_for(tick);
    const auto now = steady_clock::now();
    gate_.Expire(now);
    WatchSessions(now);
  }
}

void Server::WatchParked() {
  proto::NameThread("rgpud-parks");
  using namespace std::chrono;
  const auto fast = options_.serve_aside;
  while (!watch_stop_) {
    const auto now = steady_clock::now();
    const auto since =
        nanoseconds(now.time_since_epoch().count() - last_park_ns_.load(std::memory_order_relaxed));
    if (since > milliseconds(100)) {
      std::this_thread::sleep_for(milliseconds(20));
      continue;
    }
    {
      std::lock_guard lk(mu_);
      for (auto& [id, s] : sessions_) s->ServeAsideIfParked(now, fast);
    }
    std::this_thread::sleep_for(fast);
  }
}

void Server::WatchSessions(std::chrono::steady_clock::time_point now) {
  std::lock_guard lk(mu_);
  for (auto it = watches_.begin(); it != watches_.end();)  // sessions that ended
    it = sessions_.count(it->first) ? std::next(it) : watches_.erase(it);
  for (auto& [id, s] : sessions_) {
    // Sessions of clients without Heartbeat rely on TCP keepalive alone: an idle one
    // must not be taken for dead.
    if (!s->tenant() || !s->heartbeat()) continue;
    auto w = watches_.try_emplace(id, options_.peer_timeout, now).first;
    w->second.Observe(s->stream(), now);
    if (w->second.Dead(now)) {
      spdlog::warn("session {} ({}): nothing from the client for {:.1f} s; ending the session "
                   "as if it had closed",
                   id, s->peer(), w->second.Silent(now).count() / 1000.0);
      metrics_.dead_peers.fetch_add(1);
      s->Stop();
      // Watched again (and reported again) only if it is still there a timeout later.
      w->second = proto::PeerWatch(options_.peer_timeout, now);
    } else if (w->second.Quiet(now, options_.heartbeat_interval())) {
      s->SendHeartbeat();
    }
  }
}

size_t Server::LingeringSessions() {
  std::lock_guard lk(mu_);
  return sessions_.size();
}

void Server::Stop() { stopping_ = true; }

void Server::SessionThread(uint64_t id, std::unique_ptr<proto::Stream> stream, std::string peer) {
  proto::NameThread("rgpud-session");
  auto session = std::make_unique<Session>(this, id, std::move(stream), peer);
  {
    std::lock_guard lk(mu_);
    if (stopping_) {
      gate_.Ended(id);
      return;
    }
    sessions_[id] = session.get();
    ++session_threads_;
  }
  session->Serve();
  {
    std::lock_guard lk(mu_);
    sessions_.erase(id);
  }
  gate_.Ended(id);
  session.reset();
  heap_trimmer_.SessionEnded();
  // Last: once Run sees no session thread it returns and the server is destroyed, so this
  // thread touches nothing of it after the lock is released (ThreadSanitizer saw the trimmer
  // and the condition variable used after ~Server when the count was the map's size).
  std::lock_guard lk(mu_);
  --session_threads_;
  sessions_cv_.notify_all();
}

std::vector<Server::SessionSummary> Server::SessionSummaries() {
  std::lock_guard lk(mu_);
  std::vector<SessionSummary> out;
  for (const auto& [id, s] : sessions_)
    if (const Tenant* t = s->tenant())
      out.push_back({id, t, s->peer(), s->LiveObjects(), s->Commands(), s->CommandsInFlight()});
  return out;
}

uint64_t Server::ActiveSessions() {
  std::lock_guard lk(mu_);
  return sessions_.size();
}

Result<const Tenant*> Server::Authenticate(uint64_t session, const std::string& token) {
  auto refuse = [&](AuthFailure why, Status s) -> Result<const Tenant*> {
    metrics_.CountError(ErrorKind::Auth);
    const auto delay = gate_.Failed(session, why, s.message());
    // Slows a guesser down; the connection still counts against the gate's limits.
    const auto until = std::chrono::steady_clock::now() + delay;
    while (!stopping_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return s;
  };
  const Tenant* found = nullptr;
  if (options_.tenants.empty()) {
    found = tenants_.front().get();  // no config: everyone is the anonymous tenant
  } else {
    if (token.empty())
      return refuse(AuthFailure::NoToken,
                    Status::Error(CL_INVALID_VALUE, "this server needs a token (set RGPU_TOKEN)"));
    // Every tenant is tried, so the time taken does not tell which one nearly matched.
    for (const auto& t : tenants_)
      if (TokenMatches(token, t->token_hash) && !found) found = t.get();
    if (!found)
      return refuse(AuthFailure::UnknownToken,
                    Status::Error(CL_INVALID_VALUE, "unknown token (check RGPU_TOKEN)"));
  }
  TenantUsage& u = Usage(found);
  uint32_t n = u.sessions.fetch_add(1) + 1;
  if (found->max_sessions != 0 && n > found->max_sessions) {
    u.sessions.fetch_sub(1);
    return refuse(AuthFailure::MaxSessions,
                  Status::Error(CL_DEVICE_NOT_AVAILABLE,
                                "tenant '" + found->id + "' already has its maximum of " +
                                    std::to_string(found->max_sessions) + " sessions"));
  }
  gate_.Authenticated(session);
  return found;
}

void Server::Leave(const Tenant* t) { Usage(t).sessions.fetch_sub(1); }

void Server::AwaitDispatch(std::span<BkEvent* const> events, const BkQueue* queue,
                           std::chrono::milliseconds limit) {
  for (auto& s : schedulers_) s->AwaitDispatch(events, queue, limit);
}

Scheduler& Server::scheduler(int device) {
  // Sessions pass the device of a queue the backend created, so it is in range; the first
  // scheduler is a safe answer should it not be.
  if (device < 0 || static_cast<size_t>(device) >= schedulers_.size()) return *schedulers_.front();
  return *schedulers_[device];
}

bool Server::BeginPinned() {
  int n = pinned_sessions_.load();
  do {
    if (n >= ServerOptions::kPinnedSessions) return false;
  } while (!pinned_sessions_.compare_exchange_weak(n, n + 1));
  return true;
}

bool Server::BeginPoll(bool latency_critical) {
  const int limit = latency_critical ? options_.max_pollers : std::max(1, options_.max_pollers / 2);
  auto& polling = metrics_.polling;
  int now = polling.load();
  do {
    if (now >= limit) return false;
  } while (!polling.compare_exchange_weak(now, now + 1));
  return true;
}

void Server::EndPoll() { metrics_.polling.fetch_sub(1); }

void Server::LatencyCriticalRequest(bool begin) {
  for (auto& s : schedulers_) s->LatencyCriticalRequest(begin);
}

void Server::CancelScheduled(uint64_t session_id) {
  for (auto& s : schedulers_) s->CancelSession(session_id);
}

void Server::ForgetKernel(BkKernel* kernel, BkKernel* sched_kernel) {
  for (auto& s : schedulers_) {
    s->ForgetKernel(kernel);
    if (sched_kernel) s->ForgetKernel(sched_kernel);
  }
}

uint64_t Server::DeviceBusyNs(int device) const {
  if (device < 0 || static_cast<size_t>(device) >= device_counters_.size()) return 0;
  return device_counters_[device]->busy_ns.load(std::memory_order_relaxed);
}

uint32_t Server::DeviceQueues(int device) const {
  if (device < 0 || static_cast<size_t>(device) >= device_counters_.size()) return 0;
  return static_cast<uint32_t>(std::max<int64_t>(0, device_counters_[device]->queues.load()));
}

void Server::CountQueue(int device, int delta) {
  if (device < 0 || static_cast<size_t>(device) >= device_counters_.size()) return;
  device_counters_[device]->queues.fetch_add(delta, std::memory_order_relaxed);
}


}  // namespace rgpu::server
