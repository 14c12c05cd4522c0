// `rgpu status --pool etcd://HOST:PORT/NAME`: the pool as etcd has it, read the way the ICD
// reads it (pool/record.h): every live server, and every device in the order a new program
// is offered them (least busy first).
#include <chrono>
#include <cstdio>
#include <string>

#include "cli/status.h"
#include "pool/etcd.h"
#include "pool/record.h"

namespace rgpu::cli {
namespace {

std::string Mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", bytes / 1048576.0);
  return buf;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "alice(2) bob(0)": each tenant with its sessions on the server.
std::string TenantList(const pool::ServerRecord& s) {
  std::string out;
  for (const auto& t : s.tenants)
    out += (out.empty() ? "" : " ") + t.id + "(" + std::to_string(t.sessions) + ")";
  return out.empty() ? "-" : out;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out.empty() ? "-" : out;
}

void PrintServers(const pool::PoolListing& listing) {
  std::printf("%-16s %-24s %9s %10s %10s  %s\n", "SERVER", "ADDRESS", "SESSIONS", "MEM MiB",
              "UPDATED", "TENANTS(SESSIONS)");
  for (const auto& s : listing.servers)
    std::printf("%-16s %-24s %9u %10s %9.1fs  %s\n", s.name.c_str(), s.addresses.front().c_str(),
                s.sessions, Mib(s.mem_used).c_str(), (NowMs() - s.updated_ms) / 1000.0,
                TenantList(s).c_str());
}

void PrintDevices(const pool::PoolListing& listing) {
  std::printf("\n%-6s %-16s %-24s %4s %7s %7s %10s %-12s %-20s %s\n", "PLACE", "SERVER", "ADDRESS",
              "DEV", "BUSY%", "QUEUES", "MEM MiB", "TYPE", "TENANTS", "NAME");
  const auto order = pool::OrderByLoad(listing.servers);
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& s = listing.servers[order[i].server];
    for (const auto& d : s.devices) {
      if (d.index != order[i].device) continue;
      std::printf("%-6zu %-16s %-24s %4u %7.1f %7u %10s %-12s %-20s %s\n", i + 1, s.name.c_str(),
                  s.addresses.front().c_str(), d.index, d.busy * 100, d.queues,
                  Mib(d.global_mem).c_str(), d.type.c_str(), Joined(d.tenants).c_str(),
                  d.name.c_str());
    }
  }
}

}  // namespace

int PrintPoolStatus(const std::string& text) {
  auto url = pool::ParsePoolUrl(text);
  if (!url.ok()) return std::fprintf(stderr, "rgpu: %s\n", url.status().message().c_str()), 2;
  pool::EtcdClient etcd(url->endpoints, std::chrono::milliseconds(2000));
  auto listing = pool::ReadPool(etcd, url->name);
  if (!listing.ok()) return std::fprintf(stderr, "rgpu: %s\n", listing.status().message().c_str()), 1;
  size_t devices = 0;
  for (const auto& s : listing->servers) devices += s.devices.size();
  std::printf("pool %s (etcd %s): %zu servers, %zu devices", url->name.c_str(),
              etcd.endpoint().c_str(), listing->servers.size(), devices);
  if (listing->malformed) std::printf(", %zu unreadable records", listing->malformed);
  std::printf("\n\n");
  PrintServers(*listing);
  PrintDevices(*listing);
  return 0;
}

}  // namespace rgpu::cli
