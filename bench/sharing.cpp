// rgpu-bench-sharing: how one GPU is shared between tenants (issue 4, docs/scheduling.md).
//
// One command runs every scenario under every mode and writes OUT/sharing.json (environment
// header, calibration, every tenant's figures) and OUT/sharing.md (tables, targets):
//
//   scenarios  lc_solo   a latency-critical tenant: short kernels at a fixed rate, latency each
//              be_solo   a best-effort tenant: long kernels back to back, kernels/s
//              lc_be     both at once
//              equal2, equal4   2 and 4 equal-weight tenants running the long kernel
//              weighted  2 tenants with weights 1 and 3
//              mx_...    the workload matrix (issue 15, bench/sharing_matrix.h; --matrix runs
//                        all of it): LC arrival processes and kernel lengths beside BE kinds,
//                        every ratio against the native solo run
//   modes      native    one OpenCL process per tenant on the device's own platform
//                        (the GPU time-slices between their contexts)
//              cuda      one CUDA process per tenant (rgpu-bench-sharing-cuda, the same
//                        kernel and grid): the GPU's time-slicing between CUDA contexts
//              mps       those CUDA processes as clients of a private NVIDIA MPS daemon
//                        (NVIDIA's OpenCL refuses to run under MPS)
//              fifo, seed001, fair[:QUANTUM_US]   rgpud with that policy, one rgpu client
//                        process per tenant, tenants (token, weight, priority) from a config;
//                        rgpud's metrics are scraped around every run to check its accounting
//
// Every tenant is a separate process with its own environment: this binary again
// (`--tenant SPEC OUT`) or the CUDA tenant, both following bench/sharing_tenant.h. Tenants set
// up (context, program, warm-up), report ready, and start together when the orchestrator
// writes the go file; each runs for --duration seconds.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <CL/cl.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/commit.h"
#include "bench/host_stalls.h"
#include "bench/net.h"
#include "bench/process.h"
#include "bench/sharing_matrix.h"
#include "bench/sharing_tenant.h"
#include "bench/workloads.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

using rgpu::bench::sharing::ReadFile;
using rgpu::bench::sharing::WriteAtomically;

// A mode as a plain file name: "fair:250/--lc-rhythm=0" -> "fair-250---lc-rhythm-0".
std::string FileSafe(std::string s) {
  std::replace_if(s.begin(), s.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '.'; }, '-');
  return s;
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::string Now() {
  char buf[64];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string Tail(const fs::path& p, size_t n) {
  std::string s = ReadFile(p);
  return s.size() > n ? s.substr(s.size() - n) : s;
}

// ---- a tenant process ------------------------------------------------------------------

void Check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}
#define CL_CHECK(call) Check((call), #call)

struct Spin {
  cl_context ctx = nullptr;
  cl_command_queue q = nullptr;
  cl_kernel k = nullptr;
  cl_mem out = nullptr;
  size_t global = 0, local = 0;

  Spin(const std::string& platform, size_t groups, size_t local_size, bool profiling) : local(local_size) {
    global = groups * local_size;
    cl_uint np = 0;
    clGetPlatformIDs(0, nullptr, &np);
    std::vector<cl_platform_id> ps(np);
    if (np) clGetPlatformIDs(np, ps.data(), nullptr);
    cl_device_id dev = nullptr;
    for (auto p : ps) {
      size_t n = 0;
      clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, nullptr, &n);
      std::string name(n, '\0');
      clGetPlatformInfo(p, CL_PLATFORM_NAME, n, name.data(), nullptr);
      if (name.find(platform) == std::string::npos) continue;
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) == CL_SUCCESS) break;
      dev = nullptr;
    }
    if (!dev) throw std::runtime_error("no OpenCL platform with devices matches '" + platform + "'");
    cl_int err;
    ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    Check(err, "clCreateContext");
    q = clCreateCommandQueue(ctx, dev, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    Check(err, "clCreateCommandQueue");
    const char* src = rgpu::bench::matrix::kSpinSource;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
    Check(err, "clCreateProgramWithSource");
    CL_CHECK(clBuildProgram(prog, 1, &dev, "", nullptr, nullptr));
    k = clCreateKernel(prog, "spin", &err);
    Check(err, "clCreateKernel");
    clReleaseProgram(prog);
    out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 65536 * sizeof(float), nullptr, &err);
    Check(err, "clCreateBuffer");
    CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &out));
  }
  ~Spin() {
    if (out) clReleaseMemObject(out);
    if (k) clReleaseKernel(k);
    if (q) clReleaseCommandQueue(q);
    if (ctx) clReleaseContext(ctx);
  }
  // One launch of `waves` times the base grid, waited for; the host time it took in ms (and
  // the device time if asked).
  double Run(int iters, double* device_ms = nullptr, size_t waves = 1) {
    CL_CHECK(clSetKernelArg(k, 1, sizeof(int), &iters));
    cl_event ev = nullptr;
    size_t g = global * waves;
    auto t0 = Clock::now();
    CL_CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, &local, 0, nullptr, device_ms ? &ev : nullptr));
    CL_CHECK(clFinish(q));
    double ms = Ms(Clock::now() - t0);
    if (ev) {
      cl_ulong s = 0, e = 0;
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(s), &s, nullptr);
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(e), &e, nullptr);
      *device_ms = (e - s) / 1e6;
      clReleaseEvent(ev);
    }
    return ms;
  }
};

using rgpu::bench::sharing::MedianOf;

// How long after a kernel ends the driver runs a clSetEventCallback (rgpud learns of every
// completion that way) compared with clWaitForEvents, for a kernel of `iters`.
json CallbackLatency(Spin& s, int iters, size_t waves) {
  struct Box {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Clock::time_point at;
  };
  std::vector<double> cb_ms, wait_ms;
  CL_CHECK(clSetKernelArg(s.k, 1, sizeof(int), &iters));
  size_t g = s.global * waves;
  for (int i = 0; i < 20; ++i) {
    Box box;
    cl_event ev;
    auto t0 = Clock::now();
    CL_CHECK(clEnqueueNDRangeKernel(s.q, s.k, 1, nullptr, &g, &s.local, 0, nullptr, &ev));
    CL_CHECK(clFlush(s.q));
    const bool by_callback = i % 2 == 0;
    if (by_callback) {
      CL_CHECK(clSetEventCallback(
          ev, CL_COMPLETE,
          [](cl_event, cl_int, void* p) {
            auto* b = static_cast<Box*>(p);
            std::lock_guard lk(b->mu);
            b->at = Clock::now();
            b->done = true;
            b->cv.notify_all();
          },
          &box));
      std::unique_lock lk(box.mu);
      box.cv.wait(lk, [&] { return box.done; });
      cb_ms.push_back(Ms(box.at - t0));
    } else {
      CL_CHECK(clWaitForEvents(1, &ev));
      wait_ms.push_back(Ms(Clock::now() - t0));
    }
    clReleaseEvent(ev);
    clFinish(s.q);
  }
  return {{"callback_ms", MedianOf(cb_ms)}, {"wait_ms", MedianOf(wait_ms)}};
}

json Calibrate(const json& spec) {
  Spin s(spec.at("platform"), spec.at("groups"), spec.at("local"), true);
  json out;
  for (const std::string role : {"lc", "be"}) {
    const size_t waves = spec.at(role + "_waves");
    auto device_ms = [&](int iters) {
      double d = 0;
      s.Run(iters, &d, waves);
      return d;
    };
    json r = rgpu::bench::sharing::CalibrateIters(device_ms, spec.at("probe_iters"), spec.at(role + "_target_ms"));
    out[role + "_iters"] = r["iters"];
    out[role + "_device_ms"] = r["device_ms"];
    out[role + "_completion"] = CallbackLatency(s, r["iters"], waves);
  }
  return out;
}

json HandleTenant(const json& spec) {
  const std::string kind = spec.value("kind", "");
  if (kind == "probe") return rgpu::bench::RunWorker(spec);
  if (kind == "calibrate") return Calibrate(spec);
  if (kind == "mx_calibrate") return rgpu::bench::matrix::Calibrate(spec);
  if (kind == "mx") return rgpu::bench::matrix::RunTenant(spec);
  Spin s(spec.at("platform"), spec.at("groups"), spec.at("local"), false);
  const int iters = spec.at("iters");
  const size_t waves = spec.value("waves", 1);
  return rgpu::bench::sharing::RunTenant(spec, [&] { return s.Run(iters, nullptr, waves); });
}

// ---- the orchestrator ------------------------------------------------------------------

struct Options {
  std::string out = "bench-out";
  std::string build;
  std::string vendors = "/etc/OpenCL/vendors";
  std::string platform;
  std::string cuda_tenant;  // rgpu-bench-sharing-cuda; default: beside this binary
  std::vector<std::string> modes{"native", "cuda", "mps", "fifo", "seed001", "fair"};
  std::vector<std::string> scenarios{"lc_solo", "be_solo", "lc_be", "equal2", "equal4", "weighted"};
  double duration_s = 10;
  double lc_target_ms = 0.5, be_target_ms = 25, lc_period_ms = 3;
  size_t groups = 0;  // 0: 4 per compute unit
  size_t local = 256;
  // A best-effort launch is this many times the latency-critical grid: work-groups that each
  // run briefly, so that slices of whole work-groups can be short (1: one long wave).
  size_t be_waves = 1;
  double alpha = 2;
  double quantum_us = 8000;  // rgpud's default
  std::string rgpud_log_level = "info";
  std::string rgpud_args;
  int timeout_s = 120;
  bool quick = false;
  // The matrix (bench/sharing_matrix.h).
  bool matrix = false;
  bool equal = false;  // with matrix: equal BE tenants (EqualScenarios) instead of the LC cells
  rgpu::bench::matrix::Shape shape;
  double lc_gap_ms = 4;
  uint64_t seed = 1;
  double be_short_ms = 15, be_long_ms = 25, be_brief_ms = 0.2, be_tiny_ms = 0.03;
  size_t be_short_groups_per_cu = 64;
  double be_mem_mib = 2048;  // both buffers of the membound kernel together
  int be_depth = 2;
  // Native solo runs of each matrix tenant shape: the first in the native pass, the others
  // after later modes' passes, so that they sample the device across the whole run; ratios
  // divide by their median (one native run's LC p99 read 0.80 and 1.92 ms on one lease).
  int solo_repeats = 3;
  std::string baseline;  // an earlier sharing.json whose native runs and calibration to use
};

