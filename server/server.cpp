#include "server/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>

#include <spdlog/spdlog.h>

#include "server/session.h"

namespace rgpu::server {

Server::Server(ServerOptions options, std::unique_ptr<Backend> backend)
    : options_(std::move(options)), backend_(std::move(backend)) {}

Server::~Server() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

Status Server::Bind() {
  auto addr = proto::ParseAddress(options_.listen);
  if (!addr.ok()) return addr.status();
  if (!addr->IsLoopbackOrLocal() && !options_.insecure)
    return Status::Error(-30, "refusing to listen on " + addr->ToString() +
                                  " without authentication; use a loopback address, a unix: "
                                  "socket, or --insecure");
  auto fd = proto::Listen(*addr);
  if (!fd.ok()) return fd.status();
  listen_fd_ = *fd;
  if (addr->is_unix) {
    bound_ = addr->ToString();
  } else {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    uint16_t port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                             : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    proto::Address a = *addr;
    a.port = port;
    bound_ = a.ToString();
  }
  return Status::Ok();
}

void Server::Run() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, 200);
    if (rc <= 0) continue;
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::string peer = "unix";
    if (ss.ss_family == AF_INET) {
      char buf[INET_ADDRSTRLEN];
      auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
      inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf));
      peer = std::string(buf) + ":" + std::to_string(ntohs(sin->sin_port));
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, 1 /*TCP_NODELAY*/, &one, sizeof(one));
    }
    int buf = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    uint64_t id = next_session_++;
    std::thread(&Server::SessionThread, this, id, std::make_unique<proto::Stream>(fd), peer)
        .detach();
  }
  // Stop: end every session and wait for their threads.
  std::unique_lock lk(mu_);
  for (auto& [id, s] : sessions_) s->Stop();
  sessions_cv_.wait(lk, [&] { return sessions_.empty(); });
}

void Server::Stop() { stopping_ = true; }

void Server::SessionThread(uint64_t id, std::unique_ptr<proto::Stream> stream, std::string peer) {
  auto session = std::make_unique<Session>(this, id, std::move(stream), peer);
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    sessions_[id] = session.get();
  }
  session->Serve();
  {
    std::lock_guard lk(mu_);
    sessions_.erase(id);
  }
  session.reset();
  sessions_cv_.notify_all();
}

uint64_t Server::ActiveSessions() {
  std::lock_guard lk(mu_);
  return sessions_.size();
}

Status Server::Authenticate(const std::string& token) { return Status::Ok(); }

Result<BkEvent*> Server::LaunchKernel(Session* s, BkQueue* q, BkKernel* k,
                                      std::span<const KernelArgValue> args, const NDRange& range,
                                      WaitList waits) {
  return backend_->Launch(q, k, args, range, waits);
}

}  // namespace rgpu::server
