// rgpu-lab-cuda-worker: one tenant of a lab scenario, running one of the lab's
// CUDA kernels natively (alone, time-sliced, or as an MPS client). Speaks the
// line protocol of worker/protocol.h; the runner starts one per tenant.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kernels/cuda_kernels.h"
#include "worker/protocol.h"
#include "worker/split_plan.h"

namespace rgpu::lab {
namespace {

using cuda::Check;

struct Options {
  std::string kernel = "gmem";
  int n = 4096;               // matrix side (gmem, smem)
  int threads = 256;          // threads per block
  int blocks = 0;             // 0: derived from the problem size / SM count
  int launches = 1;           // kernels per round, back to back
  std::uint64_t seed = 1;
  std::string groups = "1";   // seed-001 split: a count or "rule"
  int tenants = 1;            // for the rule: processes sharing the machine
  double alpha = 2.0;         // for the rule
  int lanes_per_sm = 128;     // for the rule: FP32 lanes per SM (Hopper: 128)
  bool sync_each_piece = true;
  int array_len = 4096;       // core: the small array
  int rounds = 64;            // core: rounds over the array
  int chain = 4096;           // core: dependent steps per round
  int busy = 0;               // persistent: 1 = always a work item waiting
  unsigned poll_sleep_ns = 0; // persistent: idle back-off between polls
  int slots = 4096;           // persistent: packet slots
  int packet_len = 4096;      // persistent: floats per packet
  int repeats = 5;            // device-report: timed repeats per measurement
  std::string sync = "auto";  // host wait: auto, spin, yield, block
};

// Times launches with a pair of events each; events are reused across rounds.
// With --sync block the events must be created with cudaEventBlockingSync:
// cudaDeviceScheduleBlockingSync alone still leaves cudaEventSynchronize
// busy-waiting, and a spinning host thread is exactly what seed 001 is about.
unsigned g_event_flags = cudaEventDefault;

class EventPairs {
 public:
  ~EventPairs() {
    for (auto& [start, stop] : pairs_) {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
    }
  }
  std::pair<cudaEvent_t, cudaEvent_t> Get(std::size_t index) {
    while (pairs_.size() <= index) {
      cudaEvent_t start{}, stop{};
      Check(cudaEventCreateWithFlags(&start, g_event_flags), "cudaEventCreate");
      Check(cudaEventCreateWithFlags(&stop, g_event_flags), "cudaEventCreate");
      pairs_.emplace_back(start, stop);
    }
    return pairs_[index];
  }
  static double ElapsedMs(std::pair<cudaEvent_t, cudaEvent_t> pair) {
    Check(cudaEventSynchronize(pair.second), "cudaEventSynchronize");
    float ms = 0;
    Check(cudaEventElapsedTime(&ms, pair.first, pair.second), "cudaEventElapsedTime");
    return ms;
  }

 private:
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> pairs_;
};

template <typename T>
T* DeviceAlloc(std::size_t count) {
  T* p = nullptr;
  Check(cudaMalloc(reinterpret_cast<void**>(&p), count * sizeof(T)), "cudaMalloc");
  return p;
}

int SmCount() {
  int device = 0, sms = 0;
  Check(cudaGetDevice(&device), "cudaGetDevice");
  Check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "SM count");
  return sms;
}

class MatmulWorkload : public Workload {
 public:
  MatmulWorkload(const Options& o, bool tiled) : o_(o), tiled_(tiled) {
    const std::size_t count = std::size_t(o.n) * o.n;
    a_ = DeviceAlloc<float>(count);
    b_ = DeviceAlloc<float>(count);
    c_ = DeviceAlloc<float>(count);
    cuda::FillUniform(a_, count, o.seed * 2, nullptr);
    cuda::FillUniform(b_, count, o.seed * 2 + 1, nullptr);
    // Warm-up: load the module and touch the code path on a tiny range so
    // that first-launch costs stay out of the timed rounds.
    if (tiled_)
      cuda::LaunchSmemMatmul(a_, b_, c_, cuda::kSmemTile, 1, nullptr);
    else
      cuda::LaunchGmemMatmul(a_, b_, c_, o.n, 0, o.threads, o.threads, 1, nullptr);
    Check(cudaDeviceSynchronize(), "warm-up");
    const std::uint64_t lanes = std::uint64_t(SmCount()) * o.lanes_per_sm;
    groups_ = tiled_ ? 1 : ResolveGroups(o.groups, count, o.tenants, o.alpha, lanes);
  }
  ~MatmulWorkload() override {
    cudaFree(a_);
    cudaFree(b_);
    cudaFree(c_);
  }

