#include "proto/transport.h"

#include "proto/cpu_relax.h"

#include <algorithm>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rgpu::proto {

std::string Address::ToString() const {
  if (is_unix) return "unix:" + host;
  std::string scheme = tls ? "tls://" : "";
  if (host.find(':') != std::string::npos) return scheme + "[" + host + "]:" + std::to_string(port);
  return scheme + host + ":" + std::to_string(port);
}

bool Address::IsLoopbackOrLocal() const {
  if (is_unix) return true;
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

Result<Address> ParseAddress(const std::string& text_in, uint16_t default_port) {
  Address a;
  std::string text = text_in;
  if (text.rfind("tls://", 0) == 0) {
    a.tls = true;
    text = text.substr(6);
    if (text.rfind("unix:", 0) == 0)
      return Status::Error(-30, "'" + text_in + "': TLS is for TCP addresses only");
  }
  if (text.rfind("unix:", 0) == 0) {
    a.is_unix = true;
    a.host = text.substr(5);
    if (a.host.empty() || a.host.size() >= sizeof(sockaddr_un::sun_path))
      return Status::Error(-30, "bad unix socket path in '" + text + "'");
    return a;
  }
  std::string host = text, port;
  if (!text.empty() && text[0] == '[') {
    auto close = text.find(']');
    if (close == std::string::npos) return Status::Error(-30, "bad address '" + text + "'");
    host = text.substr(1, close - 1);
    if (close + 1 < text.size() && text[close + 1] == ':') port = text.substr(close + 2);
  } else if (auto colon = text.rfind(':'); colon != std::string::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) return Status::Error(-30, "bad address '" + text + "': no host");
  a.host = host;
  a.port = default_port;
  if (!port.empty()) {
    char* end = nullptr;
    long p = std::strtol(port.c_str(), &end, 10);
    if (*end != '\0' || p < 0 || p > 65535)
      return Status::Error(-30, "bad port in '" + text + "'");
    a.port = static_cast<uint16_t>(p);
  }
  return a;
}

Stream::~Stream() {
  if (received_fd_ >= 0) ::close(received_fd_);
  if (fd_ >= 0) ::close(fd_);
}

ssize_t Stream::RecvKeepingFd(void* buf, size_t n) {
  iovec iov{buf, n};
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t got = ::recvmsg(fd_, &msg, MSG_CMSG_CLOEXEC);
  if (got < 0 || msg.msg_controllen == 0) return got;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (received_fd_ < 0) received_fd_ = fd;
      else ::close(fd);
    }
  }
  // Descriptors beyond `control`'s room were closed by the kernel (MSG_CTRUNC): nothing leaks.
  return got;
}

int Stream::TakeReceivedFd() {
  const int fd = received_fd_;
  received_fd_ = -1;
  return fd;
}

Status Stream::SendWithFd(const struct iovec* iov, int iovcnt, int fd) {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = iovcnt;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  ssize_t n;
  do n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0) return Status::Error(-5, std::string("sendmsg with a descriptor: ") + std::strerror(errno));
  CountSent(static_cast<size_t>(n));
  if (static_cast<size_t>(n) == total) return Status::Ok();
  // The descriptor went with the first byte; the rest is ordinary data.
  std::vector<uint8_t> rest;
  for (int i = 0; i < iovcnt; ++i)
    rest.insert(rest.end(), static_cast<const uint8_t*>(iov[i].iov_base),
                static_cast<const uint8_t*>(iov[i].iov_base) + iov[i].iov_len);
  iovec tail{rest.data() + n, total - static_cast<size_t>(n)};
  return SendAll(&tail, 1);
}

void Stream::Shutdown() {
  shut_ = true;
  ::shutdown(fd_, SHUT_RDWR);
  if (Ring* ring = ring_.load(std::memory_order_acquire)) ring->Interrupt();
}

