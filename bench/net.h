// The network pieces the overhead benchmark owns: the raw floor (a TCP / Unix echo and stream
// server written only for the benchmark) and a link emulator (a relay that holds traffic back
// by a one-way delay and, optionally, a bit rate).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rgpu::bench {

// The floor's wire: a 16-byte request header {u32 kind, u32 reply_len, u64 len}.
//   kPing:   `len` request bytes follow; the server answers `reply_len` bytes.
//   kSink:   `len` bytes follow; the server answers 8 bytes once it has them all.
//   kSource: the server sends `len` bytes.
enum RawKind : uint32_t { kPing = 1, kSink = 2, kSource = 3 };
struct RawHeader {
  uint32_t kind;
  uint32_t reply_len;
  uint64_t len;
};
static_assert(sizeof(RawHeader) == 16);

// Sockets tuned as rgpu tunes its own (TCP_NODELAY, 4 MiB buffers), so that the floor and
// rgpu differ only in what runs above the socket.
void TuneSocket(int fd, bool tcp);
// "unix:/path" or "host:port"; returns a connected fd or -1.
int ConnectTo(const std::string& address);
bool SendAll(int fd, const void* p, size_t n);
bool RecvAll(int fd, void* p, size_t n);

// Accepts connections on one address and serves each on its own thread.
class Acceptor {
 public:
  virtual ~Acceptor();
  const std::string& address() const { return address_; }
  void Stop();

 protected:
  // `listen` is "unix:/path" or "127.0.0.1:0" (a free port is chosen).
  bool Start(const std::string& listen);
  virtual void Serve(int fd) = 0;

 private:
  void AcceptLoop();
  int listen_fd_ = -1;
  bool unix_ = false;
  std::string address_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> workers_;  // GUARDED_BY(mu_)
  std::vector<int> fds_;              // GUARDED_BY(mu_)
};

class RawServer : public Acceptor {
 public:
  static std::unique_ptr<RawServer> Open(const std::string& listen);
  ~RawServer() override { Stop(); }

 private:
  void Serve(int fd) override;
};

// Forwards every connection to `target`, releasing each piece of data `delay_ms` after it
// arrived and no faster than `rate_mbit` (0: unlimited), in both directions.
class LinkRelay : public Acceptor {
 public:
  static std::unique_ptr<LinkRelay> Open(const std::string& target, double delay_ms,
                                         double rate_mbit);
  ~LinkRelay() override { Stop(); }

 private:
  void Serve(int fd) override;
  std::string target_;
  double delay_ms_ = 0, rate_mbit_ = 0;
};

}  // namespace rgpu::bench
