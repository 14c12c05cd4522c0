// rgpu-lab-cl-worker: one tenant of a lab scenario, running one of the lab's
// OpenCL kernels through the standard OpenCL API and the ICD loader. The
// platform is picked by name, so the same binary runs natively (NVIDIA, PoCL)
// or through rgpud (platform "rgpu", reached via OCL_ICD_VENDORS).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <CL/cl.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "lab_cl_sources.h"
#include "worker/protocol.h"
#include "worker/split_plan.h"

namespace rgpu::lab {
namespace {

struct Options {
  std::string platform;       // substring of the platform name or vendor; empty: first
  int device_index = 0;
  std::string kernel = "gmem";
  int n = 4096;
  int threads = 256;          // work-group size
  int blocks = 0;             // work-groups (core, persistent); 0: derived
  int launches = 1;
  std::uint64_t seed = 1;
  std::string groups = "1";
  int tenants = 1;
  double alpha = 2.0;
  int lanes_per_sm = 128;     // per compute unit, for --groups rule
  bool sync_each_piece = true;
  int array_len = 4096;
  int rounds = 64;
  int chain = 4096;
  int busy = 0;
  int slots = 4096;
  int packet_len = 4096;
  long max_polls = 50'000'000;
  int running_delay_ms = 100;
  unsigned poll_sleep_ns = 0;  // accepted for parity with the CUDA worker
  std::string sync = "auto";  // accepted for parity with the CUDA worker; OpenCL has no such knob
};

void CheckCl(cl_int status, const char* what) {
  if (status != CL_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed with OpenCL error " + std::to_string(status));
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string PlatformInfo(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  CheckCl(clGetPlatformInfo(platform, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string value(size, '\0');
  CheckCl(clGetPlatformInfo(platform, what, size, value.data(), nullptr), "clGetPlatformInfo");
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::string DeviceInfo(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  CheckCl(clGetDeviceInfo(device, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string value(size, '\0');
  CheckCl(clGetDeviceInfo(device, what, size, value.data(), nullptr), "clGetDeviceInfo");
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

// Exit code 77 ("skipped" to ctest) when the requested platform is absent.
struct PlatformMissing : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The OpenCL objects every workload needs: one device, one profiling queue,
// the lab program built from the embedded sources.
class ClSession {
 public:
  explicit ClSession(const Options& o) {
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0)
      throw PlatformMissing("no OpenCL platform found");
    std::vector<cl_platform_id> platforms(count);
    CheckCl(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
    for (cl_platform_id p : platforms) {
      const std::string label = Lower(PlatformInfo(p, CL_PLATFORM_NAME) + " " +
                                      PlatformInfo(p, CL_PLATFORM_VENDOR));
      if (o.platform.empty() || label.find(Lower(o.platform)) != std::string::npos) {
        platform_ = p;
        break;
      }
    }
    if (!platform_) throw PlatformMissing("no OpenCL platform matches '" + o.platform + "'");
    cl_uint devices = 0;
    CheckCl(clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices), "clGetDeviceIDs");
    std::vector<cl_device_id> ids(devices);
    CheckCl(clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, devices, ids.data(), nullptr),
            "clGetDeviceIDs");
    if (o.device_index < 0 || o.device_index >= int(devices))
      throw std::invalid_argument("--device-index out of range");
    device_ = ids[o.device_index];
    cl_int err = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    CheckCl(err, "clCreateContext");
    queue_ = clCreateCommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE, &err);
    CheckCl(err, "clCreateCommandQueue");
    const std::string source = std::string(kLabCl_gmem_matmul) + kLabCl_smem_matmul +
                               kLabCl_core_intensive + kLabCl_persistent;
    const char* text = source.c_str();
    program_ = clCreateProgramWithSource(context_, 1, &text, nullptr, &err);
    CheckCl(err, "clCreateProgramWithSource");
    if (clBuildProgram(program_, 1, &device_, "", nullptr, nullptr) != CL_SUCCESS) {
      std::size_t size = 0;
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      throw std::runtime_error("clBuildProgram failed: " + log);
    }
    CheckCl(clGetDeviceInfo(device_, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(compute_units_),
                            &compute_units_, nullptr),
            "clGetDeviceInfo");
  }
  ~ClSession() {
    for (cl_kernel k : kernels_) clReleaseKernel(k);
    for (cl_mem m : buffers_) clReleaseMemObject(m);
    if (program_) clReleaseProgram(program_);
    if (queue_) clReleaseCommandQueue(queue_);
    if (context_) clReleaseContext(context_);
  }

  cl_kernel Kernel(const char* name) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program_, name, &err);
    CheckCl(err, name);
    kernels_.push_back(k);
    return k;
  }
  cl_mem Buffer(std::size_t bytes) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    CheckCl(err, "clCreateBuffer");
    buffers_.push_back(m);
    return m;
  }
  void FillUniform(cl_mem buffer, cl_ulong count, cl_ulong seed) {
    if (!fill_) fill_ = Kernel("fill_uniform");
    SetArgs(fill_, buffer, count, seed);
    const std::size_t local = 64;
    const std::size_t global = (count + local - 1) / local * local;
    CheckCl(clEnqueueNDRangeKernel(queue_, fill_, 1, nullptr, &global, &local, 0, nullptr, nullptr),
            "fill_uniform");
  }

  template <typename... Args>
  static void SetArgs(cl_kernel kernel, const Args&... args) {
    cl_uint index = 0;
    (CheckCl(clSetKernelArg(kernel, index++, sizeof(Args), &args), "clSetKernelArg"), ...);
  }

  // Kernel time of a finished command, from the queue's profiling counters.
  static double EventMs(cl_event event) {
    CheckCl(clWaitForEvents(1, &event), "clWaitForEvents");
    cl_ulong start = 0, end = 0;
    CheckCl(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr),
            "profiling start");
    CheckCl(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr),
            "profiling end");
    clReleaseEvent(event);
    return (end - start) * 1e-6;
  }

  cl_context context() const { return context_; }
  cl_device_id device() const { return device_; }
  cl_command_queue queue() const { return queue_; }
  cl_platform_id platform() const { return platform_; }
  cl_uint compute_units() const { return compute_units_; }

 private:
  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  cl_kernel fill_ = nullptr;
  cl_uint compute_units_ = 1;
  std::vector<cl_kernel> kernels_;
  std::vector<cl_mem> buffers_;
};

class MatmulWorkload : public Workload {
 public:
  MatmulWorkload(ClSession& cl, const Options& o, bool tiled) : cl_(cl), o_(o), tiled_(tiled) {
    const cl_ulong count = cl_ulong(o.n) * o.n;
    a_ = cl.Buffer(count * sizeof(float));
    b_ = cl.Buffer(count * sizeof(float));
    c_ = cl.Buffer(count * sizeof(float));
    cl.FillUniform(a_, count, o.seed * 2);
    cl.FillUniform(b_, count, o.seed * 2 + 1);
    kernel_ = cl.Kernel(tiled ? "smem_matmul" : "gmem_matmul");
    ClSession::SetArgs(kernel_, a_, b_, c_, cl_int(o.n));
    // Warm-up on one work-group: many implementations compile or upload a
    // kernel at its first launch, which must stay out of the timed rounds.
    const std::size_t warm_global[2] = {tiled ? 16u : std::size_t(o.threads), 16};
    const std::size_t warm_local[2] = {tiled ? 16u : std::size_t(o.threads), 16};
    CheckCl(clEnqueueNDRangeKernel(cl.queue(), kernel_, tiled ? 2 : 1, nullptr, warm_global,
                                   warm_local, 0, nullptr, nullptr),
            "warm-up");
    CheckCl(clFinish(cl.queue()), "init");
    const std::uint64_t lanes = std::uint64_t(cl.compute_units()) * o.lanes_per_sm;
    groups_ = tiled ? 1 : ResolveGroups(o.groups, count, o.tenants, o.alpha, lanes);
  }