using rgpu::bench::HostStallMeter;
using rgpu::bench::Spawn;
using rgpu::bench::WaitFor;

std::string Run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// ---- rgpud's accounting ------------------------------------------------------------------

// A loopback TCP port nobody listens on now (the kernel's choice), for rgpud's metrics.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  if (port == 0) throw std::runtime_error("no free TCP port for rgpud's metrics");
  return port;
}

// Every tenant's rgpu_device_busy_seconds_total, from one scrape of rgpud's Prometheus
// endpoint on 127.0.0.1:port (a plain HTTP GET: the GPU image has no curl).
std::map<std::string, double> DeviceSeconds(int port) {
  const std::string where = "metrics at 127.0.0.1:" + std::to_string(port);
  int fd = rgpu::bench::ConnectTo("127.0.0.1:" + std::to_string(port));
  if (fd < 0) throw std::runtime_error(where + ": no connection");
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  // HTTP/1.0: the answer is not chunked and ends when the server closes the connection.
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  std::string text;
  if (rgpu::bench::SendAll(fd, request.data(), request.size())) {
    char buf[8192];
    for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) text.append(buf, n);
  }
  close(fd);
  if (text.rfind("HTTP/1.", 0) != 0 || text.substr(0, text.find('\r')).find(" 200") == std::string::npos)
    throw std::runtime_error(where + ": answered '" + text.substr(0, 120) + "'");
  // Lines like: rgpu_device_busy_seconds_total{tenant="lc"} 0.0123
  const std::string metric = "rgpu_device_busy_seconds_total{tenant=\"";
  std::map<std::string, double> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(metric, 0) != 0) continue;
    size_t close_quote = line.find("\"}", metric.size());
    if (close_quote == std::string::npos) continue;
    out[line.substr(metric.size(), close_quote - metric.size())] = std::stod(line.substr(close_quote + 2));
  }
  if (out.empty()) throw std::runtime_error(where + ": no rgpu_device_busy_seconds_total");
  return out;
}

// A tenant of a scenario: its name is also its tenant id in rgpud's config.
struct TenantSpec {
  TenantSpec(std::string n, std::string r, double w = 1) : name(std::move(n)), role(std::move(r)), weight(w) {}
  explicit TenantSpec(const rgpu::bench::matrix::Tenant& t) : name(t.name), role(t.role), in_matrix(true), mx(t) {}

  std::string name, role;  // role "lc" or "be"
  double weight = 1;
  bool in_matrix = false;
  rgpu::bench::matrix::Tenant mx;  // in_matrix: its arrival process and length, or its BE kind
};

std::vector<TenantSpec> TenantsOf(const std::string& scenario) {
  if (rgpu::bench::matrix::IsMatrix(scenario)) {
    std::vector<TenantSpec> out;
    for (const auto& t : rgpu::bench::matrix::TenantsOf(scenario)) out.emplace_back(t);
    return out;
  }
  if (scenario == "lc_solo") return {{"lc", "lc"}};
  if (scenario == "be_solo") return {{"be", "be"}};
  if (scenario == "lc_be") return {{"lc", "lc"}, {"be", "be"}};
  if (scenario == "equal2") return {{"t0", "be"}, {"t1", "be"}};
  if (scenario == "equal4") return {{"t0", "be"}, {"t1", "be"}, {"t2", "be"}, {"t3", "be"}};
  if (scenario == "weighted") return {{"w1", "be", 1}, {"w3", "be", 3}};
  throw std::runtime_error("unknown scenario " + scenario);
}

// A tenant's process during a run.
struct TenantProc {
  TenantSpec t;
  pid_t pid;
  fs::path ready, out, log;
};

// Where the tenants of a mode run, and how.
struct ModeEnv {
  std::string tenant;               // the tenant program: this binary or the CUDA tenant
  int lc_iters = 0, be_iters = 0;   // that program's calibration
  std::string platform;             // what the tenant looks for
  std::vector<std::string> env;     // for every tenant
  bool tokens = false;              // RGPU_TOKEN=tok-<tenant>
  int metrics_port = 0;             // rgpud's Prometheus endpoint on 127.0.0.1, if any
  std::vector<pid_t> daemons;
  std::function<void(json& describe)> stop;  // ends the mode; may add to `describe`
  json describe;
};

class Bench {
 public:
  Bench(Options o, std::string self) : opt_(std::move(o)), self_(std::move(self)) {}
  int Main();

 private:
  void PrepareVendors();
  json Child(const std::string& label, const json& spec, const std::vector<std::string>& env,
             const std::string& program = "");
  void CalibrateCuda(json& doc);
  ModeEnv StartMode(const std::string& mode);
  json RunScenario(const std::string& mode, const std::string& scenario, const ModeEnv& me);
  std::string WriteConfig();
  void Account(json& result, const std::map<std::string, double>& before, int port);
  void CalibrateMatrix(json& doc, const std::vector<std::string>& scenarios);
  std::vector<TenantProc> SpawnTenants(const std::vector<TenantSpec>& tenants, const ModeEnv& me, const fs::path& dir);
  std::string WaitUntilReady(std::vector<TenantProc>& procs);
  void FindDevice(json& doc);
  void CalibrateScenarios(json& doc);
  json LoadBaseline(json& doc);
  void TakeBaselineRuns(json& doc, const json& baseline);
  json OptionsJson() const;
  void StopMode(const std::string& mode, ModeEnv& me);
  json TenantSpecJson(const TenantSpec& t, const ModeEnv& me) const;

  Options opt_;
  std::string self_;
  fs::path tmp_, native_vendors_, rgpu_vendors_, config_;
  fs::path config_shared_;  // the same tenants, all in one context group ("POLICY+shared" modes)
  std::string device_platform_;
  int lc_iters_ = 0, be_iters_ = 0;
  double lc_device_ms_ = 0, be_device_ms_ = 0;  // the OpenCL kernels alone (what rgpud runs)
  int cuda_lc_iters_ = 0, cuda_be_iters_ = 0;
  std::string cuda_error_;                      // why the cuda and mps modes cannot run
  size_t compute_units_ = 0;
  json matrix_cal_;                             // matrix::Calibrate's answer
  int runs_done_ = 0, runs_total_ = 0;          // for the progress lines
  int daemons_started_ = 0;
};

void Bench::PrepareVendors() {
  auto d = rgpu::bench::MakeVendorDirs("rgpu-sharing", opt_.vendors, opt_.build);
  tmp_ = d.tmp;
  native_vendors_ = d.native;
  rgpu_vendors_ = d.rgpu;
}

json Bench::Child(const std::string& label, const json& spec, const std::vector<std::string>& env,
                  const std::string& program) {
  fs::path in = tmp_ / (label + ".spec.json"), out = tmp_ / (label + ".out.json");
  std::ofstream(in) << spec.dump();
  pid_t pid = Spawn({program.empty() ? self_ : program, "--tenant", in.string(), out.string()}, env,
                    tmp_ / (label + ".log"));
  int rc = WaitFor(pid, opt_.timeout_s);
  json r = fs::exists(out) ? json::parse(ReadFile(out), nullptr, false) : json::object();
  if (rc != 0 && !r.contains("error"))
    r["error"] = (rc < 0 ? "killed (timeout)" : "exit " + std::to_string(rc)) + ": " + Tail(tmp_ / (label + ".log"), 400);
  return r;
}

// The CUDA tenant's own iteration counts for the same device-time targets (outside MPS, like
// the OpenCL calibration). CUDA's compiler need not make the same loop of the same source, so
// reusing the OpenCL counts could run a different kernel length; the time those counts take
// in CUDA is recorded beside, to show how far apart the two are.
void Bench::CalibrateCuda(json& doc) {
  if (!fs::exists(opt_.cuda_tenant)) {
    cuda_error_ = "no CUDA tenant at " + opt_.cuda_tenant + " (this build found no nvcc)";
    return;
  }
  std::fprintf(stderr, "[%s] calibrating the CUDA tenant ...\n", Now().c_str());
  json cal = Child("calibrate-cuda",
                   {{"kind", "calibrate"}, {"groups", opt_.groups}, {"local", opt_.local},
                    {"probe_iters", opt_.quick ? 500 : 5000}, {"lc_waves", 1}, {"be_waves", opt_.be_waves},
                    {"lc_target_ms", opt_.lc_target_ms}, {"be_target_ms", opt_.be_target_ms},
                    {"opencl_lc_iters", lc_iters_}, {"opencl_be_iters", be_iters_}},
                   {}, opt_.cuda_tenant);
  if (cal.contains("error")) {
    cuda_error_ = "CUDA calibration: " + cal["error"].get<std::string>();
    doc["calibration_cuda"] = cal;
    return;
  }
  cuda_lc_iters_ = cal["lc_iters"];
  cuda_be_iters_ = cal["be_iters"];
  doc["calibration_cuda"] = cal;
  std::fprintf(stderr, "[%s] CUDA: LC %d iterations = %.3f ms, BE %d iterations = %.3f ms\n", Now().c_str(),
               cuda_lc_iters_, cal["lc_device_ms"].get<double>(), cuda_be_iters_, cal["be_device_ms"].get<double>());
}

