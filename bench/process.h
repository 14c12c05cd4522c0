// Child processes for the benchmarks: daemons, workers and tenants started with their own
// environment and log, and waited for with a deadline.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rgpu::bench {

// Starts argv[0] (looked up in PATH when it has no slash) with `env` added; its output is
// appended to `log` (empty: inherited).
inline pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   const std::filesystem::path& log) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  for (const auto& kv : env) putenv(const_cast<char*>(kv.c_str()));
  if (!log.empty()) {
    if (FILE* f = std::fopen(log.c_str(), "a")) {
      dup2(fileno(f), 1);
      dup2(fileno(f), 2);
    }
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::perror("execvp");
  _exit(127);
}

// The exit status, or -1 if the child died of a signal or had to be killed after `timeout_s`.
inline int WaitFor(pid_t pid, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  for (;;) {
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A fresh temporary folder with two ICD vendor directories for the children's
// OCL_ICD_VENDORS: `native` holds the system's .icd files (from `system_vendors`), `rgpu`
// only rgpu's, so that a "remote" client never loads (or pays for) a local GPU driver. The
// rgpu file names the ICD of the build tree `build` by absolute path, so that a build tree
// carried to another machine still works.
struct VendorDirs {
  std::filesystem::path tmp, native, rgpu;
};
inline VendorDirs MakeVendorDirs(const std::string& tmp_prefix, const std::filesystem::path& system_vendors,
                                 const std::filesystem::path& build) {
  namespace fs = std::filesystem;
  const fs::path icd = build / "client" / "librgpu-icd.so";
  if (!fs::exists(icd)) throw std::runtime_error(icd.string() + " not found: build rgpu first");
  std::string tmpl = "/tmp/" + tmp_prefix + ".XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  VendorDirs d{tmpl, fs::path(tmpl) / "vendors-native", fs::path(tmpl) / "vendors-rgpu"};
  fs::create_directories(d.native);
  fs::create_directories(d.rgpu);
  if (fs::is_directory(system_vendors))
    for (const auto& e : fs::directory_iterator(system_vendors))
      if (e.path().extension() == ".icd" && e.path().filename() != "rgpu.icd")
        fs::copy_file(e.path(), d.native / e.path().filename());
  std::ofstream(d.rgpu / "rgpu.icd") << fs::canonical(icd).string() << "\n";
  return d;
}

}  // namespace rgpu::bench
