#include "client/discovery.h"

#include <algorithm>
#include <sstream>

#include "pool/etcd.h"
#include "pool/record.h"

namespace rgpu::client {
namespace {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

Discovery FromPool(const std::string& text, std::chrono::milliseconds budget) {
  Discovery d;
  auto url = pool::ParsePoolUrl(text);
  if (!url.ok()) {
    d.error = url.status().message();
    return d;
  }
  // Endpoints are tried one after another; each gets its share of the budget.
  const auto per_endpoint = std::max(std::chrono::milliseconds(200),
                                     budget / static_cast<int>(url->endpoints.size()));
  pool::EtcdClient etcd(url->endpoints, per_endpoint);
  auto listing = pool::ReadPool(etcd, url->name);
  if (!listing.ok()) {
    d.error = listing.status().message();
    return d;
  }
  if (listing->servers.empty()) {
    d.error = "pool '" + url->name + "' has no live server in etcd";
    return d;
  }
  for (const auto& s : listing->servers) d.servers.push_back(s.addresses.front());
  const auto order = pool::OrderByLoad(listing->servers);
  for (size_t i = 0; i < order.size(); ++i) d.rank[{order[i].server, order[i].device}] = i;
  return d;
}

}  // namespace

Discovery Discover(const std::string& rgpu_server, std::chrono::milliseconds budget) {
  if (pool::IsPoolUrl(rgpu_server)) return FromPool(rgpu_server, budget);
  Discovery d;
  d.servers = SplitList(rgpu_server);
  return d;
}

}  // namespace rgpu::client
