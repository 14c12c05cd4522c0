// rgpud: serves this host's OpenCL devices to rgpu clients.
#include <CL/cl.h>
#include <execinfo.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <thread>

#include "proto/messages.h"
#include "server/config.h"
#include "server/server.h"
#include "server/tenant.h"

namespace {
// A fatal signal (a bug in rgpud or in the device's driver) leaves the stack in the log: the
// frames, as module+offset, are what tells whose fault it was.
void LogFatalSignal(int sig) {
  const char* what = sig == SIGFPE ? "SIGFPE" : sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : "SIGILL";
  char head[96];
  const int n = std::snprintf(head, sizeof(head), "rgpud: fatal %s; stack:\n", what);
  if (n > 0) [[maybe_unused]] ssize_t w = write(STDERR_FILENO, head, static_cast<size_t>(n));
  void* frames[48];
  const int count = backtrace(frames, 48);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

// --pin-cpu: the one CPU that rgpud and every thread it makes (the device's too) run on, or -1
// for any. On a 2-vCPU VM serving PoCL a client and rgpud that share the CPUs wait for each
// other's wake-ups: 4-byte reads through the Unix socket took 3.3-3.5x native at the median
// of runs, 1.4x with rgpud on one CPU and the client free to use the other (launch+finish
// 1.7x or 3.1x, by the VM's state); but PoCL's kernels then have one CPU, not two (a 1024
// matmul took 4.4-4.8 s against 2.4-2.6 s). docs/performance.md, "Small machines".
int ChoosePinCpu(const std::string& spec, std::string* error) {
  if (spec == "off") return -1;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    *error = std::string("--pin-cpu: sched_getaffinity: ") + std::strerror(errno);
    return -2;
  }
  char* end = nullptr;
  const long cpu = std::strtol(spec.c_str(), &end, 10);
  if (spec.empty() || *end != '\0' || cpu < 0 || cpu >= CPU_SETSIZE ||
      !CPU_ISSET(static_cast<int>(cpu), &allowed)) {
    *error = "--pin-cpu " + spec + ": not off or a CPU this process may run on";
    return -2;
  }
  return static_cast<int>(cpu);
}

}  // namespace