// Every tenant any scenario names, with the priority and weight of its role.
std::string Bench::WriteConfig() {
  const fs::path rgpud = fs::path(opt_.build) / "server" / "rgpud";
  // "+shared" modes use the second config: every tenant trusts every other, so all sessions
  // share device contexts.
  std::ostringstream cfg, shared;
  cfg << "# generated by rgpu-bench-sharing\n";
  shared << "# generated by rgpu-bench-sharing\n";
  for (const char* id : {"lc", "lc2", "be", "be2", "t0", "t1", "t2", "t3", "w1", "w3"}) {
    std::string hash = Run("echo tok-" + std::string(id) + " | '" + rgpud.string() + "' --hash-token");
    if (hash.rfind("sha256$", 0) != 0) throw std::runtime_error("rgpud --hash-token printed '" + hash + "'");
    std::ostringstream t;
    t << "\n[[tenant]]\nid = \"" << id << "\"\ntoken_hash = \"" << hash << "\"\n"
      << "priority = \"" << (std::string(id).rfind("lc", 0) == 0 ? "latency-critical" : "best-effort") << "\"\n"
      << "weight = " << (std::string(id) == "w3" ? 3.0 : 1.0) << "\n";
    cfg << t.str();
    shared << t.str() << "context_group = \"bench\"\n";
  }
  config_ = tmp_ / "rgpud.toml";
  std::ofstream(config_) << cfg.str();
  config_shared_ = tmp_ / "rgpud-shared.toml";
  std::ofstream(config_shared_) << shared.str();
  return cfg.str();
}