  RoundReport RunRound() override {
    RoundReport report{tiled_ ? "smem" : "gmem", "opencl"};
    const double wall_start = NowMs();
    const auto pieces = PlanPieces(std::uint64_t(o_.n) * o_.n, o_.threads, groups_);
    for (int launch = 0; launch < o_.launches; ++launch) {
      if (tiled_) {
        const std::size_t tiles = (o_.n + 15) / 16 * 16;
        const std::size_t global[2] = {tiles, tiles};
        const std::size_t local[2] = {16, 16};
        cl_event event = nullptr;
        CheckCl(clEnqueueNDRangeKernel(cl_.queue(), kernel_, 2, nullptr, global, local, 0, nullptr,
                                       &event),
                "smem_matmul");
        report.kernel_ms.push_back(ClSession::EventMs(event));
        continue;
      }
      // Seed 001's clEnqueueNDRangeKernel_N: sequential pieces told apart by
      // the global offset, the host waiting for each one.
      std::vector<cl_event> events;
      double launch_ms = 0;
      for (const LaunchPiece& piece : pieces) {
        const std::size_t offset = piece.offset, global = piece.count, local = o_.threads;
        cl_event event = nullptr;
        CheckCl(clEnqueueNDRangeKernel(cl_.queue(), kernel_, 1, &offset, &global, &local, 0,
                                       nullptr, &event),
                "gmem_matmul");
        if (o_.sync_each_piece)
          launch_ms += ClSession::EventMs(event);
        else
          events.push_back(event);
      }
      for (cl_event event : events) launch_ms += ClSession::EventMs(event);
      report.kernel_ms.push_back(launch_ms);
    }
    CheckCl(clFinish(cl_.queue()), "clFinish");
    report.wall_ms = NowMs() - wall_start;
    for (double ms : report.kernel_ms) report.time_ms += ms;
    report.metrics = {{"n", o_.n},
                      {"launches", o_.launches},
                      {"groups", groups_},
                      {"pieces_per_launch", double(tiled_ ? 1 : pieces.size())}};
    return report;
  }

