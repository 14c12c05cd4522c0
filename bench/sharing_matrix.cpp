#include "bench/sharing_matrix.h"

#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "bench/sharing_tenant.h"
#include "bench/workloads.h"

namespace rgpu::bench::matrix {

namespace {

using Clock = std::chrono::steady_clock;

// Streams two buffers (read x and y, write y): bound by device memory bandwidth.
const char* const kSaxpySource = R"CL(
__kernel void saxpy(__global const float4* x, __global float4* y, const float a) {
  const size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
)CL";

// ---- arrivals ------------------------------------------------------------------------------

// splitmix64: a tiny generator whose output is the same in every build (std::*_distribution
// is not specified bit for bit).
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Uniform() { return ((Next() >> 11) + 0.5) * 0x1.0p-53; }  // in (0, 1)
  double Exponential(double mean) { return -mean * std::log(Uniform()); }
};

constexpr double kParetoAlpha = 1.5, kParetoCapOfMean = 50;

}  // namespace

std::vector<double> ArrivalOffsetsMs(const std::string& process, double mean_gap_ms, double duration_s,
                                     uint64_t seed) {
  Rng rng{seed * 0x2545f4914f6cdd1dull + 1};
  const double end_ms = duration_s * 1e3;
  std::vector<double> out;
  if (process == "bursty") {
    const double close = mean_gap_ms / 10;
    for (double t = 0; t < end_ms;) {
      const int b = 5 + static_cast<int>(rng.Next() % 6);
      for (int i = 0; i < b && t < end_ms; ++i, t += close) out.push_back(t);
      // The burst spent b close gaps (the last one above included); the pause brings the
      // mean gap of its b requests back to mean_gap_ms.
      t += rng.Exponential(b * (mean_gap_ms - close));
    }
    return out;
  }
  // Pareto with x_m = 1 has mean alpha/(alpha-1); truncated at `cap` its mean is
  // alpha/(alpha-1) - cap^(1-alpha)/(alpha-1). Scale so that the truncated mean is the mean gap.
  const double raw_mean = kParetoAlpha / (kParetoAlpha - 1), cap = kParetoCapOfMean * raw_mean;
  const double pareto_scale = mean_gap_ms / (raw_mean - std::pow(cap, 1 - kParetoAlpha) / (kParetoAlpha - 1));
  for (double t = 0; t < end_ms;) {
    out.push_back(t);
    if (process == "periodic") t += mean_gap_ms;
    else if (process == "poisson") t += rng.Exponential(mean_gap_ms);
    else if (process == "pareto") t += pareto_scale * std::min(std::pow(rng.Uniform(), -1 / kParetoAlpha), cap);
    else throw std::runtime_error("unknown arrival process " + process);
  }
  return out;
}

// ---- scenarios -----------------------------------------------------------------------------

namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

bool Known(const std::vector<std::string>& list, const std::string& x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

int Micros(const std::string& s) {
  size_t used = 0;
  int v = std::stoi(s, &used);
  if (used != s.size() || v <= 0) throw std::invalid_argument(s);
  return v;
}

Tenant Lc(const std::string& name, const std::string& arrival, int us, uint64_t seed_offset = 0) {
  if (!Known(kArrivals, arrival)) throw std::invalid_argument(arrival);
  return {name, "lc", arrival, us, "", seed_offset};
}

Tenant Be(const std::string& name, const std::string& kind) {
  if (!Known(kBeKinds, kind)) throw std::invalid_argument(kind);
  return {name, "be", "", 0, kind, 0};
}

}  // namespace

bool IsMatrix(const std::string& scenario) { return scenario.rfind("mx_", 0) == 0; }

std::vector<Tenant> TenantsOf(const std::string& scenario) {
  const std::vector<std::string> p = Split(scenario, '_');
  try {
    if (p.size() == 4 && p[1] == "lc") return {Lc("lc", p[2], Micros(p[3]))};
    if (p.size() == 3 && p[1] == "be") return {Be("be", p[2])};
    if (p.size() == 3 && (p[1] == "equal2" || p[1] == "equal4")) {
      std::vector<Tenant> out;
      for (int i = 0; i < p[1].back() - '0'; ++i) out.push_back(Be("t" + std::to_string(i), p[2]));
      return out;
    }
    if (p.size() == 4 && p[1] == "2lc2be")
      return {Lc("lc", p[2], Micros(p[3])), Lc("lc2", p[2], Micros(p[3]), 1), Be("be", "short"),
              Be("be2", "membound")};
    if (p.size() == 4) return {Lc("lc", p[1], Micros(p[2])), Be("be", p[3])};
  } catch (const std::logic_error&) {
  }
  throw std::runtime_error(
      "unknown matrix scenario " + scenario +
      " (mx_lc_ARRIVAL_US, mx_be_KIND, mx_ARRIVAL_US_KIND, mx_2lc2be_ARRIVAL_US or "
      "mx_equalN_KIND, N 2 or 4)");
}

