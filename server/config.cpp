#include "server/config.h"

#include <toml++/toml.h>

#include <cctype>
#include <set>

#include "server/server.h"
#include "server/tenant.h"

namespace rgpu::server {
namespace {

constexpr int32_t kConfigError = -30;  // CL_INVALID_VALUE

Status Bad(const std::string& path, const std::string& what) {
  return Status::Error(kConfigError, path + ": " + what);
}

// Every key a table may hold; anything else is a typo.
Status CheckKeys(const std::string& path, const toml::table& t, const std::string& where,
                 std::initializer_list<std::string_view> allowed) {
  std::set<std::string_view> ok(allowed);
  for (const auto& [k, v] : t)
    if (!ok.count(k.str())) return Bad(path, "unknown key '" + std::string(k.str()) + "' in " + where);
  return Status::Ok();
}

// A byte count written as an integer or as a string with a unit ("4GiB").
Result<uint64_t> ByteCount(const toml::node* n, const std::string& what) {
  if (auto i = n->value<int64_t>()) {
    if (*i < 0) return Status::Error(kConfigError, what + " must not be negative");
    return static_cast<uint64_t>(*i);
  }
  if (auto s = n->value<std::string>()) {
    auto b = ParseBytes(*s);
    if (!b.ok()) return Status::Error(kConfigError, what + ": " + b.status().message());
    return b;
  }
  return Status::Error(kConfigError, what + " must be a number of bytes or a string like \"4GiB\"");
}

// [pool]: registration in an etcd pool (server/pool.h, docs/pool.md).
Status LoadPool(const std::string& path, const toml::table& t, PoolOptions* pool) {
  if (Status s = CheckKeys(path, t, "[pool]", {"url", "advertise", "ttl_seconds", "refresh_seconds"}); !s.ok())
    return s;
  if (auto v = t["url"].value<std::string>()) pool->url = *v;
  if (const toml::node* a = t["advertise"].node()) {
    pool->advertise.clear();
    if (auto one = a->value<std::string>()) {
      pool->advertise.push_back(*one);
    } else if (auto* list = a->as_array()) {
      for (auto& e : *list) {
        auto s = e.value<std::string>();
        if (!s) return Bad(path, "[pool] advertise lists addresses as strings");
        pool->advertise.push_back(*s);
      }
    } else {
      return Bad(path, "[pool] advertise must be an address or a list of addresses");
    }
  }
  if (auto v = t["ttl_seconds"].value<int64_t>()) {
    if (*v < 2 || *v > 3600) return Bad(path, "[pool] ttl_seconds must be between 2 and 3600");
    pool->ttl = std::chrono::seconds(*v);
  }
  if (auto v = t["refresh_seconds"].value<double>()) {
    if (!(*v >= 0.1)) return Bad(path, "[pool] refresh_seconds must be at least 0.1");
    pool->refresh = std::chrono::milliseconds(static_cast<int64_t>(*v * 1000));
  }
  if (pool->refresh >= pool->ttl) return Bad(path, "[pool] refresh_seconds must be shorter than ttl_seconds");
  return Status::Ok();
}

// Before authentication and dead peers (server/gate.h, ServerOptions::peer_timeout).
Status LoadAbuseLimits(const std::string& path, const toml::table& limits, ServerOptions* opt) {
  auto seconds = [&](const char* key, std::chrono::milliseconds* field) -> Status {
    const toml::node* n = limits[key].node();
    if (!n) return Status::Ok();
    auto v = n->value<double>();
    if (!v || !(*v > 0)) return Bad(path, std::string("[limits] ") + key + " must be a positive number");
    *field = std::chrono::milliseconds(static_cast<int64_t>(*v * 1000));
    return Status::Ok();
  };
  auto count = [&](const char* key, auto* field, int64_t min) -> Status {
    const toml::node* n = limits[key].node();
    if (!n) return Status::Ok();
    auto v = n->value<int64_t>();
    if (!v || *v < min)
      return Bad(path, std::string("[limits] ") + key + " must be an integer of at least " +
                           std::to_string(min));
    *field = static_cast<std::remove_reference_t<decltype(*field)>>(*v);
    return Status::Ok();
  };
  GateOptions& g = opt->gate;
  int64_t delay_ms = g.auth_delay.count();
  for (Status s : {seconds("hello_timeout_seconds", &g.hello_timeout),
                   count("max_unauthenticated", &g.max_unauthenticated, 1),
                   count("max_unauthenticated_per_address", &g.max_unauthenticated_per_address, 1),
                   count("auth_delay_ms", &delay_ms, 0),
                   count("auth_block_after", &g.auth_block_after, 0),
                   seconds("auth_block_seconds", &g.auth_block),
                   seconds("peer_timeout_seconds", &opt->peer_timeout)})
    if (!s.ok()) return s;
  g.auth_delay = std::chrono::milliseconds(delay_ms);
  return Status::Ok();
}

}  // namespace

Result<uint64_t> ParseBytes(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) return Status::Error(kConfigError, "bad size '" + text + "'");
  uint64_t n = std::stoull(text.substr(0, i));
  while (i < text.size() && text[i] == ' ') ++i;
  std::string unit = text.substr(i);
  uint64_t mul = 1;
  if (unit.empty() || unit == "B") mul = 1;
  else if (unit == "KiB") mul = 1ull << 10;
  else if (unit == "MiB") mul = 1ull << 20;
  else if (unit == "GiB") mul = 1ull << 30;
  else if (unit == "TiB") mul = 1ull << 40;
  else return Status::Error(kConfigError, "unknown unit '" + unit + "' (use B, KiB, MiB, GiB, TiB)");
  return n * mul;
}

