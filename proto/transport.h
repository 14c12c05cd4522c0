// Byte streams between client and server: TCP or Unix sockets, framed with proto/wire.h.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proto/ring.h"
#include "proto/status.h"
#include "proto/wire.h"

namespace rgpu::proto {

// "host:port", "[v6]:port", "tls://host:port" or "unix:/path".
struct Address {
  bool is_unix = false;
  bool tls = false;  // "tls://": the client insists on TLS (proto/tls.h)
  std::string host;  // or the socket path
  uint16_t port = 0;
  std::string ToString() const;
  bool IsLoopbackOrLocal() const;
};
Result<Address> ParseAddress(const std::string& text, uint16_t default_port = 7420);

// A connected stream. Send and Recv may be used by different threads at once; two threads
// must not Send (or Recv) concurrently: callers serialise with their own lock.
// This class is the plain socket; proto/tls.h derives the encrypted one.
class Stream {
 public:
  explicit Stream(int fd) : fd_(fd) {}
  virtual ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  virtual Status SendAll(const struct iovec* iov, int iovcnt);
  virtual Status RecvAll(void* buf, size_t n);
  // Receives at least one byte and at most `max`, waiting for the first; returns how many.
  virtual Result<size_t> RecvSome(void* buf, size_t max);
  // Sends what the socket takes at once, never blocking; returns the bytes sent (0 if none).
  // A stream that cannot send without blocking on its own framing (TLS) returns 0.
  virtual size_t TrySend(const struct iovec* iov, int iovcnt);
  // A Recv that waits longer than `timeout` fails (0: wait for ever).
  virtual void SetRecvTimeout(std::chrono::milliseconds timeout);
  // Sends `iov` with `fd` attached (SCM_RIGHTS): the peer receives a copy of the descriptor
  // along with the first of these bytes. Unix sockets only.
  Status SendWithFd(const struct iovec* iov, int iovcnt, int fd);
  // A descriptor that arrived attached to received bytes (SCM_RIGHTS), or -1; the caller
  // owns it. At most one is kept: more that arrive before it is taken are closed, so a
  // client cannot make the server hold descriptors. Only the receiving thread may call this.
  int TakeReceivedFd();
  // Sends one whole frame: header plus body (body may be split in two pieces).
  Status SendFrame(const FrameHeader& h, const void* a, size_t alen, const void* b = nullptr,
                   size_t blen = 0);
  // Reads one frame. Rejects bodies over `max_body` before allocating.
  Status RecvFrame(FrameHeader* h, std::vector<uint8_t>* body, uint32_t max_body = kMaxBody);
  // Wakes a thread blocked in Recv and makes later I/O fail.
  void Shutdown();
  // Makes a blocked or later Recv see the end of the stream; sending still works.
  void ShutdownRead();
  int fd() const { return fd_; }
  // Whether polling the socket says when Recv would not wait. Not for TLS: decrypted bytes
  // may sit in the library's buffer while the socket has none.
  virtual bool PollShowsData() const { return true; }
  // Whether a Recv would find bytes (or the end of the stream) without waiting. With control
  // rings, `look_at_socket` also takes the wake bytes off the socket and notices a hang-up
  // (a system call); without, the ring alone is looked at (a load). Only the receiving thread.
  bool Readable(bool look_at_socket = true);
  // Sleeps until Readable() may be true, or `limit` passed (negative: no limit; with rings at
  // most 100 ms a time); with rings counted as a sleeper meanwhile, so that the peer sends a
  // wake byte. Any thread (it takes nothing off the stream); false on an error of poll().
  bool WaitReadable(std::chrono::microseconds limit = std::chrono::microseconds(-1));
  // Without rings: sleeps until bytes may be there, or `limit` passed. False on an error.
  bool WaitReadableFor(std::chrono::microseconds limit);

  // From now on frames go through `ring` in both directions (proto/ring.h); the socket only
  // wakes a sleeping reader and says when the peer hung up. Once, before the stream is used
  // by more than the calling thread, or from the receiving thread while nothing is sent.
  void UseRing(std::unique_ptr<Ring> ring);
  bool HasRing() const { return ring_.load(std::memory_order_acquire) != nullptr; }
  // With control rings: the peer's reader is not asleep (it polls, or is busy and looks at
  // the ring before it sleeps) and has taken every byte sent so far, so bytes sent now reach
  // it at once, without a wake byte. False without rings. Any thread; a hint only (the peer
  // may fall asleep just after).
  bool PeerCaughtUp() const;
  // A thread polls for bytes (and takes them, or hands them on) until Spinning(false): with
  // rings the peer then wakes no sleeper (Ring::Spinning). A no-op without rings.
  void Spinning(bool spinning);