 private:
  ClSession& cl_;
  Options o_;
  bool tiled_;
  int groups_ = 1;
  cl_mem a_, b_, c_;
  cl_kernel kernel_;
};

class CoreWorkload : public Workload {
 public:
  CoreWorkload(ClSession& cl, const Options& o) : cl_(cl), o_(o) {
    blocks_ = o.blocks > 0 ? o.blocks : 16;  // seed 000: 16 blocks x 256 threads
    input_ = cl.Buffer(sizeof(float) * o.array_len);
    output_ = cl.Buffer(sizeof(float) * blocks_ * o.threads);
    cl.FillUniform(input_, o.array_len, o.seed);
    kernel_ = cl.Kernel("core_intensive");
    // Warm-up (see MatmulWorkload) with a one-step chain, then the real arguments.
    ClSession::SetArgs(kernel_, input_, output_, cl_int(o.array_len), cl_int(1), cl_int(1));
    const std::size_t global = std::size_t(blocks_) * o.threads, local = o.threads;
    CheckCl(clEnqueueNDRangeKernel(cl.queue(), kernel_, 1, nullptr, &global, &local, 0, nullptr,
                                   nullptr),
            "warm-up");
    CheckCl(clFinish(cl.queue()), "init");
    ClSession::SetArgs(kernel_, input_, output_, cl_int(o.array_len), cl_int(o.rounds),
                       cl_int(o.chain));
  }
  RoundReport RunRound() override {
    RoundReport report{"core", "opencl"};
    const double wall_start = NowMs();
    const std::size_t global = std::size_t(blocks_) * o_.threads, local = o_.threads;
    std::vector<cl_event> events(o_.launches);
    for (auto& event : events)
      CheckCl(clEnqueueNDRangeKernel(cl_.queue(), kernel_, 1, nullptr, &global, &local, 0, nullptr,
                                     &event),
              "core_intensive");
    for (cl_event event : events) report.kernel_ms.push_back(ClSession::EventMs(event));
    report.wall_ms = NowMs() - wall_start;
    for (double ms : report.kernel_ms) report.time_ms += ms;
    report.metrics = {{"blocks", blocks_}, {"rounds", o_.rounds}, {"chain", o_.chain}};
    return report;
  }