std::vector<std::string> FullScenarios(const Shape& s) {
  const std::string def = std::to_string(s.default_lc_us);
  std::vector<std::string> out;
  auto add = [&](const std::string& name) {
    if (!Known(out, name)) out.push_back(name);
  };
  for (const auto& a : s.arrivals) add("mx_lc_" + a + "_" + def);
  for (int us : s.lc_us) add("mx_lc_poisson_" + std::to_string(us));
  for (const auto& k : s.be_kinds) add("mx_be_" + k);
  for (const auto& a : s.arrivals)
    for (const auto& k : s.be_kinds) add("mx_" + a + "_" + def + "_" + k);
  for (int us : s.lc_us)
    for (const auto& k : s.be_kinds) add("mx_poisson_" + std::to_string(us) + "_" + k);
  add("mx_2lc2be_poisson_" + def);
  return out;
}

std::vector<std::string> QuickScenarios(int lc_us) {
  const std::string us = std::to_string(lc_us);
  std::vector<std::string> out;
  for (const auto& a : kArrivals) out.push_back("mx_lc_" + a + "_" + us);
  for (const auto& k : kBeKinds) out.push_back("mx_be_" + k);
  // Every arrival process and every BE kind once.
  for (size_t i = 0; i < std::max(kArrivals.size(), kBeKinds.size()); ++i)
    out.push_back("mx_" + kArrivals[i % kArrivals.size()] + "_" + us + "_" +
                  kBeKinds[i % kBeKinds.size()]);
  out.push_back("mx_2lc2be_poisson_" + us);
  out.push_back("mx_equal2_tiny");
  return out;
}

std::vector<std::string> EqualScenarios(const Shape& s) {
  std::vector<std::string> out;
  for (const auto& k : s.be_kinds)
    for (const char* n : {"be_", "equal2_", "equal4_"}) out.push_back("mx_" + std::string(n) + k);
  return out;
}

// ---- tenant processes ----------------------------------------------------------------------

namespace {

void Check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}
#define CL_CHECK(call) Check((call), #call)

// One kernel with its arguments set, ready to launch again and again.
struct Launch {
  cl_command_queue q = nullptr;
  cl_kernel k = nullptr;
  size_t global = 0, local = 0;
  cl_mem readback = nullptr;  // 4 bytes of it end an LC request

  void Enqueue(cl_event* ev) const {
    CL_CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, ev));
  }
  void SetIters(int iters) const { CL_CHECK(clSetKernelArg(k, 1, sizeof(int), &iters)); }
  // Device time of one launch alone, from profiling events (the queue must profile).
  double DeviceMs() const {
    cl_event ev;
    Enqueue(&ev);
    CL_CHECK(clWaitForEvents(1, &ev));
    return TakeMs(ev);
  }
  // The median device time of `n` launches enqueued back to back, as a BE tenant keeps its
  // launches coming (DeviceMs leaves the device idle for a round trip before each).
  double BackToBackMs(int n) const {
    std::vector<cl_event> evs(n);
    for (auto& ev : evs) Enqueue(&ev);
    CL_CHECK(clWaitForEvents(n, evs.data()));
    std::vector<double> ms;
    for (cl_event ev : evs) ms.push_back(TakeMs(ev));
    return sharing::MedianOf(ms);
  }

 private:
  // END - START of a completed launch, in ms; releases its event.
  static double TakeMs(cl_event ev) {
    cl_ulong s = 0, e = 0;
    CL_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(s), &s, nullptr));
    CL_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(e), &e, nullptr));
    clReleaseEvent(ev);
    return (e - s) / 1e6;
  }
};