namespace {

Status LoadServer(const std::string& path, const toml::table& server, ServerOptions* opt) {
  if (Status s = CheckKeys(path, server, "[server]", {"listen", "name", "metrics", "insecure"}); !s.ok())
    return s;
  if (auto v = server["listen"].value<std::string>()) opt->listen = *v;
  if (auto v = server["name"].value<std::string>()) opt->name = *v;
  if (auto v = server["metrics"].value<std::string>()) opt->metrics = *v;
  if (auto v = server["insecure"].value<bool>()) opt->insecure = *v;
  return Status::Ok();
}

Status LoadTls(const std::string& path, const toml::table& tls, ServerOptions* opt) {
  if (Status s = CheckKeys(path, tls, "[tls]", {"cert", "key", "client_ca"}); !s.ok()) return s;
  opt->tls_cert = tls["cert"].value_or(std::string());
  opt->tls_key = tls["key"].value_or(std::string());
  opt->tls_client_ca = tls["client_ca"].value_or(std::string());
  if (opt->tls_cert.empty() != opt->tls_key.empty()) return Bad(path, "[tls] needs both cert and key");
  if (!opt->tls_client_ca.empty() && opt->tls_cert.empty())
    return Bad(path, "[tls] client_ca needs cert and key too");
  return Status::Ok();
}

Status LoadLimits(const std::string& path, const toml::table& limits, ServerOptions* opt) {
  if (Status s = CheckKeys(path, limits, "[limits]",
                           {"max_frame", "max_objects_per_session", "max_staging",
                            "max_commands_in_flight", "max_outbox", "stop_grace_seconds",
                            "hello_timeout_seconds", "max_unauthenticated",
                            "max_unauthenticated_per_address", "auth_delay_ms",
                            "auth_block_after", "auth_block_seconds", "peer_timeout_seconds"});
      !s.ok())
    return s;
  auto bytes = [&](const char* key, auto* field) -> Status {
    const toml::node* n = limits[key].node();
    if (!n) return Status::Ok();
    auto b = ByteCount(n, std::string("[limits] ") + key);
    if (!b.ok()) return Bad(path, b.status().message());
    *field = static_cast<std::remove_reference_t<decltype(*field)>>(*b);
    return Status::Ok();
  };
  for (Status s : {bytes("max_frame", &opt->max_frame),
                   bytes("max_objects_per_session", &opt->max_objects_per_session),
                   bytes("max_staging", &opt->max_staging_bytes),
                   bytes("max_commands_in_flight", &opt->max_commands_in_flight),
                   bytes("max_outbox", &opt->max_outbox_bytes)})
    if (!s.ok()) return s;
  if (opt->max_frame < (1u << 20) + 64 || opt->max_frame > proto::kMaxBody)
    return Bad(path, "[limits] max_frame must be between 1 MiB + 64 and 8 MiB");
  if (auto v = limits["stop_grace_seconds"].value<double>())
    opt->stop_grace = std::chrono::milliseconds(static_cast<int64_t>(*v * 1000));
  return LoadAbuseLimits(path, limits, opt);
}

// One [[tenant]] entry.
Result<std::shared_ptr<Tenant>> LoadTenant(const std::string& path, const toml::table& t) {
  if (Status s = CheckKeys(path, t, "[[tenant]]",
                           {"id", "token_hash", "weight", "priority", "mem_quota", "max_sessions",
                            "devices", "admin", "context_group"});
      !s.ok())
    return s;
  auto tenant = std::make_shared<Tenant>();
  tenant->id = t["id"].value_or(std::string());
  if (tenant->id.empty()) return Bad(path, "a [[tenant]] has no id");
  const std::string where = "tenant '" + tenant->id + "'";
  tenant->token_hash = t["token_hash"].value_or(std::string());
  if (tenant->token_hash.rfind("sha256$", 0) != 0)
    return Bad(path, where + ": token_hash must be 'sha256$SALT$DIGEST' (rgpud --hash-token)");
  tenant->weight = t["weight"].value_or(1.0);
  if (!(tenant->weight > 0)) return Bad(path, where + ": weight must be positive");
  const std::string prio = t["priority"].value_or(std::string("best-effort"));
  if (prio == "latency-critical") tenant->priority = Priority::LatencyCritical;
  else if (prio == "best-effort") tenant->priority = Priority::BestEffort;
  else return Bad(path, where + ": priority must be \"latency-critical\" or \"best-effort\"");
  if (const toml::node* q = t["mem_quota"].node()) {
    auto b = ByteCount(q, where + " mem_quota");
    if (!b.ok()) return Bad(path, b.status().message());
    tenant->mem_quota_bytes = *b;
  }
  tenant->admin = t["admin"].value_or(false);
  tenant->context_group = t["context_group"].value_or(std::string());
  const int64_t ms = t["max_sessions"].value_or(int64_t{0});
  if (ms < 0) return Bad(path, where + ": max_sessions must not be negative");
  tenant->max_sessions = static_cast<uint32_t>(ms);
  if (auto* devs = t["devices"].as_array()) {
    for (auto& d : *devs) {
      auto i = d.value<int64_t>();
      if (!i || *i < 0) return Bad(path, where + ": devices lists device indices (0, 1, ...)");
      tenant->devices.push_back(static_cast<int>(*i));
    }
  }
  return tenant;
}

}  // namespace