size_t Stream::UnreadBytes() const {
  if (const Ring* ring = ring_.load(std::memory_order_acquire)) return ring->Readable();
  int n = 0;
  return ::ioctl(fd_, SIOCINQ, &n) == 0 && n > 0 ? static_cast<size_t>(n) : 0;
}

size_t Stream::UnsentBytes() const {
  if (const Ring* ring = ring_.load(std::memory_order_acquire)) return ring->Unsent();
  int n = 0;
  return ::ioctl(fd_, SIOCOUTQ, &n) == 0 && n > 0 ? static_cast<size_t>(n) : 0;
}

void Stream::Spinning(bool spinning) {
  if (Ring* ring = ring_.load(std::memory_order_acquire)) ring->Spinning(spinning);
}

void Stream::UseRing(std::unique_ptr<Ring> ring) {
  ring_owner_ = std::move(ring);
  ring_.store(ring_owner_.get(), std::memory_order_release);
}

// ---------------------------------------------------------------- control rings

bool Stream::PeerCaughtUp() const {
  const Ring* ring = ring_.load(std::memory_order_acquire);
  return ring && ring->Unsent() == 0 && !ring->PeerAsleep();
}

void Stream::WakePeer(Ring* ring) {
  if (!ring->PeerAsleep()) return;
  // One byte is enough: the sleeper looks at the ring after every wake-up. A full socket
  // (EAGAIN) holds wake bytes already.
  const uint8_t wake = 0;
  ssize_t n;
  do n = ::send(fd_, &wake, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
}

void Stream::DrainWakes() {
  uint8_t scratch[256];
  for (;;) {
    // A descriptor a peer attaches here is closed by the kernel (no control buffer).
    const ssize_t n = ::recv(fd_, scratch, sizeof scratch, MSG_DONTWAIT);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) peer_closed_ = true;
    return;
  }
}

Status Stream::RingSendAll(Ring* ring, const struct iovec* iov, int iovcnt) {
  for (int i = 0; i < iovcnt; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    while (left > 0) {
      if (shut_) return Status::Error(-5, "send: the connection was shut down");
      auto put = ring->Put(p, left);
      if (!put.ok()) return put.status();
      if (*put > 0) {
        CountSent(*put);
        p += *put;
        left -= *put;
        continue;
      }
      // Full: the peer must be woken to take what is there, then we wait for room.
      WakePeer(ring);
      pollfd pf{fd_, 0, 0};
      if (::poll(&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLERR)))
        return Status::Error(-5, "send: the peer hung up");
      ring->WaitForRoom(10);
    }
  }
  WakePeer(ring);
  return Status::Ok();
}

size_t Stream::RingTrySend(Ring* ring, const struct iovec* iov, int iovcnt) {
  size_t total = 0;
  for (int i = 0; i < iovcnt && !shut_; ++i) {
    auto put = ring->Put(static_cast<const uint8_t*>(iov[i].iov_base), iov[i].iov_len);
    if (!put.ok() || *put == 0) break;
    total += *put;
    if (*put < iov[i].iov_len) break;
  }
  CountSent(total);
  if (total > 0) WakePeer(ring);
  return total;
}

