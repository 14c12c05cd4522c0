#include "bench/net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>

namespace rgpu::bench {

using Clock = std::chrono::steady_clock;

void TuneSocket(int fd, bool tcp) {
  int one = 1, buf = 4 << 20;
  if (tcp) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
}

int ConnectTo(const std::string& address) {
  if (address.rfind("unix:", 0) == 0) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, address.c_str() + 5, sizeof(sa.sun_path) - 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0) {
      close(fd);
      return -1;
    }
    TuneSocket(fd, false);
    return fd;
  }
  auto colon = address.rfind(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0) {
    close(fd);
    return -1;
  }
  TuneSocket(fd, true);
  return fd;
}

bool SendAll(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool RecvAll(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t k = recv(fd, c, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

Acceptor::~Acceptor() { Stop(); }

bool Acceptor::Start(const std::string& listen_at) {
  if (listen_at.rfind("unix:", 0) == 0) {
    unix_ = true;
    std::string path = listen_at.substr(5);
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof(sa.sun_path) - 1);
    unlink(path.c_str());
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0) return false;
    address_ = listen_at;
  } else {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0) return false;
    socklen_t len = sizeof(sa);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
    address_ = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  }
  if (listen(listen_fd_, 64) < 0) return false;
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return true;
}

void Acceptor::AcceptLoop() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // Stop() shut the listening socket down
    }
    if (stopping_) {
      close(fd);
      return;
    }
    TuneSocket(fd, !unix_);
    std::lock_guard lk(mu_);
    fds_.push_back(fd);
    workers_.emplace_back([this, fd] {
      Serve(fd);
      shutdown(fd, SHUT_RDWR);  // the peer sees the end now; the fd is closed in Stop()
    });
  }
}

void Acceptor::Stop() {
  if (stopping_.exchange(true)) return;
  if (listen_fd_ >= 0) shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard lk(mu_);
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
  {
    std::lock_guard lk(mu_);
    for (int fd : fds_) close(fd);
    fds_.clear();
  }
  if (listen_fd_ >= 0) close(listen_fd_);
  if (unix_) unlink(address_.c_str() + 5);
}

std::unique_ptr<RawServer> RawServer::Open(const std::string& listen_at) {
  std::unique_ptr<RawServer> s(new RawServer());
  if (!s->Start(listen_at)) return nullptr;
  return s;
}

void RawServer::Serve(int fd) {
  std::vector<char> buf(1 << 20);
  RawHeader h;
  while (RecvAll(fd, &h, sizeof(h))) {
    switch (h.kind) {
      case kPing:
        if (h.len > buf.size() || h.reply_len > buf.size()) return;
        if (!RecvAll(fd, buf.data(), h.len) || !SendAll(fd, buf.data(), h.reply_len)) return;
        break;
      case kSink: {
        for (uint64_t left = h.len; left > 0;) {
          ssize_t k = recv(fd, buf.data(), std::min<uint64_t>(left, buf.size()), 0);
          if (k <= 0) return;
          left -= static_cast<uint64_t>(k);
        }
        uint64_t ack = h.len;
        if (!SendAll(fd, &ack, sizeof(ack))) return;
        break;
      }
      case kSource:
        for (uint64_t left = h.len; left > 0;) {
          size_t n = std::min<uint64_t>(left, buf.size());
          if (!SendAll(fd, buf.data(), n)) return;
          left -= n;
        }
        break;
      default:
        return;
    }
  }
}

std::unique_ptr<LinkRelay> LinkRelay::Open(const std::string& target, double delay_ms,
                                           double rate_mbit) {
  std::unique_ptr<LinkRelay> r(new LinkRelay());
  r->target_ = target;
  r->delay_ms_ = delay_ms;
  r->rate_mbit_ = rate_mbit;
  if (!r->Start("127.0.0.1:0")) return nullptr;
  return r;
}

namespace {

// One direction of the emulated link: a reader stamps each piece with the time it may leave
// (arrival + serialisation at the link rate + one-way delay); a writer sends it then.
class Pipe {
 public:
  Pipe(int from, int to, double delay_ms, double rate_mbit)
      : from_(from), to_(to), delay_(std::chrono::duration<double, std::milli>(delay_ms)),
        rate_bytes_per_s_(rate_mbit * 1e6 / 8) {}
  void Run() {
    std::thread writer([this] { WriteLoop(); });
    ReadLoop();
    writer.join();
  }

 private:
  struct Piece {
    Clock::time_point due;
    std::vector<char> data;  // empty: end of stream
  };
  void ReadLoop() {
    Clock::time_point wire_free = Clock::now();
    for (;;) {
      std::vector<char> data(256 * 1024);
      ssize_t k = recv(from_, data.data(), data.size(), 0);
      if (k < 0 && errno == EINTR) continue;
      Clock::time_point now = Clock::now();
      if (k <= 0) {
        Push({now, {}});
        return;
      }
      data.resize(static_cast<size_t>(k));
      Clock::time_point sent = now;
      if (rate_bytes_per_s_ > 0) {
        wire_free = std::max(wire_free, now) +
                    std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(k / rate_bytes_per_s_));
        sent = wire_free;
      }
      Push({sent + std::chrono::duration_cast<Clock::duration>(delay_), std::move(data)});
    }
  }
  void Push(Piece p) {
    std::lock_guard lk(mu_);
    q_.push_back(std::move(p));
    cv_.notify_one();
  }
  void WriteLoop() {
    for (;;) {
      Piece p;
      {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return !q_.empty(); });
        p = std::move(q_.front());
        q_.pop_front();
      }
      std::this_thread::sleep_until(p.due);
      if (p.data.empty() || !SendAll(to_, p.data.data(), p.data.size())) {
        shutdown(to_, SHUT_WR);
        if (!p.data.empty()) shutdown(from_, SHUT_RD);
        return;
      }
    }
  }
  int from_, to_;
  std::chrono::duration<double, std::milli> delay_;
  double rate_bytes_per_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Piece> q_;  // GUARDED_BY(mu_)
};

}  // namespace

void LinkRelay::Serve(int client) {
  int server = ConnectTo(target_);
  if (server < 0) return;
  Pipe up(client, server, delay_ms_, rate_mbit_), down(server, client, delay_ms_, rate_mbit_);
  std::thread t([&] { up.Run(); });
  down.Run();
  t.join();
  close(server);
}

}  // namespace rgpu::bench
