// Child processes for the benchmarks: daemons, workers and tenants started with their own
// environment and log, and waited for with a deadline.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
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

}  // namespace rgpu::bench