Status LoadConfig(const std::string& path, ServerOptions* opt) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return Bad(path, std::string(e.description()) + " at line " + std::to_string(e.source().begin.line));
  }
  if (Status s = CheckKeys(path, root, "the top level", {"server", "tls", "limits", "pool", "tenant"}); !s.ok())
    return s;
  // A section written as a plain key (`tenant = 5`) would otherwise be skipped in silence.
  for (const char* name : {"server", "tls", "limits", "pool"})
    if (root.contains(name) && !root[name].as_table())
      return Bad(path, std::string(name) + " must be a [" + name + "] table");
  if (root.contains("tenant") && !root["tenant"].as_array())
    return Bad(path, "tenant must be [[tenant]] tables");
  if (auto* server = root["server"].as_table())
    if (Status s = LoadServer(path, *server, opt); !s.ok()) return s;
  if (auto* tls = root["tls"].as_table())
    if (Status s = LoadTls(path, *tls, opt); !s.ok()) return s;
  if (auto* pool = root["pool"].as_table())
    if (Status s = LoadPool(path, *pool, &opt->pool); !s.ok()) return s;
  if (auto* limits = root["limits"].as_table())
    if (Status s = LoadLimits(path, *limits, opt); !s.ok()) return s;
  if (auto* tenants = root["tenant"].as_array()) {
    std::set<std::string> ids;
    for (auto& node : *tenants) {
      auto* t = node.as_table();
      if (!t) return Bad(path, "[[tenant]] entries must be tables");
      auto tenant = LoadTenant(path, *t);
      if (!tenant.ok()) return tenant.status();
      if (!ids.insert((*tenant)->id).second) return Bad(path, "tenant '" + (*tenant)->id + "' is listed twice");
      opt->tenants.push_back(std::move(*tenant));
    }
  }
  return Status::Ok();
}

}  // namespace rgpu::server