  // What crossed the socket so far: bytes handed to the reader (decrypted, for TLS) and
  // bytes the sender handed to the kernel. Any thread may read them (proto/liveness.h).
  uint64_t BytesReceived() const { return received_.load(std::memory_order_relaxed); }
  uint64_t BytesSent() const { return sent_.load(std::memory_order_relaxed); }
  // Bytes that arrived and no thread has read yet, and bytes in the kernel's send queue
  // that the peer has not yet acknowledged (TCP) or read (Unix): from the socket itself.
  size_t UnreadBytes() const;
  size_t UnsentBytes() const;

 protected:
  void CountReceived(size_t n) { received_.fetch_add(n, std::memory_order_relaxed); }
  void CountSent(size_t n) { sent_.fetch_add(n, std::memory_order_relaxed); }
  int fd_;

 private:
  // recv() that keeps a descriptor passed with the bytes (see TakeReceivedFd).
  ssize_t RecvKeepingFd(void* buf, size_t n);
  // The ring forms of sending and receiving.
  Status RingSendAll(Ring* ring, const struct iovec* iov, int iovcnt);
  size_t RingTrySend(Ring* ring, const struct iovec* iov, int iovcnt);
  Result<size_t> RingRecvSome(Ring* ring, void* buf, size_t max);
  // Sends a wake byte if the peer's reader sleeps.
  void WakePeer(Ring* ring);
  // Takes wake bytes off the socket; notes a hang-up. The receiving thread only.
  void DrainWakes();
  std::atomic<uint64_t> received_{0}, sent_{0};
  int received_fd_ = -1;  // the receiving thread's only
  std::unique_ptr<Ring> ring_owner_;
  std::atomic<Ring*> ring_{nullptr};
  std::atomic<bool> shut_{false}, read_shut_{false}, peer_closed_{false};
  int recv_timeout_ms_ = 0;  // SetRecvTimeout's, for waits on the ring
};

// TCP keepalive tuned so that the kernel gives up on a peer that stopped answering
// within about `bound` of its last sign of life (idle bound/2, then 3 probes bound/6
// apart). A no-op on Unix sockets.
void SetKeepAlive(int fd, std::chrono::milliseconds bound);

// Reads a stream through a buffer, so that a burst of small frames costs one system call
// rather than two per frame (header, then body). Reads of at least half the buffer go
// straight to their destination (bulk data is not copied twice). One reader per stream,
// and nothing else may read the stream while it holds buffered bytes.
class BufferedReader;
// Reads the fields of a message that bulk data follows (M::kBytes of them: PutData, ReadData),
// leaving the data in `in` to be read where it belongs.
template <typename M>
Status ReadFields(BufferedReader& in, M* out);

class BufferedReader {
 public:
  explicit BufferedReader(Stream* s, size_t capacity = size_t{64} * 1024) : s_(s), buf_(capacity) {}
  Status Read(void* dst, size_t n);
  // Busy-polls the socket, for at most `limit` and while `keep_going()` says so, until bytes
  // are buffered or arrive; returns whether they did. A thread asleep in recv() is woken by
  // the kernel when bytes arrive, which on an idle (virtual) CPU costs tens to hundreds of
  // microseconds at the tail; a thread that polls sees them at once. Returns false at once
  // for streams where polling says nothing (TLS).
  bool Spin(std::chrono::microseconds limit, const std::function<bool()>& keep_going = {});
  // Whether a Read would find bytes without waiting for them: buffered here, or (where
  // polling shows it) waiting in the socket, or the stream ended or failed. With control
  // rings and !look_at_socket, only the ring is looked at (see Stream::Readable).
  bool Ready(bool look_at_socket = true) const;
  // Whether bytes are buffered here (read from the socket, not yet handed out).
  bool Buffered() const { return end_ > begin_; }

 private:
  Stream* s_;
  std::vector<uint8_t> buf_;
  size_t begin_ = 0, end_ = 0;  // buffered bytes not yet read: buf_[begin_, end_)
};

Result<std::unique_ptr<Stream>> Connect(const Address& a, std::chrono::milliseconds timeout);
Result<int> Listen(const Address& a);

template <typename M>
Status ReadFields(BufferedReader& in, M* out) {
  uint8_t head[M::kBytes];
  if (Status s = in.Read(head, sizeof head); !s.ok()) return s;
  Reader r(head, sizeof head);
  return M::Decode(r, out) ? Status::Ok() : Status::Protocol("malformed frame fields");
}

}  // namespace rgpu::proto
