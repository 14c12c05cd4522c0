// What the abuse tests (abuse_test.cpp) and the soak (abuse_soak.cpp) share: raw
// connections from a chosen loopback source address, a raw Hello, the daemon's metrics and
// memory, and a relay that can go silent without closing.
#pragma once

#include <CL/cl.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proto/transport.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace rgpu::abuse {

using Clock = std::chrono::steady_clock;

// The first device of the rgpu platform (the ICD through the real loader), or null.
inline cl_device_id RgpuDevice() {
  cl_platform_id platforms[8];
  cl_uint n = 0;
  clGetPlatformIDs(8, platforms, &n);
  for (cl_uint i = 0; i < n; ++i) {
    char name[64] = {0};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof(name), name, nullptr);
    cl_device_id d;
    if (std::string(name) == "rgpu" &&
        clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &d, nullptr) == CL_SUCCESS)
      return d;
  }
  return nullptr;
}

inline std::string Env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

inline double MillisSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Raises the soft descriptor limit to the hard one; returns the limit now in force.
inline size_t RaiseFdLimit() {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  return rl.rlim_cur;
}

// The server's TCP address (RGPU_SERVER is HOST:PORT in these tests).
inline sockaddr_in ServerAddress(const std::string& text = Env("RGPU_SERVER")) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  auto colon = text.rfind(':');
  inet_pton(AF_INET, text.substr(0, colon).c_str(), &sa.sin_addr);
  sa.sin_port = htons(static_cast<uint16_t>(std::atoi(text.c_str() + colon + 1)));
  return sa;
}

// A TCP connection to `to` from the loopback address `from` (127.0.0.0/8 is all loopback on
// Linux, so each test attacker can have an address of its own). -1 on failure.
inline int ConnectFrom(const char* from, const sockaddr_in& to, bool wait = true) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (wait ? 0 : SOCK_NONBLOCK), 0);
  if (fd < 0) return -1;
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, from, &src.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0 ||
      (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) != 0 &&
       errno != EINPROGRESS)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Whether the server has closed this connection (EOF or reset), waiting at most `ms`.
inline bool ClosedByPeer(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, ms) <= 0) return false;
  char c;
  ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

inline std::vector<uint8_t> HelloBody(const std::string& token, uint16_t features = 0) {
  proto::HelloRequest hello;
  hello.features = features;
  hello.token = token;
  hello.client_name = "abuse_test";
  return hello.Encode();
}

struct HelloResult {
  bool replied = false;  // false: the server closed the connection without a Hello reply
  int32_t code = 0;      // the reply's OpenCL code (0 = a session)
  double ms = 0;         // from sending Hello to the answer (or the close)
};

// Sends Hello on `s` and reads the answer.
inline HelloResult Hello(proto::Stream& s, const std::string& token, uint16_t features = 0) {
  HelloResult r;
  auto body = HelloBody(token, features);
  const auto t0 = Clock::now();
  if (!s.SendFrame(proto::FrameHeader{static_cast<uint32_t>(body.size()),
                                      static_cast<uint16_t>(proto::Op::Hello), 0, 1},
                   body.data(), body.size())
           .ok()) {
    r.ms = MillisSince(t0);
    return r;
  }
  proto::FrameHeader h;
  std::vector<uint8_t> rb;
  r.replied = s.RecvFrame(&h, &rb, 64u << 20).ok() && (h.flags & proto::kFlagReply);
  r.ms = MillisSince(t0);
  if (r.replied) {
    proto::Reader rd(rb.data(), rb.size());
    proto::ReplyStatus head;
    proto::ReplyStatus::Decode(rd, &head);
    r.code = head.code;
  }
  return r;
}

// A Stats round trip on an authenticated raw session; false if it failed.
inline bool Stats(proto::Stream& s) {
  if (!s.SendFrame(proto::FrameHeader{0, static_cast<uint16_t>(proto::Op::Stats), 0, 2}, nullptr, 0).ok())
    return false;
  for (;;) {
    proto::FrameHeader h;
    std::vector<uint8_t> rb;
    if (!s.RecvFrame(&h, &rb, 64u << 20).ok()) return false;
    if ((h.flags & proto::kFlagReply) && h.tag == 2) return true;
  }
}

// What a legitimate tenant feels: connect, Hello and one Stats round trip, from `from`.
// Returns the milliseconds it took, or -1 if it was not served.
inline double LegitRoundTrip(const std::string& token, const char* from = "127.0.0.1") {
  const auto t0 = Clock::now();
  int fd = ConnectFrom(from, ServerAddress());
  if (fd < 0) return -1;
  proto::Stream s(fd);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  HelloResult h = Hello(s, token);
  if (!h.replied || h.code != 0 || !Stats(s)) return -1;
  return MillisSince(t0);
}

// rgpud's resident memory, from /proc.
inline long RssKiB(const std::string& pid = Env("RGPUD_PID")) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

// GET /metrics from rgpud's Prometheus endpoint (METRICS=HOST:PORT).
inline std::string MetricsText() {
  int fd = ConnectFrom("127.0.0.1", ServerAddress(Env("METRICS")));
  if (fd < 0) return "";
  const std::string req = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// The value of the sample `series` (name and labels exactly as printed, e.g.
// `rgpu_sessions{tenant="dave"}`), or -1 if absent.
inline double Metric(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(series + " ", 0) == 0) return std::strtod(line.c_str() + series.size() + 1, nullptr);
  return -1;
}
inline double Metric(const std::string& series) { return Metric(MetricsText(), series); }

// Forwards one connection at a time between its own listening port and `target`, until
// Freeze(): from then on it neither reads nor writes, and closes nothing, like a host
// that lost power or a cable (no FIN, no reset).
class Relay {
 public:
  explicit Relay(const sockaddr_in& target) : target_(target) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
    ::listen(listen_fd_, 8);
    socklen_t len = sizeof(sa);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
    port_ = ntohs(sa.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~Relay() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_) ::close(fd);
    ::close(listen_fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  void Freeze() { frozen_ = true; }

 private:
  void Run() {
    pollfd lp{listen_fd_, POLLIN, 0};
    while (!stop_ && ::poll(&lp, 1, 50) <= 0) {
    }
    if (stop_) return;
    int a = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    int b = ConnectFrom("127.0.0.1", target_);
    fds_ = {a, b};
    std::vector<char> buf(1 << 16);
    while (!stop_) {
      if (frozen_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
      if (::poll(p, 2, 20) <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)) || frozen_) continue;
        ssize_t n = ::recv(p[i].fd, buf.data(), buf.size(), 0);
        if (n <= 0) return;
        for (ssize_t at = 0; at < n;) {
          ssize_t w = ::send(p[1 - i].fd, buf.data() + at, static_cast<size_t>(n - at), MSG_NOSIGNAL);
          if (w <= 0) return;
          at += w;
        }
      }
    }
  }

  sockaddr_in target_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::vector<int> fds_;
  std::atomic<bool> frozen_{false}, stop_{false};
  std::thread thread_;
};

}  // namespace rgpu::abuse
