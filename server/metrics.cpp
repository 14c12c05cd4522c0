#include "server/metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

namespace rgpu::server {

const char* ErrorKindName(ErrorKind k) {
  switch (k) {
    case ErrorKind::Auth: return "auth";
    case ErrorKind::Protocol: return "protocol";
    case ErrorKind::Quota: return "quota";
    case ErrorKind::Command: return "command";
    default: return "other";
  }
}

const char* RefusalName(Refusal r) {
  switch (r) {
    case Refusal::Unauthenticated: return "unauthenticated_limit";
    case Refusal::PerAddress: return "per_address_limit";
    case Refusal::Blocked: return "blocked";
    default: return "other";
  }
}

const char* AuthFailureName(AuthFailure f) {
  switch (f) {
    case AuthFailure::NoToken: return "no_token";
    case AuthFailure::UnknownToken: return "unknown_token";
    case AuthFailure::MaxSessions: return "max_sessions";
    case AuthFailure::HelloTimeout: return "hello_timeout";
    case AuthFailure::Handshake: return "tls_handshake";
    default: return "other";
  }
}

namespace {
// One family with one counter per value of an enum, labelled by its name.
template <typename Enum, size_t N>
prometheus::MetricFamily ByReason(const char* name, const char* help, const char* label,
                                  const std::array<std::atomic<uint64_t>, N>& counts,
                                  const char* (*name_of)(Enum)) {
  prometheus::MetricFamily f{name, help, prometheus::MetricType::Counter, {}};
  for (size_t k = 0; k < N; ++k) {
    prometheus::ClientMetric c;
    c.label.push_back({label, name_of(static_cast<Enum>(k))});
    c.counter.value = static_cast<double>(counts[k].load());
    f.metric.push_back(std::move(c));
  }
  return f;
}
}  // namespace

// Builds the metric families from the atomics when Prometheus scrapes.
class Metrics::Collector : public prometheus::Collectable {
 public:
  explicit Collector(const Metrics* m) : m_(m) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    using prometheus::MetricType;
    std::vector<prometheus::MetricFamily> out;
    auto family = [&](const char* name, const char* help, MetricType type,
                      double (*value)(const TenantUsage&)) {
      prometheus::MetricFamily f{name, help, type, {}};
      for (const auto& t : m_->tenants_) {
        prometheus::ClientMetric c;
        c.label.push_back({"tenant", t->id});
        double v = value(*m_->usage_.at(t.get()));
        if (type == MetricType::Counter) c.counter.value = v;
        else c.gauge.value = v;
        f.metric.push_back(std::move(c));
      }
      out.push_back(std::move(f));
    };
    family("rgpu_sessions", "Sessions open now", MetricType::Gauge,
           [](const TenantUsage& u) { return double(u.sessions.load()); });
    family("rgpu_sessions_total", "Sessions accepted since start", MetricType::Counter,
           [](const TenantUsage& u) { return double(u.sessions_total.load()); });
    family("rgpu_commands_total", "Requests handled", MetricType::Counter,
           [](const TenantUsage& u) { return double(u.commands.load()); });
    family("rgpu_received_bytes_total", "Bytes received from clients", MetricType::Counter,
           [](const TenantUsage& u) { return double(u.bytes_in.load()); });
    family("rgpu_sent_bytes_total", "Bytes sent to clients", MetricType::Counter,
           [](const TenantUsage& u) { return double(u.bytes_out.load()); });
    family("rgpu_device_memory_bytes", "Device memory held by buffers now", MetricType::Gauge,
           [](const TenantUsage& u) { return double(u.mem_bytes.load()); });
    family("rgpu_device_busy_seconds_total", "Device time spent on the tenant's kernels",
           MetricType::Counter, [](const TenantUsage& u) { return u.device_ns.load() * 1e-9; });
    prometheus::MetricFamily errors{"rgpu_errors_total", "Errors by kind", MetricType::Counter, {}};
    for (size_t k = 0; k < static_cast<size_t>(ErrorKind::kCount); ++k) {
      prometheus::ClientMetric c;
      c.label.push_back({"kind", ErrorKindName(static_cast<ErrorKind>(k))});
      c.counter.value = static_cast<double>(m_->errors_[k].load());
      errors.metric.push_back(std::move(c));
    }
    out.push_back(std::move(errors));
    out.push_back(ByReason("rgpu_connections_refused_total",
                           "Connections closed at accept, by reason", "reason", m_->refusals_,
                           RefusalName));
    out.push_back(ByReason("rgpu_auth_failures_total",
                           "Connections that did not become sessions, by reason", "reason",
                           m_->auth_failures_, AuthFailureName));
    prometheus::MetricFamily pending{"rgpu_unauthenticated_connections",
                                     "Connections waiting to authenticate now",
                                     MetricType::Gauge, {}};
    pending.metric.emplace_back().gauge.value = static_cast<double>(m_->unauthenticated.load());
    out.push_back(std::move(pending));
    prometheus::MetricFamily dead{"rgpu_dead_peers_total",
                                  "Sessions ended because the client went silent",
                                  MetricType::Counter, {}};
    dead.metric.emplace_back().counter.value = static_cast<double>(m_->dead_peers.load());
    out.push_back(std::move(dead));
    prometheus::MetricFamily
        polling{"rgpu_polling_sessions",
                "Sessions busy-polling for their next request now (a CPU each)",
                MetricType::Gauge,
                {}};
    polling.metric.emplace_back().gauge.value = static_cast<double>(m_->polling.load());
    out.push_back(std::move(polling));
    return out;
  }

 private:
  const Metrics* m_;
};

Metrics::Metrics(const std::vector<std::shared_ptr<const Tenant>>& tenants)
    : tenants_(tenants), collector_(std::make_shared<Collector>(this)) {
  for (const auto& t : tenants_) usage_[t.get()] = std::make_unique<TenantUsage>();
}

Metrics::~Metrics() = default;

void Metrics::AddDeviceTime(const Tenant* t, double seconds) {
  if (!t || seconds <= 0) return;
  auto it = usage_.find(t);
  if (it != usage_.end()) it->second->device_ns += static_cast<uint64_t>(seconds * 1e9);
}

Status Metrics::Serve(const std::string& address) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(address);
  } catch (const std::exception& e) {
    return Status::Error(-30, "metrics endpoint " + address + ": " + e.what());
  }
  exposer_->RegisterCollectable(collector_);
  return Status::Ok();
}

std::string Metrics::Text() const {
  prometheus::TextSerializer ser;
  return ser.Serialize(collector_->Collect());
}

}  // namespace rgpu::server