Result<size_t> Stream::RingRecvSome(Ring* ring, void* buf, size_t max) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start{};  // taken when we first have to wait
  for (;;) {
    if (read_shut_) return Status::Error(-5, "connection closed");
    auto got = ring->Take(static_cast<uint8_t*>(buf), max);
    if (!got.ok() || *got > 0) {
      if (got.ok()) CountReceived(*got);
      return got;
    }
    if (peer_closed_) return Status::Error(-5, "connection closed");
    if (start == Clock::time_point{}) start = Clock::now();
    if (recv_timeout_ms_ > 0 && Clock::now() - start > std::chrono::milliseconds(recv_timeout_ms_))
      return Status::Error(-5, "recv: timed out");
    // Counted as asleep before the last look: a producer that publishes after it sees us.
    ring->Sleeping(true);
    if (ring->Readable() == 0 && !read_shut_) {
      pollfd pf{fd_, POLLIN, 0};
      // But while a thread of ours counts as spinning (this one, say, reading a frame whose
      // header came before its body), the producer sends no wake byte: look again soon. A
      // sleep of 100 ms here held more than 1% of an H200's watcher-answered 4-byte reads
      // over a Unix socket (bench/results/2026-12-04-session49/call1/, --inline-waits=0).
      if (ring->LocalSpinners() > 0) {
        const timespec ts{0, 20'000};
        ::ppoll(&pf, 1, &ts, nullptr);
      } else {
        ::poll(&pf, 1, recv_timeout_ms_ > 0 ? std::min(recv_timeout_ms_, 100) : 100);
      }
    }
    ring->Sleeping(false);
    DrainWakes();
  }
}

bool Stream::Readable(bool look_at_socket) {
  Ring* ring = ring_.load(std::memory_order_acquire);
  if (!ring) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;  // bytes, or an error/hang-up the read will report
  }
  if (ring->Readable() > 0 || read_shut_ || peer_closed_) return true;
  if (!look_at_socket) return false;
  DrainWakes();
  return ring->Readable() > 0 || peer_closed_;
}

bool Stream::WaitReadable(std::chrono::microseconds limit) {
  Ring* ring = ring_.load(std::memory_order_acquire);
  // With rings the socket only wakes a sleeper: one that waits for ever looks again every
  // 100 ms, a safety net.
  if (limit.count() < 0 && ring) limit = std::chrono::milliseconds(100);
  const timespec ts{static_cast<time_t>(limit.count() / 1000000),
                    static_cast<long>(limit.count() % 1000000 * 1000)};
  pollfd p{fd_, POLLIN, 0};
  auto sleep = [&] {
    return ::ppoll(&p, 1, limit.count() < 0 ? nullptr : &ts, nullptr) >= 0 || errno == EINTR;
  };
  if (!ring) return sleep();
  ring->Sleeping(true);
  bool ok = true;
  if (ring->Readable() == 0 && !read_shut_ && !peer_closed_) ok = sleep();
  ring->Sleeping(false);
  return ok;
}

bool Stream::WaitReadableFor(std::chrono::microseconds limit) {
  pollfd p{fd_, POLLIN, 0};
  const timespec ts{static_cast<time_t>(limit.count() / 1000000),
                    static_cast<long>(limit.count() % 1000000 * 1000)};
  return ::ppoll(&p, 1, &ts, nullptr) >= 0 || errno == EINTR;
}

void SetKeepAlive(int fd, std::chrono::milliseconds bound) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 || ss.ss_family == AF_UNIX) return;
  const int seconds = static_cast<int>(std::max<int64_t>(3, bound.count() / 1000));
  int one = 1, idle = std::max(1, seconds / 2), interval = std::max(1, seconds / 6), count = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

void Stream::SetRecvTimeout(std::chrono::milliseconds timeout) {
  recv_timeout_ms_ = static_cast<int>(timeout.count());
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}
void Stream::ShutdownRead() {
  read_shut_ = true;
  ::shutdown(fd_, SHUT_RD);
}

Status Stream::SendAll(const struct iovec* iov_in, int iovcnt) {
  if (Ring* ring = ring_.load(std::memory_order_acquire)) return RingSendAll(ring, iov_in, iovcnt);
  struct iovec iov[4];
  if (iovcnt > 4) return Status::Error(-5, "too many iovecs");
  std::memcpy(iov, iov_in, sizeof(iovec) * iovcnt);
  int first = 0;
  while (first < iovcnt) {
    struct msghdr msg {};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = iovcnt - first;
    ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Error(-5, std::string("send: ") + std::strerror(errno));
    }
    CountSent(static_cast<size_t>(n));
    size_t left = static_cast<size_t>(n);
    while (first < iovcnt && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      ++first;
    }
    if (first < iovcnt) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return Status::Ok();
}

