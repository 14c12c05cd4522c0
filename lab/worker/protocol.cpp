#include "worker/protocol.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <iostream>

#include <nlohmann/json.hpp>

namespace rgpu::lab {

std::string ToJsonLine(const RoundReport& report) {
  nlohmann::json j;
  j["kernel"] = report.kernel;
  j["api"] = report.api;
  j["kernel_ms"] = report.kernel_ms;
  j["time_ms"] = report.time_ms;
  j["wall_ms"] = report.wall_ms;
  for (const auto& [key, value] : report.metrics) j["metrics"][key] = value;
  for (const auto& [key, value] : report.notes) j["notes"][key] = value;
  return j.dump();
}

void ReportFatal(const std::string& reason) {
  std::cout << "ERROR " << reason << std::endl;
}

double NowMs() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

namespace {

// CPU time of the whole worker process (driver threads included): how much
// CPU a GPU tenant takes from its neighbours while it waits for the GPU.
double ProcessCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

}  // namespace

int ServeWorkload(Workload& workload) {
  try {
    std::cout << "READY" << std::endl;
    std::string command;
    while (std::getline(std::cin, command)) {
      if (command == "QUIT") break;
      if (command != "GO") {
        ReportFatal("unknown command '" + command + "'");
        return 1;
      }
      RoundReport report;
      const double cpu_start = ProcessCpuMs();
      if (workload.IsBackground()) {
        workload.StartBackground();
        std::cout << "RUNNING" << std::endl;
        // Anything but STOP (EOF included) still has to stop the kernel, or
        // it would stay resident on the GPU after we exit.
        std::getline(std::cin, command);
        report = workload.StopBackground();
        if (command != "STOP") break;
      } else {
        report = workload.RunRound();
      }
      report.metrics.emplace_back("process_cpu_ms", ProcessCpuMs() - cpu_start);
      std::cout << ToJsonLine(report) << "\nREADY" << std::endl;
    }
    return 0;
  } catch (const std::exception& e) {
    ReportFatal(e.what());
    return 1;
  }
}

}  // namespace rgpu::lab
