// The line protocol between rgpu-lab (the runner) and one worker process.
//
// A worker allocates and initialises everything first, then prints READY and
// blocks on stdin: the runner releases all workers of a scenario together by
// writing GO to each, which is the seed-000 "prompt before the launch" barrier
// made scriptable.
//
//   worker -> runner            runner -> worker
//   READY                       GO      run one round (measured workload)
//   RUNNING  (background only)  STOP    end the background kernel (persistent)
//   {json}   one round's report QUIT    exit (EOF means the same)
//   ERROR <reason>
//
// A background workload (the persistent kernel) answers GO with RUNNING once
// its kernel is resident, and reports only after STOP.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rgpu::lab {

// One round as seen by one worker. Everything is in milliseconds.
struct RoundReport {
  RoundReport() = default;
  RoundReport(std::string kernel_name, std::string api_name)
      : kernel(std::move(kernel_name)), api(std::move(api_name)) {}
  std::string kernel;              // gmem, smem, core, persistent, cpu-matmul, ...
  std::string api;                 // cuda, opencl, cpu
  std::vector<double> kernel_ms;   // device-event time of each launch (or piece)
  double time_ms = 0;              // the figure tables use: summed kernel time (cpu: wall)
  double wall_ms = 0;              // host clock from GO to the last completion
  std::vector<std::pair<std::string, double>> metrics;       // extra numbers
  std::vector<std::pair<std::string, std::string>> notes;    // extra strings
};

std::string ToJsonLine(const RoundReport& report);

class Workload {
 public:
  virtual ~Workload() = default;
  // Measured workloads run one round per GO.
  virtual RoundReport RunRound() { return {}; }
  // Background workloads start on GO and report on STOP.
  virtual bool IsBackground() const { return false; }
  virtual void StartBackground() {}
  virtual RoundReport StopBackground() { return {}; }
};

// Runs the protocol on stdin/stdout until QUIT or EOF. Returns the process exit
// code; exceptions from the workload become an ERROR line and exit code 1.
int ServeWorkload(Workload& workload);

// Prints "ERROR <reason>" so the runner can show why a worker died.
void ReportFatal(const std::string& reason);

// Monotonic host clock in milliseconds.
double NowMs();

}  // namespace rgpu::lab
