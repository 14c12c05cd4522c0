// The big-endian test client is built without libcurl (there is none for s390x here): server
// lists only, no pools. Stands in for client/discovery.cpp in that build alone.
#include <sstream>

#include "client/discovery.h"

namespace rgpu::client {

Discovery Discover(const std::string& rgpu_server, std::chrono::milliseconds) {
  Discovery d;
  if (rgpu_server.rfind("etcd://", 0) == 0) {
    d.error = "this test build has no etcd client";
    return d;
  }
  std::stringstream ss(rgpu_server);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) d.servers.push_back(item);
  return d;
}

}  // namespace rgpu::client
