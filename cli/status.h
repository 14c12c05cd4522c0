// rgpu status: tenants, sessions, memory and device time of one rgpud, or a pool's servers.
#pragma once

#include <string>

namespace rgpu::cli {

struct StatusOptions {
  std::string server;  // HOST:PORT or unix:/PATH
  std::string token;   // the tenant's token; non-admin tenants see only themselves
};

// Prints the tables; returns the process exit code.
int PrintStatus(const StatusOptions& o);
// The pool etcd://HOST:PORT[,HOST:PORT...]/NAME: servers, devices in placement order, load,
// tenants (cli/pool_status.cpp).
int PrintPoolStatus(const std::string& url);

}  // namespace rgpu::cli
