// The pool's address syntax, record format and placement order (pool/record.h), and the
// busy-fraction window rgpud reports (server/pool.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "pool/etcd.h"
#include "pool/record.h"
#include "server/config.h"
#include "server/pool.h"
#include "server/server.h"

namespace rgpu {
namespace {

TEST(PoolUrl, EndpointsAndName) {
  auto u = pool::ParsePoolUrl("etcd://h1:2379,h2,[::1]:4000/gpus-a");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->name, "gpus-a");
  ASSERT_EQ(u->endpoints.size(), 3u);
  EXPECT_EQ(u->endpoints[0], "h1:2379");
  EXPECT_EQ(u->endpoints[1], "h2:2379");  // etcd's client port by default
  EXPECT_EQ(u->endpoints[2], "[::1]:4000");
}

TEST(PoolUrl, Refused) {
  for (const char* bad : {"h1:2379/x", "etcd://h1:2379", "etcd://h1:2379/", "etcd:///x",
                          "etcd://h1/a/b", "etcd://h1/na me"})
    EXPECT_FALSE(pool::ParsePoolUrl(bad).ok()) << bad;
  EXPECT_TRUE(pool::IsPoolUrl("etcd://x/y"));
  EXPECT_FALSE(pool::IsPoolUrl("127.0.0.1:7420"));
}

TEST(PoolRecord, RoundTrip) {
  pool::ServerRecord r;
  r.name = "gpu-a";
  r.addresses = {"10.0.0.5:7420", "tls://gpu-a:7420"};
  r.devices.push_back({0, "NVIDIA H200", "gpu", 132, 150ull << 30, 35ull << 30, 0.25, 2, {"alice", "bob"}});
  r.devices.push_back({1, "NVIDIA H200", "gpu", 132, 150ull << 30, 35ull << 30, 0.0, 0, {"alice"}});
  r.tenants.push_back({"alice", 2, 1 << 20});
  r.sessions = 2;
  r.mem_used = 1 << 20;
  r.started_ms = 1700000000000;
  r.updated_ms = 1700000001000;
  auto back = pool::FromJson(pool::ToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->name, "gpu-a");
  EXPECT_EQ(back->addresses, r.addresses);
  ASSERT_EQ(back->devices.size(), 2u);
  EXPECT_EQ(back->devices[0].global_mem, 150ull << 30);
  EXPECT_DOUBLE_EQ(back->devices[0].busy, 0.25);
  EXPECT_EQ(back->devices[0].queues, 2u);
  EXPECT_EQ(back->devices[0].tenants, (std::vector<std::string>{"alice", "bob"}));
  ASSERT_EQ(back->tenants.size(), 1u);
  EXPECT_EQ(back->tenants[0].sessions, 2u);
  EXPECT_EQ(back->updated_ms, 1700000001000);
}

TEST(PoolRecord, HostileRecordsAreRefusedOrTamed) {
  for (const char* bad : {"", "[]", "{", "{\"version\":2,\"addresses\":[\"a:1\"]}",
                          "{\"version\":1}", "{\"version\":1,\"addresses\":[]}",
                          "{\"version\":1,\"addresses\":\"a:1\"}"})
    EXPECT_FALSE(pool::FromJson(bad).ok()) << bad;
  // Wrong types read as defaults; a busy fraction out of range is clamped.
  auto r = pool::FromJson(
      R"({"version":1,"addresses":["a:1",7],"name":3,"devices":[{"index":"x","busy":9},5]})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->addresses, (std::vector<std::string>{"a:1"}));
  EXPECT_EQ(r->name, "");
  ASSERT_EQ(r->devices.size(), 1u);
  EXPECT_EQ(r->devices[0].index, 0u);
  EXPECT_DOUBLE_EQ(r->devices[0].busy, 1.0);
}

TEST(PoolPlacement, LeastBusyFirstThenFewestQueues) {
  auto server = [](std::vector<std::pair<double, uint32_t>> devs) {
    pool::ServerRecord r;
    r.addresses = {"x:1"};
    for (uint32_t i = 0; i < devs.size(); ++i) {
      pool::DeviceLoad d;
      d.index = i;
      d.busy = devs[i].first;
      d.queues = devs[i].second;
      r.devices.push_back(d);
    }
    return r;
  };
  // Server 0: a busy device and an idle one; server 1: idle but with a program on it;
  // server 2: idle and unused. Busy fractions are compared in tenths.
  std::vector<pool::ServerRecord> s = {server({{0.9, 1}, {0.02, 0}}), server({{0.0, 1}}),
                                       server({{0.0, 0}})};
  auto order = pool::OrderByLoad(s);
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[0].server, 0u);  // 0.02 busy, no queue: as idle as server 2, listed first
  EXPECT_EQ(order[0].device, 1u);
  EXPECT_EQ(order[1].server, 2u);
  EXPECT_EQ(order[2].server, 1u);  // idle, one queue
  EXPECT_EQ(order[3].server, 0u);  // busy
  EXPECT_EQ(order[3].device, 0u);
}

TEST(PoolBase64, RoundTrip) {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "/rgpu/pools/x/servers/10.0.0.1:7420", std::string("\0\xff", 2)})
    EXPECT_EQ(pool::Base64Decode(pool::Base64Encode(s)), s);
  EXPECT_EQ(pool::Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(pool::Base64Decode("abc"), "");  // not a multiple of 4
}

