// Child processes of the runner: workers (with a stdin/stdout line channel)
// and daemons (rgpud). Each child gets its own process group, so a stuck
// worker and anything it started can be ended together.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace rgpu::lab {

struct SpawnOptions {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "KEY=VALUE", added to the runner's environment
  std::string cpus;              // CPU list for sched_setaffinity, like taskset -c
  std::string stderr_path;       // appended to; empty: inherit
  bool pipe_stdio = true;        // false: stdin/stdout from /dev/null
  bool stdout_to_stderr = false; // with pipe_stdio false: stdout to stderr_path too (daemon logs)
};

class ChildProcess {
 public:
  explicit ChildProcess(const SpawnOptions& options, std::string label);
  ~ChildProcess();  // kills the process group if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  const std::string& label() const { return label_; }
  pid_t pid() const { return pid_; }
  int stdout_fd() const { return stdout_fd_; }

  void Send(const std::string& line);
  // Reads whatever is available into the line buffer; false at EOF.
  bool ReadAvailable();
  // Pops one complete line if there is one.
  bool PopLine(std::string& line);
  // Returns the exit status if the process has exited (and reaps it), else -1.
  int PollExit();
  // Waits for exit without signalling; -1 on timeout.
  int WaitExit(double timeout_s);
  // Closes the child's stdin, so a child that reads to EOF finishes.
  void CloseStdin();
  // Sends `signal` to the group, waits up to timeout_s, then SIGKILLs it.
  int Terminate(int signal, double timeout_s);
  bool exited() const { return exited_; }

 private:
  std::string label_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  bool exited_ = false;
  int status_ = 0;
};

// Parses "0-3,6" into CPU numbers.
std::vector<int> ParseCpuList(const std::string& list);

// Waits until every worker has produced one line, and returns those lines in
// order. Throws, naming the worker, on EOF, on "ERROR ..." or on timeout.
std::vector<std::string> AwaitOneLineEach(const std::vector<ChildProcess*>& workers,
                                          double timeout_s);

// Runs a short command to completion and returns its stdout ("" on failure).
std::string CaptureOutput(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env = {}, double timeout_s = 30,
                          int* exit_status = nullptr);

}  // namespace rgpu::lab