size_t Stream::TrySend(const struct iovec* iov, int iovcnt) {
  if (Ring* ring = ring_.load(std::memory_order_acquire)) return RingTrySend(ring, iov, iovcnt);
  struct msghdr msg {};
  msg.msg_iov = const_cast<struct iovec*>(iov);
  msg.msg_iovlen = iovcnt;
  ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n <= 0) return 0;
  CountSent(static_cast<size_t>(n));
  return static_cast<size_t>(n);
}

Status Stream::RecvAll(void* buf, size_t n) {
  auto* p = static_cast<uint8_t*>(buf);
  if (Ring* ring = ring_.load(std::memory_order_acquire)) {
    while (n > 0) {
      auto got = RingRecvSome(ring, p, n);
      if (!got.ok()) return got.status();
      p += *got;
      n -= *got;
    }
    return Status::Ok();
  }
  while (n > 0) {
    ssize_t got = RecvKeepingFd(p, n);
    if (got == 0) return Status::Error(-5, "connection closed");
    if (got < 0) {
      if (errno == EINTR) continue;
      return Status::Error(-5, std::string("recv: ") + std::strerror(errno));
    }
    CountReceived(static_cast<size_t>(got));
    p += got;
    n -= static_cast<size_t>(got);
  }
  return Status::Ok();
}

Result<size_t> Stream::RecvSome(void* buf, size_t max) {
  if (Ring* ring = ring_.load(std::memory_order_acquire)) return RingRecvSome(ring, buf, max);
  for (;;) {
    ssize_t got = RecvKeepingFd(buf, max);
    if (got > 0) {
      CountReceived(static_cast<size_t>(got));
      return static_cast<size_t>(got);
    }
    if (got == 0) return Status::Error(-5, "connection closed");
    if (errno != EINTR) return Status::Error(-5, std::string("recv: ") + std::strerror(errno));
  }
}

Status BufferedReader::Read(void* dst, size_t n) {
  auto* p = static_cast<uint8_t*>(dst);
  const size_t have = std::min(n, end_ - begin_);
  if (have) {
    std::memcpy(p, buf_.data() + begin_, have);
    begin_ += have;
    p += have;
    n -= have;
  }
  if (n == 0) return Status::Ok();
  if (n >= buf_.size() / 2) return s_->RecvAll(p, n);
  while (n > 0) {
    auto got = s_->RecvSome(buf_.data(), buf_.size());
    if (!got.ok()) return got.status();
    const size_t take = std::min(n, *got);
    std::memcpy(p, buf_.data(), take);
    p += take;
    n -= take;
    begin_ = take;
    end_ = *got;
  }
  return Status::Ok();
}

bool BufferedReader::Ready(bool look_at_socket) const {
  if (end_ > begin_) return true;
  if (!s_->PollShowsData()) return false;
  return s_->Readable(look_at_socket);  // bytes, or an error/hang-up the read will report
}

bool BufferedReader::Spin(std::chrono::microseconds limit, const std::function<bool()>& keep_going) {
  if (end_ > begin_) return true;
  if (limit.count() <= 0 || !s_->PollShowsData()) return false;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + limit;
  // With control rings a look is a load, and the socket (wake bytes, a hang-up) is asked
  // every 16th time; without, every look is a poll of the socket.
  const bool ring = s_->HasRing();
  for (unsigned i = 0;; ++i) {
    if (s_->Readable(!ring || (i & 15) == 15)) return true;  // bytes, or an error/hang-up
    if ((i & 15) == 15 && (Clock::now() > deadline || (keep_going && !keep_going()))) return false;
    CpuRelax();
  }
}