  RoundReport RunRound() override {
    RoundReport report{tiled_ ? "smem" : "gmem", "cuda"};
    const double wall_start = NowMs();
    const auto pieces = PlanPieces(std::uint64_t(o_.n) * o_.n, o_.threads, groups_);
    for (int launch = 0; launch < o_.launches; ++launch) {
      if (tiled_) {
        auto ev = events_.Get(launch);
        Check(cudaEventRecord(ev.first), "cudaEventRecord");
        cuda::LaunchSmemMatmul(a_, b_, c_, o_.n, o_.blocks, nullptr);
        Check(cudaEventRecord(ev.second), "cudaEventRecord");
        continue;
      }
      // Each piece is a launch of its own; with sync_each_piece the host
      // waits for it before issuing the next, as seed 001's
      // clEnqueueNDRangeKernel_N does.
      double launch_ms = 0;
      for (std::size_t p = 0; p < pieces.size(); ++p) {
        auto ev = events_.Get(o_.sync_each_piece ? 0 : p);
        Check(cudaEventRecord(ev.first), "cudaEventRecord");
        cuda::LaunchGmemMatmul(a_, b_, c_, o_.n, pieces[p].offset, pieces[p].count, o_.threads,
                               o_.blocks, nullptr);
        Check(cudaEventRecord(ev.second), "cudaEventRecord");
        if (o_.sync_each_piece) launch_ms += EventPairs::ElapsedMs(ev);
      }
      if (!o_.sync_each_piece)
        for (std::size_t p = 0; p < pieces.size(); ++p) launch_ms += EventPairs::ElapsedMs(events_.Get(p));
      report.kernel_ms.push_back(launch_ms);
    }
    if (tiled_)
      for (int launch = 0; launch < o_.launches; ++launch)
        report.kernel_ms.push_back(EventPairs::ElapsedMs(events_.Get(launch)));
    Check(cudaDeviceSynchronize(), "round");
    report.wall_ms = NowMs() - wall_start;
    for (double ms : report.kernel_ms) report.time_ms += ms;
    report.metrics = {{"n", o_.n},
                      {"launches", o_.launches},
                      {"groups", groups_},
                      {"pieces_per_launch", double(tiled_ ? 1 : pieces.size())}};
    return report;
  }

 private:
  Options o_;
  bool tiled_;
  int groups_ = 1;
  float *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
  EventPairs events_;
};

class CoreWorkload : public Workload {
 public:
  explicit CoreWorkload(const Options& o) : o_(o) {
    blocks_ = o.blocks > 0 ? o.blocks : 16;  // seed 000: 16 blocks x 256 threads
    input_ = DeviceAlloc<float>(o.array_len);
    output_ = DeviceAlloc<float>(std::size_t(blocks_) * o.threads);
    cuda::FillUniform(input_, o.array_len, o.seed, nullptr);
    cuda::LaunchCoreIntensive(input_, output_, o.array_len, 1, 1, blocks_, o.threads, nullptr);
    Check(cudaDeviceSynchronize(), "warm-up");
  }
  ~CoreWorkload() override {
    cudaFree(input_);
    cudaFree(output_);
  }
  RoundReport RunRound() override {
    RoundReport report{"core", "cuda"};
    const double wall_start = NowMs();
    for (int launch = 0; launch < o_.launches; ++launch) {
      auto ev = events_.Get(launch);
      Check(cudaEventRecord(ev.first), "cudaEventRecord");
      cuda::LaunchCoreIntensive(input_, output_, o_.array_len, o_.rounds, o_.chain, blocks_,
                                o_.threads, nullptr);
      Check(cudaEventRecord(ev.second), "cudaEventRecord");
    }
    for (int launch = 0; launch < o_.launches; ++launch)
      report.kernel_ms.push_back(EventPairs::ElapsedMs(events_.Get(launch)));
    report.wall_ms = NowMs() - wall_start;
    for (double ms : report.kernel_ms) report.time_ms += ms;
    report.metrics = {{"blocks", blocks_}, {"rounds", o_.rounds}, {"chain", o_.chain}};
    return report;
  }

