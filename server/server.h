// rgpud's top level: the listener, the registry of live sessions, and the services that
// sessions share (the backend, the kernel-launch path, counters).
#pragma once

#include <atomic>
#include <condition_variable>
#include <span>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "proto/transport.h"
#include "server/backend/backend.h"

namespace rgpu::server {

class Session;

struct ServerOptions {
  std::string listen = "127.0.0.1:7420";
  std::string platform;  // substring of the OpenCL platform name; empty = best found
  std::string name = "rgpud";
  bool insecure = false;
  uint32_t max_frame = proto::kMaxBody;
  size_t max_objects_per_session = 1 << 20;
  size_t max_staging_bytes = size_t{2} << 30;  // bytes one session may have in flight
};

class Server {
 public:
  Server(ServerOptions options, std::unique_ptr<Backend> backend);
  ~Server();

  // Binds the listening socket. Returns the bound address (port 0 picks a free port).
  Status Bind();
  // Accepts and serves clients until Stop(); returns once every session has ended.
  void Run();
  // Safe from a signal-watching thread.
  void Stop();

  const ServerOptions& options() const { return options_; }
  Backend& backend() { return *backend_; }
  const std::string& name() const { return options_.name; }
  std::string bound_address() const { return bound_; }

  Status Authenticate(const std::string& token);
  // Every kernel launch of every session comes through here (the scheduler's entry point).
  Result<BkEvent*> LaunchKernel(Session* s, BkQueue* q, BkKernel* k,
                                std::span<const KernelArgValue> args, const NDRange& range,
                                WaitList waits);

  void CountCommand() { commands_.fetch_add(1, std::memory_order_relaxed); }
  void CountObjects(int64_t d) { objects_.fetch_add(d, std::memory_order_relaxed); }
  uint64_t TotalObjects() const { return static_cast<uint64_t>(objects_.load()); }
  uint64_t ActiveSessions();

 private:
  void SessionThread(uint64_t id, std::unique_ptr<proto::Stream> stream, std::string peer);

  ServerOptions options_;
  std::unique_ptr<Backend> backend_;
  int listen_fd_ = -1;
  std::string bound_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> commands_{0};
  std::atomic<int64_t> objects_{0};
  std::atomic<uint64_t> next_session_{1};

  std::mutex mu_;
  std::condition_variable sessions_cv_;
  std::unordered_map<uint64_t, Session*> sessions_;  // GUARDED_BY(mu_)
};

}  // namespace rgpu::server
