// rgpu: the command-line tool. `rgpu status` shows what an rgpud (or a pool of them) is serving.
#include <CLI/CLI.hpp>

#include <cstdlib>

#include "cli/status.h"

int main(int argc, char** argv) {
  CLI::App app{"rgpu: remote GPUs over OpenCL"};
  app.require_subcommand(1);
  rgpu::cli::StatusOptions status;
  const char* server = std::getenv("RGPU_SERVER");
  const char* token = std::getenv("RGPU_TOKEN");
  status.server = server && *server ? server : "127.0.0.1:7420";
  status.token = token ? token : "";
  auto* st = app.add_subcommand("status", "Tenants, sessions, memory and device time of one rgpud.");
  st->add_option("--server", status.server, "HOST:PORT or unix:/PATH (default: $RGPU_SERVER)")
      ->capture_default_str();
  st->add_option("--token", status.token, "Tenant token (default: $RGPU_TOKEN)");
  std::string pool;
  st->add_option("--pool", pool,
                 "Show the pool etcd://HOST:PORT[,HOST:PORT...]/NAME instead: its servers, "
                 "their devices in placement order, load and tenants (also when --server or "
                 "$RGPU_SERVER is such an address).");
  CLI11_PARSE(app, argc, argv);
  if (*st && pool.empty() && status.server.rfind("etcd://", 0) == 0) pool = status.server;
  if (*st && !pool.empty()) return rgpu::cli::PrintPoolStatus(pool);
  if (*st) return rgpu::cli::PrintStatus(status);
  return 0;
}