// A context and queue on the first device of the named platform, the matrix program, and
// everything made from them (released together).
class ClTenant {
 public:
  ClTenant(const std::string& platform, bool profiling) {
    cl_uint np = 0;
    clGetPlatformIDs(0, nullptr, &np);
    std::vector<cl_platform_id> ps(np);
    if (np) clGetPlatformIDs(np, ps.data(), nullptr);
    for (auto p : ps) {
      size_t n = 0;
      clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, nullptr, &n);
      std::string name(n, '\0');
      clGetPlatformInfo(p, CL_PLATFORM_NAME, n, name.data(), nullptr);
      if (name.find(platform) != std::string::npos &&
          clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev_, nullptr) == CL_SUCCESS)
        break;
      dev_ = nullptr;
    }
    if (!dev_) throw std::runtime_error("no OpenCL platform with devices matches '" + platform + "'");
    cl_int err;
    ctx_ = clCreateContext(nullptr, 1, &dev_, nullptr, nullptr, &err);
    Check(err, "clCreateContext");
    q_ = clCreateCommandQueue(ctx_, dev_, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    Check(err, "clCreateCommandQueue");
  }
  ~ClTenant() {
    for (auto k : kernels_) clReleaseKernel(k);
    for (auto m : mems_) clReleaseMemObject(m);
    for (auto p : programs_) clReleaseProgram(p);
    if (q_) clReleaseCommandQueue(q_);
    if (ctx_) clReleaseContext(ctx_);
  }
  ClTenant(const ClTenant&) = delete;
  ClTenant& operator=(const ClTenant&) = delete;

  cl_command_queue queue() const { return q_; }

  // The spin and saxpy kernels, from source; with `from_binary`, the program actually used is
  // created by clCreateProgramWithBinary from that build's CL_PROGRAM_BINARIES. rgpud rewrites
  // (and can slice) only programs created from source, so it runs every launch of that one whole.
  cl_program Program(bool from_binary) {
    const std::string text = std::string(kSpinSource) + kSaxpySource;
    const char* src = text.c_str();
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx_, 1, &src, nullptr, &err);
    Check(err, "clCreateProgramWithSource");
    programs_.push_back(prog);
    CL_CHECK(clBuildProgram(prog, 1, &dev_, "", nullptr, nullptr));
    if (!from_binary) return prog;
    size_t size = 0;
    CL_CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr));
    if (size == 0) throw std::runtime_error("the platform gave an empty program binary");
    std::vector<unsigned char> bin(size);
    unsigned char* bins[1] = {bin.data()};
    CL_CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(bins), bins, nullptr));
    const unsigned char* cbins[1] = {bin.data()};
    cl_int status = CL_SUCCESS;
    cl_program from = clCreateProgramWithBinary(ctx_, 1, &dev_, &size, cbins, &status, &err);
    Check(err, "clCreateProgramWithBinary");
    Check(status, "clCreateProgramWithBinary (binary status)");
    programs_.push_back(from);
    CL_CHECK(clBuildProgram(from, 1, &dev_, "", nullptr, nullptr));
    binary_bytes_ = size;
    return from;
  }
  size_t binary_bytes() const { return binary_bytes_; }

  Launch Spin(cl_program prog, size_t groups, size_t local, int iters) {
    Launch l = Make(prog, "spin", groups * local, local);
    l.readback = Buffer(65536 * sizeof(float));
    CL_CHECK(clSetKernelArg(l.k, 0, sizeof(cl_mem), &l.readback));
    l.SetIters(iters);
    return l;
  }
  // y = a x + y over `elems4` float4s in each of two buffers, filled on the device first.
  Launch Saxpy(cl_program prog, size_t elems4, size_t local) {
    elems4 = std::max(local, elems4 / local * local);
    Launch l = Make(prog, "saxpy", elems4, local);
    cl_mem x = Buffer(elems4 * 16), y = Buffer(elems4 * 16);
    const float one = 1.0f, zero = 0.0f, a = 1e-3f;
    CL_CHECK(clEnqueueFillBuffer(q_, x, &one, sizeof(one), 0, elems4 * 16, 0, nullptr, nullptr));
    CL_CHECK(clEnqueueFillBuffer(q_, y, &zero, sizeof(zero), 0, elems4 * 16, 0, nullptr, nullptr));
    CL_CHECK(clFinish(q_));
    CL_CHECK(clSetKernelArg(l.k, 0, sizeof(cl_mem), &x));
    CL_CHECK(clSetKernelArg(l.k, 1, sizeof(cl_mem), &y));
    CL_CHECK(clSetKernelArg(l.k, 2, sizeof(float), &a));
    return l;
  }

 private:
  Launch Make(cl_program prog, const char* name, size_t global, size_t local) {
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    Check(err, "clCreateKernel");
    kernels_.push_back(k);
    return Launch{q_, k, global, local, nullptr};
  }
  cl_mem Buffer(size_t bytes) {
    cl_int err;
    cl_mem m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    Check(err, "clCreateBuffer");
    mems_.push_back(m);
    return m;
  }

  cl_device_id dev_ = nullptr;
  cl_context ctx_ = nullptr;
  cl_command_queue q_ = nullptr;
  std::vector<cl_program> programs_;
  std::vector<cl_kernel> kernels_;
  std::vector<cl_mem> mems_;
  size_t binary_bytes_ = 0;
};

double MsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// sleep_until wakes up to tens of microseconds late; a request's latency counts from its due
// time, so sleep most of the way and yield for the rest.
void SleepUntilPrecisely(Clock::time_point t) {
  const auto coarse = t - std::chrono::microseconds(200);
  if (Clock::now() < coarse) std::this_thread::sleep_until(coarse);
  while (Clock::now() < t) std::this_thread::yield();
}

// The launch a tenant spec asks for.
Launch TenantLaunch(ClTenant& cl, const json& spec) {
  const std::string kind = spec.value("be_kind", "");
  cl_program prog = cl.Program(kind == "opaque");
  if (kind == "membound") return cl.Saxpy(prog, spec.at("elems4"), spec.at("local"));
  return cl.Spin(prog, spec.at("groups"), spec.at("local"), spec.at("iters"));
}

