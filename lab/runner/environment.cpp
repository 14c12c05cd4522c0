#include "runner/environment.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "runner/worker_process.h"

#ifndef RGPU_LAB_GIT_COMMIT
#define RGPU_LAB_GIT_COMMIT "unknown"
#endif

namespace rgpu::lab {

std::string UtcTimestamp() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

namespace {

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

nlohmann::json CollectEnvironment(const std::vector<std::string>& describe_argv,
                                  const std::vector<std::string>& describe_env) {
  nlohmann::json env;
  env["date_utc"] = UtcTimestamp();
  env["git_commit"] = RGPU_LAB_GIT_COMMIT;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  env["hostname"] = host;
  utsname uts{};
  if (uname(&uts) == 0) env["os_kernel"] = std::string(uts.sysname) + " " + uts.release;
  env["cpu_model"] = CpuModel();
  env["cpu_count"] = std::thread::hardware_concurrency();
  // Read-only queries; the lab never changes a GPU setting.
  const std::string smi = Trim(CaptureOutput(
      {"nvidia-smi",
       "--query-gpu=name,driver_version,memory.total,compute_mode,clocks.max.sm,clocks.max.mem,power.limit",
       "--format=csv,noheader"}));
  env["nvidia_smi"] = smi.empty() ? nlohmann::json(nullptr) : nlohmann::json(smi);
  int status = -1;
  const std::string described = Trim(CaptureOutput(describe_argv, describe_env, 60, &status));
  try {
    env["device"] = nlohmann::json::parse(described.substr(described.rfind('\n') + 1));
  } catch (const std::exception&) {
    env["device"] = {{"error", described.empty() ? "worker --describe failed" : described},
                     {"status", status}};
  }
  return env;
}

}  // namespace rgpu::lab