 private:
  ClSession& cl_;
  Options o_;
  int blocks_ = 16;
  cl_mem input_, output_;
  cl_kernel kernel_;
};

class PersistentWorkload : public Workload {
 public:
  PersistentWorkload(ClSession& cl, const Options& o) : cl_(cl), o_(o) {
    if (o.threads > 256 || (o.threads & (o.threads - 1)) != 0)
      throw std::invalid_argument("persistent: --threads must be a power of two <= 256");
    blocks_ = o.blocks > 0 ? o.blocks : int(cl.compute_units());
    control_ = cl.Buffer(sizeof(cl_int) * 4);
    packets_ = cl.Buffer(sizeof(float) * std::size_t(o.slots) * o.packet_len);
    results_ = cl.Buffer(sizeof(float) * o.slots);
    cl.FillUniform(packets_, cl_ulong(o.slots) * o.packet_len, o.seed);
    kernel_ = cl.Kernel("persistent");
    // Warm-up (see MatmulWorkload): one poll per work-group, then the real arguments.
    const cl_int zeros[4] = {0, 0, 0, 0};
    CheckCl(clEnqueueWriteBuffer(cl.queue(), control_, CL_TRUE, 0, sizeof(zeros), zeros, 0,
                                 nullptr, nullptr),
            "reset control");
    ClSession::SetArgs(kernel_, control_, packets_, results_, cl_int(o.slots),
                       cl_int(o.packet_len), cl_int(o.busy), cl_long(1));
    const std::size_t global = std::size_t(o.threads), local = o.threads;
    CheckCl(clEnqueueNDRangeKernel(cl.queue(), kernel_, 1, nullptr, &global, &local, 0, nullptr,
                                   nullptr),
            "warm-up");
    CheckCl(clFinish(cl.queue()), "warm-up");
    ClSession::SetArgs(kernel_, control_, packets_, results_, cl_int(o.slots),
                       cl_int(o.packet_len), cl_int(o.busy), cl_long(o.max_polls));
    cl_int err = CL_SUCCESS;
    stop_queue_ = clCreateCommandQueue(cl.context(), cl.device(), 0, &err);
    CheckCl(err, "clCreateCommandQueue (stop queue)");
    CheckCl(clFinish(cl.queue()), "init");
  }
  ~PersistentWorkload() override { clReleaseCommandQueue(stop_queue_); }
  bool IsBackground() const override { return true; }

  void StartBackground() override {
    const cl_int zeros[4] = {0, 0, 0, 0};
    CheckCl(clEnqueueWriteBuffer(cl_.queue(), control_, CL_TRUE, 0, sizeof(zeros), zeros, 0,
                                 nullptr, nullptr),
            "reset control");
    const std::size_t global = std::size_t(blocks_) * o_.threads, local = o_.threads;
    CheckCl(clEnqueueNDRangeKernel(cl_.queue(), kernel_, 1, nullptr, &global, &local, 0, nullptr,
                                   &kernel_event_),
            "persistent");
    CheckCl(clFlush(cl_.queue()), "clFlush");
    // OpenCL cannot tell the host that a running kernel is resident; give
    // the launch a moment before the runner starts the measured tenants.
    std::this_thread::sleep_for(std::chrono::milliseconds(o_.running_delay_ms));
    wall_start_ = NowMs();
  }

  RoundReport StopBackground() override {
    RoundReport report{"persistent", "opencl"};
    CheckCl(clEnqueueWriteBuffer(stop_queue_, control_, CL_FALSE, 0, sizeof(stop_value_),
                                 &stop_value_, 0, nullptr, nullptr),
            "write stop flag");
    CheckCl(clFlush(stop_queue_), "clFlush");
    report.kernel_ms.push_back(ClSession::EventMs(kernel_event_));
    report.wall_ms = NowMs() - wall_start_;
    report.time_ms = report.kernel_ms.back();
    CheckCl(clFinish(stop_queue_), "clFinish");
    cl_int control[4] = {};
    CheckCl(clEnqueueReadBuffer(cl_.queue(), control_, CL_TRUE, 0, sizeof(control), control, 0,
                                nullptr, nullptr),
            "read control");
    report.metrics = {{"blocks", blocks_},
                      {"busy", o_.busy},
                      {"items_done", control[2]},
                      {"groups_stopped_by_flag", control[3]}};
    report.notes = {{"stopped_by", control[3] == blocks_ ? "flag" : "max_polls"}};
    return report;
  }