 private:
  Options o_;
  int blocks_ = 16;
  float *input_ = nullptr, *output_ = nullptr;
  EventPairs events_;
};

class PersistentWorkload : public Workload {
 public:
  explicit PersistentWorkload(const Options& o) : o_(o) {
    blocks_ = o.blocks > 0 ? o.blocks : SmCount();
    Check(cudaHostAlloc(reinterpret_cast<void**>(&host_flags_), sizeof(int) * (1 + blocks_), cudaHostAllocMapped),
          "cudaHostAlloc");
    int* device_flags = nullptr;
    Check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags), host_flags_, 0), "cudaHostGetDevicePointer");
    control_.stop_flag = device_flags;
    control_.block_started = device_flags + 1;
    control_.next_item = DeviceAlloc<unsigned long long>(1);
    control_.items_done = DeviceAlloc<unsigned long long>(1);
    float* packets = DeviceAlloc<float>(std::size_t(o.slots) * o.packet_len);
    cuda::FillUniform(packets, std::size_t(o.slots) * o.packet_len, o.seed, nullptr);
    control_.packets = packets;
    control_.results = DeviceAlloc<float>(o.slots);
    control_.slots = o.slots;
    control_.packet_len = o.packet_len;
    control_.busy = o.busy;
    control_.poll_sleep_ns = o.poll_sleep_ns;
    // Its own non-blocking stream: the kernel must not serialise with the
    // copies this process makes while it runs.
    Check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    Check(cudaEventCreate(&start_), "cudaEventCreate");
    Check(cudaEventCreate(&stop_), "cudaEventCreate");
    Check(cudaDeviceSynchronize(), "init");
  }
  bool IsBackground() const override { return true; }

  void StartBackground() override {
    for (int i = 0; i <= blocks_; ++i) host_flags_[i] = 0;
    Check(cudaMemsetAsync(control_.next_item, 0, sizeof(unsigned long long), stream_), "memset");
    Check(cudaMemsetAsync(control_.items_done, 0, sizeof(unsigned long long), stream_), "memset");
    Check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    cuda::LaunchPersistent(control_, blocks_, o_.threads, stream_);
    Check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    // RUNNING must mean resident: wait until every block has checked in.
    const double deadline = NowMs() + 10000;
    started_blocks_ = 0;
    while (NowMs() < deadline) {
      started_blocks_ = 0;
      for (int i = 0; i < blocks_; ++i) started_blocks_ += host_flags_[1 + i];
      if (started_blocks_ == blocks_) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    wall_start_ = NowMs();
  }

  RoundReport StopBackground() override {
    RoundReport report{"persistent", "cuda"};
    *static_cast<volatile int*>(host_flags_) = 1;
    report.kernel_ms.push_back(EventPairs::ElapsedMs({start_, stop_}));
    report.wall_ms = NowMs() - wall_start_;
    report.time_ms = report.kernel_ms.back();
    unsigned long long items = 0;
    Check(cudaMemcpy(&items, control_.items_done, sizeof(items), cudaMemcpyDeviceToHost),
          "cudaMemcpy");
    report.metrics = {{"blocks", blocks_},
                      {"blocks_resident_at_start", started_blocks_},
                      {"busy", o_.busy},
                      {"poll_sleep_ns", o_.poll_sleep_ns},
                      {"items_done", double(items)},
                      {"packet_bytes", 4.0 * o_.packet_len}};
    return report;
  }

 private:
  Options o_;
  int blocks_ = 0;
  int started_blocks_ = 0;
  int* host_flags_ = nullptr;
  cuda::PersistentControl control_{};
  cudaStream_t stream_{};
  cudaEvent_t start_{}, stop_{};
  double wall_start_ = 0;
};

class DeviceReportWorkload : public Workload {
 public:
  explicit DeviceReportWorkload(const Options& o) : o_(o) {}
  RoundReport RunRound() override {
    RoundReport report{"device-report", "cuda"};
    const double wall_start = NowMs();
    cuda::RunDeviceReport(
        o_.repeats,
        [](const cuda::ThroughputResult& r, void* context) {
          auto* rep = static_cast<RoundReport*>(context);
          rep->metrics.emplace_back(std::string(r.name) + "_" + (r.unit[0] == 'G' ? "gbps" : "tflops"),
                                    r.value);
          std::cerr << r.name << ": " << r.value << " " << r.unit << std::endl;
        },
        &report);
    report.wall_ms = NowMs() - wall_start;
    report.time_ms = report.wall_ms;
    return report;
  }

