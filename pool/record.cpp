#include "pool/record.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace rgpu::pool {
namespace {

using nlohmann::json;

constexpr int32_t kBadValue = -30;  // CL_INVALID_VALUE
constexpr char kScheme[] = "etcd://";

bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 128) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Reading a field of the wrong type gives the default: a record from a newer or broken
// writer must not take a reader down (nlohmann::json's get<> would throw).
template <typename T>
T Get(const json& j, const char* key, T fallback = T()) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->template get<std::string>() : fallback;
  } else if constexpr (std::is_floating_point_v<T>) {
    return it->is_number() ? it->template get<T>() : fallback;
  } else {
    return it->is_number_integer() ? it->template get<T>() : fallback;
  }
}

std::vector<std::string> Strings(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const json& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

json DeviceJson(const DeviceLoad& d) {
  return json{{"index", d.index},         {"name", d.name},
              {"type", d.type},           {"compute_units", d.compute_units},
              {"global_mem", d.global_mem}, {"max_alloc", d.max_alloc},
              {"busy", d.busy},           {"queues", d.queues},
              {"tenants", d.tenants}};
}

DeviceLoad DeviceFrom(const json& j) {
  DeviceLoad d;
  d.index = Get<uint32_t>(j, "index");
  d.name = Get<std::string>(j, "name");
  d.type = Get<std::string>(j, "type");
  d.compute_units = Get<uint32_t>(j, "compute_units");
  d.global_mem = Get<uint64_t>(j, "global_mem");
  d.max_alloc = Get<uint64_t>(j, "max_alloc");
  d.busy = std::clamp(Get<double>(j, "busy"), 0.0, 1.0);
  d.queues = Get<uint32_t>(j, "queues");
  d.tenants = Strings(j, "tenants");
  return d;
}

}  // namespace

bool IsPoolUrl(const std::string& text) { return text.rfind(kScheme, 0) == 0; }

Result<PoolUrl> ParsePoolUrl(const std::string& text) {
  if (!IsPoolUrl(text))
    return Status::Error(kBadValue, "'" + text + "' is not etcd://HOST:PORT[,HOST:PORT...]/NAME");
  std::string rest = text.substr(sizeof(kScheme) - 1);
  size_t slash = rest.find('/');
  if (slash == std::string::npos)
    return Status::Error(kBadValue, "'" + text + "' names no pool (etcd://HOST:PORT/NAME)");
  PoolUrl url;
  url.name = rest.substr(slash + 1);
  if (!ValidName(url.name))
    return Status::Error(kBadValue, "pool name '" + url.name + "' must be letters, digits, '.', '_' or '-'");
  for (const std::string& e : SplitComma(rest.substr(0, slash))) {
    // An endpoint without a port gets etcd's client port.
    const bool bracketed_v6 = !e.empty() && e.front() == '[';
    const bool has_port = bracketed_v6 ? e.find("]:") != std::string::npos : e.find(':') != std::string::npos;
    url.endpoints.push_back(has_port ? e : e + ":2379");
  }
  if (url.endpoints.empty()) return Status::Error(kBadValue, "'" + text + "' names no etcd endpoint");
  return url;
}

std::string ServersPrefix(const std::string& name) { return "/rgpu/pools/" + name + "/servers/"; }

std::string ToJson(const ServerRecord& r) {
  json devices = json::array(), tenants = json::array();
  for (const auto& d : r.devices) devices.push_back(DeviceJson(d));
  for (const auto& t : r.tenants)
    tenants.push_back(json{{"id", t.id}, {"sessions", t.sessions}, {"mem_bytes", t.mem_bytes}});
  return json{{"version", r.version},   {"name", r.name},
              {"addresses", r.addresses}, {"devices", devices},
              {"tenants", tenants},     {"sessions", r.sessions},
              {"mem_used", r.mem_used}, {"started_ms", r.started_ms},
              {"updated_ms", r.updated_ms}}
      .dump();
}

Result<ServerRecord> FromJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Error(kBadValue, "record is not a JSON object");
  ServerRecord r;
  r.version = Get<int>(j, "version");
  if (r.version != kRecordVersion)
    return Status::Error(kBadValue, "record version " + std::to_string(r.version) + " is not " +
                                        std::to_string(kRecordVersion));
  r.name = Get<std::string>(j, "name");
  r.addresses = Strings(j, "addresses");
  if (r.addresses.empty()) return Status::Error(kBadValue, "record has no address");
  if (auto it = j.find("devices"); it != j.end() && it->is_array())
    for (const json& d : *it)
      if (d.is_object()) r.devices.push_back(DeviceFrom(d));
  if (auto it = j.find("tenants"); it != j.end() && it->is_array())
    for (const json& t : *it)
      if (t.is_object())
        r.tenants.push_back({Get<std::string>(t, "id"), Get<uint32_t>(t, "sessions"),
                             Get<uint64_t>(t, "mem_bytes")});
  r.sessions = Get<uint32_t>(j, "sessions");
  r.mem_used = Get<uint64_t>(j, "mem_used");
  r.started_ms = Get<int64_t>(j, "started_ms");
  r.updated_ms = Get<int64_t>(j, "updated_ms");
  return r;
}

Result<PoolListing> ReadPool(EtcdClient& etcd, const std::string& name) {
  auto kvs = etcd.Prefix(ServersPrefix(name));
  if (!kvs.ok()) return kvs.status();
  PoolListing out;
  for (const auto& kv : *kvs) {
    auto r = FromJson(kv.value);
    if (!r.ok()) {
      ++out.malformed;
      continue;
    }
    r->key = kv.key;
    out.servers.push_back(std::move(*r));
  }
  return out;
}

std::vector<Placement> OrderByLoad(const std::vector<ServerRecord>& servers) {
  struct Ranked {
    Placement p;
    int busy_tenths;  // differences below a tenth are noise of the sampling window
    uint32_t queues;
  };
  std::vector<Ranked> all;
  for (size_t s = 0; s < servers.size(); ++s)
    for (const auto& d : servers[s].devices)
      all.push_back({{s, d.index}, static_cast<int>(std::lround(d.busy * 10)), d.queues});
  std::stable_sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) {
    if (a.busy_tenths != b.busy_tenths) return a.busy_tenths < b.busy_tenths;
    return a.queues < b.queues;
  });
  std::vector<Placement> out;
  for (const auto& r : all) out.push_back(r.p);
  return out;
}

}  // namespace rgpu::pool
