// rgpu-bench-overhead: what rgpu costs above native OpenCL and above the network floor.
//
// One command starts everything it measures: two rgpud daemons (Unix socket and TCP loopback)
// as child processes, a raw TCP / Unix floor server and, for emulated links, a delaying relay
// (threads of this process). Each measured configuration runs in a fresh worker process (this
// binary again, with --worker) with its own OCL_ICD_VENDORS and RGPU_SERVER. Results go to
// OUT/overhead.json (environment header + every figure) and OUT/overhead.md (tables, ratios,
// targets of issue 6). docs/performance.md explains the figures and how to rerun them.
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench/commit.h"
#include "bench/net.h"
#include "bench/workloads.h"
#include "bench/process.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace rgpu::bench;

namespace {

struct Options {
  std::string out = "bench-out";
  std::string build;                      // default: the build tree this binary is in
  std::string vendors = "/etc/OpenCL/vendors";
  std::string platform;                   // default: the first GPU platform, else PoCL
  std::string cpu_platform = "Portable";  // "local CPU" of the matmul table
  bool quick = false;
  int iterations = 10000;
  int async_launches = 100000;
  // The launch rate of one run moves by 10-20% between runs on a GPU host (native alone too):
  // native, rgpu unix and rgpu tcp are timed this many times, alternating, and each path
  // reports its median run.
  int async_rounds = 3;
  std::string async_shape = "plain";  // AsyncRate (workloads.cpp)
  int bandwidth_rounds = 3;
  std::string max_bytes = "1G";
  double bytes_per_point = 512.0 * (1 << 20);
  std::vector<int> matmul_sizes{64, 128, 256, 512, 1024, 2048};
  double matmul_budget_s = 4;
  std::vector<double> link_delay_ms{0.5, 5, 25};  // one way: 1, 10 and 50 ms round trip
  double link_rate_mbit = 0;
  int worker_timeout_s = 300;
  std::vector<std::string> rgpud_args;  // extra options for both daemons
  // What the OpenCL workers measure (sync, async, bandwidth, matmul, requests).
  std::vector<std::string> tasks{"sync", "async", "bandwidth", "matmul", "requests"};
  std::vector<double> request_us{10, 50, 200, 370, 1000, 2000, 5000, 10000};
};

std::string Now() {
  char buf[64];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

size_t ParseBytes(const std::string& s) {
  size_t idx = 0;
  double v = std::stod(s, &idx);
  std::string unit = s.substr(idx);
  double mul = 1;
  if (unit == "K" || unit == "KiB") mul = 1 << 10;
  else if (unit == "M" || unit == "MiB") mul = 1 << 20;
  else if (unit == "G" || unit == "GiB") mul = 1 << 30;
  else if (!unit.empty()) throw std::runtime_error("bad size " + s);
  return static_cast<size_t>(v * mul);
}

std::string Bytes(size_t b) {
  if (b >= (1u << 30)) return std::to_string(b >> 30) + " GiB";
  if (b >= (1u << 20)) return std::to_string(b >> 20) + " MiB";
  return std::to_string(b >> 10) + " KiB";
}

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

using rgpu::bench::Spawn;
using rgpu::bench::WaitFor;

std::string Markdown(const json& doc);

class Bench {
 public:
  Bench(Options o, std::string self) : opt_(std::move(o)), self_(std::move(self)) {}
  int Run();

 private:
  void PrepareVendors();
  std::string StartDaemon(const std::string& listen, const std::string& name);
  // Times the asynchronous task opt_.async_rounds - 1 more times on each path (alternating)
  // and keeps each path's median run in runs[path]["async"], every round's rate beside it.
  void AsyncRounds(json& runs,
                   const std::vector<std::tuple<const char*, std::string, std::string>>& paths);
  // Times the bandwidth task opt_.bandwidth_rounds - 1 more times on every path, the raw
  // floors included, alternating; each size's figures become the medians, with every
  // round's beside them in row["rounds"] (so that a ratio can pair a run with the floor's run
  // of the same round: the floor moved by 40% between runs minutes apart on an H200).
  struct WorkerCall {
    std::string key;  // the run it belongs to (runs[key])
    json spec;
    std::string vendors, server;
  };
  void BandwidthRounds(json& runs, const std::vector<WorkerCall>& paths);
  json Worker(const std::string& label, json spec, const std::string& vendors,
              const std::string& server = "");
  json SpecFor(const std::vector<std::string>& tasks) const;

  Options opt_;
  std::string self_;
  fs::path tmp_, native_vendors_, rgpu_vendors_;
  std::vector<pid_t> daemons_;
  std::vector<size_t> sizes_;
};

void Bench::PrepareVendors() {
  auto d = rgpu::bench::MakeVendorDirs("rgpu-bench", opt_.vendors, opt_.build);
  tmp_ = d.tmp;
  native_vendors_ = d.native;
  rgpu_vendors_ = d.rgpu;
}

std::string Bench::StartDaemon(const std::string& listen, const std::string& name) {
  fs::path log = tmp_ / (name + ".log");
  std::vector<std::string> argv{(fs::path(opt_.build) / "server" / "rgpud").string(), "--listen", listen,
                                "--platform", opt_.platform, "--log-level", "warn"};
  argv.insert(argv.end(), opt_.rgpud_args.begin(), opt_.rgpud_args.end());
  pid_t pid = Spawn(argv, {"OCL_ICD_VENDORS=" + native_vendors_.string()}, log);
  daemons_.push_back(pid);
  // rgpud logs "listening on ADDRESS" at info level; at warn we poll the socket instead.
  for (int i = 0; i < 600; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid)
      throw std::runtime_error("rgpud " + name + " exited: " + ReadFile(log));
    if (listen.rfind("unix:", 0) == 0) {
      int fd = ConnectTo(listen);
      if (fd >= 0) {
        close(fd);
        return listen;
      }
    } else {
      int fd = ConnectTo(listen);
      if (fd >= 0) {
        close(fd);
        return listen;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("rgpud " + name + " did not start: " + ReadFile(log));
}

json Bench::SpecFor(const std::vector<std::string>& tasks) const {
  return {{"kind", "cl"},
          {"tasks", tasks},
          {"iterations", opt_.iterations},
          {"async_launches", opt_.async_launches},
          {"async_shape", opt_.async_shape},
          {"sizes", sizes_},
          {"bytes_per_point", opt_.bytes_per_point},
          {"matmul_sizes", opt_.matmul_sizes},
          {"matmul_budget_s", opt_.matmul_budget_s},
          {"request_us", opt_.request_us},
          {"request_budget_s", opt_.quick ? 0.3 : 2.0}};
}

json Bench::Worker(const std::string& label, json spec, const std::string& vendors,
                   const std::string& server) {
  fs::path in = tmp_ / (label + ".spec.json"), out = tmp_ / (label + ".json");
  std::ofstream(in) << spec.dump();
  std::fprintf(stderr, "[%s] %-22s ...\n", Now().c_str(), label.c_str());
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> env{"OCL_ICD_VENDORS=" + vendors};
  if (!server.empty()) env.push_back("RGPU_SERVER=" + server);
  pid_t pid = Spawn({self_, "--worker", in.string(), out.string()}, env, {});
  int rc = WaitFor(pid, opt_.worker_timeout_s);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json r;
  if (fs::exists(out)) r = json::parse(ReadFile(out), nullptr, false);
  if (rc != 0 && !r.contains("error"))
    r["error"] = rc < 0 ? "worker killed (timeout or signal)" : "worker exit " + std::to_string(rc);
  r["wall_s"] = s;
  std::fprintf(stderr, "[%s] %-22s %s in %.1f s\n", Now().c_str(), label.c_str(),
               r.contains("error") ? r["error"].get<std::string>().c_str() : "done", s);
  return r;
}

void Bench::AsyncRounds(
    json& runs, const std::vector<std::tuple<const char*, std::string, std::string>>& paths) {
  std::map<std::string, std::vector<json>> rounds;
  for (const auto& [key, vendors, server] : paths)
    if (runs[key].contains("async")) rounds[key].push_back(runs[key]["async"]);
  for (int i = 1; i < opt_.async_rounds; ++i)
    for (const auto& [key, vendors, server] : paths) {
      json s = SpecFor({"async"});
      s["platform"] = server.empty() ? opt_.platform : "rgpu";
      json r = Worker(std::string(key) + "-async-" + std::to_string(i + 1), s, vendors, server);
      if (r.contains("async")) rounds[key].push_back(r["async"]);
    }
  for (auto& [key, list] : rounds) {
    std::vector<double> rates;
    for (const json& r : list) rates.push_back(r["launches_per_s"].get<double>());
    std::sort(list.begin(), list.end(), [](const json& a, const json& b) {
      return a["launches_per_s"].get<double>() < b["launches_per_s"].get<double>();
    });
    json median = list[list.size() / 2];
    median["rounds_launches_per_s"] = rates;
    runs[key]["async"] = median;
  }
}

void Bench::BandwidthRounds(json& runs, const std::vector<WorkerCall>& paths) {
  std::map<std::string, std::vector<json>> rounds;
  for (const WorkerCall& p : paths)
    if (runs[p.key].contains("bandwidth")) rounds[p.key].push_back(runs[p.key]["bandwidth"]);
  for (int i = 1; i < opt_.bandwidth_rounds; ++i)
    for (const WorkerCall& p : paths) {
      json r = Worker(p.key + "-bandwidth-" + std::to_string(i + 1), p.spec, p.vendors, p.server);
      if (r.contains("bandwidth")) rounds[p.key].push_back(r["bandwidth"]);
    }
  for (auto& [key, list] : rounds) {
    if (list.size() < 2) continue;
    json merged = list[0];
    for (json& row : merged) {
      const size_t bytes = row["bytes"].get<size_t>();
      json fields = json::object();
      for (const auto& [field, value] : row.items())
        if (field.size() > 5 && field.compare(field.size() - 5, 5, "_gbps") == 0)
          fields[field] = json::array();
      for (const json& run : list)
        for (const json& r : run)
          if (r["bytes"].get<size_t>() == bytes)
            for (auto& [field, every] : fields.items())
              if (r.contains(field)) every.push_back(r[field]);
      for (auto& [field, every] : fields.items()) {
        std::vector<double> v = every.get<std::vector<double>>();
        std::sort(v.begin(), v.end());
        row[field] = v[v.size() / 2];
      }
      row["rounds"] = fields;
    }
    runs[key]["bandwidth"] = merged;
  }
}

json Host() {
  utsname u{};
  uname(&u);
  std::string cpu;
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return {{"hostname", host},
          {"kernel", std::string(u.sysname) + " " + u.release},
          {"cpu", cpu},
          {"cpus", std::thread::hardware_concurrency()}};
}

int Bench::Run() {
  PrepareVendors();
  json doc;
  doc["environment"] = {{"date", Now()}, {"commit", rgpu::bench::kCommit}, {"host", Host()}};
  // RGPU_SHM=0 (inherited by the workers) sends the Unix socket client's bulk data through
  // the socket instead of a shared region: the rgpu unix columns mean different paths.
  const char* shm = std::getenv("RGPU_SHM");
  doc["environment"]["rgpu_shm"] = shm && std::string(shm) == "0" ? "off" : "on";
  json probe = Worker("probe", {{"kind", "probe"}}, native_vendors_.string());
  if (probe.contains("error")) throw std::runtime_error("probe failed: " + probe["error"].get<std::string>());
  // The device measured: the named platform, else the first GPU, else the CPU platform.
  auto find = [&](const std::string& name, bool gpu_only) {
    json found;
    for (const auto& p : probe["platforms"])
      for (const auto& d : p["devices"]) {
        std::string pname = p["name"];
        if (!found.is_null() || pname.find(name) == std::string::npos) continue;
        if (gpu_only && !d["gpu"].get<bool>()) continue;
        found = d;
        found["platform"] = pname;
        found["platform_version"] = p["version"];
      }
    return found;
  };
  json device = opt_.platform.empty() ? find("", true) : find(opt_.platform, false);
  if (device.is_null() && opt_.platform.empty()) device = find(opt_.cpu_platform, false);
  if (device.is_null()) throw std::runtime_error("no device on platform '" + opt_.platform + "'");
  if (opt_.platform.empty()) opt_.platform = device["platform"];
  doc["environment"]["device"] = device;
  doc["environment"]["platforms"] = probe["platforms"];

  // Transfer sizes 4 KiB, 16 KiB, ... up to the cap, the device's largest allocation and a
  // quarter of its memory.
  size_t cap = std::min<size_t>({ParseBytes(opt_.max_bytes), device["max_alloc"].get<size_t>(),
                                 device["global_mem"].get<size_t>() / 4});
  for (size_t s = 4096; s <= cap; s *= 4) sizes_.push_back(s);

  doc["options"] = {{"quick", opt_.quick},
                    {"rgpud_args", opt_.rgpud_args},
                    {"platform", opt_.platform},
                    {"cpu_platform", opt_.cpu_platform},
                    {"iterations", opt_.iterations},
                    {"async_launches", opt_.async_launches},
                    {"async_rounds", opt_.async_rounds},
                    {"async_shape", opt_.async_shape},
                    {"bandwidth_rounds", opt_.bandwidth_rounds},
                    {"sizes", sizes_},
                    {"bytes_per_point", opt_.bytes_per_point},
                    {"matmul_sizes", opt_.matmul_sizes},
                    {"matmul_budget_s", opt_.matmul_budget_s},
                    {"link_delay_ms", opt_.link_delay_ms},
                    {"link_rate_mbit", opt_.link_rate_mbit}};

  std::string unix_addr = StartDaemon("unix:" + (tmp_ / "rgpud.sock").string(), "rgpud-unix");
  // A free port: bind port 0 with our own acceptor, read it, let it go.
  std::string tcp_listen;
  {
    auto probe_port = RawServer::Open("127.0.0.1:0");
    tcp_listen = probe_port->address();
  }
  std::string tcp_addr = StartDaemon(tcp_listen, "rgpud-tcp");
  auto raw_tcp = RawServer::Open("127.0.0.1:0");
  auto raw_unix = RawServer::Open("unix:" + (tmp_ / "raw.sock").string());
  if (!raw_tcp || !raw_unix) throw std::runtime_error("cannot start the raw floor server");

  json& runs = doc["runs"];
  const std::vector<std::string>& all = opt_.tasks;
  auto has = [&](const char* t) { return std::find(all.begin(), all.end(), t) != all.end(); };
  const std::string nv = native_vendors_.string(), rv = rgpu_vendors_.string();
  runs["native"] = Worker("native", [&] { auto s = SpecFor(all); s["platform"] = opt_.platform; return s; }(), nv);
  // The rgpu runs time the very kernels the native run calibrated.
  json iters = json::object();
  if (runs["native"].contains("requests"))
    for (const auto& row : runs["native"]["requests"])
      iters[std::to_string(static_cast<long>(row["target_us"].get<double>()))] = row["iters"];
  auto rgpu_spec = [&] {
    auto s = SpecFor(all);
    s["platform"] = "rgpu";
    s["request_iters"] = iters;
    return s;
  };
  runs["rgpu_unix"] = Worker("rgpu-unix", rgpu_spec(), rv, unix_addr);
  runs["rgpu_tcp"] = Worker("rgpu-tcp", rgpu_spec(), rv, tcp_addr);
  if (has("async")) {
    const std::vector<std::tuple<const char*, std::string, std::string>>
        paths{{"native", nv, ""}, {"rgpu_unix", rv, unix_addr}, {"rgpu_tcp", rv, tcp_addr}};
    AsyncRounds(runs, paths);
  }
  auto raw_spec = [&](const std::vector<std::string>& tasks, const RawServer* srv) {
    json s = SpecFor(tasks);
    s["kind"] = "raw";
    s["address"] = srv->address();
    return s;
  };
  std::vector<std::string> raw_tasks{"sync"};
  if (has("bandwidth")) raw_tasks.push_back("bandwidth");
  for (auto [key, srv] :
       {std::pair{"raw_tcp", raw_tcp.get()}, std::pair{"raw_unix", raw_unix.get()}})
    runs[key] = Worker(key, raw_spec(raw_tasks, srv), nv);
  if (has("bandwidth") && opt_.bandwidth_rounds > 1) {
    auto cl_spec = [&](const std::string& platform) {
      json s = SpecFor({"bandwidth"});
      s["platform"] = platform;
      return s;
    };
    BandwidthRounds(runs, {{"native", cl_spec(opt_.platform), nv, ""},
                           {"rgpu_unix", cl_spec("rgpu"), rv, unix_addr},
                           {"rgpu_tcp", cl_spec("rgpu"), rv, tcp_addr},
                           {"raw_tcp", raw_spec({"bandwidth"}, raw_tcp.get()), nv, ""},
                           {"raw_unix", raw_spec({"bandwidth"}, raw_unix.get()), nv, ""}});
  }
  if (has("matmul")) {
    json s = SpecFor({"matmul"});
    s["platform"] = opt_.cpu_platform;
    runs["local_cpu"] = Worker("local-cpu", s, nv);
  }

  // Emulated links: rgpu over TCP through the relay, and the raw floor through one too.
  doc["links"] = json::array();
  for (double delay : opt_.link_delay_ms) {
    double rtt_ms = 2 * delay;
    // Round trips at this delay cost real time: keep each operation near two seconds.
    int iters = std::clamp(static_cast<int>(2000 / std::max(rtt_ms, 0.01)), 20, opt_.iterations);
    auto relay = LinkRelay::Open(tcp_addr, delay, opt_.link_rate_mbit);
    auto raw_relay = LinkRelay::Open(raw_tcp->address(), delay, opt_.link_rate_mbit);
    char label[64];
    std::snprintf(label, sizeof(label), "link-%gms", rtt_ms);
    json s = SpecFor({"sync", "async", "matmul"});
    s["platform"] = "rgpu";
    s["iterations"] = iters;
    s["matmul_budget_s"] = std::min(opt_.matmul_budget_s, 2.0);
    json link{{"rtt_ms", rtt_ms}, {"one_way_ms", delay}, {"rate_mbit", opt_.link_rate_mbit}};
    link["rgpu_tcp"] = Worker(std::string(label) + "-rgpu", s, rv, relay->address());
    json r = SpecFor({"sync"});
    r["kind"] = "raw";
    r["iterations"] = iters;
    r["address"] = raw_relay->address();
    link["raw_tcp"] = Worker(std::string(label) + "-raw", r, nv);
    doc["links"].push_back(link);
  }

  for (pid_t pid : daemons_) kill(pid, SIGTERM);
  for (pid_t pid : daemons_) WaitFor(pid, 10);
  daemons_.clear();

  fs::create_directories(opt_.out);
  // rgpud's own logs (warnings, and the request trace when RGPU_TRACE_REQUESTS is set).
  for (const char* name : {"rgpud-unix.log", "rgpud-tcp.log"})
    if (fs::exists(tmp_ / name)) fs::copy_file(tmp_ / name, fs::path(opt_.out) / name, fs::copy_options::overwrite_existing);
  std::ofstream(fs::path(opt_.out) / "overhead.json") << doc.dump(1) << "\n";
  std::ofstream(fs::path(opt_.out) / "overhead.md") << Markdown(doc);
  std::cout << Markdown(doc);
  fs::remove_all(tmp_);
  bool failed = false;
  for (const auto& [k, v] : runs.items()) failed |= v.contains("error");
  for (const auto& l : doc["links"])
    failed |= l["rgpu_tcp"].contains("error") || l["raw_tcp"].contains("error");
  return failed ? 1 : 0;
}

// ---- the report ------------------------------------------------------------------------

std::string Fmt(double v, int prec = 1) {
  if (std::isnan(v)) return "–";
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", prec, v);
  return b;
}

double Get(const json& j, std::initializer_list<const char*> path) {
  const json* at = &j;
  for (const char* k : path) {
    if (!at->is_object() || !at->contains(k)) return NAN;
    at = &(*at)[k];
  }
  return at->is_number() ? at->get<double>() : NAN;
}

// The row of a size in a bandwidth list.
json SizeRow(const json& run, size_t bytes) {
  if (!run.contains("bandwidth")) return {};
  for (const auto& r : run["bandwidth"])
    if (r["bytes"].get<size_t>() == bytes) return r;
  return {};
}

// `field` of a bandwidth row over `floor_field` of the floor's row of the same size: the
// median of each round's ratio where both ran in rounds (--bandwidth-rounds), else the ratio
// of the two figures.
double OverFloor(const json& row, const std::string& field, const json& floor_row,
                 const std::string& floor_field) {
  const double ratio = Get(row, {field.c_str()}) / Get(floor_row, {floor_field.c_str()});
  if (!row.contains("rounds") || !floor_row.contains("rounds")) return ratio;
  const json& a = row["rounds"];
  const json& b = floor_row["rounds"];
  if (!a.contains(field) || !b.contains(floor_field)) return ratio;
  const json& x = a[field];
  const json& y = b[floor_field];
  if (x.empty() || x.size() != y.size()) return ratio;
  std::vector<double> each;
  for (size_t i = 0; i < x.size(); ++i) each.push_back(x[i].get<double>() / y[i].get<double>());
  std::sort(each.begin(), each.end());
  return each[each.size() / 2];
}

json MatmulRow(const json& run, int n) {
  if (!run.contains("matmul")) return {};
  for (const auto& r : run["matmul"])
    if (r["n"].get<int>() == n) return r;
  return {};
}

std::string Verdict(bool ok) { return ok ? "met" : "**missed**"; }

// The row of a kernel length in a requests list.
json RequestRow(const json& run, double target_us) {
  if (!run.contains("requests")) return {};
  for (const auto& r : run["requests"])
    if (std::fabs(r["target_us"].get<double>() - target_us) < 0.5) return r;
  return {};
}

std::vector<double> RequestTargetsUs(const json& runs) {
  std::vector<double> t;
  if (runs["native"].contains("requests"))
    for (const auto& r : runs["native"]["requests"]) t.push_back(r["target_us"]);
  return t;
}

// One table per series of requests (`request_us`: after a pause; `request_b2b_us`: back to
// back): native and rgpu p50 / p99 per kernel length, and what rgpu adds.
void RequestTable(std::ostringstream& md, json& runs, const std::vector<double>& targets,
                  const char* series) {
  md << "| kernel | native p50 | p99 | rgpu unix p50 | p99 | rgpu tcp p50 | p99 | "
        "added unix p50 / p99 | added tcp p50 / p99 "
        "|\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (double t : targets) {
    auto q = [&](const char* run, const char* p) {
      return Get(RequestRow(runs[run], t), {series, p});
    };
    md << "| " << Fmt(Get(RequestRow(runs["native"], t), {"kernel_us"}), 0);
    for (const char* run : {"native", "rgpu_unix", "rgpu_tcp"})
      md << " | " << Fmt(q(run, "p50")) << " | " << Fmt(q(run, "p99"));
    for (const char* run : {"rgpu_unix", "rgpu_tcp"})
      md << " | " << Fmt(q(run, "p50") - q("native", "p50")) << " / "
         << Fmt(q(run, "p99") - q("native", "p99"));
    md << " |\n";
  }
}

// Requests (issue 12): what rgpu adds to a kernel + 4-byte read, per kernel length, after a
// pause and back to back, and where: before the kernel starts, or after it ends (from its
// profiling times).
std::string RequestsMarkdown(json& runs) {
  const auto targets = RequestTargetsUs(runs);
  if (targets.empty()) return "";
  std::ostringstream md;
  md << "## Requests: a kernel, then a 4-byte blocking read (µs; device idle at arrival)\n\n";
  RequestTable(md, runs, targets, "request_us");
  md << "\nBack to back (µs; the next request as soon as the last one's read returns):\n\n";
  RequestTable(md, runs, targets, "request_b2b_us");
  md << "\nWhere the time goes (p50, µs, from the kernel's profiling times against the host clock; "
        "\"–\" where the device's profiling clock is not the host's):\n\n"
        "| kernel | native before / after | rgpu unix before / after | rgpu tcp before / after |\n"
        "|---:|---:|---:|---:|\n";
  for (double t : targets) {
    md << "| " << Fmt(Get(RequestRow(runs["native"], t), {"kernel_us"}), 0);
    for (const char* run : {"native", "rgpu_unix", "rgpu_tcp"}) {
      json row = RequestRow(runs[run], t);
      md << " | " << Fmt(Get(row, {"before_kernel_us", "p50"})) << " / " << Fmt(Get(row, {"after_kernel_us", "p50"}));
    }
    md << " |\n";
  }
  md << "\n";
  return md.str();
}

// Issue 12's request targets: at most one raw round trip + 10 µs added at p50, two + 20 µs
// at p99; the worst kernel length decides. Requests after a pause are held to a ping-pong
// after the same pause, back-to-back ones to a back-to-back ping-pong.
std::string RequestTargets(json& runs) {
  std::ostringstream md;
  for (bool b2b : {false, true})
    for (auto [path, raw] :
         {std::pair{"rgpu_tcp", "raw_tcp"}, std::pair{"rgpu_unix", "raw_unix"}}) {
      const char* floor = b2b ? "pingpong_us" : "pingpong_idle_us";
      const char* series = b2b ? "request_b2b_us" : "request_us";
      const double rtt50 = Get(runs[raw], {"sync", floor, "p50"});
      const double rtt99 = Get(runs[raw], {"sync", floor, "p99"});
      for (const char* p : {"p50", "p99"}) {
        const bool p50 = std::string(p) == "p50";
        const double limit = p50 ? rtt50 + 10 : 2 * rtt99 + 20;
        double worst = -INFINITY, worst_t = NAN;
        for (double t : RequestTargetsUs(runs)) {
          double added = Get(RequestRow(runs[path], t), {series, p}) -
                         Get(RequestRow(runs["native"], t), {series, p});
          if (added > worst) worst = added, worst_t = t;
        }
        if (std::isinf(worst) || std::isnan(worst)) continue;
        md << "| " << path << (b2b ? " back-to-back" : "") << " request " << p << " adds ≤ "
           << (p50 ? "raw RTT p50 + 10" : "2 × raw RTT p99 + 20") << " = " << Fmt(limit)
           << " µs (worst kernel length; raw " << (b2b ? "back to back" : "after idle") << ") | +"
           << Fmt(worst) << " µs at " << Fmt(worst_t, 0) << " µs | " << Verdict(worst <= limit)
           << " |\n";
      }
    }
  return md.str();
}

// The Markdown report, from the JSON document alone (so `--report FILE` can re-render it).
std::string Markdown(const json& doc) {
  std::ostringstream md;
  struct {
    bool quick;
    int iterations, async_launches;
    std::string cpu_platform;
    std::vector<int> matmul_sizes;
    double link_rate_mbit;
  } opt_{doc["options"]["quick"], doc["options"]["iterations"], doc["options"]["async_launches"],
         doc["options"]["cpu_platform"], doc["options"]["matmul_sizes"], doc["options"]["link_rate_mbit"]};
  const auto sizes_ = doc["options"]["sizes"].get<std::vector<size_t>>();
  const json& env = doc["environment"];
  json runs = doc["runs"];  // a copy: a run left out (--tasks) reads as null
  const json& dev = env["device"];
  md << "# rgpu overhead benchmark\n\n";
  md << "| environment | |\n|---|---|\n";
  md << "| date | " << env["date"].get<std::string>() << " |\n";
  md << "| commit | " << env["commit"].get<std::string>() << " |\n";
  md << "| device | " << dev["name"].get<std::string>() << " (" << dev["platform"].get<std::string>()
     << ", " << dev["version"].get<std::string>() << ") |\n";
  md << "| driver | " << dev["driver"].get<std::string>() << " |\n";
  md << "| host | " << env["host"]["cpu"].get<std::string>() << ", " << env["host"]["cpus"]
     << " CPUs, " << env["host"]["kernel"].get<std::string>() << " |\n";
  md << "| options | " << (opt_.quick ? "--quick, " : "") << opt_.iterations << " round trips, "
     << opt_.async_launches << " async launches, transfers up to " << Bytes(sizes_.back())
     << ", local CPU = " << opt_.cpu_platform << " |\n";
  md << "| rgpu unix bulk data | "
     << (env.value("rgpu_shm", "on") == "off" ? "through the socket (RGPU_SHM=0)" : "through a shared region")
     << " |\n\n";

  const char* cols[] = {"native", "rgpu_unix", "rgpu_tcp"};
  const char* names[] = {"native", "rgpu unix", "rgpu tcp"};
  const bool has_bandwidth = runs["native"].contains("bandwidth");
  const bool has_matmul = runs["native"].contains("matmul");

  md << "## Synchronous round trip (µs)\n\n"
        "| path | launch+finish p50 | p99 | p99.9 | 4-byte read p50 | p99 | p99.9 |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n";
  for (int i = 0; i < 3; ++i) {
    const json& r = runs[cols[i]];
    md << "| " << names[i];
    for (const char* op : {"launch_finish_us", "read4_us"})
      for (const char* q : {"p50", "p99", "p999"}) md << " | " << Fmt(Get(r, {"sync", op, q}));
    md << " |\n";
  }
  for (const char* raw : {"raw_unix", "raw_tcp"}) {
    md << "| " << raw << " ping-pong after 0.2-1 ms idle | – | – | – | "
       << Fmt(Get(runs[raw], {"sync", "pingpong_idle_us", "p50"})) << " | "
       << Fmt(Get(runs[raw], {"sync", "pingpong_idle_us", "p99"})) << " | "
       << Fmt(Get(runs[raw], {"sync", "pingpong_idle_us", "p999"})) << " |\n";
    md << "| " << raw << " ping-pong";
    for (int rep = 0; rep < 2; ++rep)
      for (const char* q : {"p50", "p99", "p999"})
        md << " | " << Fmt(Get(runs[raw], {"sync", "pingpong_us", q}));
    md << " |\n";
  }
  md << "\n";

  const double native_rate = Get(runs["native"], {"async", "launches_per_s"});
  if (runs["native"].contains("async")) {
    const int rounds = doc["options"].value("async_rounds", 1);
    md << "## Asynchronous launches (" << opt_.async_launches << " tiny kernels, one clFinish"
       << (rounds > 1 ? "; median of " + std::to_string(rounds) + " runs per path, alternating"
                      : "")
       << ")\n\n"
          "| path | launches/s | vs native | enqueue µs/launch | client CPU µs/launch | every run, "
          "launches/s |\n"
          "|---|---:|---:|---:|---:|---|\n";
    for (int i = 0; i < 3; ++i) {
      const json& r = runs[cols[i]];
      double rate = Get(r, {"async", "launches_per_s"});
      std::string every;
      if (r.contains("async") && r["async"].contains("rounds_launches_per_s"))
        for (const json& x : r["async"]["rounds_launches_per_s"])
          every += (every.empty() ? "" : ", ") + Fmt(x.get<double>(), 0);
      md << "| " << names[i] << " | " << Fmt(rate, 0) << " | " << Fmt(rate / native_rate, 2)
         << " | " << Fmt(Get(r, {"async", "enqueue_us_per_launch"}), 2) << " | "
         << Fmt(Get(r, {"async", "cpu_us_per_launch"}), 2) << " | " << every << " |\n";
  }
  md << "\n";
  }

  md << RequestsMarkdown(runs);

  for (bool write : {true, false}) {
    if (!has_bandwidth) break;
    std::string dir = write ? "write" : "read";
    const int bw_rounds = doc["options"].value("bandwidth_rounds", 1);
    md << "## Bandwidth: " << (write ? "writes" : "reads") << " (GB/s, pageable host memory"
       << (bw_rounds > 1 ? "; medians of " + std::to_string(bw_rounds) +
                               " runs per path, alternating; rgpu tcp / raw tcp is the median of "
                               "each run's ratio"
                         : "")
       << ")\n\n"
       << "| size | native blocking | native non-blocking | rgpu unix blocking | non-blocking | "
          "rgpu tcp blocking | non-blocking | raw unix | raw tcp | rgpu tcp / raw tcp | rgpu tcp / "
          "native |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (size_t b : sizes_) {
      md << "| " << Bytes(b);
      for (const char* c : cols) {
        json row = SizeRow(runs[c], b);
        md << " | " << Fmt(Get(row, {(dir + "_blocking_gbps").c_str()}), 2) << " | "
           << Fmt(Get(row, {(dir + "_nonblocking_gbps").c_str()}), 2);
      }
      double raw_unix = Get(SizeRow(runs["raw_unix"], b), {(dir + "_gbps").c_str()});
      double raw_tcp = Get(SizeRow(runs["raw_tcp"], b), {(dir + "_gbps").c_str()});
      double tcp = Get(SizeRow(runs["rgpu_tcp"], b), {(dir + "_blocking_gbps").c_str()});
      double nat = Get(SizeRow(runs["native"], b), {(dir + "_blocking_gbps").c_str()});
      const double over_raw = OverFloor(SizeRow(runs["rgpu_tcp"], b), dir + "_blocking_gbps",
                                        SizeRow(runs["raw_tcp"], b), dir + "_gbps");
      md << " | " << Fmt(raw_unix, 2) << " | " << Fmt(raw_tcp, 2) << " | " << Fmt(over_raw, 2)
         << " | " << Fmt(tcp / nat, 2) << " |\n";
    }
    md << "\n";
  }

  if (has_matmul) {
  md << "## Matrix multiply, end to end incl. transfers (ms; seed 002's workload)\n\n"
        "| N | local CPU (" << opt_.cpu_platform << ") | native | rgpu unix | rgpu tcp | "
        "speed-up rgpu tcp vs local CPU | rgpu tcp / native |\n|---|---:|---:|---:|---:|---:|---:|\n";
  for (int n : opt_.matmul_sizes) {
    double cpu = Get(MatmulRow(runs["local_cpu"], n), {"ms"});
    double nat = Get(MatmulRow(runs["native"], n), {"ms"});
    double ux = Get(MatmulRow(runs["rgpu_unix"], n), {"ms"});
    double tcp = Get(MatmulRow(runs["rgpu_tcp"], n), {"ms"});
    md << "| " << n << " | " << Fmt(cpu, 2) << " | " << Fmt(nat, 2) << " | " << Fmt(ux, 2) << " | "
       << Fmt(tcp, 2) << " | " << Fmt(cpu / tcp, 1) << "x | " << Fmt(tcp / nat, 2) << " |\n";
  }
  md << "\nWhere a multiply's time goes (µs, median; each step then clFinish, so what an "
        "asynchronous step leaves running counts in it):\n\n"
        "| N | path | create A | create B | create C | launch | read C | release |\n"
        "|---:|---|---:|---:|---:|---:|---:|---:|\n";
  for (int n : opt_.matmul_sizes)
    for (const char* path : {"native", "rgpu_unix", "rgpu_tcp"}) {
      const json ph = MatmulRow(runs[path], n).value("phases_us", json::object());
      if (ph.empty()) continue;
      md << "| " << n << " | " << path;
      for (const char* step : kMatmulSteps) md << " | " << Fmt(ph.value(step, NAN), 0);
      md << " |\n";
    }
  md << "\n";
  }

  if (!doc["links"].empty()) {
    md << "## Emulated links (rgpu over TCP through a delaying relay"
       << (opt_.link_rate_mbit > 0 ? ", " + Fmt(opt_.link_rate_mbit, 0) + " Mbit/s" : "") << ")\n\n"
       << "| RTT ms | raw ping p50 ms | launch+finish p50 ms | 4-byte read p50 ms | "
       << opt_.async_launches << " launches + finish, ms | added RTTs vs loopback | launches/s | matmul 512 ms | "
          "speed-up vs local CPU |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    double cpu512 = Get(MatmulRow(runs["local_cpu"], 512), {"ms"});
    for (const auto& l : doc["links"]) {
      double rtt = l["rtt_ms"];
      double total_ms = Get(l["rgpu_tcp"], {"async", "total_s"}) * 1e3;
      double mm = Get(MatmulRow(l["rgpu_tcp"], 512), {"ms"});
      md << "| " << Fmt(rtt, 0) << " | " << Fmt(Get(l["raw_tcp"], {"sync", "pingpong_us", "p50"}) / 1e3, 2)
         << " | " << Fmt(Get(l["rgpu_tcp"], {"sync", "launch_finish_us", "p50"}) / 1e3, 2) << " | "
         << Fmt(Get(l["rgpu_tcp"], {"sync", "read4_us", "p50"}) / 1e3, 2) << " | " << Fmt(total_ms, 1)
         << " | " << Fmt((total_ms - Get(runs["rgpu_tcp"], {"async", "total_s"}) * 1e3) / rtt, 1) << " | "
         << Fmt(Get(l["rgpu_tcp"], {"async", "launches_per_s"}), 0) << " | " << Fmt(mm, 1) << " | "
         << Fmt(cpu512 / mm, 1) << "x |\n";
    }
    md << "\n";
  }

  // Issue 6's targets, each from this run's own figures.
  md << "## Targets (issue 6)\n\n| target | measured | |\n|---|---|---|\n";
  auto sync = [&](const char* run, const char* op, const char* q) {
    return Get(runs[run], {"sync", op, q});
  };
  for (auto [path, raw] : {std::pair{"rgpu_tcp", "raw_tcp"}, std::pair{"rgpu_unix", "raw_unix"}}) {
    for (const char* op : {"launch_finish_us", "read4_us"}) {
      std::string what = std::string(op) == "read4_us" ? "4-byte read" : "launch+finish";
      double lim50 = sync("native", op, "p50") + sync(raw, "pingpong_us", "p50") + 10;
      double got50 = sync(path, op, "p50");
      md << "| " << path << " " << what << " p50 ≤ native + raw RTT + 10 µs = " << Fmt(lim50)
         << " µs | " << Fmt(got50) << " µs | " << Verdict(got50 <= lim50) << " |\n";
      double lim99 = sync("native", op, "p99") + 2 * sync(raw, "pingpong_us", "p99");
      double got99 = sync(path, op, "p99");
      md << "| " << path << " " << what << " p99 ≤ native p99 + 2 × raw p99 = " << Fmt(lim99)
         << " µs | " << Fmt(got99) << " µs | " << Verdict(got99 <= lim99) << " |\n";
    }
  }
  for (const char* path : {"rgpu_tcp", "rgpu_unix"}) {
    if (!runs["native"].contains("async")) break;
    double rate = Get(runs[path], {"async", "launches_per_s"});
    md << "| " << path << " async launch rate ≥ 90% of native | " << Fmt(100 * rate / native_rate, 0)
       << "% | " << Verdict(rate >= 0.9 * native_rate) << " |\n";
    double cpu = Get(runs[path], {"async", "cpu_us_per_launch"});
    md << "| " << path << " client CPU ≤ 5 µs per launch | " << Fmt(cpu, 2) << " µs | "
       << Verdict(cpu <= 5) << " |\n";
  }
  md << RequestTargets(runs);
  for (const char* dir : {"write", "read"}) {
    if (!has_bandwidth) break;
    double worst_raw = INFINITY, worst_native = INFINITY;
    for (size_t b : sizes_) {
      if (b < (16u << 20)) continue;
      json row = SizeRow(runs["rgpu_tcp"], b);
      double tcp = std::max(Get(row, {(std::string(dir) + "_blocking_gbps").c_str()}),
                            Get(row, {(std::string(dir) + "_nonblocking_gbps").c_str()}));
      const json raw_row = SizeRow(runs["raw_tcp"], b);
      const std::string raw_field = std::string(dir) + "_gbps";
      worst_raw =
          std::min(worst_raw,
                   std::max(OverFloor(row, std::string(dir) + "_blocking_gbps", raw_row, raw_field),
                            OverFloor(row, std::string(dir) + "_nonblocking_gbps", raw_row,
                                      raw_field)));
      json nrow = SizeRow(runs["native"], b);
      double nat = std::max(Get(nrow, {(std::string(dir) + "_blocking_gbps").c_str()}),
                            Get(nrow, {(std::string(dir) + "_nonblocking_gbps").c_str()}));
      worst_native = std::min(worst_native, tcp / nat);
    }
    if (std::isinf(worst_raw)) continue;
    md << "| rgpu tcp " << dir << "s ≥ 16 MiB: ≥ 80% of raw TCP stream (worst size) | "
       << Fmt(100 * worst_raw, 0) << "% | " << Verdict(worst_raw >= 0.8) << " |\n";
    md << "| rgpu tcp " << dir << "s ≥ 16 MiB: not slower than native pageable (worst size) | "
       << Fmt(100 * worst_native, 0) << "% of native | " << Verdict(worst_native >= 1.0) << " |\n";
  }
  // What the link adds to the loopback run, in round trips: execution time is not the link's.
  double loop_ms = Get(runs["rgpu_tcp"], {"async", "total_s"}) * 1e3;
  for (const auto& l : doc["links"]) {
    if (std::fabs(l["rtt_ms"].get<double>() - 10) > 0.01) continue;
    double total_ms = Get(l["rgpu_tcp"], {"async", "total_s"}) * 1e3;
    double extra = (total_ms - loop_ms) / 10;
    md << "| 10 ms link: " << opt_.async_launches << " launches + finish take about one RTT more "
       << "than over loopback | " << Fmt(total_ms, 1) << " ms vs " << Fmt(loop_ms, 1)
       << " ms: " << (extra >= 0 ? "+" : "") << Fmt(extra, 1) << " RTT | " << Verdict(extra <= 2)
       << " (≤ 2 RTT) |\n";
  }
  double cpu512 = Get(MatmulRow(runs["local_cpu"], 512), {"ms"});
  double tcp512 = Get(MatmulRow(runs["rgpu_tcp"], 512), {"ms"});
  if (!std::isnan(cpu512))
    md << "| 512 × 512 matmul via rgpu ≥ 10× local CPU | " << Fmt(cpu512 / tcp512, 1) << "× | "
       << Verdict(cpu512 / tcp512 >= 10) << " |\n";
  md << "\n";
  for (const auto& [k, v] : runs.items())
    if (v.contains("error")) md << "- run `" << k << "` failed: " << v["error"].get<std::string>() << "\n";
  for (const auto& l : doc["links"])
    for (const char* k : {"rgpu_tcp", "raw_tcp"})
      if (l[k].contains("error"))
        md << "- link " << Fmt(l["rtt_ms"].get<double>(), 0) << " ms `" << k
           << "` failed: " << l[k]["error"].get<std::string>() << "\n";
  return md.str();
}

int WorkerMain(const std::string& spec_path, const std::string& out_path) {
  json out;
  try {
    out = RunWorker(json::parse(ReadFile(spec_path)));
  } catch (const std::exception& e) {
    out["error"] = e.what();
  }
  std::ofstream(out_path) << out.dump() << "\n";
  return out.contains("error") ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--worker") return WorkerMain(argv[2], argv[3]);
  if (argc == 3 && std::string(argv[1]) == "--report") {  // re-render a result file
    std::cout << Markdown(json::parse(ReadFile(argv[2])));
    return 0;
  }
  signal(SIGPIPE, SIG_IGN);
  Options o;
  CLI::App app{"rgpu-bench-overhead: rgpu against native OpenCL and the raw network floor "
               "(round trips, async launch rate, bandwidth, matmul, emulated links)."};
  app.add_option("--out", o.out, "Directory for overhead.json and overhead.md")->capture_default_str();
  app.add_option("--build", o.build, "rgpu build tree (rgpud, librgpu-icd); default: this binary's");
  app.add_option("--vendors", o.vendors, "Directory of the system's OpenCL .icd files")->capture_default_str();
  app.add_option("--platform", o.platform, "Platform rgpud serves and native runs use (name substring; default: first GPU, else PoCL)");
  app.add_option("--cpu-platform", o.cpu_platform, "Platform of the local-CPU matmul column")->capture_default_str();
  app.add_flag("--quick", o.quick, "Small sizes and counts (CI smoke run, about a minute on 2 cores)");
  auto* it = app.add_option("--iterations", o.iterations, "Synchronous round trips per operation")->capture_default_str();
  auto* al = app.add_option("--async-launches", o.async_launches, "Launches before the one clFinish")->capture_default_str();
  auto* ar =
      app.add_option(
             "--async-rounds", o.async_rounds,
             "Runs of the launch-rate task per path, alternating; each path reports its median")
          ->check(CLI::Range(1, 15))
          ->capture_default_str();
  app.add_option("--async-shape", o.async_shape,
                 "Launches of the launch-rate task: plain (one argument, no event), events (each "
                 "asks for an event, released at once), kept (each asks for an event, released "
                 "after the burst), args (four arguments set before each) or pyopencl (args and "
                 "events)")
      ->check(CLI::IsMember({"plain", "events", "kept", "args", "pyopencl"}))
      ->capture_default_str();
  auto* br =
      app.add_option("--bandwidth-rounds", o.bandwidth_rounds,
                     "Runs of the bandwidth task per path (raw floors included), alternating; each "
                     "size reports its medians, and rgpu / raw the median of each round's ratio")
          ->check(CLI::Range(1, 15))
          ->capture_default_str();
  auto* mb = app.add_option("--max-bytes", o.max_bytes, "Largest transfer (K, M, G suffixes)")->capture_default_str();
  auto* ms = app.add_option("--matmul-sizes", o.matmul_sizes, "N of the N x N multiplies")->delimiter(',')->capture_default_str();
  auto* ld = app.add_option("--link-delay-ms", o.link_delay_ms, "One-way delays of the emulated links (0.5,5,25 = 1, 10, 50 ms RTT); 'none' skips")
      ->delimiter(',')->capture_default_str();
  auto* mbud = app.add_option("--matmul-budget", o.matmul_budget_s, "Seconds of repeats per multiply (at least one timed run)")->capture_default_str();
  app.add_option("--link-rate-mbit", o.link_rate_mbit, "Bit rate of the emulated links (0: unlimited)")->capture_default_str();
  app.add_option("--worker-timeout", o.worker_timeout_s, "Seconds before a worker is killed")->capture_default_str();
  bool no_links = false;
  app.add_flag("--no-links", no_links, "Skip the emulated links");
  app.add_option("--rgpud-arg", o.rgpud_args, "An extra option for both rgpud daemons (repeatable; e.g. --rgpud-arg=--poll-us=0)");
  app.add_option("--tasks", o.tasks, "What the OpenCL runs measure (sync, async, bandwidth, matmul, requests)")
      ->delimiter(',')->capture_default_str();
  auto* ru = app.add_option("--request-us", o.request_us, "Kernel lengths (device µs) of the kernel + small read requests")
      ->delimiter(',')->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (o.quick) {
    if (!it->count()) o.iterations = 1000;
    if (!al->count()) o.async_launches = 10000;
    if (!ar->count()) o.async_rounds = 1;
    if (!br->count()) o.bandwidth_rounds = 1;
    if (!mb->count()) o.max_bytes = "16M";
    if (!ms->count()) o.matmul_sizes = {64, 128, 256};
    if (!ld->count()) o.link_delay_ms = {5};
    o.bytes_per_point = 16.0 * (1 << 20);
    if (!mbud->count()) o.matmul_budget_s = 1;
    if (!ru->count()) o.request_us = {50, 1000};
  }
  if (no_links) o.link_delay_ms.clear();
  char self[4096] = {0};
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return 2;
  if (o.build.empty()) o.build = fs::path(self).parent_path().parent_path().string();
  try {
    return Bench(o, self).Run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rgpu-bench-overhead: %s\n", e.what());
    return 1;
  }
}