 private:
  Options o_;
};

nlohmann::json Describe() {
  int device = 0, runtime = 0, driver = 0;
  Check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp props{};
  Check(cudaGetDeviceProperties(&props, device), "cudaGetDeviceProperties");
  Check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  Check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return {{"api", "cuda"},
          {"device", props.name},
          {"compute_capability", std::to_string(props.major) + "." + std::to_string(props.minor)},
          {"sm_count", props.multiProcessorCount},
          {"l2_bytes", props.l2CacheSize},
          {"memory_bytes", props.totalGlobalMem},
          {"cuda_runtime", version(runtime)},
          {"cuda_driver_api", version(driver)}};
}

unsigned SyncFlag(const std::string& sync) {
  if (sync == "spin") return cudaDeviceScheduleSpin;
  if (sync == "yield") return cudaDeviceScheduleYield;
  if (sync == "block") return cudaDeviceScheduleBlockingSync;
  if (sync == "auto") return cudaDeviceScheduleAuto;
  throw std::invalid_argument("--sync must be auto, spin, yield or block");
}

}  // namespace
}  // namespace rgpu::lab

int main(int argc, char** argv) {
  using namespace rgpu::lab;
  Options o;
  bool describe = false;
  CLI::App app{"rgpu lab CUDA worker (driven by rgpu-lab; see docs/lab.md)"};
  app.add_option("--kernel", o.kernel, "gmem, smem, core, persistent or device-report");
  app.add_option("--n", o.n, "matrix side");
  app.add_option("--threads", o.threads, "threads per block");
  app.add_option("--blocks", o.blocks, "blocks (0: derived)");
  app.add_option("--launches", o.launches, "kernel launches per round");
  app.add_option("--seed", o.seed, "input seed");
  app.add_option("--groups", o.groups, "split each launch into N sequential pieces, or 'rule'");
  app.add_option("--tenants", o.tenants, "tenants on the machine (for --groups rule)");
  app.add_option("--alpha", o.alpha, "seed-001 alpha (for --groups rule)");
  app.add_option("--lanes-per-sm", o.lanes_per_sm, "GPU lanes per SM (for --groups rule)");
  app.add_option("--sync-each-piece", o.sync_each_piece, "host waits for each piece");
  app.add_option("--array-len", o.array_len, "core: array length");
  app.add_option("--rounds", o.rounds, "core: rounds");
  app.add_option("--chain", o.chain, "core: dependent steps per round");
  app.add_option("--busy", o.busy, "persistent: 1 = always a work item waiting");
  app.add_option("--poll-sleep-ns", o.poll_sleep_ns, "persistent: idle back-off between polls");
  app.add_option("--slots", o.slots, "persistent: packet slots");
  app.add_option("--packet-len", o.packet_len, "persistent: floats per packet");
  app.add_option("--repeats", o.repeats, "device-report: timed repeats");
  app.add_option("--sync", o.sync, "host wait mode: auto, spin, yield, block");
  app.add_flag("--describe", describe, "print the device as JSON and exit");
  CLI11_PARSE(app, argc, argv);

  try {
    Check(cudaSetDeviceFlags(SyncFlag(o.sync)), "cudaSetDeviceFlags");
    if (o.sync == "block") g_event_flags = cudaEventBlockingSync;
    if (describe) {
      std::cout << Describe().dump() << std::endl;
      return 0;
    }
    std::unique_ptr<Workload> workload;
    if (o.kernel == "gmem") workload = std::make_unique<MatmulWorkload>(o, false);
    else if (o.kernel == "smem") workload = std::make_unique<MatmulWorkload>(o, true);
    else if (o.kernel == "core") workload = std::make_unique<CoreWorkload>(o);
    else if (o.kernel == "persistent") workload = std::make_unique<PersistentWorkload>(o);
    else if (o.kernel == "device-report") workload = std::make_unique<DeviceReportWorkload>(o);
    else throw std::invalid_argument("unknown kernel '" + o.kernel + "'");
    return ServeWorkload(*workload);
  } catch (const std::exception& e) {
    ReportFatal(e.what());
    return 1;
  }
}