json RunLc(const Launch& l, const json& spec) {
  float value = 0;
  auto request = [&] {
    l.Enqueue(nullptr);
    CL_CHECK(clEnqueueReadBuffer(l.q, l.readback, CL_TRUE, 0, sizeof(value), &value, 0, nullptr, nullptr));
  };
  for (int i = 0; i < sharing::kWarmupKernels; ++i) request();
  const std::vector<double> due_ms = ArrivalOffsetsMs(spec.at("arrival"), spec.at("mean_gap_ms"),
                                                      spec.at("duration_s"), spec.at("seed"));
  const auto t0 = sharing::ReadyThenGo(spec);
  std::vector<double> us;
  us.reserve(due_ms.size());
  int late = 0;
  Clock::time_point previous_done = t0;
  for (double d : due_ms) {
    const auto due = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(d));
    if (previous_done > due) ++late;  // queued behind this tenant's own previous request
    SleepUntilPrecisely(due);
    request();
    previous_done = Clock::now();
    us.push_back(MsBetween(due, previous_done) * 1e3);
  }
  const double elapsed_s = MsBetween(t0, Clock::now()) / 1e3;
  if (spec.contains("done_file")) sharing::WriteAtomically(spec["done_file"].get<std::string>(), "done\n");
  return {{"role", "lc"}, {"kernels", us.size()}, {"warmup_kernels", sharing::kWarmupKernels},
          {"elapsed_s", elapsed_s}, {"kernels_per_s", us.size() / elapsed_s}, {"late", late},
          {"latency_us", Summarise(us)}};
}

json RunBe(const Launch& l, const json& spec) {
  for (int i = 0; i < sharing::kWarmupKernels; ++i) l.Enqueue(nullptr);
  CL_CHECK(clFinish(l.q));
  const size_t depth = std::max(1, spec.value("depth", 2));
  const auto t0 = sharing::ReadyThenGo(spec);
  const auto until = t0 + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(spec.at("duration_s").get<double>()));
  std::deque<cl_event> in_flight;
  size_t kernels = 0;
  auto wait_oldest = [&] {
    CL_CHECK(clWaitForEvents(1, &in_flight.front()));
    clReleaseEvent(in_flight.front());
    in_flight.pop_front();
    ++kernels;
  };
  // Past its own run length, a BE tenant keeps going until every LC tenant of the run has
  // issued its last request (an LC tenant that falls behind must not finish alone), for at
  // most a minute more.
  std::vector<std::filesystem::path> hold;
  for (const auto& f : spec.value("hold_for", json::array())) hold.emplace_back(f.get<std::string>());
  const auto give_up = until + std::chrono::seconds(60);
  auto more = [&] {
    const auto now = Clock::now();
    if (now < until) return true;
    return now < give_up && std::any_of(hold.begin(), hold.end(), [](const auto& f) { return !std::filesystem::exists(f); });
  };
  while (more()) {
    cl_event ev;
    l.Enqueue(&ev);
    CL_CHECK(clFlush(l.q));
    in_flight.push_back(ev);
    if (in_flight.size() >= depth) wait_oldest();
  }
  while (!in_flight.empty()) wait_oldest();
  const double elapsed_s = MsBetween(t0, Clock::now()) / 1e3;
  return {{"role", "be"}, {"kernels", kernels}, {"warmup_kernels", sharing::kWarmupKernels},
          {"elapsed_s", elapsed_s}, {"kernels_per_s", kernels / elapsed_s}};
}

}  // namespace

json RunTenant(const json& spec) {
  ClTenant cl(spec.at("platform"), false);
  const Launch l = TenantLaunch(cl, spec);
  return spec.at("role") == "lc" ? RunLc(l, spec) : RunBe(l, spec);
}

// spec: platform, local, probe_iters, spins [{name, groups, target_ms, back_to_back}], elems4
// (membound), opaque_of (the spin whose grid and iterations the opaque kernel runs),
// lc_gap_ms (the LC spins, named lc*, are also timed after such a gap).
json Calibrate(const json& spec) {
  ClTenant cl(spec.at("platform"), true);
  const size_t local = spec.at("local");
  cl_program prog = cl.Program(false);
  json out{{"spins", json::object()}};
  for (const auto& s : spec.at("spins")) {
    Launch l = cl.Spin(prog, s.at("groups"), local, 1);
    auto device_ms = [&](int iters) {
      l.SetIters(iters);
      return l.DeviceMs();
    };
    json r = sharing::CalibrateIters(device_ms, spec.at("probe_iters"), s.at("target_ms"));
    r["groups"] = s.at("groups");
    const std::string name = s.at("name");
    if (name.rfind("lc", 0) == 0 && spec.contains("lc_gap_ms")) {
      // An LC request's kernel follows an idle gap, and takes longer on the device then than
      // back to back (a 50 us kernel 58-62 us every 4 ms on the H200, rgpu-probe-driver
      // --spaced): what the accounting of an LC tenant compares against.
      l.SetIters(r.at("iters"));
      std::vector<double> v;
      for (int i = 0; i < 15; ++i) {
        std::this_thread::sleep_for(
            std::chrono::duration<double, std::milli>(spec.at("lc_gap_ms").get<double>()));
        v.push_back(l.DeviceMs());
      }
      r["spaced_device_ms"] = sharing::MedianOf(v);
    } else if (s.value("back_to_back", false)) {
      // A short BE kernel back to back, as its tenant launches it: 26.8-26.9 us for the 30 us
      // `tiny` on the H200 (rgpud's measurements), against 29.3 with the device idle before
      // each launch. The accounting of a BE tenant compares against this where there is one.
      l.SetIters(r.at("iters"));
      r["back_to_back_device_ms"] = l.BackToBackMs(31);
    }
    out["spins"][name] = r;
  }
  auto median_ms = [](const Launch& l) {
    std::vector<double> v;
    for (int i = 0; i < 7; ++i) v.push_back(l.DeviceMs());
    return sharing::MedianOf(v);
  };
  Launch saxpy = cl.Saxpy(prog, spec.at("elems4"), local);
  const double saxpy_ms = median_ms(saxpy);
  out["membound"] = {{"elems4", saxpy.global}, {"buffer_bytes", 2 * saxpy.global * 16},
                     {"device_ms", saxpy_ms}, {"gbps", 3 * saxpy.global * 16 / saxpy_ms / 1e6}};
  const json& of = out["spins"][spec.at("opaque_of").get<std::string>()];
  Launch opaque = cl.Spin(cl.Program(true), of.at("groups"), local, of.at("iters"));
  out["opaque"] = {{"groups", of.at("groups")}, {"iters", of.at("iters")}, {"device_ms", median_ms(opaque)},
                   {"binary_bytes", cl.binary_bytes()}};
  return out;
}