 private:
  ClSession& cl_;
  Options o_;
  int blocks_ = 1;
  const cl_int stop_value_ = 1;
  cl_mem control_, packets_, results_;
  cl_kernel kernel_;
  cl_command_queue stop_queue_ = nullptr;
  cl_event kernel_event_ = nullptr;
  double wall_start_ = 0;
};

nlohmann::json Describe(ClSession& cl) {
  return {{"api", "opencl"},
          {"platform", PlatformInfo(cl.platform(), CL_PLATFORM_NAME)},
          {"platform_version", PlatformInfo(cl.platform(), CL_PLATFORM_VERSION)},
          {"device", DeviceInfo(cl.device(), CL_DEVICE_NAME)},
          {"device_version", DeviceInfo(cl.device(), CL_DEVICE_VERSION)},
          {"driver_version", DeviceInfo(cl.device(), CL_DRIVER_VERSION)},
          {"compute_units", cl.compute_units()}};
}

}  // namespace
}  // namespace rgpu::lab

int main(int argc, char** argv) {
  using namespace rgpu::lab;
  Options o;
  bool describe = false;
  CLI::App app{"rgpu lab OpenCL worker (driven by rgpu-lab; see docs/lab.md)"};
  app.add_option("--platform", o.platform, "substring of the OpenCL platform name or vendor");
  app.add_option("--device-index", o.device_index, "device within the platform");
  app.add_option("--kernel", o.kernel, "gmem, smem, core or persistent");
  app.add_option("--n", o.n, "matrix side");
  app.add_option("--threads", o.threads, "work-group size");
  app.add_option("--blocks", o.blocks, "work-groups (core, persistent; 0: derived)");
  app.add_option("--launches", o.launches, "kernel launches per round");
  app.add_option("--seed", o.seed, "input seed");
  app.add_option("--groups", o.groups, "split each launch into N sequential pieces, or 'rule'");
  app.add_option("--tenants", o.tenants, "tenants on the machine (for --groups rule)");
  app.add_option("--alpha", o.alpha, "seed-001 alpha (for --groups rule)");
  app.add_option("--lanes-per-sm", o.lanes_per_sm, "lanes per compute unit (for --groups rule)");
  app.add_option("--sync-each-piece", o.sync_each_piece, "host waits for each piece");
  app.add_option("--array-len", o.array_len, "core: array length");
  app.add_option("--rounds", o.rounds, "core: rounds");
  app.add_option("--chain", o.chain, "core: dependent steps per round");
  app.add_option("--busy", o.busy, "persistent: 1 = always a work item waiting");
  app.add_option("--slots", o.slots, "persistent: packet slots");
  app.add_option("--packet-len", o.packet_len, "persistent: floats per packet");
  app.add_option("--max-polls", o.max_polls, "persistent: polls before a work-group gives up (0: never)");
  app.add_option("--running-delay-ms", o.running_delay_ms, "persistent: wait after launch before RUNNING");
  app.add_option("--poll-sleep-ns", o.poll_sleep_ns, "ignored (OpenCL C has no sleep)");
  app.add_option("--sync", o.sync, "ignored (CUDA worker option; OpenCL has no host-wait knob)");
  app.add_flag("--describe", describe, "print the platform and device as JSON and exit");
  CLI11_PARSE(app, argc, argv);

  try {
    ClSession cl(o);
    if (describe) {
      std::cout << Describe(cl).dump() << std::endl;
      return 0;
    }
    std::unique_ptr<Workload> workload;
    if (o.kernel == "gmem") workload = std::make_unique<MatmulWorkload>(cl, o, false);
    else if (o.kernel == "smem") workload = std::make_unique<MatmulWorkload>(cl, o, true);
    else if (o.kernel == "core") workload = std::make_unique<CoreWorkload>(cl, o);
    else if (o.kernel == "persistent") workload = std::make_unique<PersistentWorkload>(cl, o);
    else throw std::invalid_argument("kernel '" + o.kernel + "' has no OpenCL version");
    return ServeWorkload(*workload);
  } catch (const PlatformMissing& e) {
    ReportFatal(e.what());
    return 77;
  } catch (const std::exception& e) {
    ReportFatal(e.what());
    return 1;
  }
}