ModeEnv Bench::StartMode(const std::string& mode) {
  ModeEnv me;
  me.describe["mode"] = mode;
  me.tenant = self_;
  me.lc_iters = lc_iters_;
  me.be_iters = be_iters_;
  if (mode == "native") {
    me.platform = device_platform_;
    me.env = {"OCL_ICD_VENDORS=" + native_vendors_.string()};
    return me;
  }
  if (mode == "cuda" || mode == "mps") {
    if (!cuda_error_.empty()) throw std::runtime_error(cuda_error_);
    me.tenant = opt_.cuda_tenant;
    me.lc_iters = cuda_lc_iters_;
    me.be_iters = cuda_be_iters_;
  }
  if (mode == "cuda") return me;
  if (mode == "mps") {
    // A private MPS control daemon: its own pipe and log directories, given to every tenant.
    // The GPU's compute mode and every other setting stay as they are.
    fs::path root = tmp_ / "mps";
    fs::create_directories(root / "pipe");
    fs::create_directories(root / "log");
    std::vector<std::string> env{"CUDA_MPS_PIPE_DIRECTORY=" + (root / "pipe").string(),
                                 "CUDA_MPS_LOG_DIRECTORY=" + (root / "log").string()};
    int rc = WaitFor(Spawn({"nvidia-cuda-mps-control", "-d"}, env, tmp_ / "mps-start.log"), 30);
    if (rc != 0) throw std::runtime_error("nvidia-cuda-mps-control -d failed: " + Tail(tmp_ / "mps-start.log", 400));
    me.env = env;
    me.describe["mps_pipe_directory"] = (root / "pipe").string();
    me.stop = [env, root](json& describe) {
      std::string prefix;
      for (const auto& kv : env) prefix += kv + " ";
      Run("echo quit | " + prefix + "nvidia-cuda-mps-control");
      for (int i = 0; i < 100 && fs::exists(root / "pipe" / "control"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      // The server log says whether the tenants really were MPS clients.
      describe["mps_server_log_tail"] = Tail(root / "log" / "server.log", 1500);
      describe["mps_control_log_tail"] = Tail(root / "log" / "control.log", 1500);
    };
    return me;
  }
  // rgpud with a policy: "fifo", "seed001", "fair" or "fair:QUANTUM_US".
  // POLICY[+shared][:QUANTUM_US][/ARG...]: rgpud --policy POLICY, each ARG one more rgpud
  // argument (after --rgpud-args), but for --quantum-us=N, which is the mode's quantum as
  // :QUANTUM_US is (rgpud takes the flag once); rgpud itself refuses a policy it does not
  // know. "+shared" puts every tenant in one context group (Tenant::context_group).
  std::vector<std::string> mode_args;
  {
    std::istringstream parts(mode);
    for (std::string a; std::getline(parts, a, '/');) mode_args.push_back(a);
  }
  std::string policy = mode_args.front(), quantum = std::to_string(opt_.quantum_us);
  mode_args.erase(mode_args.begin());
  if (auto colon = policy.find(':'); colon != std::string::npos) {
    quantum = policy.substr(colon + 1);
    policy = policy.substr(0, colon);
  }
  constexpr std::string_view kQuantumArg = "--quantum-us=";
  std::erase_if(mode_args, [&](const std::string& a) {
    if (!a.starts_with(kQuantumArg)) return false;
    quantum = a.substr(kQuantumArg.size());
    return true;
  });
  bool shared = false;
  if (auto plus = policy.find("+shared"); plus != std::string::npos) {
    shared = true;
    policy.erase(plus, 7);
  }
  if (policy.empty()) throw std::runtime_error("mode " + mode + " names no policy");
  const std::string tag = std::to_string(++daemons_started_);  // short: a socket path has 108 bytes
  fs::path sock = tmp_ / ("rgpud-" + tag + ".sock");
  fs::path log = tmp_ / ("rgpud-" + tag + ".log");
  const int metrics_port = FreePort();
  std::vector<std::string> argv{(fs::path(opt_.build) / "server" / "rgpud").string(),
                                "--listen", "unix:" + sock.string(), "--config", (shared ? config_shared_ : config_).string(),
                                "--platform", device_platform_, "--policy", policy,
                                "--alpha", std::to_string(opt_.alpha), "--quantum-us", quantum,
                                "--metrics", "127.0.0.1:" + std::to_string(metrics_port),
                                "--log-level", opt_.rgpud_log_level};
  {
    std::istringstream extra(opt_.rgpud_args);
    for (std::string a; extra >> a;) argv.push_back(a);
  }
  argv.insert(argv.end(), mode_args.begin(), mode_args.end());
  // rgpud holds the device as one ordinary process: no MPS variables reach it.
  pid_t pid = Spawn(argv, {"OCL_ICD_VENDORS=" + native_vendors_.string()}, log);
  for (int i = 0; !fs::exists(sock); ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid || i > 600)
      throw std::runtime_error("rgpud did not start: " + Tail(log, 600));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // rgpud serves its metrics just after it binds the socket.
  for (auto give_up = Clock::now() + std::chrono::seconds(5);;) {
    try {
      DeviceSeconds(metrics_port);
      me.metrics_port = metrics_port;
      break;
    } catch (const std::exception& e) {
      if (Clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      me.describe["metrics_error"] = e.what();  // the runs go on, without accounting
      break;
    }
  }
  me.platform = "rgpu";
  me.env = {"OCL_ICD_VENDORS=" + rgpu_vendors_.string(), "RGPU_SERVER=unix:" + sock.string()};
  me.tokens = true;
  me.daemons = {pid};
  me.describe["rgpud"] = argv;
  me.describe["policy"] = policy;
  me.describe["log"] = log.string();
  me.describe["quantum_us"] = quantum;
  me.describe["metrics"] = "127.0.0.1:" + std::to_string(metrics_port);
  return me;
}

// What a tenant process runs (without its ready and go files); kernel_device_ms is what one of
// its launches takes alone (native calibration), for the accounting.
json Bench::TenantSpecJson(const TenantSpec& t, const ModeEnv& me) const {
  json spec{{"platform", me.platform}, {"role", t.role}, {"local", opt_.local}, {"duration_s", opt_.duration_s}};
  if (!t.in_matrix) {
    spec.update({{"groups", opt_.groups}, {"iters", t.role == "lc" ? me.lc_iters : me.be_iters},
                 {"period_ms", opt_.lc_period_ms}, {"waves", t.role == "lc" ? size_t{1} : opt_.be_waves},
                 {"kernel_device_ms", t.role == "lc" ? lc_device_ms_ : be_device_ms_}});
    return spec;
  }
  spec["kind"] = "mx";
  const json& spins = matrix_cal_["spins"];
  if (t.role == "lc") {
    const json& c = spins.at("lc" + std::to_string(t.mx.lc_us));
    // The accounting's reference: the kernel as the LC launches it, after an idle gap (older
    // calibrations, as a --baseline's, have only the back-to-back time).
    spec.update({{"arrival", t.mx.arrival},
                 {"mean_gap_ms", opt_.lc_gap_ms},
                 {"seed", opt_.seed + t.mx.seed_offset},
                 {"groups", c["groups"]},
                 {"iters", c["iters"]},
                 {"kernel_device_ms", c.value("spaced_device_ms", c["device_ms"].get<double>())}});
    return spec;
  }
  spec.update({{"be_kind", t.mx.be_kind}, {"depth", opt_.be_depth}});
  if (t.mx.be_kind == "membound") {
    spec.update({{"elems4", matrix_cal_["membound"]["elems4"]},
                 {"kernel_device_ms", matrix_cal_["membound"]["device_ms"]}});
  } else {
    const json& c = t.mx.be_kind == "opaque" ? matrix_cal_["opaque"] : spins.at(t.mx.be_kind);
    spec.update(
        {{"groups", c["groups"]},
         {"iters", c["iters"]},
         {"kernel_device_ms", c.value("back_to_back_device_ms", c["device_ms"].get<double>())}});
  }
  return spec;
}

// Natively, profiling on: the iteration counts of every LC length the scenarios name and of
// the short and long BE kernels, the membound kernel's time, and the opaque one's.
void Bench::CalibrateMatrix(json& doc, const std::vector<std::string>& scenarios) {
  const size_t cu = compute_units_;
  // brief: one wave, as many work-groups as the device holds at once (2048 work-items per
  // compute unit, as rgpud counts a wave).
  const size_t brief_groups = cu * std::max<size_t>(1, 2048 / std::max<size_t>(opt_.local, 1));
  json spins = json::array({{{"name", "short"},
                             {"groups", opt_.be_short_groups_per_cu * cu},
                             {"target_ms", opt_.be_short_ms}},
                            {{"name", "long"}, {"groups", cu}, {"target_ms", opt_.be_long_ms}},
                            {{"name", "brief"},
                             {"groups", brief_groups},
                             {"target_ms", opt_.be_brief_ms},
                             {"back_to_back", true}},
                            {{"name", "tiny"},
                             {"groups", brief_groups},
                             {"target_ms", opt_.be_tiny_ms},
                             {"back_to_back", true}}});
  std::vector<int> lengths;
  for (const auto& sc : scenarios)
    if (rgpu::bench::matrix::IsMatrix(sc))
      for (const auto& t : rgpu::bench::matrix::TenantsOf(sc))
        if (t.role == "lc" && std::find(lengths.begin(), lengths.end(), t.lc_us) == lengths.end())
          lengths.push_back(t.lc_us);
  for (int us : lengths)
    spins.push_back({{"name", "lc" + std::to_string(us)}, {"groups", opt_.groups}, {"target_ms", us / 1e3}});
  std::fprintf(stderr, "[%s] calibrating the matrix's kernels ...\n", Now().c_str());
  json cal = Child("calibrate-matrix",
                   {{"kind", "mx_calibrate"},
                    {"platform", device_platform_},
                    {"local", opt_.local},
                    {"probe_iters", opt_.quick ? 500 : 5000},
                    {"spins", spins},
                    {"lc_gap_ms", opt_.lc_gap_ms},
                    {"elems4", static_cast<size_t>(opt_.be_mem_mib * 1024 * 1024 / 2 / 16)},
                    {"opaque_of", "short"}},
                   {"OCL_ICD_VENDORS=" + native_vendors_.string()});
  if (cal.contains("error")) throw std::runtime_error("matrix calibration: " + cal["error"].get<std::string>());
  for (const auto& [name, c] : cal["spins"].items()) {
    std::string as_run;  // the accounting's reference, where it differs (TenantSpecJson)
    if (c.contains("spaced_device_ms"))
      as_run =
          " (" + std::to_string(c["spaced_device_ms"].get<double>()) + " ms after an idle gap)";
    else if (c.contains("back_to_back_device_ms"))
      as_run =
          " (" + std::to_string(c["back_to_back_device_ms"].get<double>()) + " ms back to back)";
    std::fprintf(stderr, "[%s]   %-7s %5d groups x %8d iterations = %8.3f ms%s\n", Now().c_str(),
                 name.c_str(), c["groups"].get<int>(), c["iters"].get<int>(),
                 c["device_ms"].get<double>(), as_run.c_str());
  }
  std::fprintf(stderr, "[%s]   membound %.0f MiB: %.3f ms (%.0f GB/s); opaque (from a binary): %.3f ms\n", Now().c_str(),
               cal["membound"]["buffer_bytes"].get<double>() / (1 << 20), cal["membound"]["device_ms"].get<double>(),
               cal["membound"]["gbps"].get<double>(), cal["opaque"]["device_ms"].get<double>());
  matrix_cal_ = cal;
  doc["calibration_matrix"] = cal;
}

// Starts one process per tenant of a run, with its spec in `dir`.
std::vector<TenantProc> Bench::SpawnTenants(const std::vector<TenantSpec>& tenants, const ModeEnv& me,
                                            const fs::path& dir) {
  json lc_done = json::array();  // matrix: BE tenants run on until every LC tenant is done
  for (const auto& t : tenants)
    if (t.in_matrix && t.role == "lc") lc_done.push_back((dir / (t.name + ".done")).string());
  std::vector<TenantProc> procs;
  for (const auto& t : tenants) {
    json spec = TenantSpecJson(t, me);
    spec["ready_file"] = (dir / (t.name + ".ready")).string();
    spec["go_file"] = (dir / "go").string();
    if (t.in_matrix) {
      if (t.role == "lc") spec["done_file"] = (dir / (t.name + ".done")).string();
      else spec["hold_for"] = lc_done;
    }
    TenantProc p{t, 0, dir / (t.name + ".ready"), dir / (t.name + ".json"), dir / (t.name + ".log")};
    std::ofstream(dir / (t.name + ".spec.json")) << spec.dump();
    std::vector<std::string> env = me.env;
    if (me.tokens) env.push_back("RGPU_TOKEN=tok-" + t.name);
    p.pid = Spawn({me.tenant, "--tenant", (dir / (t.name + ".spec.json")).string(), p.out.string()}, env, p.log);
    procs.push_back(p);
  }
  return procs;
}

// Until every tenant reports ready; why not, if one exits or --timeout passes first.
std::string Bench::WaitUntilReady(std::vector<TenantProc>& procs) {
  for (auto deadline = Clock::now() + std::chrono::seconds(opt_.timeout_s);;) {
    bool all = true;
    for (auto& p : procs) {
      if (fs::exists(p.ready)) continue;
      all = false;
      int st;
      if (waitpid(p.pid, &st, WNOHANG) == p.pid) {
        p.pid = 0;
        return p.t.name + " exited during setup: " + Tail(p.out, 300) + Tail(p.log, 300);
      }
    }
    if (all) return "";
    if (Clock::now() > deadline) return "tenants not ready in time";
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

json Bench::RunScenario(const std::string& mode, const std::string& scenario, const ModeEnv& me) {
  const std::string label = FileSafe(mode) + "-" + scenario;
  std::fprintf(stderr, "[%s] %3d/%d %-8s %-26s ...", Now().c_str(), ++runs_done_, runs_total_, mode.c_str(),
               scenario.c_str());
  auto t_start = Clock::now();
  fs::path dir = tmp_ / label;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path go = dir / "go";
  json result{{"mode", mode}, {"scenario", scenario}, {"tenants", json::array()}};
  // rgpud's device time per tenant before anyone starts (warm-up launches included, since
  // the tenants report them too).
  std::map<std::string, double> busy_before;
  if (me.metrics_port) {
    try {
      busy_before = DeviceSeconds(me.metrics_port);
    } catch (const std::exception& e) {
      result["accounting_error"] = e.what();
    }
  }
  const auto tenants = TenantsOf(scenario);
  if (tenants.front().in_matrix && me.tenant != self_) {
    result["error"] = "the matrix runs OpenCL tenants only (mode " + mode + " has CUDA ones)";
    std::fprintf(stderr, " skipped: %s\n", result["error"].get<std::string>().c_str());
    return result;
  }
  std::vector<TenantProc> procs = SpawnTenants(tenants, me, dir);
  // Everyone set up, then everyone starts at once.
  std::string error = WaitUntilReady(procs);
  HostStallMeter host;          // from the go to the last tenant's exit
  WriteAtomically(go, "go\n");  // also releases the others when one failed
  for (auto& p : procs) {
    int rc = p.pid ? WaitFor(p.pid, opt_.duration_s + opt_.timeout_s) : 1;
    json r = fs::exists(p.out) ? json::parse(ReadFile(p.out), nullptr, false) : json::object();
    if (rc != 0 && !r.contains("error")) r["error"] = "exit " + std::to_string(rc) + ": " + Tail(p.log, 300);
    if (r.contains("error") && error.empty()) error = p.t.name + ": " + r["error"].get<std::string>();
    r["tenant"] = p.t.name;
    r["weight"] = p.t.weight;
    r["priority"] = p.t.role == "lc" ? "latency-critical" : "best-effort";
    r["kernel_device_ms"] = TenantSpecJson(p.t, me)["kernel_device_ms"];
    result["tenants"].push_back(r);
  }
  result["host"] = host.Stop();
  if (me.metrics_port && !busy_before.empty()) Account(result, busy_before, me.metrics_port);
  if (!error.empty()) result["error"] = error;
  result["wall_s"] = std::chrono::duration<double>(Clock::now() - t_start).count();
  std::string figures;  // for whoever watches the progress
  for (const auto& t : result["tenants"]) {
    char b[96];
    if (t.contains("latency_us") && t["latency_us"].contains("p99"))
      std::snprintf(b, sizeof(b), " %s p99 %.3f ms;", t["tenant"].get<std::string>().c_str(),
                    t["latency_us"]["p99"].get<double>() / 1e3);
    else if (t.contains("kernels_per_s"))
      std::snprintf(b, sizeof(b), " %s %.1f/s;", t["tenant"].get<std::string>().c_str(), t["kernels_per_s"].get<double>());
    else
      continue;
    figures += b;
  }
  const json& h = result["host"];
  std::fprintf(stderr, " %s in %.1f s:%s host late max %.2f ms, steal %.0f ms\n",
               error.empty() ? "done" : ("FAILED: " + error).c_str(),
               result["wall_s"].get<double>(), figures.c_str(), h["late_max_ms"].get<double>(),
               h.value("steal_ms", 0.0));
  return result;
}

// What rgpud accounted to each tenant over a run (the rise of its device-time counter), against
// what the tenant ran: its kernels, warm-up included, times the kernel's device time alone
// (the native calibration).
void Bench::Account(json& result, const std::map<std::string, double>& before, int port) {
  // The tenants waited for their last kernels, but rgpud collects direct launches every 20 ms
  // (or 256 launches): let it catch up.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::map<std::string, double> after;
  try {
    after = DeviceSeconds(port);
  } catch (const std::exception& e) {
    result["accounting_error"] = e.what();
    return;
  }
  for (auto& t : result["tenants"]) {
    if (t.contains("error") || !t.contains("kernels")) continue;
    const std::string name = t["tenant"];
    const double kernel_ms = t.value("kernel_device_ms", t["role"] == "lc" ? lc_device_ms_ : be_device_ms_);
    const double launches = t["kernels"].get<double>() + t.value("warmup_kernels", 0);
    const double expected = launches * kernel_ms / 1e3;
    const double accounted = (after.count(name) ? after[name] : 0) - (before.count(name) ? before.at(name) : 0);
    t["accounting"] = {{"accounted_s", accounted}, {"expected_s", expected},
                       {"ratio", expected > 0 ? accounted / expected : NAN}};
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
  return {{"kernel", std::string(u.sysname) + " " + u.release}, {"cpu", cpu},
          {"cpus", std::thread::hardware_concurrency()}};
}

std::string Markdown(const json& doc);

// Probes the platforms natively and picks the device to share: the first GPU, or the first
// device of --platform. Fills the environment header.
void Bench::FindDevice(json& doc) {
  json probe = Child("probe", {{"kind", "probe"}}, {"OCL_ICD_VENDORS=" + native_vendors_.string()});
  if (probe.contains("error")) throw std::runtime_error("probe: " + probe["error"].get<std::string>());
  json device;
  for (const auto& p : probe["platforms"])
    for (const auto& d : p["devices"]) {
      std::string pname = p["name"];
      bool wanted = opt_.platform.empty() ? d["gpu"].get<bool>() : pname.find(opt_.platform) != std::string::npos;
      if (device.is_null() && wanted) {
        device = d;
        device["platform"] = pname;
      }
    }
  if (device.is_null())
    throw std::runtime_error("no device" + (opt_.platform.empty() ? std::string(" (GPU)") : " on platform " + opt_.platform) +
                             "; platforms: " + probe["platforms"].dump());
  device_platform_ = device["platform"];
  compute_units_ = device["compute_units"].get<size_t>();
  if (opt_.groups == 0) opt_.groups = 4 * compute_units_;
  doc["environment"]["device"] = device;
  doc["environment"]["platforms"] = probe["platforms"];
  doc["environment"]["nvidia_smi"] =
      Run("nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.max.sm --format=csv,noheader 2>/dev/null");
}

// The LC and BE spin kernels of the issue-4 scenarios (and the accounting's reference).
void Bench::CalibrateScenarios(json& doc) {
  std::fprintf(stderr, "[%s] calibrating on %s ...\n", Now().c_str(),
               doc["environment"]["device"]["name"].get<std::string>().c_str());
  json cal = Child("calibrate",
                   {{"kind", "calibrate"}, {"platform", device_platform_}, {"groups", opt_.groups},
                    {"local", opt_.local}, {"probe_iters", opt_.quick ? 500 : 5000},
                    {"lc_waves", 1}, {"be_waves", opt_.be_waves},
                    {"lc_target_ms", opt_.lc_target_ms}, {"be_target_ms", opt_.be_target_ms}},
                   {"OCL_ICD_VENDORS=" + native_vendors_.string()});
  if (cal.contains("error")) throw std::runtime_error("calibration: " + cal["error"].get<std::string>());
  lc_iters_ = cal["lc_iters"];
  be_iters_ = cal["be_iters"];
  lc_device_ms_ = cal["lc_device_ms"];
  be_device_ms_ = cal["be_device_ms"];
  doc["calibration"] = cal;
  std::fprintf(stderr, "[%s] LC %d iterations = %.3f ms, BE %d iterations = %.3f ms\n", Now().c_str(), lc_iters_,
               lc_device_ms_, be_iters_, be_device_ms_);
}

// --baseline: an earlier sharing.json of the same shape; its matrix calibration becomes this
// run's (the very same kernels). Null without --baseline.
json Bench::LoadBaseline(json& doc) {
  if (opt_.baseline.empty()) return nullptr;
  json baseline = json::parse(ReadFile(opt_.baseline), nullptr, false);
  if (!baseline.is_object() || !baseline.contains("runs") || !baseline.contains("calibration_matrix"))
    throw std::runtime_error("--baseline " + opt_.baseline + ": not a sharing.json of a matrix run");
  // Same due times and run length, or the ratios compare different things.
  const json& bo = baseline["options"];
  if (bo.value("duration_s", 0.0) != opt_.duration_s || !bo.contains("matrix") ||
      bo["matrix"].value("seed", uint64_t{0}) != opt_.seed || bo["matrix"].value("lc_gap_ms", 0.0) != opt_.lc_gap_ms)
    throw std::runtime_error("--baseline " + opt_.baseline + " ran with another --duration, --seed or --lc-gap-ms");
  matrix_cal_ = doc["calibration_matrix"] = baseline["calibration_matrix"];
  for (const auto& sc : opt_.scenarios)
    for (const auto& t : TenantsOf(sc))
      if (t.in_matrix && t.role == "lc" && !matrix_cal_["spins"].contains("lc" + std::to_string(t.mx.lc_us)))
        throw std::runtime_error("--baseline " + opt_.baseline + " has no " + std::to_string(t.mx.lc_us) +
                                 " µs LC kernel (scenario " + sc + ")");
  return baseline;
}

// Native runs measured earlier: what the ratios divide by, without running native again.
void Bench::TakeBaselineRuns(json& doc, const json& baseline) {
  int taken = 0;
  if (std::find(opt_.modes.begin(), opt_.modes.end(), "native") == opt_.modes.end())
    for (const auto& r : baseline["runs"])
      if (r["mode"] == "native") {
        doc["runs"].push_back(r);
        doc["runs"].back()["from_baseline"] = true;
        ++taken;
      }
  doc["baseline"] = {{"file", opt_.baseline}, {"commit", baseline["environment"]["commit"]},
                     {"date", baseline["environment"]["date"]}, {"native_runs", taken}};
  std::fprintf(stderr, "[%s] %d native runs and the matrix's calibration from %s\n", Now().c_str(), taken,
               opt_.baseline.c_str());
}

json Bench::OptionsJson() const {
  return {{"quick", opt_.quick},
          {"platform", device_platform_},
          {"modes", opt_.modes},
          {"scenarios", opt_.scenarios},
          {"duration_s", opt_.duration_s},
          {"lc_target_ms", opt_.lc_target_ms},
          {"be_target_ms", opt_.be_target_ms},
          {"lc_period_ms", opt_.lc_period_ms},
          {"groups", opt_.groups},
          {"local", opt_.local},
          {"be_waves", opt_.be_waves},
          {"alpha", opt_.alpha},
          {"quantum_us", opt_.quantum_us},
          {"rgpud_args", opt_.rgpud_args},
          {"matrix",
           {{"seed", opt_.seed},
            {"solo_repeats", opt_.solo_repeats},
            {"lc_gap_ms", opt_.lc_gap_ms},
            {"lc_us", opt_.shape.lc_us},
            {"default_lc_us", opt_.shape.default_lc_us},
            {"arrivals", opt_.shape.arrivals},
            {"be_kinds", opt_.shape.be_kinds},
            {"be_short_ms", opt_.be_short_ms},
            {"be_short_groups_per_cu", opt_.be_short_groups_per_cu},
            {"be_long_ms", opt_.be_long_ms},
            {"be_brief_ms", opt_.be_brief_ms},
            {"be_tiny_ms", opt_.be_tiny_ms},
            {"be_mem_mib", opt_.be_mem_mib},
            {"be_depth", opt_.be_depth}}}};
}

// Ends a mode: its MPS daemon or rgpud, whose log is kept beside the results.
void Bench::StopMode(const std::string& mode, ModeEnv& me) {
  if (me.stop) me.stop(me.describe);
  for (pid_t pid : me.daemons) {
    kill(pid, SIGTERM);
    if (WaitFor(pid, 15) != 0) me.describe["exit"] = "rgpud did not stop cleanly";
  }
  if (me.describe.contains("log")) {  // rgpud's own account: sessions, per-tenant scheduling
    const fs::path log = me.describe["log"].get<std::string>();
    me.describe["rgpud_log_tail"] = Tail(log, 3000);
    std::error_code ec;
    fs::copy_file(log, fs::path(opt_.out) / ("rgpud-" + FileSafe(mode) + ".log"),
                  fs::copy_options::overwrite_existing, ec);
  }
}

int Bench::Main() {
  PrepareVendors();
  json doc;
  doc["environment"] = {{"date", Now()}, {"commit", rgpu::bench::kCommit}, {"host", Host()}};
  FindDevice(doc);
  CalibrateScenarios(doc);
  if (std::find_if(opt_.modes.begin(), opt_.modes.end(), [](const std::string& m) { return m == "cuda" || m == "mps"; }) !=
      opt_.modes.end())
    CalibrateCuda(doc);
  const json baseline = LoadBaseline(doc);
  if (baseline.is_null() && std::any_of(opt_.scenarios.begin(), opt_.scenarios.end(), rgpu::bench::matrix::IsMatrix))
    CalibrateMatrix(doc, opt_.scenarios);
  doc["options"] = OptionsJson();
  doc["config"] = WriteConfig();
  doc["runs"] = json::array();
  if (!baseline.is_null()) TakeBaselineRuns(doc, baseline);
  doc["modes"] = json::object();
  // Written after every run, so that a run cut short still leaves what it measured.
  fs::create_directories(opt_.out);
  auto save = [&] {
    WriteAtomically(fs::path(opt_.out) / "sharing.json", doc.dump(1) + "\n");
    WriteAtomically(fs::path(opt_.out) / "sharing.md", Markdown(doc));
  };
  bool failed = false;
  // The matrix's solo shapes, run natively again after later modes (Options::solo_repeats).
  std::vector<std::string> solos;
  if (std::find(opt_.modes.begin(), opt_.modes.end(), "native") != opt_.modes.end())
    for (const auto& sc : opt_.scenarios)
      if (rgpu::bench::matrix::IsMatrix(sc) && rgpu::bench::matrix::TenantsOf(sc).size() == 1)
        solos.push_back(sc);
  int repeats_left = solos.empty() ? 0 : std::max(0, opt_.solo_repeats - 1);
  runs_total_ =
      static_cast<int>(opt_.modes.size() * opt_.scenarios.size() + repeats_left * solos.size());
  const auto started = Clock::now();
  auto native_solos = [&] {
    const int repeat = opt_.solo_repeats - repeats_left;  // the native pass was repeat 0
    --repeats_left;
    ModeEnv me;
    try {
      me = StartMode("native");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[%s] native (solo repeat %d): %s\n", Now().c_str(), repeat, e.what());
      failed = true;
      return;
    }
    for (const auto& sc : solos) {
      json r = RunScenario("native", sc, me);
      r["solo_repeat"] = repeat;
      failed |= r.contains("error");
      doc["runs"].push_back(r);
      save();
    }
    StopMode("native", me);
  };
  bool native_done = false;
  for (const auto& mode : opt_.modes) {
    ModeEnv me;
    try {
      me = StartMode(mode);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[%s] %s: %s\n", Now().c_str(), mode.c_str(), e.what());
      doc["modes"][mode] = {{"error", e.what()}};
      failed = true;
      continue;
    }
    for (const auto& sc : opt_.scenarios) {
      json r = RunScenario(mode, sc, me);
      failed |= r.contains("error");
      doc["runs"].push_back(r);
      save();
    }
    StopMode(mode, me);
    doc["modes"][mode] = me.describe;
    save();
    native_done |= mode == "native";
    if (native_done && mode != "native" && repeats_left > 0) native_solos();
  }
  while (repeats_left > 0) native_solos();
  doc["wall_s"] = std::chrono::duration<double>(Clock::now() - started).count();
  std::fprintf(stderr, "[%s] %d runs in %.0f s\n", Now().c_str(), runs_done_, doc["wall_s"].get<double>());
  save();
  std::cout << Markdown(doc);
  fs::remove_all(tmp_);
  return failed ? 1 : 0;
}

// ---- the report ------------------------------------------------------------------------

std::string Fmt(double v, int prec = 2) {
  if (std::isnan(v)) return "–";
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", prec, v);
  return b;
}

using rgpu::bench::matrix::FindRun;

const json* FindTenant(const json* run, const std::string& name) {
  if (!run) return nullptr;
  for (const auto& t : (*run)["tenants"])
    if (t["tenant"] == name) return &t;
  return nullptr;
}

double LatencyMs(const json* t, const char* q) {
  if (!t || !t->contains("latency_us") || !(*t)["latency_us"].contains(q)) return NAN;
  return (*t)["latency_us"][q].get<double>() / 1e3;
}

double Rate(const json* t) { return t && t->contains("kernels_per_s") ? (*t)["kernels_per_s"].get<double>() : NAN; }

// Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one has all.
double Jain(const json* run) {
  if (!run) return NAN;
  double s = 0, s2 = 0;
  int n = 0;
  for (const auto& t : (*run)["tenants"]) {
    double x = Rate(&t);
    s += x;
    s2 += x * x;
    ++n;
  }
  return n ? s * s / (n * s2) : NAN;
}

// fifo, seed001, fair[:Q]: tenants reach the device through rgpud, which accounts their time.
bool ThroughRgpud(const std::string& mode) { return mode != "native" && mode != "cuda" && mode != "mps"; }

struct ModeFigures {
  double lc_solo_p50, lc_solo_p99, lc_p50_x, lc_p99_x, be_solo, be_x, jain2, jain4, share_w3, share_err,
      alone_vs_fifo;
};

ModeFigures Figures(const json& doc, const std::string& mode) {
  ModeFigures f;
  const json* lc_solo = FindTenant(FindRun(doc, mode, "lc_solo"), "lc");
  const json* be_solo = FindTenant(FindRun(doc, mode, "be_solo"), "be");
  const json* lc_be = FindRun(doc, mode, "lc_be");
  f.lc_solo_p50 = LatencyMs(lc_solo, "p50");
  f.lc_solo_p99 = LatencyMs(lc_solo, "p99");
  f.lc_p50_x = LatencyMs(FindTenant(lc_be, "lc"), "p50") / f.lc_solo_p50;
  f.lc_p99_x = LatencyMs(FindTenant(lc_be, "lc"), "p99") / f.lc_solo_p99;
  f.be_solo = Rate(be_solo);
  f.be_x = Rate(FindTenant(lc_be, "be")) / f.be_solo;
  f.jain2 = Jain(FindRun(doc, mode, "equal2"));
  f.jain4 = Jain(FindRun(doc, mode, "equal4"));
  const json* w = FindRun(doc, mode, "weighted");
  double w1 = Rate(FindTenant(w, "w1")), w3 = Rate(FindTenant(w, "w3"));
  f.share_w3 = w3 / (w1 + w3);
  f.share_err = std::fabs(f.share_w3 - 0.75);
  // One tenant alone: its long-kernel throughput against the same under rgpud's fifo.
  f.alone_vs_fifo = ThroughRgpud(mode) ? Rate(FindTenant(FindRun(doc, "fifo", "be_solo"), "be")) / f.be_solo - 1 : NAN;
  return f;
}

std::string Verdict(double v, bool ok) { return std::isnan(v) ? "–" : ok ? "met" : "**missed**"; }

// Accounted / expected device time per tenant of each scenario, one column per rgpu mode.
std::string AccountingMarkdown(const json& doc) {
  std::vector<std::string> modes;
  for (const auto& m : doc["options"]["modes"])
    if (ThroughRgpud(m)) modes.push_back(m);
  std::ostringstream md;
  md << "## Accounting (rgpud's device time per tenant against its kernels' solo cost)\n\n";
  if (modes.empty()) return md.str() + "No rgpu mode in this run.\n\n";
  md << "| scenario | tenant |";
  for (const auto& m : modes) md << " " << m << " |";
  md << "\n|---|---|";
  for (size_t i = 0; i < modes.size(); ++i) md << "---:|";
  md << "\n";
  auto ratio = [](const json* t) {
    return t && t->contains("accounting") && (*t)["accounting"]["ratio"].is_number()
               ? (*t)["accounting"]["ratio"].get<double>()
               : NAN;
  };
  std::map<std::string, std::pair<double, double>> totals;  // mode: accounted, expected
  for (const auto& sc : doc["options"]["scenarios"]) {
    for (const auto& t : TenantsOf(sc)) {
      md << "| " << sc.get<std::string>() << " | " << t.name << " |";
      for (const auto& m : modes) {
        const json* tj = FindTenant(FindRun(doc, m, sc), t.name);
        md << " " << Fmt(ratio(tj), 3) << " |";
        if (!std::isnan(ratio(tj))) {
          totals[m].first += (*tj)["accounting"]["accounted_s"].get<double>();
          totals[m].second += (*tj)["accounting"]["expected_s"].get<double>();
        }
      }
      md << "\n";
    }
  }
  md << "| all | all |";
  for (const auto& m : modes)
    md << " " << (totals[m].second > 0 ? Fmt(totals[m].first / totals[m].second, 3) : "–") << " |";
  const json& cal = doc["calibration"];
  md << "\n\nEach cell: device seconds rgpud accounted to the tenant (the rise of "
        "`rgpu_device_busy_seconds_total{tenant=...}`, scraped before the tenants start and 100 ms "
        "after the last "
        "one exits) divided by what the tenant ran (its kernels, warm-up included, times the "
        "kernel's device time "
        "alone: LC "
     << Fmt(cal["lc_device_ms"].get<double>(), 3) << " ms, BE "
     << Fmt(cal["be_device_ms"].get<double>(), 3)
     << " ms; the matrix's kernels as in the environment table, a matrix LC's kernel as it runs "
        "after an idle "
        "gap and the short BE kernels back to back, as their tenants launch them, where the "
        "calibration "
        "measured that; from the native calibration's profiling events; "
        "an LC request's 4-byte read is not counted). 1.000 is exact; above it, rgpud charged more "
        "than "
        "the kernels take alone. \"all\": the sums of both over the mode's runs.\n\n";
  return md.str();
}

// The matrix's kernels and arrivals, for the environment table.
std::string MatrixEnvironmentRows(const json& doc) {
  const json& mc = doc["calibration_matrix"];
  const json& mo = doc["options"]["matrix"];
  std::ostringstream md;
  md << "| matrix LC | " << mo["lc_gap_ms"].get<double>() << " ms mean gap (periodic, poisson, bursty, pareto), seed "
     << mo["seed"] << "; kernel + 4-byte blocking read;";
  for (const auto& [name, c] : mc["spins"].items())
    if (name.rfind("lc", 0) == 0)
      md << " " << name.substr(2) << " µs: " << c["groups"] << " groups x " << c["iters"]
         << " iterations = " << Fmt(c["device_ms"].get<double>(), 3) << " ms"
         << (c.contains("spaced_device_ms")
                 ? " (" + Fmt(c["spaced_device_ms"].get<double>(), 3) + " ms after an idle gap)"
                 : std::string())
         << ";";
  const json& sh = mc["spins"]["short"];
  const json& lo = mc["spins"]["long"];
  const json& mb = mc["membound"];
  md << " |\n| matrix BE | " << mo["be_depth"] << " launches in flight; short: " << sh["groups"]
     << " groups x " << sh["iters"] << " iterations = " << Fmt(sh["device_ms"].get<double>(), 2)
     << " ms; long: " << lo["groups"] << " groups (one per compute unit) x " << lo["iters"]
     << " iterations = " << Fmt(lo["device_ms"].get<double>(), 2) << " ms; membound: saxpy over "
     << Fmt(mb["buffer_bytes"].get<double>() / (1 << 20), 0)
     << " MiB = " << Fmt(mb["device_ms"].get<double>(), 3) << " ms ("
     << Fmt(mb["gbps"].get<double>(), 0) << " GB/s); opaque: short's grid from a program binary ("
     << mc["opaque"]["binary_bytes"]
     << " bytes) = " << Fmt(mc["opaque"]["device_ms"].get<double>(), 2) << " ms";
  for (const char* kind : {"brief", "tiny"}) {  // launches of one wave
    if (!mc["spins"].contains(kind)) continue;
    const json& sp = mc["spins"][kind];
    md << "; " << kind << ": " << sp["groups"] << " groups (one wave) x " << sp["iters"]
       << " iterations = " << Fmt(sp["device_ms"].get<double>(), 3) << " ms"
       << (sp.contains("back_to_back_device_ms")
               ? " (" + Fmt(sp["back_to_back_device_ms"].get<double>(), 3) + " ms back to back)"
               : std::string());
  }
  md << " |\n";
  return md.str();
}

bool HasIssueFourScenarios(const json& doc) {
  for (const auto& sc : doc["options"]["scenarios"])
    if (!rgpu::bench::matrix::IsMatrix(sc)) return true;
  return false;
}

std::string IssueFourMarkdown(const json& doc);
std::string PerTenantMarkdown(const json& doc);

std::string Markdown(const json& doc) {
  std::ostringstream md;
  const json& env = doc["environment"];
  const json& dev = env["device"];
  const json& o = doc["options"];
  const json& cal = doc["calibration"];
  md << "# rgpu sharing benchmark\n\n| environment | |\n|---|---|\n";
  md << "| date | " << env["date"].get<std::string>() << " |\n";
  md << "| commit | " << env["commit"].get<std::string>() << " |\n";
  md << "| device | " << dev["name"].get<std::string>() << " (" << dev["platform"].get<std::string>() << ", "
     << dev["version"].get<std::string>() << ", " << dev["compute_units"] << " compute units) |\n";
  md << "| driver | " << dev["driver"].get<std::string>() << " |\n";
  md << "| host | " << env["host"]["cpu"].get<std::string>() << ", " << env["host"]["cpus"] << " CPUs |\n";
  if (HasIssueFourScenarios(doc))
  md << "| kernels | dependent FMA chain, " << o["groups"] << " groups of " << o["local"]
     << "; LC " << cal["lc_iters"] << " iterations = " << Fmt(cal["lc_device_ms"].get<double>(), 3)
     << " ms every " << Fmt(o["lc_period_ms"].get<double>(), 1) << " ms; BE " << cal["be_iters"]
     << " iterations x " << o.value("be_waves", 1) * o["groups"].get<size_t>() << " groups = "
     << Fmt(cal["be_device_ms"].get<double>(), 1) << " ms back to back |\n";
  if (cal.contains("lc_completion"))
    md << "| completion seen (native) | LC kernel: clWaitForEvents " << Fmt(cal["lc_completion"]["wait_ms"].get<double>(), 3)
       << " ms, clSetEventCallback " << Fmt(cal["lc_completion"]["callback_ms"].get<double>(), 3)
       << " ms; BE kernel: " << Fmt(cal["be_completion"]["wait_ms"].get<double>(), 3) << " ms, "
       << Fmt(cal["be_completion"]["callback_ms"].get<double>(), 3) << " ms (enqueue to wake-up, median) |\n";
  if (doc.contains("calibration_cuda")) {
    const json& cc = doc["calibration_cuda"];
    md << "| kernels (cuda, mps) | ";
    if (cc.contains("error")) {
      md << "CUDA tenant failed: " << cc["error"].get<std::string>().substr(0, 200) << " |\n";
    } else {
      const json& cd = cc["device"];
      auto at_opencl = [&](const char* role) {
        std::string key = std::string(role) + "_device_ms_at_opencl_iters";
        return cc.contains(key) ? Fmt(cc[key].get<double>(), 3) : std::string("–");
      };
      md << "the same chain and grids in CUDA, calibrated with CUDA events: LC " << cc["lc_iters"] << " iterations = "
         << Fmt(cc["lc_device_ms"].get<double>(), 3) << " ms, BE " << cc["be_iters"] << " iterations = "
         << Fmt(cc["be_device_ms"].get<double>(), 1) << " ms (the OpenCL counts take " << at_opencl("lc") << " / "
         << at_opencl("be") << " ms in CUDA); " << cd["name"].get<std::string>() << ", CUDA driver "
         << cd["cuda_driver"].get<std::string>() << ", runtime " << cd["cuda_runtime"].get<std::string>() << " |\n";
    }
  }
  if (doc.contains("calibration_matrix")) md << MatrixEnvironmentRows(doc);
  md << "| options | " << (o["quick"].get<bool>() ? "--quick, " : "") << Fmt(o["duration_s"].get<double>(), 1)
     << " s per run; seed001 alpha " << Fmt(o["alpha"].get<double>(), 1) << "; fair quantum "
     << Fmt(o["quantum_us"].get<double>(), 0) << " µs (unless the mode names one)";
  if (!o.value("rgpud_args", "").empty()) md << "; rgpud " << o["rgpud_args"].get<std::string>();
  if (doc.contains("baseline"))
    md << "; native runs from " << doc["baseline"]["file"].get<std::string>() << " (commit "
       << doc["baseline"]["commit"].get<std::string>() << ", " << doc["baseline"]["date"].get<std::string>() << ")";
  if (doc.contains("wall_s")) md << "; whole run " << Fmt(doc["wall_s"].get<double>(), 0) << " s";
  md << " |\n\n";
  if (HasIssueFourScenarios(doc)) md << IssueFourMarkdown(doc);
  md << rgpu::bench::matrix::Markdown(doc);
  md << AccountingMarkdown(doc);
  md << PerTenantMarkdown(doc);
  return md.str();
}

std::string IssueFourMarkdown(const json& doc) {
  std::ostringstream md;
  const json& o = doc["options"];
  std::vector<std::string> modes = o["modes"];
  md << "## Sharing (each mode against its own solo runs)\n\n"
        "| mode | LC solo p50 ms | LC solo p99 ms | LC+BE: LC p50 / solo | LC p99 / solo | BE solo kernels/s | "
        "BE / solo | Jain, 2 equal | Jain, 4 equal | 1:3: share of weight 3 | share error | alone: slower than fifo |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& m : modes) {
    ModeFigures f = Figures(doc, m);
    auto with = [](double v, int prec, const char* unit) { return std::isnan(v) ? "–" : Fmt(v, prec) + unit; };
    md << "| " << m << " | " << Fmt(f.lc_solo_p50, 3) << " | " << Fmt(f.lc_solo_p99, 3) << " | "
       << with(f.lc_p50_x, 2, "x") << " | " << with(f.lc_p99_x, 2, "x") << " | " << Fmt(f.be_solo, 1) << " | "
       << with(f.be_x, 2, "x") << " | " << Fmt(f.jain2, 3) << " | " << Fmt(f.jain4, 3) << " | "
       << with(100 * f.share_w3, 1, "%") << " | " << with(100 * f.share_err, 1, " pts") << " | "
       << with(100 * f.alone_vs_fifo, 1, "%") << " |\n";
  }
  md << "\nRatios divide by the same mode's solo run (rgpu modes include rgpu's round trip in both; cuda and mps "
        "run CUDA tenants, native and the rgpu modes OpenCL ones). "
        "Share error: |share of the weight-3 tenant - 75%|, in percentage points of device throughput. "
        "\"alone\": one best-effort tenant's kernels/s under that policy against fifo's, both through rgpud.\n\n";

  md << "## Targets (issue 4)\n\n| target |";
  for (const auto& m : modes) md << " " << m << " |";
  md << "\n|---|";
  for (size_t i = 0; i < modes.size(); ++i) md << "---|";
  md << "\n";
  struct Row {
    const char* what;
    std::function<std::pair<double, bool>(const ModeFigures&)> get;
    std::function<std::string(double)> show;
  };
  std::vector<Row> rows{
      {"LC p99 ≤ 1.10x solo beside BE", [](const ModeFigures& f) { return std::pair{f.lc_p99_x, f.lc_p99_x <= 1.10}; },
       [](double v) { return Fmt(v) + "x"; }},
      {"BE ≥ 0.6x solo in that run", [](const ModeFigures& f) { return std::pair{f.be_x, f.be_x >= 0.6}; },
       [](double v) { return Fmt(v) + "x"; }},
      {"Jain ≥ 0.95, 2 equal tenants", [](const ModeFigures& f) { return std::pair{f.jain2, f.jain2 >= 0.95}; },
       [](double v) { return Fmt(v, 3); }},
      {"Jain ≥ 0.95, 4 equal tenants", [](const ModeFigures& f) { return std::pair{f.jain4, f.jain4 >= 0.95}; },
       [](double v) { return Fmt(v, 3); }},
      {"1:3 shares within 5 pts", [](const ModeFigures& f) { return std::pair{f.share_err, f.share_err <= 0.05}; },
       [](double v) { return Fmt(100 * v, 1) + " pts"; }},
      {"alone ≤ 3% slower than fifo",
       [](const ModeFigures& f) { return std::pair{f.alone_vs_fifo, f.alone_vs_fifo <= 0.03}; },
       [](double v) { return Fmt(100 * v, 1) + "%"; }},
  };
  for (const auto& row : rows) {
    md << "| " << row.what << " |";
    for (const auto& m : modes) {
      auto [v, ok] = row.get(Figures(doc, m));
      md << " " << (std::isnan(v) ? "–" : row.show(v) + " " + Verdict(v, ok)) << " |";
    }
    md << "\n";
  }
  md << "\n";
  return md.str();
}

std::string PerTenantMarkdown(const json& doc) {
  std::ostringstream md;
  md << "## Per tenant\n\n| mode | scenario | tenant | kernels | kernels/s | latency p50 ms | p99 ms | p99.9 ms | max ms | "
        "late | rgpud device s: accounted / expected |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : doc["runs"]) {
    for (const auto& t : r["tenants"]) {
      md << "| " << r["mode"].get<std::string>() << " | " << r["scenario"].get<std::string>() << " | "
         << t.value("tenant", "?") << " | ";
      if (t.contains("error")) {
        md << "failed: " << t["error"].get<std::string>().substr(0, 120) << " | | | | | | | |\n";
        continue;
      }
      md << t.value("kernels", 0) << " | " << Fmt(Rate(&t), 1) << " | " << Fmt(LatencyMs(&t, "p50"), 3) << " | "
         << Fmt(LatencyMs(&t, "p99"), 3) << " | " << Fmt(LatencyMs(&t, "p999"), 3) << " | "
         << Fmt(LatencyMs(&t, "max"), 3) << " | " << (t.contains("late") ? std::to_string(t["late"].get<int>()) : "")
         << " | ";
      if (t.contains("accounting"))
        md << Fmt(t["accounting"]["accounted_s"].get<double>(), 4) << " / "
           << Fmt(t["accounting"]["expected_s"].get<double>(), 4);
      md << " |\n";
    }
  }
  md << "\n";
  for (const auto& [m, d] : doc["modes"].items())
    if (d.contains("error")) md << "- mode `" << m << "` did not start: " << d["error"].get<std::string>() << "\n";
  for (const auto& r : doc["runs"])
    if (r.contains("error"))
      md << "- `" << r["mode"].get<std::string>() << " " << r["scenario"].get<std::string>()
         << "` failed: " << r["error"].get<std::string>().substr(0, 300) << "\n";
  return md.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--tenant")
    return rgpu::bench::sharing::TenantProcess(argv[2], argv[3], HandleTenant);
  if (argc == 3 && std::string(argv[1]) == "--report") {
    std::cout << Markdown(json::parse(ReadFile(argv[2])));
    return 0;
  }
  signal(SIGPIPE, SIG_IGN);
  Options o;
  CLI::App app{"rgpu-bench-sharing: a latency-critical tenant beside a best-effort one, equal and weighted "
               "tenants, one tenant alone; under native time-slicing, MPS and rgpud's policies."};
  app.add_option("--out", o.out, "Directory for sharing.json and sharing.md")->capture_default_str();
  app.add_option("--build", o.build, "rgpu build tree (server/rgpud, client/librgpu-icd.so); default: this binary's");
  app.add_option("--vendors", o.vendors, "Directory of the system's OpenCL .icd files")->capture_default_str();
  app.add_option("--platform", o.platform, "Platform to share (name substring; default: the first GPU)");
  app.add_option("--modes", o.modes,
                 "native, cuda, mps, or an rgpud policy as POLICY[:QUANTUM_US][/RGPUD_ARG...] (fifo, seed001, fair, "
                 "fair:250, fair/--lc-rhythm=0)")->delimiter(',')->capture_default_str();
  app.add_option("--cuda-tenant", o.cuda_tenant, "The CUDA tenant of modes cuda and mps; default: rgpu-bench-sharing-cuda beside this binary");
  app.add_option("--scenarios", o.scenarios, "lc_solo, be_solo, lc_be, equal2, equal4, weighted")->delimiter(',')->capture_default_str();
  auto* dur = app.add_option("--duration", o.duration_s, "Seconds each run measures")->capture_default_str();
  auto* lct = app.add_option("--lc-ms", o.lc_target_ms, "Device time of one latency-critical kernel alone")->capture_default_str();
  auto* bet = app.add_option("--be-ms", o.be_target_ms, "Device time of one best-effort kernel alone")->capture_default_str();
  auto* per = app.add_option("--lc-period-ms", o.lc_period_ms, "Latency-critical requests are this far apart")->capture_default_str();
  auto* grp = app.add_option("--groups", o.groups, "Work-groups per launch (0: 4 per compute unit)")->capture_default_str();
  auto* loc = app.add_option("--local", o.local, "Work-group size")->capture_default_str();
  app.add_option("--be-waves", o.be_waves, "Best-effort launch = this many latency-critical grids of shorter work-groups")
      ->capture_default_str();
  app.add_option("--alpha", o.alpha, "rgpud seed001: slices per active tenant")->capture_default_str();
  app.add_option("--quantum-us", o.quantum_us, "rgpud fair: slice length")->capture_default_str();
  app.add_option("--rgpud-log-level", o.rgpud_log_level, "rgpud's --log-level (its log is kept in --out)")
      ->capture_default_str();
  app.add_option("--rgpud-args", o.rgpud_args, "More rgpud options, space-separated (e.g. \"--lc-guard-us 300\")");
  app.add_option("--timeout", o.timeout_s, "Seconds a tenant may take to set up (and to finish past its run)")->capture_default_str();
  app.add_flag("--quick", o.quick, "Smoke run (PoCL in CI): short runs, small kernels, no CUDA or MPS");
  auto* mx = app.add_option_group("matrix", "The workload matrix of issue 15 (bench/sharing_matrix.h)");
  mx->add_flag("--matrix", o.matrix,
               "Run the matrix: every mx_ scenario (a subset with --quick) unless --scenarios names others; "
               "modes native,fifo,fair unless --modes names others; 2 s per run unless --duration says");
  mx->add_option("--lc-gap-ms", o.lc_gap_ms, "Mean gap between an LC tenant's requests")->capture_default_str();
  mx->add_option("--seed", o.seed, "Seed of the arrival processes (recorded in sharing.json)")->capture_default_str();
  mx->add_option("--lc-us", o.shape.lc_us, "LC kernel lengths (µs) swept with Poisson arrivals")
      ->delimiter(',')->capture_default_str();
  auto* lcdef = mx->add_option("--lc-default-us", o.shape.default_lc_us, "LC kernel length (µs) of every arrival process and 2lc2be")
      ->capture_default_str();
  mx->add_option("--arrivals", o.shape.arrivals, "periodic, poisson, bursty, pareto")->delimiter(',')->capture_default_str();
  mx->add_option("--be-kinds", o.shape.be_kinds, "short, membound, long, opaque, brief, tiny")
      ->delimiter(',')
      ->capture_default_str();
  auto* bsh = mx->add_option("--be-short-ms", o.be_short_ms, "BE short: device time of one launch")->capture_default_str();
  mx->add_option("--be-short-groups-per-cu", o.be_short_groups_per_cu, "BE short (and opaque): work-groups per compute unit")
      ->capture_default_str();
  auto* blo = mx->add_option("--be-long-ms", o.be_long_ms, "BE long: device time of one launch (one work-group per compute unit)")
      ->capture_default_str();
  auto* bbr = mx->add_option("--be-brief-ms", o.be_brief_ms,
                             "BE brief: device time of one launch (one wave)")
                  ->capture_default_str();
  auto* bti =
      mx->add_option("--be-tiny-ms", o.be_tiny_ms, "BE tiny: device time of one launch (one wave)")
          ->capture_default_str();
  auto* bmem = mx->add_option("--be-mem-mib", o.be_mem_mib, "BE membound: both saxpy buffers together, MiB")->capture_default_str();
  mx->add_option("--be-depth", o.be_depth, "BE: launches in flight")->capture_default_str();
  mx->add_option(
        "--solo-repeats", o.solo_repeats,
        "Native runs of each solo shape, spread over the run (ratios divide by their median)")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  mx->add_option("--baseline", o.baseline,
                 "An earlier sharing.json (same device): its native runs and matrix calibration stand in for "
                 "mode native, so that policies can be compared without running native again");
  mx->add_flag(
      "--equal", o.equal,
      "With --matrix: equal BE tenants instead of the LC cells (each BE kind alone, 2 and 4 of it: "
      "mx_be_KIND, mx_equal2_KIND, mx_equal4_KIND)");
  bool list = false;
  app.add_flag("--list", list, "Print the scenarios these options run, one a line, and exit");
  CLI11_PARSE(app, argc, argv);
  if (o.quick) {
    if (!app.get_option("--modes")->count())
      std::erase_if(o.modes, [](const std::string& m) { return m == "cuda" || m == "mps"; });
    if (!dur->count()) o.duration_s = 0.4;
    if (!lct->count()) o.lc_target_ms = 1;
    if (!bet->count()) o.be_target_ms = 5;
    if (!per->count()) o.lc_period_ms = 10;
    if (!grp->count()) o.groups = 8;
    if (!loc->count()) o.local = 64;
  }
  if (o.matrix) {
    if (!app.get_option("--modes")->count()) o.modes = {"native", "fifo", "fair"};
    if (!dur->count()) o.duration_s = o.quick ? 0.3 : 2;
    if (o.quick) {
      if (!lcdef->count()) o.shape.default_lc_us = 1000;
      if (!bsh->count()) o.be_short_ms = 5;
      if (!blo->count()) o.be_long_ms = 10;
      if (!bbr->count()) o.be_brief_ms = 1;
      if (!bti->count()) o.be_tiny_ms = 0.2;
      if (!bmem->count()) o.be_mem_mib = 32;
    }
    if (!app.get_option("--scenarios")->count())
      o.scenarios = o.equal   ? rgpu::bench::matrix::EqualScenarios(o.shape)
                    : o.quick ? rgpu::bench::matrix::QuickScenarios(o.shape.default_lc_us)
                              : rgpu::bench::matrix::FullScenarios(o.shape);
  }
  for (const auto& sc : o.scenarios) {
    try {
      TenantsOf(sc);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rgpu-bench-sharing: %s\n", e.what());
      return 2;
    }
  }
  if (list) {
    for (const auto& sc : o.scenarios) std::cout << sc << "\n";
    return 0;
  }
  char self[4096] = {0};
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return 2;
  if (o.build.empty()) o.build = fs::path(self).parent_path().parent_path().string();
  if (o.cuda_tenant.empty()) o.cuda_tenant = (fs::path(self).parent_path() / "rgpu-bench-sharing-cuda").string();
  try {
    return Bench(o, self).Main();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rgpu-bench-sharing: %s\n", e.what());
    return 1;
  }
}