// ---- the report ----------------------------------------------------------------------------

namespace {

constexpr double kLcTarget = 1.25, kBeTarget = 0.5;  // issue 15's targets, against native solo

std::string Fmt(double v, int prec = 2) {
  if (std::isnan(v)) return "–";
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", prec, v);
  return b;
}

const json* FindTenant(const json& doc, const std::string& mode, const std::string& scenario,
                       const std::string& tenant) {
  for (const auto& r : doc["runs"]) {
    if (r["mode"] != mode || r["scenario"] != scenario || r.contains("error")) continue;
    for (const auto& t : r["tenants"])
      if (t["tenant"] == tenant && !t.contains("error")) return &t;
  }
  return nullptr;
}

double P99Ms(const json* t) {
  return t && t->contains("latency_us") && (*t)["latency_us"].contains("p99")
             ? (*t)["latency_us"]["p99"].get<double>() / 1e3
             : NAN;
}

double Rate(const json* t) { return t ? t->value("kernels_per_s", NAN) : NAN; }

// A figure of every native run of a solo shape (several with --solo-repeats), in run order;
// runs without the figure are left out.
std::vector<double> NativeSoloFigures(const json& doc, const std::string& scenario,
                                      const std::string& tenant, double (*figure)(const json*)) {
  std::vector<double> out;
  for (const auto& r : doc["runs"]) {
    if (r["mode"] != "native" || r["scenario"] != scenario || r.contains("error")) continue;
    for (const auto& t : r["tenants"])
      if (t["tenant"] == tenant && !t.contains("error") && !std::isnan(figure(&t)))
        out.push_back(figure(&t));
  }
  return out;
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string LcSolo(const Tenant& t) { return "mx_lc_" + t.arrival + "_" + std::to_string(t.lc_us); }
std::string BeSolo(const Tenant& t) { return "mx_be_" + t.be_kind; }

// A run's worst LC p99 and worst BE throughput, each against its tenant's native solo run.
struct Ratios {
  double lc = NAN, be = NAN;
};

Ratios RatiosOf(const json& doc, const std::string& mode, const std::string& scenario) {
  std::vector<double> lc, be;
  for (const auto& t : TenantsOf(scenario)) {
    const json* got = FindTenant(doc, mode, scenario, t.name);
    // What the ratios divide by: the median of the shape's native solo runs.
    if (t.role == "lc")
      lc.push_back(P99Ms(got) / Median(NativeSoloFigures(doc, LcSolo(t), "lc", P99Ms)));
    else
      be.push_back(Rate(got) / Median(NativeSoloFigures(doc, BeSolo(t), "be", Rate)));
  }
  // A tenant without figures (failed, or no native solo run) leaves its role without one.
  auto any_nan = [](const std::vector<double>& v) { return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); }); };
  Ratios r;
  if (!lc.empty() && !any_nan(lc)) r.lc = *std::max_element(lc.begin(), lc.end());
  if (!be.empty() && !any_nan(be)) r.be = *std::min_element(be.begin(), be.end());
  return r;
}

std::string Describe(const std::string& scenario) {
  std::vector<std::string> parts;
  for (const auto& t : TenantsOf(scenario))
    parts.push_back(t.role == "lc" ? "LC " + t.arrival + " " + std::to_string(t.lc_us) + " µs" : "BE " + t.be_kind);
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " + ") + p;
  return out;
}

std::vector<std::string> MatrixModes(const json& doc) {
  std::vector<std::string> modes;
  for (const auto& m : doc["options"]["modes"])
    if (m != "cuda" && m != "mps") modes.push_back(m);
  return modes;
}

std::vector<std::string> MatrixScenarios(const json& doc) {
  std::vector<std::string> out;
  for (const auto& s : doc["options"]["scenarios"])
    if (IsMatrix(s)) out.push_back(s);
  return out;
}

// Equal BE tenants and no LC one (mx_equalN_KIND): not a cell of the LC/BE matrix.
bool IsEqual(const std::string& scenario) {
  const auto tenants = TenantsOf(scenario);
  return tenants.size() > 1 && std::all_of(tenants.begin(), tenants.end(),
                                           [](const Tenant& t) { return t.role == "be"; });
}

std::string Mark(double v, bool ok) { return std::isnan(v) ? "–" : Fmt(v) + "x" + (ok ? "" : " ✗"); }