TEST(LoadWindow, BusyFractionOverTheSpan) {
  using namespace std::chrono;
  server::LoadWindow w(seconds(4));
  auto t = steady_clock::time_point{} + hours(1);
  EXPECT_EQ(w.Sample(t, {0, 0}), (std::vector<double>{0, 0}));  // nothing to compare with yet
  // Device 0 ran half of the next two seconds, device 1 all of it (and a lump beyond).
  auto f = w.Sample(t + seconds(2), {1'000'000'000, 3'000'000'000});
  EXPECT_NEAR(f[0], 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(f[1], 1.0);
  // Six seconds on, the first sample has left the span: only the last four seconds count.
  f = w.Sample(t + seconds(6), {1'000'000'000, 5'000'000'000});
  EXPECT_NEAR(f[0], 0.0, 1e-9);
  EXPECT_NEAR(f[1], 0.5, 1e-9);
}

}  // namespace
}  // namespace rgpu

namespace rgpu {
namespace {

Status LoadText(const std::string& text, server::ServerOptions* opt) {
  // One file per process: ctest runs this binary's tests as parallel processes.
  const std::string path =
      testing::TempDir() + "/pool_config_test." + std::to_string(getpid()) + ".toml";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  Status s = server::LoadConfig(path, opt);
  std::remove(path.c_str());
  return s;
}

TEST(PoolConfig, Section) {
  server::ServerOptions opt;
  Status s = LoadText(
      "[pool]\nurl = \"etcd://e1:2379,e2:2379/lab\"\nadvertise = [\"gpu-a:7420\", \"10.0.0.5:7420\"]\n"
      "ttl_seconds = 15\nrefresh_seconds = 2.5\n",
      &opt);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(opt.pool.url, "etcd://e1:2379,e2:2379/lab");
  EXPECT_EQ(opt.pool.advertise, (std::vector<std::string>{"gpu-a:7420", "10.0.0.5:7420"}));
  EXPECT_EQ(opt.pool.ttl, std::chrono::seconds(15));
  EXPECT_EQ(opt.pool.refresh, std::chrono::milliseconds(2500));
  for (const char* bad : {"[pool]\nttl_seconds = 1\n", "[pool]\nrefresh_seconds = 20\n",
                          "[pool]\nadvertise = 5\n", "[pool]\nurls = \"x\"\n"}) {
    server::ServerOptions o;
    EXPECT_FALSE(LoadText(bad, &o).ok()) << bad;
  }
}

}  // namespace
}  // namespace rgpu