// An exception that escapes (an allocation failure while starting, say) ends rgpud with its
// message rather than with std::terminate's.
int main(int argc, char** argv) try {
  for (int sig : {SIGFPE, SIGSEGV, SIGBUS, SIGILL}) signal(sig, LogFatalSignal);
  rgpu::server::ConfigureHeap();
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
  std::string pin_cpu_spec = "off";
  app.add_option("--pin-cpu", pin_cpu_spec,
                 "Run rgpud and every thread it makes, the device's included, on this one CPU "
                 "(off: any). On a host of 2 CPUs this keeps rgpud off the CPU its clients "
                 "wait on, which shortens their sync round trips; but a CPU device (PoCL) then "
                 "computes on that one CPU.")
      ->capture_default_str();
  std::string heap_reuse = "auto";
  app.add_option("--heap-reuse", heap_reuse,
                 "Keep freed blocks under 32 MiB in the heap for reuse (the GPU driver's host "
                 "memory per buffer is then not mapped and faulted each time; trims still "
                 "return it after sessions end): on, off, or auto (on when a served device is "
                 "not a CPU).")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warn or error (the last given wins).")
      ->capture_default_str()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string config_path;
  app.add_option("--config", config_path,
                 "TOML config: tenants and their tokens, quotas and limits, TLS, metrics "
                 "(config/rgpud.example.toml documents every key). Flags given explicitly "
                 "override it.");
  app.add_option("--metrics", opt.metrics,
                 "Serve Prometheus metrics on HOST:PORT (path /metrics).");
  app.add_option("--pool", opt.pool.url,
                 "Register in the pool etcd://HOST:PORT[,HOST:PORT...]/NAME: this server's "
                 "address, devices and load, under a lease etcd drops if rgpud dies "
                 "(docs/pool.md).");
  app.add_option("--advertise", opt.pool.advertise,
                 "Address(es) pool clients should dial (default: the listen address, with this "
                 "host's name for a wildcard host; tls:// when TLS is on).")
      ->delimiter(',');
  // Abuse and dead peers (docs/security.md, "Before authentication" and "Dead peers").
  double hello_timeout_s = 10, peer_timeout_s = 30;
  app.add_option("--hello-timeout", hello_timeout_s,
                 "Seconds a connection has to authenticate (TLS handshake and Hello) before it "
                 "is closed.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-unauthenticated", opt.gate.max_unauthenticated,
                 "Connections waiting to authenticate at once; more are closed at accept.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-unauthenticated-per-address", opt.gate.max_unauthenticated_per_address,
                 "The same, from one peer address (TCP).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--peer-timeout", peer_timeout_s,
                 "Seconds without a sign of life after which a client counts as dead and its "
                 "session ends (heartbeats after a quarter of it; TCP keepalive tuned to it).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-shared-bytes", opt.max_shared_bytes,
                 "Largest shared-memory region a client on the Unix socket may pass for bulk "
                 "transfers (docs/protocol.md, \"Shared memory\"); 0 turns it off.")
      ->capture_default_str();
  size_t pinned_mib = opt.pinned_staging_bytes >> 20;
  app.add_option("--pinned-staging-mib", pinned_mib,
                 "Host memory (MiB) a session pins in its device context to land the reads its "
                 "client waits for over the socket; at most 32 sessions at once. 0 turns it off.")
      ->capture_default_str();
  bool hash_token = false;
  app.add_flag("--hash-token", hash_token,
               "Read a token from standard input, print its salted hash for a [[tenant]]'s "
               "token_hash, and exit.");
  std::string policy = "fair";
  app.add_option("--policy", policy,
                 "Kernel scheduling policy: fifo (submission order, never sliced), split "
                 "(each launch cut into alpha equal slices per active tenant when several are "
                 "active; also accepted as seed001, its first name), fair "
                 "(weighted fair device time; latency-critical launches run at once and stop "
                 "best-effort work, which runs preemptibly).")
      ->capture_default_str();
  app.add_option("--alpha", opt.sched.alpha, "split: slices per active tenant.")
      ->capture_default_str();
  app.add_option("--quantum-us", opt.sched.quantum_us,
                 "fair: how much device time one best-effort tenant's turn lasts before another "
                 "waiting best-effort tenant gets the device, in microseconds.")
      ->capture_default_str();
  app.add_option("--overrun-us", opt.sched.overrun_us,
                 "fair: held best-effort work that has made no progress for a quantum plus this "
                 "long while another tenant waits (a persistent kernel, a launch that cannot be "
                 "stopped) stops keeping that tenant off the device: the GPU time-slices the two.")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  app.add_option("--be-turns", opt.be_turns,
                 "fair: a best-effort tenant keeps the device for a quantum once its turn "
                 "begins, whatever the length of its launches (1 on, 0 off: the least-used "
                 "tenant goes at every launch; -1 on for GPU devices, off for CPU devices).")
      ->check(CLI::Range(-1, 1))
      ->capture_default_str();
  app.add_option("--direct-in-turn", opt.sched.direct_in_turn,
                 "fair: in its turn, with no latency-critical tenant active, a best-effort "
                 "tenant's launch of one wave or less costing at most 0.5 ms goes to the device "
                 "directly rather than held (1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--direct-beside-lc", opt.sched.direct_beside_lc,
                 "fair: with --direct-in-turn, such a launch expected to take at most "
                 "--lc-slice-us also goes direct beside an active latency-critical tenant, "
                 "between its requests (after --lc-guard-us), while the turn's direct launches "
                 "on the device end within --lc-slice-depth slices (1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--turn-wait-us", opt.sched.turn_wait_us,
                 "fair: when the work of the tenant whose turn it is ends and nothing of it is "
                 "queued, the device waits this long for its next launch before another "
                 "tenant's turn begins, in microseconds (0: no wait).")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--lc-slice-us", opt.sched.lc_slice_us,
                 "fair: best-effort launches that cannot be stopped mid-way run in slices of at "
                 "most this much device time while a latency-critical tenant is active.")
      ->capture_default_str();
  app.add_option("--lc-slice-depth", opt.sched.lc_slice_depth,
                 "fair: how many of those slices are on the device at once (an arrival waits "
                 "for at most this many).")
      ->check(CLI::Range(1, 4))
      ->capture_default_str();
  app.add_option("--lc-drain-ratio", opt.sched.drain_ratio,
                 "fair: only a latency-critical kernel measured to take at least this many "
                 "times the best-effort slices ahead of it waits for them (--lc-drain-us).")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--lc-drain-us", opt.sched.drain_slices_us,
                 "fair: a latency-critical launch in a context group waits, at most this long, "
                 "for the short best-effort slices of its context on the device to end before "
                 "it goes to the device (launched beside them it ran up to 1.7x longer; 0: no "
                 "wait).")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--lc-run-us", opt.sched.lc_run_us,
                 "fair: preemptible runs hold about this much device time while a "
                 "latency-critical tenant is active (never less than a wave).")
      ->capture_default_str();
  app.add_option("--lc-narrow-runs", opt.sched.narrow_runs,
                 "fair: beside an active latency-critical tenant, best-effort work-groups that "
                 "each run longer than --lc-run-us run in narrow runs (a few work-groups per "
                 "compute unit, as few as keep the kernel's measured rate) so that an arrival "
                 "waits for one work-group's time, not for a full device's (1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--lc-narrow-width", opt.sched.narrow_width,
                 "fair: work-groups per compute unit in narrow runs: 0 = the fewest that keep 90% "
                 "of the kernel's best measured rate; 1, 2 or 4 = always that many.")
      ->check(CLI::IsMember({0, 1, 2, 4}))
      ->capture_default_str();
  app.add_option("--sample-every", opt.sched.sample_every,
                 "Short launches the application asked no event for get one, to measure their "
                 "cost, only every this many times (an event costs NVIDIA's driver about 6 us).")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  app.add_option(
         "--lc-sampled-events", opt.sched.lc_sampled_events,
         "A latency-critical tenant's launches, while no other tenant is active, get an "
         "event (to measure their cost) only every --sample-every-th time unless the application "
         "asked for one, as short best-effort launches do (1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--lc-guard-us", opt.sched.lc_guard_us,
                 "fair: best-effort work resumes this long after a latency-critical tenant's "
                 "request was served.")
      ->capture_default_str();
  app.add_option("--lc-whole-guard-us", opt.sched.lc_whole_guard_us,
                 "fair: a best-effort launch that runs whole (nothing cuts or stops it), in a "
                 "context a latency-critical tenant shares (a context group), waits this long "
                 "after that tenant's request was served, so that a tenant that fell behind "
                 "catches up.")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  app.add_flag("--force-runs", opt.sched.force_runs,
               "Testing: hold every launch and run it preemptibly where possible, each run "
               "stopped after a random number of work-groups.");
  app.add_option("--force-slices", opt.sched.force_slices,
                 "Testing: cut every sliceable launch into this many slices (0 = the policy "
                 "decides).")
      ->capture_default_str();
  // Polling costs a core per polling session; worth it for long where cores are plenty: a
  // session's thread asleep on an idle core of a GPU host took 65-130 us to see a request
  // after a 50 ms pause (H200 host, deep C-states), which a polling one sees at once, and a
  // request 2 s after the last one took 156 us longer at p50 than natively through a session
  // polling 1 s (52 us with a 3 s poll; H100, bench/results/2026-11-27-session20/call7).
  // Requests seconds apart are common (an interactive user, a health check), so every
  // session polls 10 s by default; the slots (--max-pollers) bound what that costs.
  // On a small machine a short poll still catches the next request of a client that waits
  // for each answer (it comes a few microseconds after the answer), which spares a wake-up of
  // the session's thread (tens of microseconds in a VM) at a bounded cost per request.
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  const bool many = cpus >= 8;
  double poll_us = many ? 1e7 : 30, lc_poll_us = -1;
  opt.max_pollers = static_cast<int>(std::max(1u, cpus / 4));
  app.add_option("--poll-us", poll_us,
                 "After each request, a session polls its socket this long (busy) before it "
                 "sleeps, so that a request that comes within this long is seen at once, with "
                 "no wake-up of a sleeping thread (0: never; default 10000000 with 8 CPUs or "
                 "more, else 30).");
  app.add_option("--lc-poll-us", lc_poll_us,
                 "The same for latency-critical tenants (default 10000000 with 8 CPUs or more "
                 "unless --poll-us is given, else as --poll-us).");
  double local_poll_us = -1;
  app.add_option("--local-poll-us", local_poll_us,
                 "Sessions over a Unix socket poll at least this long (default 150 below 8 "
                 "CPUs unless --poll-us is given, else 0: as --poll-us and --lc-poll-us say).");
  app.add_option("--max-pollers", opt.max_pollers,
                 "Sessions polling at once, at most (default: a quarter of the CPUs); "
                 "best-effort sessions take at most half of these slots.")
      ->capture_default_str();
  app.add_option("--inline-waits", opt.inline_waits,
                 "A session's reader thread waits in the driver for the client's blocking waits "
                 "(clFinish, clWaitForEvents, small blocking reads), the fastest answer (a wait "
                 "that lasts hands the session's other frames to a second thread: "
                 "--serve-aside-us); 0: the completion watcher answers them and the reader "
                 "goes on (1 on, 0 off).")
      ->capture_default_str();
  double serve_aside_us = static_cast<double>(opt.serve_aside.count());
  app.add_option("--serve-aside-us", serve_aside_us,
                 "This long into such an inline wait, a second thread of the session serves "
                 "the client's other frames (a flag write the waited kernel polls for, say) "
                 "until the wait ends (0: never).")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e7));
  opt.launch_thread = many;
  app.add_option("--launch-thread", opt.launch_thread,
                 "A session receiving a burst of kernel launches hands the driver's enqueues to "
                 "a thread of its own, which spins 200 us after the burst, so that reading and "
                 "scheduling the next launch overlaps the driver's enqueue of the last (1 on, 0 "
                 "off; default on with 8 CPUs or more).")
      ->capture_default_str();
  app.add_option("--twin-queues", opt.twin_queues,
                 "With the launch thread, a launch whose event only the application reads goes on "
                 "a twin of its queue without profiling, ordered with the queue by events (1 on, "
                 "0 off).")
      ->capture_default_str();
  opt.sched.spin_feed = many;
  app.add_option("--spin-feed", opt.sched.spin_feed,
                 "fair: while best-effort slices or runs are on the device beside an active "
                 "latency-critical tenant, the dispatcher and the completion watcher spin (up to "
                 "two cores) so that the next slice follows the last at once (1 on, 0 off; "
                 "default on with 8 CPUs or more).")
      ->capture_default_str();
  app.add_option("--chain-held", opt.sched.chain_held,
                 "fair: a held launch directly behind another held launch on an in-order queue "
                 "goes on the device behind that one's last slice, without waiting for the "
                 "driver to report it complete (1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--whole-wave", opt.sched.whole_wave,
                 "fair: a held launch of at most one wave of work-items goes on the device as "
                 "one slice, not as a preemptible run (1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--gate-chained", opt.sched.gate_chained,
                 "fair: a held launch of one slice directly behind another goes onto the "
                 "application's queue at once, waiting for a gate the dispatcher opens "
                 "(1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--gate-first", opt.sched.gate_first,
                 "fair: the same for a held launch of one slice with nothing unfinished before "
                 "it on its in-order queue and in its wait list (1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--gate-at-once", opt.sched.gate_at_once,
                 "fair: such a launch that the dispatcher would take the moment it is queued "
                 "goes on the device from the submitting thread, without a gate (1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--park-first", opt.sched.park_first,
                 "fair: a held launch of one slice that cannot go at once waits in its "
                 "session for its turn (first for the work before it on its queue, where only "
                 "the device's is left), then goes at once, instead of behind a user event (on "
                 "NVIDIA's OpenCL a context's first user event leaves a driver thread "
                 "spinning) (1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--pipe-loops", opt.sched.pipe_loops,
                 "closed loops of launches (launch, flush, wait for an earlier one) start the "
                 "session's launch thread for their held launches that go at once; flushes "
                 "and waits do not wait for its launches (1 on, 0 off).")
      ->capture_default_str();
  app.add_option("--await-dispatch", opt.sched.await_dispatch,
                 "a session that waits in the driver for a held launch (clWaitForEvents, "
                 "clFinish) first sleeps until the dispatcher has put it on the device: the "
                 "driver's wait spins a CPU (1 on, 0 off).")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  opt.pinned_staging_bytes = pinned_mib << 20;
  opt.poll = std::chrono::microseconds(static_cast<int64_t>(std::max(0.0, poll_us)));
  // A --poll-us given alone sets both.
  if (lc_poll_us < 0) lc_poll_us = many && app.count("--poll-us") == 0 ? 1e7 : poll_us;
  if (local_poll_us < 0) local_poll_us = !many && app.count("--poll-us") == 0 ? 150 : 0;
  opt.local_poll = std::chrono::microseconds(static_cast<int64_t>(std::max(0.0, local_poll_us)));
  opt.lc_poll = std::chrono::microseconds(static_cast<int64_t>(std::max(0.0, lc_poll_us)));
  opt.serve_aside = std::chrono::microseconds(static_cast<int64_t>(serve_aside_us));
  if (hash_token) {
    std::string token;
    std::getline(std::cin, token);
    std::printf("%s\n", rgpu::server::HashToken(token).c_str());
    return 0;
  }
  if (!config_path.empty()) {
    rgpu::server::ServerOptions given = opt;
    if (auto s = rgpu::server::LoadConfig(config_path, &opt); !s.ok()) {
      std::fprintf(stderr, "rgpud: %s\n", s.message().c_str());
      return 2;
    }
    if (app.count("--listen")) opt.listen = given.listen;
    if (app.count("--name")) opt.name = given.name;
    if (app.count("--metrics")) opt.metrics = given.metrics;
    if (app.count("--insecure")) opt.insecure = given.insecure;
    if (app.count("--pool")) opt.pool.url = given.pool.url;
    if (app.count("--advertise")) opt.pool.advertise = given.pool.advertise;
    if (app.count("--max-unauthenticated"))
      opt.gate.max_unauthenticated = given.gate.max_unauthenticated;
    if (app.count("--max-unauthenticated-per-address"))
      opt.gate.max_unauthenticated_per_address = given.gate.max_unauthenticated_per_address;
  }
  auto millis = [](double s) { return std::chrono::milliseconds(static_cast<int64_t>(s * 1000)); };
  if (config_path.empty() || app.count("--hello-timeout"))
    opt.gate.hello_timeout = millis(hello_timeout_s);
  if (config_path.empty() || app.count("--peer-timeout")) opt.peer_timeout = millis(peer_timeout_s);
  if (auto p = rgpu::server::ParsePolicy(policy); p.ok()) {
    opt.sched.policy = p.value();
  } else {
    std::fprintf(stderr, "%s\n", p.status().message().c_str());
    return 2;
  }
  // Every client refuses a Hello reply whose server name is longer than this.
  if (opt.name.size() > rgpu::proto::kMaxServerNameBytes) {
    std::fprintf(stderr, "rgpud: the server name is %zu bytes long; clients take at most %u\n",
                 opt.name.size(), rgpu::proto::kMaxServerNameBytes);
    return 2;
  }
  std::string cpu_error;
  const int pin_cpu = ChoosePinCpu(pin_cpu_spec, &cpu_error);
  if (pin_cpu == -2) {
    std::fprintf(stderr, "rgpud: %s\n", cpu_error.c_str());
    return 2;
  }
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

  // Before any thread is made: each inherits this thread's CPUs.
  if (pin_cpu >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(pin_cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0) {
      spdlog::error("--pin-cpu {}: {}", pin_cpu, std::strerror(errno));
      return 2;
    }
    spdlog::info("on CPU {} (--pin-cpu)", pin_cpu);
  }
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
  if (!opt.metrics.empty()) {
    if (auto s = server.metrics().Serve(opt.metrics); !s.ok()) {
      spdlog::error("{}", s.message());
      return 1;
    }
    spdlog::info("metrics on http://{}/metrics", opt.metrics);
  }
  for (const auto& t : server.tenants())
    spdlog::info("tenant {}: {}, weight {}, quota {} MiB, max sessions {}", t->id,
                 rgpu::server::PriorityName(t->priority), t->weight, t->mem_quota_bytes >> 20,
                 t->max_sessions);
  bool any_gpu = false;
  for (const auto& d : server.backend().Devices()) {
    spdlog::info("device: {} ({}), {} compute units, {} MiB", d.name, d.platform,
                 d.compute_units, d.global_mem >> 20);
    any_gpu = any_gpu || !(d.type & CL_DEVICE_TYPE_CPU);
  }
  if (heap_reuse == "on" || (heap_reuse == "auto" && any_gpu)) {
    rgpu::server::ReuseHeapBlocks();
    spdlog::info("heap: freed blocks under 32 MiB kept for reuse (--heap-reuse {})", heap_reuse);
  }
  spdlog::info("listening on {}", server.bound_address());
  std::unique_ptr<rgpu::server::PoolMember> pool;
  if (!opt.pool.url.empty()) {
    auto member = rgpu::server::PoolMember::Create(&server, opt.pool);
    if (!member.ok()) {
      spdlog::error("{}", member.status().message());
      return 2;
    }
    pool = std::move(member.value());
    pool->Start();
  }

  std::thread signals([&] {
    int sig = 0;
    sigwait(&set, &sig);
    spdlog::info("signal {}: stopping", sig);
    // Out of the pool first, so that no new client picks a server that is going away.
    if (pool) pool->Stop();
    server.Stop();
  });
  signals.detach();
  server.Run();
  if (size_t n = server.LingeringSessions(); n > 0) {
    // Their threads still hold the backend; leave without tearing it down under them.
    spdlog::info("stopped ({} sessions cut off)", n);
    std::fflush(nullptr);
    std::_Exit(0);
  }
  spdlog::info("stopped");
  return 0;
} catch (const std::exception& e) {
  spdlog::critical("rgpud: {}", e.what());
  return 1;
}