// A run during which the host held the benchmark's own 1 ms sleeper back by more than a
// millisecond kHostStalls times or more (HostStallMeter): a tail there may be the host's.
constexpr int kHostStalls = 3;

int HostStallsOf(const json* run) {
  return run && run->contains("host") ? (*run)["host"].value("late_over_1ms", 0) : 0;
}

std::string RatiosTable(const json& doc) {
  const auto modes = MatrixModes(doc);
  std::ostringstream md;
  md << "| cell | tenants |";
  for (const auto& m : modes) md << " " << m << " LC p99 | " << m << " BE |";
  md << "\n|---|---|";
  for (size_t i = 0; i < modes.size(); ++i) md << "---:|---:|";
  md << "\n";
  for (const auto& sc : MatrixScenarios(doc)) {
    if (IsEqual(sc)) continue;  // EqualTable
    md << "| `" << sc << "` | " << Describe(sc) << " |";
    for (const auto& m : modes) {
      const Ratios r = RatiosOf(doc, m, sc);
      const bool has_lc = !std::isnan(r.lc), has_be = !std::isnan(r.be);
      const bool both = has_lc && has_be && r.lc <= kLcTarget && r.be >= kBeTarget;
      const bool stalled = HostStallsOf(FindRun(doc, m, sc)) >= kHostStalls;
      md << " " << Mark(r.lc, r.lc <= kLcTarget) << (stalled ? " ⚠" : "") << " | "
         << Mark(r.be, r.be >= kBeTarget) << (both ? " ✓" : "") << " |";
    }
    md << "\n";
  }
  return md.str();
}

// The worst LC and BE cells of a set, and how many met both targets.
struct Worst {
  double lc = NAN, be = NAN;
  std::string lc_at, be_at;
  int met = 0, cells = 0;
  void Add(const Ratios& r, const std::string& sc) {
    ++cells;
    if (std::isnan(lc) || r.lc > lc) lc = r.lc, lc_at = sc;
    if (std::isnan(be) || r.be < be) be = r.be, be_at = sc;
    met += r.lc <= kLcTarget && r.be >= kBeTarget;
  }
  std::string Describe() const {
    return "worst LC p99 " + Fmt(lc) + "x (`" + lc_at + "`), worst BE " + Fmt(be) + "x (`" + be_at +
           "`)";
  }
};

// Per mode: the worst LC and BE cells, and how many cells met both targets; again over the
// cells whose run the host did not hold back, where some were.
std::string WorstCases(const json& doc) {
  std::ostringstream md;
  for (const auto& m : MatrixModes(doc)) {
    Worst all, quiet;
    int cells = 0, missing = 0;
    for (const auto& sc : MatrixScenarios(doc)) {
      const auto tenants = TenantsOf(sc);
      if (tenants.size() < 2 || IsEqual(sc)) continue;  // solo runs and equal tenants are not cells
      ++cells;
      const Ratios r = RatiosOf(doc, m, sc);
      if (std::isnan(r.lc) || std::isnan(r.be)) {
        ++missing;
        continue;
      }
      all.Add(r, sc);
      if (HostStallsOf(FindRun(doc, m, sc)) < kHostStalls) quiet.Add(r, sc);
    }
    if (cells == 0) continue;  // a run of solo shapes and equal tenants only
    md << "- **" << m << "**: " << all.Describe() << "; " << all.met << " of " << cells
       << " cells meet both targets";
    if (missing) md << "; " << missing << " cells without figures (failed runs)";
    if (quiet.cells == 0 && all.cells > 0)
      md << "; the host held back every cell's run (⚠)";
    else if (quiet.cells < all.cells)
      md << "; in the " << quiet.cells
         << " cells whose run the host did not hold back (no ⚠): " << quiet.Describe() << ", "
         << quiet.met << " meet both";
    md << ".\n";
  }
  return md.str();
}

// Equal tenants of one BE kind: their kernels/s together against the kind alone natively
// (the device they used), against fifo's total in the same run of tenants, and Jain's index
// over them; the kind alone is the row of one tenant.
struct EqualRun {
  double total = NAN, jain = NAN;
};

EqualRun EqualOf(const json& doc, const std::string& mode, const std::string& scenario) {
  const auto tenants = TenantsOf(scenario);
  double sum = 0, squares = 0;
  for (const auto& t : tenants) {
    const double r = Rate(FindTenant(doc, mode, scenario, t.name));
    if (std::isnan(r)) return {};
    sum += r;
    squares += r * r;
  }
  return {sum, squares > 0 ? sum * sum / (static_cast<double>(tenants.size()) * squares) : NAN};
}

constexpr double kEqualTarget = 0.95, kAloneTarget = 0.97;  // against fifo (issue 15)

// The lowest of a mode's figures against fifo, and how many met their target.
struct Lowest {
  double v = NAN;
  std::string at;
  int met = 0, n = 0;
  void Add(double x, const std::string& sc, bool ok) {
    ++n;
    met += ok;
    if (std::isnan(v) || x < v) v = x, at = sc;
  }
  std::string Describe(const char* what, const std::string& target) const {
    return std::string(what) + " worst " + Fmt(v) + " of fifo (`" + at + "`), " +
           std::to_string(met) + " of " + std::to_string(n) + " " + target;
  }
};