Status Stream::SendFrame(const FrameHeader& h, const void* a, size_t alen, const void* b,
                         size_t blen) {
  uint8_t hdr[kHeaderSize];
  EncodeHeader(h, hdr);
  struct iovec iov[3] = {{hdr, kHeaderSize}, {const_cast<void*>(a), alen}, {const_cast<void*>(b), blen}};
  return SendAll(iov, blen ? 3 : (alen ? 2 : 1));
}

Status Stream::RecvFrame(FrameHeader* h, std::vector<uint8_t>* body, uint32_t max_body) {
  uint8_t hdr[kHeaderSize];
  if (Status s = RecvAll(hdr, kHeaderSize); !s.ok()) return s;
  *h = DecodeHeader(hdr);
  if (h->body_len > max_body)
    return Status::Protocol("frame body of " + std::to_string(h->body_len) +
                            " bytes exceeds the limit of " + std::to_string(max_body));
  body->resize(h->body_len);
  if (h->body_len == 0) return Status::Ok();
  return RecvAll(body->data(), h->body_len);
}

namespace {

Status ConnectWithTimeout(int fd, const sockaddr* sa, socklen_t len,
                          std::chrono::milliseconds timeout) {
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = ::connect(fd, sa, len);
  if (rc < 0 && errno != EINPROGRESS)
    return Status::Error(-5, std::string("connect: ") + std::strerror(errno));
  if (rc < 0) {
    pollfd p{fd, POLLOUT, 0};
    rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (rc == 0) return Status::Error(-5, "connect: timed out");
    int err = 0;
    socklen_t el = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
    if (err != 0) return Status::Error(-5, std::string("connect: ") + std::strerror(err));
  }
  fcntl(fd, F_SETFL, flags);
  return Status::Ok();
}

void TuneTcp(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int buf = 4 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
}

}  // namespace

Result<std::unique_ptr<Stream>> Connect(const Address& a, std::chrono::milliseconds timeout) {
  if (a.is_unix) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Status::Error(-5, "socket failed");
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, a.host.c_str(), sizeof(sa.sun_path) - 1);
    Status s = ConnectWithTimeout(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa), timeout);
    if (!s.ok()) {
      ::close(fd);
      return s;
    }
    int buf = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
    return std::make_unique<Stream>(fd);
  }
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  std::string port = std::to_string(a.port);
  if (int rc = getaddrinfo(a.host.c_str(), port.c_str(), &hints, &res); rc != 0)
    return Status::Error(-5, "resolve " + a.host + ": " + gai_strerror(rc));
  Status last = Status::Error(-5, "no address for " + a.host);
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    last = ConnectWithTimeout(fd, ai->ai_addr, ai->ai_addrlen, timeout);
    if (last.ok()) {
      freeaddrinfo(res);
      TuneTcp(fd);
      return std::make_unique<Stream>(fd);
    }
    ::close(fd);
  }
  freeaddrinfo(res);
  return last;
}

Result<int> Listen(const Address& a) {
  int fd;
  if (a.is_unix) {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, a.host.c_str(), sizeof(sa.sun_path) - 1);
    ::unlink(a.host.c_str());
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0) {
      ::close(fd);
      return Status::Error(-5, "bind " + a.ToString() + ": " + std::strerror(errno));
    }
  } else {
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    std::string port = std::to_string(a.port);
    if (int rc = getaddrinfo(a.host.c_str(), port.c_str(), &hints, &res); rc != 0)
      return Status::Error(-5, "resolve " + a.host + ": " + gai_strerror(rc));
    fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, res->ai_addr, res->ai_addrlen) < 0) {
      std::string err = std::strerror(errno);
      freeaddrinfo(res);
      ::close(fd);
      return Status::Error(-5, "bind " + a.ToString() + ": " + err);
    }
    freeaddrinfo(res);
  }
  if (::listen(fd, 128) < 0) {
    ::close(fd);
    return Status::Error(-5, std::string("listen: ") + std::strerror(errno));
  }
  return fd;
}

}  // namespace rgpu::proto