namespace rgpu {
namespace {

// rgpud's config file beyond [pool] (server/config.cpp): every section, and what each refuses.
TEST(ServerConfig, SectionsAndTenants) {
  server::ServerOptions opt;
  Status s = LoadText(
      "[server]\nlisten = \"tcp:0.0.0.0:7420\"\nname = \"gpu-a\"\n"
      "[limits]\nmax_frame = \"2MiB\"\nmax_staging = \"64MiB\"\nstop_grace_seconds = 1.5\n"
      "[[tenant]]\nid = \"lc\"\ntoken_hash = \"sha256$s$d\"\npriority = \"latency-critical\"\n"
      "weight = 2.0\nmem_quota = \"1GiB\"\nmax_sessions = 3\ndevices = [0, 1]\n"
      "[[tenant]]\nid = \"be\"\ntoken_hash = \"sha256$s$e\"\ncontext_group = \"batch\"\n",
      &opt);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(opt.listen, "tcp:0.0.0.0:7420");
  EXPECT_EQ(opt.name, "gpu-a");
  EXPECT_EQ(opt.max_frame, 2u << 20);
  EXPECT_EQ(opt.max_staging_bytes, uint64_t{64} << 20);
  EXPECT_EQ(opt.stop_grace, std::chrono::milliseconds(1500));
  ASSERT_EQ(opt.tenants.size(), 2u);
  const auto& lc = *opt.tenants[0];
  EXPECT_EQ(lc.id, "lc");
  EXPECT_EQ(lc.priority, server::Priority::LatencyCritical);
  EXPECT_DOUBLE_EQ(lc.weight, 2.0);
  EXPECT_EQ(lc.mem_quota_bytes, uint64_t{1} << 30);
  EXPECT_EQ(lc.max_sessions, 3u);
  EXPECT_EQ(lc.devices, (std::vector<int>{0, 1}));
  const auto& be = *opt.tenants[1];
  EXPECT_EQ(be.priority, server::Priority::BestEffort);
  EXPECT_DOUBLE_EQ(be.weight, 1.0);
  EXPECT_EQ(be.context_group, "batch");
}

TEST(ServerConfig, MistakesAreRefusedWithTheirPlace) {
  const std::string ok_tenant = "[[tenant]]\nid = \"a\"\ntoken_hash = \"sha256$s$d\"\n";
  const struct {
    std::string text, says;
  } cases[] = {
      {"[server]\nlistn = \"x\"\n", "listn"},
      {"[tls]\ncert = \"c.pem\"\n", "both cert and key"},
      {"[tls]\nclient_ca = \"ca.pem\"\n", "client_ca"},
      {"[limits]\nmax_frame = \"64KiB\"\n", "max_frame"},
      {"[limits]\nmax_staging = -1\n", "max_staging"},
      {ok_tenant + ok_tenant, "listed twice"},
      {"[[tenant]]\ntoken_hash = \"sha256$s$d\"\n", "no id"},
      {"[[tenant]]\nid = \"a\"\ntoken_hash = \"plain\"\n", "token_hash"},
      {ok_tenant + "weight = 0\n", "weight"},
      {ok_tenant + "priority = \"urgent\"\n", "priority"},
      {ok_tenant + "max_sessions = -1\n", "max_sessions"},
      {ok_tenant + "devices = [-1]\n", "devices"},
      {"tenant = 5\n", "[[tenant]]"},
      {"limits = 1\n", "[limits]"},
      {"[server\n", "line"},
  };
  for (const auto& c : cases) {
    server::ServerOptions o;
    Status s = LoadText(c.text, &o);
    EXPECT_FALSE(s.ok()) << c.text;
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.text << " -> " << s.message();
  }
}

}  // namespace
}  // namespace rgpu