std::string EqualTable(const json& doc) {
  std::vector<std::string> kinds;
  for (const auto& sc : MatrixScenarios(doc))
    if (IsEqual(sc) &&
        std::find(kinds.begin(), kinds.end(), TenantsOf(sc)[0].be_kind) == kinds.end())
      kinds.push_back(TenantsOf(sc)[0].be_kind);
  if (kinds.empty()) return "";
  const auto modes = MatrixModes(doc);
  const bool fifo = std::find(modes.begin(), modes.end(), "fifo") != modes.end();
  std::ostringstream md;
  md << "| BE kind | tenants |";
  for (const auto& m : modes) md << " " << m << " |";
  md << "\n|---|---:|";
  for (size_t i = 0; i < modes.size(); ++i) md << "---|";
  md << "\n";
  std::map<std::string, Lowest> worst_equal, worst_alone;  // per mode, against fifo
  for (const auto& kind : kinds) {
    const double native = Median(NativeSoloFigures(doc, "mx_be_" + kind, "be", Rate));
    for (const std::string n : {"1", "2", "4"}) {
      const std::string sc = n == "1" ? "mx_be_" + kind : "mx_equal" + n + "_" + kind;
      if (std::find(doc["options"]["scenarios"].begin(), doc["options"]["scenarios"].end(), sc) ==
          doc["options"]["scenarios"].end())
        continue;
      md << "| " << kind << " | " << n << " |";
      const EqualRun base = fifo ? EqualOf(doc, "fifo", sc) : EqualRun{};
      for (const auto& m : modes) {
        const EqualRun e = EqualOf(doc, m, sc);
        md << " " << Fmt(e.total / native) << "x";
        if (m != "native" && m != "fifo" && !std::isnan(base.total)) {
          const double vs = e.total / base.total;
          const bool ok = vs >= (n == "1" ? kAloneTarget : kEqualTarget);
          md << "; " << Fmt(vs) << " of fifo" << (ok ? "" : " ✗");
          (n == "1" ? worst_alone : worst_equal)[m].Add(vs, sc, ok);
        }
        if (n != "1") md << "; Jain " << Fmt(e.jain, 3);
        md << (HostStallsOf(FindRun(doc, m, sc)) >= kHostStalls ? " ⚠" : "") << " |";
      }
      md << "\n";
    }
  }
  md << "\nEach figure: the tenants' kernels/s together divided by the kind's kernels/s alone in a "
        "native process (median of the native solo runs); then, for modes other than fifo, that "
        "total against fifo's in the same scenario; Jain's index over the tenants (1 = equal); ⚠ a "
        "run during which the host held threads back (\"Matrix host stalls\"). "
        "Targets (issue 15): 2 to 4 equal tenants together at least "
     << Fmt(kEqualTarget) << " of fifo; a tenant alone at most " << Fmt((1 - kAloneTarget) * 100, 0)
     << "% slower than under fifo; ✗ marks a miss.\n\n";
  for (const auto& m : modes) {
    if (!worst_equal.count(m) && !worst_alone.count(m)) continue;
    md << "- **" << m << "**:";
    if (worst_equal.count(m))
      md << " " << worst_equal[m].Describe("equal tenants", "at or above " + Fmt(kEqualTarget))
         << ";";
    if (worst_alone.count(m))
      md << " "
         << worst_alone[m].Describe("alone", "within " + Fmt((1 - kAloneTarget) * 100, 0) + "%")
         << ".";
    md << "\n";
  }
  return md.str();
}

std::string LatencyCell(const json* t) {
  if (!t || !t->contains("latency_us")) return "–";
  const json& l = (*t)["latency_us"];
  if (l.value("n", 0) == 0) return "–";
  auto ms = [&](const char* q) { return Fmt(l[q].get<double>() / 1e3, 3); };
  return ms("p50") + " / " + ms("p99") + " / " + ms("p999") + " / " + ms("max") + " (" +
         std::to_string(l["n"].get<int>()) + ", " + std::to_string(t->value("late", 0)) + " late)";
}

std::string SoloTable(const json& doc) {
  const auto modes = MatrixModes(doc);
  std::ostringstream md;
  md << "| solo run | what |";
  for (const auto& m : modes) md << " " << m << " |";
  md << "\n|---|---|";
  for (size_t i = 0; i < modes.size(); ++i) md << "---:|";
  md << "\n";
  for (const auto& sc : MatrixScenarios(doc)) {
    const auto tenants = TenantsOf(sc);
    if (tenants.size() != 1) continue;
    const bool lc = tenants[0].role == "lc";
    md << "| `" << sc << "` | " << (lc ? "LC p50 / p99 / p99.9 / max ms (requests, late)" : "BE kernels/s") << " |";
    for (const auto& m : modes) {
      const json* t = FindTenant(doc, m, sc, tenants[0].name);
      md << " " << (lc ? LatencyCell(t) : Fmt(Rate(t), 1)) << " |";
    }
    md << "\n";
  }
  return md.str();
}

