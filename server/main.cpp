// rgpud: serves this host's OpenCL devices to rgpu clients.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <thread>

#include "server/server.h"

int main(int argc, char** argv) {
  rgpu::server::ServerOptions opt;
  std::string log_level = "info";
  CLI::App app{
      "rgpud: shares this host's OpenCL devices with rgpu clients (librgpu-icd) over TCP or "
      "a Unix socket."};
  app.add_option("--listen", opt.listen,
                 "Address to serve: HOST:PORT (TCP) or unix:/PATH. Without --insecure only "
                 "loopback addresses and Unix sockets are accepted.")
      ->capture_default_str();
  app.add_option("--platform", opt.platform,
                 "Serve the OpenCL platform whose name contains TEXT (default: the best found, "
                 "a GPU platform before PoCL's CPU device).");
  app.add_option("--name", opt.name, "Server name reported to clients.")->capture_default_str();
  app.add_flag("--insecure", opt.insecure,
               "Allow listening on non-loopback addresses without authentication.");
  app.add_option("--log-level", log_level, "trace, debug, info, warn or error.")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ rgpud: %v");

  // Signals are taken by a dedicated thread with sigwait, so no handler runs in a random
  // thread's context.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto backend = rgpu::server::OpenOpenCLBackend(opt.platform);
  if (!backend.ok()) {
    spdlog::error("{}", backend.status().message());
    return 1;
  }
  rgpu::server::Server server(opt, std::move(backend.value()));
  if (auto s = server.Bind(); !s.ok()) {
    spdlog::error("{}", s.message());
    return 1;
  }
  for (const auto& d : server.backend().Devices())
    spdlog::info("device: {} ({}), {} compute units, {} MiB", d.name, d.platform,
                 d.compute_units, d.global_mem >> 20);
  spdlog::info("listening on {}", server.bound_address());

  std::thread signals([&] {
    int sig = 0;
    sigwait(&set, &sig);
    spdlog::info("signal {}: stopping", sig);
    server.Stop();
  });
  signals.detach();
  server.Run();
  spdlog::info("stopped");
  return 0;
}
