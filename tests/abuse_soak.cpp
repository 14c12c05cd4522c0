// The abuse soak's moving parts (scripts/soak_abuse.sh runs them against one rgpud that
// speaks TLS; not part of CI):
//
//   rgpu-abuse-soak attack SECONDS   idle-connection floods, a bad-token flood and stalled
//                                    TLS handshakes, each from its own loopback address
//   rgpu-abuse-soak silent           one ICD client behind a relay that goes silent; prints
//                                    how long each end took to notice
//   rgpu-abuse-soak probe SECONDS N  every N seconds a CSV line: rgpud's memory, a legitimate
//                                    TLS client's round trip, and the gate's counters
//
// Environment: RGPU_SERVER (HOST:PORT), RGPU_CA, RGPUD_PID, METRICS, GOOD_TOKEN.
#include <CL/cl.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "abuse_util.h"
#include "proto/tls.h"

using namespace rgpu;
using namespace rgpu::abuse;

namespace {

std::unique_ptr<proto::Stream> TlsTo(const std::string& address) {
  auto addr = proto::ParseAddress(address);
  if (!addr.ok()) return nullptr;
  auto s = proto::ConnectTls(*addr, proto::TlsClientOptions::FromEnvironment(), std::chrono::seconds(5));
  return s.ok() ? std::move(s.value()) : nullptr;
}

// TLS handshake, Hello and a Stats round trip, in milliseconds; -1 if not served.
double TlsRoundTrip(const std::string& token) {
  const auto t0 = Clock::now();
  auto s = TlsTo(Env("RGPU_SERVER"));
  if (!s) return -1;
  HelloResult h = Hello(*s, token);
  if (!h.replied || h.code != 0 || !Stats(*s)) return -1;
  return MillisSince(t0);
}

void IdleFloods(Clock::time_point until) {
  // Every 5 s, 1000 connections that never speak, from one address, kept for 15 s.
  std::vector<std::vector<int>> waves;
  while (Clock::now() < until) {
    std::vector<int> wave;
    const sockaddr_in to = ServerAddress();
    for (int i = 0; i < 1000; ++i) {
      int fd = ConnectFrom("127.0.0.2", to, false);
      if (fd >= 0) wave.push_back(fd);
      if (i % 64 == 63) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    waves.push_back(std::move(wave));
    if (waves.size() > 3) {
      for (int fd : waves.front()) ::close(fd);
      waves.erase(waves.begin());
    }
    std::this_thread::sleep_for(std::chrono::seconds(5));
  }
  for (auto& w : waves)
    for (int fd : w) ::close(fd);
}

void BadTokens(Clock::time_point until, const char* from) {
  while (Clock::now() < until) {
    int fd = ConnectFrom(from, ServerAddress());
    if (fd >= 0) {
      auto s = proto::ConnectTlsOn(fd, "127.0.0.1", proto::TlsClientOptions::FromEnvironment(),
                                   std::chrono::seconds(5));
      if (s.ok()) Hello(**s, "not-a-token");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void StalledHandshakes(Clock::time_point until) {
  const uint8_t partial[] = {0x16, 0x03, 0x01, 0x02, 0x00};
  while (Clock::now() < until) {
    std::vector<int> fds;
    for (int i = 0; i < 20; ++i) {
      int fd = ConnectFrom("127.0.0.8", ServerAddress());
      if (fd < 0) continue;
      ::send(fd, partial, sizeof(partial), MSG_NOSIGNAL);
      fds.push_back(fd);
    }
    std::this_thread::sleep_for(std::chrono::seconds(12));
    for (int fd : fds) ::close(fd);
  }
}

int Attack(int seconds) {
  RaiseFdLimit();
  const auto until = Clock::now() + std::chrono::seconds(seconds);
  std::vector<std::thread> t;
  t.emplace_back(IdleFloods, until);
  t.emplace_back(BadTokens, until, "127.0.0.7");
  t.emplace_back(StalledHandshakes, until);
  for (auto& th : t) th.join();
  return 0;
}

int Silent() {
  Relay relay(ServerAddress());
  setenv("RGPU_SERVER", relay.address().c_str(), 1);
  setenv("RGPU_TOKEN", Env("GOOD_TOKEN").c_str(), 1);
  cl_device_id dev = RgpuDevice();
  if (!dev) return std::fprintf(stderr, "silent: no rgpu device\n"), 1;
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  const size_t bytes = size_t{32} << 20;
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  const cl_uint zero = 0;
  clEnqueueFillBuffer(q, buf, &zero, sizeof(zero), 0, bytes, 0, nullptr, nullptr);
  if (clFinish(q) != CL_SUCCESS) return std::fprintf(stderr, "silent: setup failed\n"), 1;
  relay.Freeze();
  const auto t0 = Clock::now();
  cl_uint word;
  cl_int rc = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof(word), &word, 0, nullptr, nullptr);
  std::printf("silent client: blocking read failed with %d after %.0f ms\n", rc, MillisSince(t0));
  return rc == CL_SUCCESS;
}

int Probe(int seconds, int every) {
  const std::string token = Env("GOOD_TOKEN");
  std::printf("t_s,rgpud_rss_kib,legit_ms,unauthenticated,refused_total,auth_failures_total,"
              "dead_peers_total,sessions_good\n");
  const auto start = Clock::now();
  const auto until = start + std::chrono::seconds(seconds);
  while (Clock::now() < until) {
    const double ms = TlsRoundTrip(token);
    const std::string m = MetricsText();
    double refused = 0, failures = 0;
    for (const char* r : {"unauthenticated_limit", "per_address_limit", "blocked"})
      refused += Metric(m, std::string("rgpu_connections_refused_total{reason=\"") + r + "\"}");
    for (const char* r : {"no_token", "unknown_token", "max_sessions", "hello_timeout", "tls_handshake"})
      failures += Metric(m, std::string("rgpu_auth_failures_total{reason=\"") + r + "\"}");
    std::printf("%.0f,%ld,%.1f,%.0f,%.0f,%.0f,%.0f,%.0f\n", MillisSince(start) / 1000, RssKiB(), ms,
                Metric(m, "rgpu_unauthenticated_connections"), refused, failures,
                Metric(m, "rgpu_dead_peers_total"), Metric(m, "rgpu_sessions{tenant=\"good\"}"));
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(every));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "attack" && argc > 2) return Attack(std::atoi(argv[2]));
  if (mode == "silent") return Silent();
  if (mode == "probe" && argc > 3) return Probe(std::atoi(argv[2]), std::atoi(argv[3]));
  std::fprintf(stderr, "usage: rgpu-abuse-soak attack SECONDS | silent | probe SECONDS EVERY\n");
  return 2;
}