// The runs during which the host held threads back (HostStallMeter), and the rest in one line.
std::string HostStallsTable(const json& doc) {
  std::ostringstream md, rows;
  int runs = 0, quiet = 0;
  double quiet_max = 0, quiet_steal = 0;
  for (const auto& r : doc["runs"]) {
    if (!r.contains("host") || !IsMatrix(r["scenario"].get<std::string>())) continue;
    ++runs;
    const json& h = r["host"];
    const int over = h.value("late_over_1ms", 0);
    const double steal = h.value("steal_ms", 0.0);
    if (over == 0) {
      ++quiet;
      quiet_max = std::max(quiet_max, h.value("late_max_ms", 0.0));
      quiet_steal = std::max(quiet_steal, steal);
      continue;
    }
    rows << "| " << r["mode"].get<std::string>() << " | `" << r["scenario"].get<std::string>()
         << "` | " << over << (over >= kHostStalls ? " ⚠" : "") << " | "
         << Fmt(h.value("late_p999_ms", NAN)) << " | " << Fmt(h.value("late_max_ms", NAN)) << " | "
         << Fmt(steal, 0) << " |\n";
  }
  if (runs == 0) return "No run recorded the host's stalls.\n";
  md << "A thread of the benchmark wakes every millisecond during each run and notes how late it "
        "woke "
        "(late: the host's other work, or the run's own threads where they fill every CPU, held it "
        "back); steal is the hypervisor's steal time of all CPUs over the run (/proc/stat). "
     << quiet << " of " << runs << " runs never woke over 1 ms late (at most " << Fmt(quiet_max)
     << " ms; steal at most " << Fmt(quiet_steal, 0) << " ms)";
  if (quiet == runs) {
    md << ".\n";
    return md.str();
  }
  md << "; the others are below. ⚠ (here and in the matrix): " << kHostStalls
     << " or more wake-ups over 1 ms late: an LC tail there may not be rgpu's.\n\n"
     << "| mode | run | wake-ups over 1 ms late | p99.9 late ms | max late ms | steal ms |\n"
        "|---|---|---:|---:|---:|---:|\n"
     << rows.str();
  return md.str();
}

// Every native run of each solo shape, the median the ratios divide by, and the spread.
std::string NativeRepeatsTable(const json& doc) {
  std::ostringstream md;
  md << "| solo run | every native run | median | largest / smallest |\n|---|---|---:|---:|\n";
  for (const auto& sc : MatrixScenarios(doc)) {
    const auto tenants = TenantsOf(sc);
    if (tenants.size() != 1) continue;
    const bool lc = tenants[0].role == "lc";
    const auto v = NativeSoloFigures(doc, sc, tenants[0].name, lc ? P99Ms : Rate);
    if (v.empty()) continue;
    std::string each;
    for (double x : v) each += (each.empty() ? "" : " / ") + Fmt(x, lc ? 3 : 1);
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    md << "| `" << sc << "` | " << each << (lc ? " ms (p99)" : " kernels/s") << " | "
       << Fmt(Median(v), lc ? 3 : 1) << " | " << Fmt(*hi / *lo) << " |\n";
  }
  return md.str();
}

}  // namespace

const json* FindRun(const json& doc, const std::string& mode, const std::string& scenario) {
  for (const auto& r : doc["runs"])
    if (r["mode"] == mode && r["scenario"] == scenario) return r.contains("error") ? nullptr : &r;
  return nullptr;
}

std::string Markdown(const json& doc) {
  if (MatrixScenarios(doc).empty()) return "";
  std::ostringstream md;
  md << "## Matrix (LC p99 and BE throughput against native solo)\n\n" << RatiosTable(doc) << "\n";
  md << "Each figure divides by the **native** solo runs of the same tenant shape (the median of "
        "them, where the "
        "run repeated them: see below): an LC tenant's p99 by the p99 of "
        "the same arrival process and kernel length alone in separate native processes "
        "(`mx_lc_ARRIVAL_US`, same "
        "seed, so the same due times), a BE tenant's kernels/s by its kind alone natively "
        "(`mx_be_KIND`). With two "
        "tenants of a role (2lc2be) the worse one is shown. Targets (issue 15): LC p99 ≤ "
     << Fmt(kLcTarget) << "x, BE ≥ " << Fmt(kBeTarget)
     << "x; ✗ marks a missed figure, ✓ a cell that meets both, ⚠ a run during which the host held "
        "threads back (see \"Matrix host stalls\").\n\n"
     << WorstCases(doc) << "\n";
  md << "## Matrix solo runs\n\n" << SoloTable(doc) << "\n";
  md << "## Matrix native solo runs, repeated\n\nThe native solo runs of each shape, in run order "
        "(the first in "
        "the native pass, the others after later modes' passes), and their median, which the "
        "matrix's ratios "
        "divide by.\n\n"
     << NativeRepeatsTable(doc) << "\n";
  md << "## Matrix host stalls\n\n" << HostStallsTable(doc) << "\n";
  if (const std::string equal = EqualTable(doc); !equal.empty())
    md << "## Matrix equal tenants (sharing wastes no device)\n\n" << equal << "\n";
  return md.str();
}

}  // namespace rgpu::bench::matrix
