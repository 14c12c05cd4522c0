#include "runner/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace rgpu::lab {

namespace {

double NowSeconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<int> ParseCpuList(const std::string& list) {
  std::vector<int> cpus;
  std::stringstream in(list);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty()) continue;
    auto dash = part.find('-');
    int first = std::stoi(part.substr(0, dash));
    int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
    for (int c = first; c <= last; ++c) cpus.push_back(c);
  }
  return cpus;
}

ChildProcess::ChildProcess(const SpawnOptions& options, std::string label)
    : label_(std::move(label)) {
  int to_child[2] = {-1, -1}, from_child[2] = {-1, -1};
  if (options.pipe_stdio && (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0))
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  // CPUs this machine lacks are dropped (a 1-core CI runner asked for "0-1"
  // still runs the scenario, just without the contention).
  std::vector<int> cpus;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof(allowed), &allowed);
  for (int c : ParseCpuList(options.cpus))
    if (c >= 0 && c < CPU_SETSIZE && CPU_ISSET(c, &allowed)) cpus.push_back(c);

  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    bool replaced = false;
    for (const auto& add : options.env)
      if (entry.compare(0, add.find('=') + 1, add, 0, add.find('=') + 1) == 0) replaced = true;
    if (!replaced) env_storage.push_back(entry);
  }
  for (const auto& add : options.env) env_storage.push_back(add);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  cpu_set_t cpu_set;
  CPU_ZERO(&cpu_set);
  for (int c : cpus) CPU_SET(c, &cpu_set);
  int stderr_fd = -1;
  if (!options.stderr_path.empty()) {
    stderr_fd = open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (stderr_fd < 0) throw std::runtime_error("open " + options.stderr_path);
  }
  int null_fd = options.pipe_stdio ? -1 : open("/dev/null", O_RDWR | O_CLOEXEC);

  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork: " + std::string(strerror(errno)));
  if (pid_ == 0) {
    setpgid(0, 0);
    if (!cpus.empty() && sched_setaffinity(0, sizeof(cpu_set), &cpu_set) != 0) _exit(126);
    if (options.pipe_stdio) {
      dup2(to_child[0], STDIN_FILENO);
      dup2(from_child[1], STDOUT_FILENO);
    } else {
      dup2(null_fd, STDIN_FILENO);
      dup2(options.stdout_to_stderr && stderr_fd >= 0 ? stderr_fd : null_fd, STDOUT_FILENO);
    }
    if (stderr_fd >= 0) dup2(stderr_fd, STDERR_FILENO);
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  setpgid(pid_, pid_);  // also from the parent, so there is no race with kill()
  if (stderr_fd >= 0) close(stderr_fd);
  if (null_fd >= 0) close(null_fd);
  if (options.pipe_stdio) {
    close(to_child[0]);
    close(from_child[1]);
    stdin_fd_ = to_child[1];
    stdout_fd_ = from_child[0];
  }
}

ChildProcess::~ChildProcess() {
  if (!exited_) Terminate(SIGKILL, 5);
  if (stdin_fd_ >= 0) close(stdin_fd_);
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

void ChildProcess::Send(const std::string& line) {
  const std::string data = line + "\n";
  // A worker that already died must not take the runner down with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  if (write(stdin_fd_, data.data(), data.size()) != ssize_t(data.size()))
    throw std::runtime_error(label_ + ": cannot send '" + line + "' (worker gone?)");
}

bool ChildProcess::ReadAvailable() {
  char chunk[4096];
  ssize_t n = read(stdout_fd_, chunk, sizeof(chunk));
  if (n <= 0) return false;
  buffer_.append(chunk, n);
  return true;
}

bool ChildProcess::PopLine(std::string& line) {
  auto newline = buffer_.find('\n');
  if (newline == std::string::npos) return false;
  line = buffer_.substr(0, newline);
  buffer_.erase(0, newline + 1);
  return true;
}

int ChildProcess::PollExit() {
  if (exited_) return status_;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    exited_ = true;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return status_;
  }
  return -1;
}

int ChildProcess::WaitExit(double timeout_s) {
  const double deadline = NowSeconds() + timeout_s;
  while (NowSeconds() < deadline) {
    if (PollExit() >= 0) return status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

void ChildProcess::CloseStdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

int ChildProcess::Terminate(int signal_number, double timeout_s) {
  if (exited_) return status_;
  kill(-pid_, signal_number);
  const double deadline = NowSeconds() + timeout_s;
  while (NowSeconds() < deadline) {
    if (PollExit() >= 0) return status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  exited_ = true;
  status_ = 128 + SIGKILL;
  return status_;
}

std::vector<std::string> AwaitOneLineEach(const std::vector<ChildProcess*>& workers,
                                          double timeout_s) {
  std::vector<std::string> lines(workers.size());
  std::vector<bool> done(workers.size(), false);
  std::size_t remaining = workers.size();
  const double deadline = NowSeconds() + timeout_s;
  while (remaining > 0) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> owners;
    for (std::size_t i = 0; i < workers.size(); ++i) {
      if (done[i]) continue;
      if (workers[i]->PopLine(lines[i])) {
        if (lines[i].rfind("ERROR", 0) == 0)
          throw std::runtime_error(workers[i]->label() + ": " + lines[i]);
        done[i] = true;
        --remaining;
        continue;
      }
      fds.push_back({workers[i]->stdout_fd(), POLLIN, 0});
      owners.push_back(i);
    }
    if (remaining == 0) break;
    const double left = deadline - NowSeconds();
    if (left <= 0) {
      std::string waiting;
      for (std::size_t i : owners) waiting += " " + workers[i]->label();
      throw std::runtime_error("timed out waiting for:" + waiting);
    }
    int ready = poll(fds.data(), fds.size(), static_cast<int>(std::min(left, 1.0) * 1000) + 1);
    if (ready < 0 && errno != EINTR) throw std::runtime_error("poll failed");
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ChildProcess* w = workers[owners[k]];
      if (!w->ReadAvailable()) {
        std::string rest;
        if (w->PopLine(rest) && rest.rfind("ERROR", 0) == 0)
          throw std::runtime_error(w->label() + ": " + rest);
        int status = w->Terminate(SIGTERM, 2);
        throw std::runtime_error(w->label() + " exited (status " + std::to_string(status) + ")");
      }
    }
  }
  return lines;
}

std::string CaptureOutput(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          double timeout_s, int* exit_status) {
  if (exit_status) *exit_status = -1;
  if (argv.empty()) return "";
  try {
    SpawnOptions options{argv, env, "", "/dev/null", true};
    ChildProcess child(options, argv[0]);
    std::string out;
    const double deadline = NowSeconds() + timeout_s;
    while (NowSeconds() < deadline) {
      pollfd fd{child.stdout_fd(), POLLIN, 0};
      if (poll(&fd, 1, 200) > 0) {
        if (!child.ReadAvailable()) break;
      }
    }
    std::string line;
    while (child.PopLine(line)) out += line + "\n";
    int status = child.Terminate(SIGTERM, 2);
    if (exit_status) *exit_status = status;
    return out;
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace rgpu::lab
