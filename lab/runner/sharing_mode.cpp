#include "runner/sharing_mode.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "runner/worker_process.h"

namespace rgpu::lab {
namespace {

namespace fs = std::filesystem;

std::string MakeTempDir(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + "XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  return pattern;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ReadTail(const fs::path& path, std::size_t max_bytes) {
  std::string s = ReadAll(path);
  return s.size() > max_bytes ? s.substr(s.size() - max_bytes) : s;
}

std::string ReadHead(const fs::path& path, std::size_t max_bytes) {
  return ReadAll(path).substr(0, max_bytes);
}

class PlainMode : public SharingMode {
 public:
  PlainMode(std::string name, std::string api, std::string platform)
      : name_(std::move(name)), api_(std::move(api)), platform_(std::move(platform)) {}
  std::string name() const override { return name_; }
  std::string api() const override { return api_; }
  std::vector<std::string> WorkerArgs() const override {
    if (api_ == "opencl" && !platform_.empty()) return {"--platform=" + platform_};
    return {};
  }
  nlohmann::json Describe() const override {
    // A system-wide MPS daemon would silently turn "timeslice" into MPS.
    nlohmann::json j;
    j["system_mps_pipe_present"] = fs::exists("/tmp/nvidia-mps/control");
    return j;
  }

