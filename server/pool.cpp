#include "server/pool.h"

#include <unistd.h>

#include <CL/cl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "proto/thread_name.h"
#include "proto/transport.h"
#include "server/server.h"

namespace rgpu::server {
namespace {

using Clock = std::chrono::steady_clock;

// One etcd call may take this long per endpoint: short enough that a stop (which revokes the
// lease) stays prompt, long enough for an etcd on a busy network.
constexpr auto kEtcdTimeout = std::chrono::milliseconds(1000);

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string TypeName(uint64_t type) {
  if (type & CL_DEVICE_TYPE_GPU) return "gpu";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  if (type & CL_DEVICE_TYPE_CPU) return "cpu";
  return "other";
}

uint64_t MaxAlloc(Backend& backend, int device) {
  std::vector<uint8_t> raw;
  cl_ulong v = 0;
  if (backend.DeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &raw).ok() && raw.size() == sizeof(v))
    std::memcpy(&v, raw.data(), sizeof(v));
  return v;
}

}  // namespace

std::vector<double> LoadWindow::Sample(Clock::time_point now, const std::vector<uint64_t>& busy_ns) {
  points_.push_back({now, busy_ns});
  while (points_.size() > 2 && points_[1].at <= now - span_) points_.pop_front();
  std::vector<double> out(busy_ns.size(), 0.0);
  const Point& oldest = points_.front();
  const double wall_ns = std::chrono::duration<double, std::nano>(now - oldest.at).count();
  if (points_.size() < 2 || wall_ns <= 0) return out;
  for (size_t d = 0; d < busy_ns.size() && d < oldest.busy_ns.size(); ++d) {
    // A kernel is charged when it ends, all at once: a long one may charge more than the
    // window holds.
    const double ran = static_cast<double>(busy_ns[d] - std::min(busy_ns[d], oldest.busy_ns[d]));
    out[d] = std::clamp(ran / wall_ns, 0.0, 1.0);
  }
  return out;
}

std::vector<std::string> DefaultAdvertise(const std::string& bound, bool tls) {
  auto addr = proto::ParseAddress(bound);
  if (!addr.ok()) return {bound};
  if (addr->is_unix) return {addr->ToString()};
  std::string host = addr->host;
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") {
    char name[256] = {};
    host = gethostname(name, sizeof(name) - 1) == 0 && name[0] ? name : "localhost";
  }
  const bool v6 = host.find(':') != std::string::npos;
  std::string hostport = (v6 ? "[" + host + "]" : host) + ":" + std::to_string(addr->port);
  return {tls ? "tls://" + hostport : hostport};
}

Result<std::unique_ptr<PoolMember>> PoolMember::Create(Server* server, PoolOptions options) {
  auto url = pool::ParsePoolUrl(options.url);
  if (!url.ok()) return url.status();
  if (options.ttl < std::chrono::seconds(2))
    return Status::Error(CL_INVALID_VALUE, "pool: the lease TTL must be at least 2 s");
  if (options.refresh >= options.ttl)
    return Status::Error(CL_INVALID_VALUE, "pool: refresh must be shorter than the TTL");
  if (options.advertise.empty())
    options.advertise = DefaultAdvertise(server->bound_address(), !server->options().tls_cert.empty());
  return std::unique_ptr<PoolMember>(new PoolMember(server, std::move(options), std::move(*url)));
}

PoolMember::PoolMember(Server* server, PoolOptions options, pool::PoolUrl url)
    : server_(server),
      options_(std::move(options)),
      url_(std::move(url)),
      key_(pool::ServersPrefix(url_.name) + options_.advertise.front()),
      etcd_(url_.endpoints, kEtcdTimeout),
      load_(options_.load_window),
      started_ms_(UnixMs()) {}

PoolMember::~PoolMember() { Stop(); }

void PoolMember::Start() {
  spdlog::info("pool {}: registering {} as {} in etcd {} (TTL {} s)", url_.name,
               options_.advertise.front(), key_, etcd_.endpoint(), options_.ttl.count());
  thread_ = std::thread(&PoolMember::Loop, this);
}

void PoolMember::Stop() {
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (lease_ == 0) return;
  if (Status s = etcd_.Revoke(lease_); s.ok())
    spdlog::info("pool {}: deregistered (lease revoked)", url_.name);
  else
    spdlog::warn("pool {}: could not revoke the lease ({}); the record expires within {} s",
                 url_.name, s.message(), options_.ttl.count());
  lease_ = 0;
}

pool::ServerRecord PoolMember::Describe() {
  pool::ServerRecord r;
  r.name = server_->name();
  r.addresses = options_.advertise;
  const auto& devices = server_->backend().Devices();
  std::vector<uint64_t> busy_ns;
  for (size_t i = 0; i < devices.size(); ++i) busy_ns.push_back(server_->DeviceBusyNs(static_cast<int>(i)));
  const std::vector<double> busy = load_.Sample(Clock::now(), busy_ns);
  for (size_t i = 0; i < devices.size(); ++i) {
    const int index = static_cast<int>(i);
    pool::DeviceLoad d;
    d.index = static_cast<uint32_t>(i);
    d.name = devices[i].name;
    d.type = TypeName(devices[i].type);
    d.compute_units = devices[i].compute_units;
    d.global_mem = devices[i].global_mem;
    d.max_alloc = MaxAlloc(server_->backend(), index);
    d.busy = busy[i];
    d.queues = server_->DeviceQueues(index);
    for (const auto& t : server_->tenants())
      if (t->MayUse(index)) d.tenants.push_back(t->id);
    r.devices.push_back(std::move(d));
  }
  for (const auto& t : server_->tenants()) {
    TenantUsage& u = server_->Usage(t.get());
    r.tenants.push_back({t->id, u.sessions.load(), u.mem_bytes.load()});
    r.mem_used += u.mem_bytes.load();
  }
  r.sessions = static_cast<uint32_t>(server_->ActiveSessions());
  r.started_ms = started_ms_;
  r.updated_ms = UnixMs();
  return r;
}

Status PoolMember::KeepRegistered() {
  if (lease_ != 0) {
    auto ttl = etcd_.KeepAlive(lease_);
    if (!ttl.ok()) return ttl.status();
    if (*ttl > 0) return Status::Ok();
    spdlog::info("pool {}: lease {:x} expired while etcd was away; granting a new one", url_.name, lease_);
    lease_ = 0;
  }
  auto lease = etcd_.Grant(options_.ttl.count());
  if (!lease.ok()) return lease.status();
  lease_ = *lease;
  spdlog::info("pool {}: lease {:x} granted by {}", url_.name, lease_, etcd_.endpoint());
  return Status::Ok();
}

void PoolMember::Loop() {
  proto::NameThread("rgpud-pool");
  std::unique_lock lk(mu_);
  while (!stopping_) {
    lk.unlock();
    Status s = KeepRegistered();
    if (s.ok()) s = etcd_.Put(key_, pool::ToJson(Describe()), lease_);
    // etcd lost the lease between the renewal and the write (it restarted without its data):
    // grant a new one at the next round.
    if (!s.ok() && s.message().find("lease not found") != std::string::npos) lease_ = 0;
    if (s.ok() && !reachable_)
      spdlog::info("pool {}: registered again through {}", url_.name, etcd_.endpoint());
    if (!s.ok() && reachable_)
      spdlog::warn("pool {}: {}; retrying every {} ms (sessions are not affected)", url_.name,
                   s.message(), options_.refresh.count());
    reachable_ = s.ok();
    lk.lock();
    cv_.wait_for(lk, options_.refresh, [&] { return stopping_; });
  }
}

}  // namespace rgpu::server