 private:
  std::string name_, api_, platform_;
};

// A private MPS control daemon. CUDA_MPS_PIPE_DIRECTORY and
// CUDA_MPS_LOG_DIRECTORY point at fresh directories for the daemon and for
// every worker, so neither a system daemon nor another user's is involved.
class MpsMode : public SharingMode {
 public:
  explicit MpsMode(const ModeOptions& options) {
    root_ = MakeTempDir("rgpu-lab-mps-");
    fs::create_directories(root_ + "/pipe");
    fs::create_directories(root_ + "/log");
    env_ = {"CUDA_MPS_PIPE_DIRECTORY=" + root_ + "/pipe", "CUDA_MPS_LOG_DIRECTORY=" + root_ + "/log"};
    // -d forks the daemon and returns; stdio to /dev/null so the daemon
    // holds no pipe of ours.
    SpawnOptions start{{"nvidia-cuda-mps-control", "-d"}, env_, "",
                       options.log_dir + "/mps-control-start.log", false};
    ChildProcess starter(start, "nvidia-cuda-mps-control -d");
    const int status = starter.WaitExit(30);
    if (status != 0)
      throw std::runtime_error("nvidia-cuda-mps-control -d failed (status " + std::to_string(status) +
                               "); log: " + ReadTail(root_ + "/log/control.log", 2000));
    running_ = true;
  }
  ~MpsMode() override { Finish(); }
  std::string name() const override { return "mps"; }
  std::string api() const override { return "cuda"; }
  std::vector<std::string> WorkerEnv(int) const override { return env_; }
  nlohmann::json Describe() const override {
    return {{"mps_pipe_directory", root_ + "/pipe"},
            {"mps_control_log_tail", ReadTail(root_ + "/log/control.log", 4000)},
            {"mps_server_log_tail", ReadTail(root_ + "/log/server.log", 4000)}};
  }
  void Finish() override {
    if (!running_) return;
    running_ = false;
    // `echo quit | nvidia-cuda-mps-control`, with the same private directories.
    SpawnOptions quit{{"nvidia-cuda-mps-control"}, env_, "", "", true};
    ChildProcess control(quit, "nvidia-cuda-mps-control");
    control.Send("quit");
    control.CloseStdin();
    if (control.WaitExit(15) < 0) control.Terminate(SIGTERM, 2);
    // The daemon removes its control pipe when it has shut down.
    for (int i = 0; i < 100 && fs::exists(root_ + "/pipe/control"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

 private:
  std::string root_;
  std::vector<std::string> env_;
  bool running_ = false;
};

// `rgpud --hash-token` reads a token on stdin and prints the token_hash a [[tenant]] needs.
std::string HashToken(const fs::path& rgpud, const std::string& token) {
  SpawnOptions spawn;
  spawn.argv = {rgpud.string(), "--hash-token"};
  ChildProcess hasher(spawn, "rgpud --hash-token");
  hasher.Send(token);
  hasher.CloseStdin();
  const std::string hash = AwaitOneLineEach({&hasher}, 10).front();
  hasher.WaitExit(10);
  if (hash.rfind("sha256$", 0) != 0)
    throw std::runtime_error("rgpud --hash-token printed '" + hash + "'");
  return hash;
}

// rgpud on a private unix socket, and the rgpu ICD for the workers.
//
// With a context group, rgpud gets a config of one tenant per worker (w0, w1, ... with
// tokens tok-w0, tok-w1, ...), all naming the group "lab": every session of theirs shares
// one device context, so their kernels can run on the device at once, as under MPS.
// Without one there is no config, every session is the anonymous tenant and has its own
// context. The scheduler sees the same tenants either way: it tells anonymous sessions
// apart, and the lab's tenants have the defaults (best-effort, weight 1).
class RgpuMode : public SharingMode {
 public:
  static constexpr const char* kGroup = "lab";

  explicit RgpuMode(const ModeOptions& options) {
    fs::path build = options.rgpu_build_dir;
    fs::path rgpud = options.rgpud_path;
    if (rgpud.empty())
      for (const fs::path& candidate : {build / "rgpud", build / "server" / "rgpud"})
        if (fs::exists(candidate)) {
          rgpud = candidate;
          break;
        }
    if (rgpud.empty() || !fs::exists(rgpud))
      throw std::runtime_error("rgpu mode: no rgpud under " + build.string() +
                               " (build it, or pass --rgpud / --rgpu-build)");
    icd_dir_ = (build / "icd").string();
    if (!fs::exists(icd_dir_)) throw std::runtime_error("rgpu mode: no ICD directory " + icd_dir_);
    dir_ = MakeTempDir("rgpu-lab-rgpud-");
    server_ = "unix:" + dir_ + "/rgpud.sock";
    SpawnOptions spawn;
    spawn.argv = {rgpud.string(), "--listen", server_};
    if (options.context_group) {
      tenants_ = std::max(options.tenants, 1);
      const std::string config_path = options.log_dir + "/rgpud.toml";
      config_text_ = GroupConfig(rgpud, tenants_);
      std::ofstream(config_path) << config_text_;
      spawn.argv.push_back("--config");
      spawn.argv.push_back(config_path);
    }
    if (!options.policy.empty()) {
      spawn.argv.push_back("--policy");
      spawn.argv.push_back(options.policy);
    }
    for (const auto& a : options.rgpud_args) spawn.argv.push_back(a);
    log_path_ = options.log_dir + "/rgpud.log";
    spawn.stderr_path = log_path_;
    spawn.pipe_stdio = false;
    spawn.stdout_to_stderr = true;  // spdlog writes to stdout; its device line goes in the header
    command_ = spawn.argv;
    daemon_ = std::make_unique<ChildProcess>(spawn, "rgpud");
    for (int i = 0; i < 200 && !fs::exists(dir_ + "/rgpud.sock"); ++i) {
      if (daemon_->PollExit() >= 0)
        throw std::runtime_error("rgpud exited at start; see " + spawn.stderr_path);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!fs::exists(dir_ + "/rgpud.sock"))
      throw std::runtime_error("rgpud did not create " + dir_ + "/rgpud.sock within 10 s");
  }
  ~RgpuMode() override { Finish(); }
  std::string name() const override { return "rgpu"; }
  std::string api() const override { return "opencl"; }
  std::vector<std::string> WorkerEnv(int worker) const override {
    std::vector<std::string> env = {"OCL_ICD_VENDORS=" + icd_dir_, "RGPU_SERVER=" + server_};
    if (tenants_ > 0) {
      if (worker < 0 || worker >= tenants_)
        throw std::runtime_error("rgpu mode: worker " + std::to_string(worker) +
                                 " has no tenant (" + std::to_string(tenants_) +
                                 " in rgpud's config)");
      env.push_back("RGPU_TOKEN=" + Token(worker));
    }
    return env;
  }
  std::vector<std::string> WorkerArgs() const override { return {"--platform=rgpu"}; }
  nlohmann::json Describe() const override {
    // The head names the device rgpud serves; the tail, read after the run, has the
    // per-session summaries (launches, slices, device time) when rgpud logs them.
    nlohmann::json j = {{"rgpud_command", command_},
                        {"rgpu_server", server_},
                        {"icd_dir", icd_dir_},
                        {"rgpud_log_head", ReadHead(log_path_, 2000)},
                        {"rgpud_log_tail", ReadTail(log_path_, 6000)}};
    if (tenants_ > 0) {
      j["context_group"] = kGroup;
      j["rgpud_config"] = config_text_;
    }
    return j;
  }
  void Finish() override {
    if (daemon_) daemon_->Terminate(SIGTERM, 5);
    daemon_.reset();
  }

 private:
  static std::string TenantId(int worker) { return "w" + std::to_string(worker); }
  static std::string Token(int worker) { return "tok-" + TenantId(worker); }

  static std::string GroupConfig(const fs::path& rgpud, int tenants) {
    std::ostringstream config;
    config << "# written by rgpu-lab run --context-group: tenant wN is the config's worker N\n";
    for (int worker = 0; worker < tenants; ++worker)
      config << "\n[[tenant]]\nid = \"" << TenantId(worker) << "\"\n"
             << "token_hash = \"" << HashToken(rgpud, Token(worker)) << "\"\n"
             << "priority = \"best-effort\"\nweight = 1.0\n"
             << "context_group = \"" << kGroup << "\"\n";
    return config.str();
  }

  std::string icd_dir_, dir_, server_, log_path_, config_text_;
  int tenants_ = 0;  // > 0: a context group, with this many tenants in rgpud's config
  std::vector<std::string> command_;
  std::unique_ptr<ChildProcess> daemon_;
};

}  // namespace

std::unique_ptr<SharingMode> StartSharingMode(const ModeOptions& options) {
  if (options.mode == "timeslice") return std::make_unique<PlainMode>("timeslice", "cuda", "");
  if (options.mode == "opencl")
    return std::make_unique<PlainMode>("opencl", "opencl", options.cl_platform);
  if (options.mode == "mps") return std::make_unique<MpsMode>(options);
  if (options.mode == "rgpu") return std::make_unique<RgpuMode>(options);
  throw std::runtime_error("unknown mode '" + options.mode +
                           "' (timeslice, mps, opencl or rgpu)");
}

}  // namespace rgpu::lab
