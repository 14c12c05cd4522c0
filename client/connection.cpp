#include "client/connection.h"

#include <CL/cl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "proto/messages.h"
#include "proto/liveness.h"
#include "proto/stamps.h"
#include "proto/thread_name.h"
#include "proto/tls.h"

namespace rgpu::client {

using proto::FrameHeader;
using proto::Op;
using proto::Reader;

namespace {
bool ManyCpus() { return std::thread::hardware_concurrency() >= 8; }

// Beyond this much buffered, an asynchronous request writes out itself instead of waiting
// for the flusher, which bounds the client's memory when it enqueues faster than we send.
constexpr size_t kFlushThreshold = size_t{256} * 1024;

// Asynchronous requests come in bursts: the first one after a write arms the flush timer
// for this long, so that the server reads tens of them per system call rather than a few
// (on TCP each write is a segment). Synchronous calls and clFlush write out at once.
constexpr std::chrono::microseconds kGather{20};

// Over a socket (no control rings to tell how far rgpud has read), on a host of 8 CPUs or
// more, an asynchronous request that comes this long after the last write, or after a
// synchronous call was answered (rgpud has read everything before it), goes out at once with
// whatever was gathered, from the application's thread: the first launch of a burst reaches
// rgpud without waiting for the timer and the flusher's wake-up (64 us at the median on the
// H200, while rgpud sat idle: bench/results/2026-11-29-session28), and the rest of a long
// burst follows in writes of a few microseconds' worth of requests each, while rgpud works
// on the first. On fewer CPUs rgpud's reader sleeps between frames and each small write woke
// it: bursts of 100 on 2 CPUs took three times as long, so there the flusher gathers.
// RGPU_WRITE_THROUGH=0 or 1 overrides the choice by CPUs.
constexpr std::chrono::microseconds kWriteEvery{10};
bool WriteThrough() {
  static const bool on = [] {
    const char* v = std::getenv("RGPU_WRITE_THROUGH");
    return v && *v ? std::strcmp(v, "0") != 0 : ManyCpus();
  }();
  return on;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Reply ParseReply(std::vector<uint8_t> body) {
  Reply rep;
  Reader r(body.data(), body.size());
  proto::ReplyStatus head;
  if (!proto::ReplyStatus::Decode(r, &head)) {
    rep.status = Status::Error(CL_OUT_OF_RESOURCES, "malformed reply from server");
    return rep;
  }
  rep.status = head.ToStatus();
  rep.at = body.size() - r.remaining();
  rep.body = std::move(body);
  return rep;
}
}  // namespace

Result<std::shared_ptr<Connection>> Connection::Open(const std::string& address,
                                                     const std::string& token,
                                                     std::chrono::milliseconds timeout) {
  auto addr = proto::ParseAddress(address);
  if (!addr.ok()) return addr.status();
  // TLS when the address is tls://... or RGPU_CA is set (proto/tls.h).
  auto stream = proto::ConnectClient(*addr, timeout);
  if (!stream.ok()) return stream.status();
  std::shared_ptr<Connection> c(new Connection());
  c->address_ = addr->ToString();
  c->stream_ = std::move(stream.value());
  // Bound the handshake too: a server that accepts but never answers must not hang us.
  c->stream_->SetRecvTimeout(timeout);
  // Shared memory only where the server is on this host (a Unix socket), unless RGPU_SHM=0.
  const char* shm = std::getenv("RGPU_SHM");
  const bool want_shared = addr->is_unix && !(shm && std::string(shm) == "0");
  Status s = c->Handshake(token, want_shared);
  if (!s.ok()) return s;
  if (c->shared_cap_ > 0) c->AttachShared(c->shared_cap_);
  // Frames through shared memory too, where the region was taken (RGPU_RING=0: the socket).
  const char* ring = std::getenv("RGPU_RING");
  if (c->shared_ && c->ring_offered_ && !(ring && std::string(ring) == "0")) c->AttachRing(timeout);
  c->stream_->SetRecvTimeout(std::chrono::milliseconds(0));
  c->in_ = std::make_unique<proto::BufferedReader>(c->stream_.get());
  const char* pump = std::getenv("RGPU_SPIN_RECV");
  c->pump_ = c->stream_->PollShowsData() && !(pump && std::string(pump) == "0");
  const char* aside = std::getenv("RGPU_RECV_ASIDE");
  c->aside_ = c->pump_ && !c->stream_->HasRing() &&
              (aside && *aside ? std::string(aside) != "0" : !ManyCpus());
  c->flush_timer_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  if (c->flush_timer_ < 0)
    return Status::Error(CL_OUT_OF_HOST_MEMORY,
                         std::string("timerfd_create: ") + std::strerror(errno));
  c->receiver_ = std::thread([raw = c.get()] { raw->ReceiveLoop(); });
  c->flusher_ = std::thread([raw = c.get()] { raw->FlushLoop(); });
  if (c->peer_timeout_.count() > 0) {
    proto::SetKeepAlive(c->stream_->fd(), c->peer_timeout_);
    c->watcher_ = std::thread([raw = c.get()] { raw->WatchLoop(); });
  }
  return c;
}

Connection::~Connection() {
  {
    std::lock_guard lk(buf_mu_);
    stopping_ = true;
    if (flush_timer_ >= 0) ArmFlush(std::chrono::nanoseconds(0));
    watch_cv_.notify_all();
  }
  if (flusher_.joinable()) flusher_.join();
  if (flush_timer_ >= 0) close(flush_timer_);
  if (watcher_.joinable()) watcher_.join();
  if (alive_) {
    std::lock_guard wl(write_mu_);
    WriteOut();
    stream_->SendFrame(FrameHeader{0, static_cast<uint16_t>(Op::Goodbye), 0, 0}, nullptr, 0);
  }
  stream_->Shutdown();
  CallReceiverBack();
  if (receiver_.joinable()) receiver_.join();
}

uint32_t SpinLimitUs() {
  static const uint32_t limit = [] {
    const char* v = std::getenv("RGPU_SPIN_US");
    // On a small machine a spinning thread takes a core that the device's own threads (a
    // CPU device's workers, the driver's) need: spin only briefly there.
    if (!v || !*v) return ManyCpus() ? 10000u : 50u;
    return static_cast<uint32_t>(std::min(std::strtoul(v, nullptr, 10), 1000000ul));
  }();
  return limit;
}

Status Connection::Handshake(const std::string& token, bool want_shared) {
  proto::HelloRequest hello;
  hello.features =
      proto::kFeatureHeartbeat | (want_shared ? proto::kFeatureShared | proto::kFeatureRing : 0);
  hello.token = token;
  char exe[200] = {0};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  hello.client_name = (n > 0 ? std::string(exe, n) : "client") + " pid " + std::to_string(getpid());
  const std::vector<uint8_t> body = hello.Encode();
  Status s = stream_->SendFrame(FrameHeader{static_cast<uint32_t>(body.size()),
                                            static_cast<uint16_t>(Op::Hello), 0, 1},
                                body.data(), body.size());
  if (!s.ok()) return s;
  FrameHeader h;
  std::vector<uint8_t> rb;
  s = stream_->RecvFrame(&h, &rb, 64u << 20);
  if (!s.ok()) return Status::Error(CL_DEVICE_NOT_AVAILABLE, "no Hello reply: " + s.message());
  if (h.op == static_cast<uint16_t>(Op::Goodbye) && (h.flags & proto::kFlagNotify)) {
    Reader r(rb.data(), rb.size());
    proto::GoodbyeNotice bye;
    proto::GoodbyeNotice::Decode(r, &bye);  // cut short or too long: no reason given
    return Status::Error(CL_DEVICE_NOT_AVAILABLE, "server refused: " + bye.reason);
  }
  if (h.op != static_cast<uint16_t>(Op::Hello) || !(h.flags & proto::kFlagReply))
    return Status::Error(CL_DEVICE_NOT_AVAILABLE, "unexpected answer to Hello");
  Reply rep = ParseReply(std::move(rb));
  if (!rep.status.ok())
    return Status::Error(CL_DEVICE_NOT_AVAILABLE, "server refused: " + rep.status.message());
  Reader r = rep.reader();
  proto::HelloReply reply;
  reply.features = hello.features;  // the tail of the reply answers what we asked for
  if (!proto::HelloReply::Decode(r, &reply))
    return Status::Error(CL_DEVICE_NOT_AVAILABLE, "malformed Hello reply");
  server_name_ = reply.server_name;
  // The devices the tenant may use (maybe only some of the server's), by their server index.
  for (const auto& d : reply.devices) {
    RemoteDevice& device = devices_.emplace_back();
    for (const auto& [param, value] : d.queries) device.info[param] = value.ToHost();
    device.server_index = d.server_index;
  }
  // A server that speaks Heartbeat says when to send one and when a silent peer is dead;
  // an older one says nothing, and only TCP keepalive watches it.
  if (reply.features & proto::kFeatureHeartbeat) {
    heartbeat_interval_ =
        std::chrono::milliseconds(std::max<uint32_t>(reply.heartbeat_interval_ms, 50));
    peer_timeout_ = std::chrono::milliseconds(std::max<uint32_t>(reply.peer_timeout_ms, 200));
  }
  // A server that knows shared regions says how large one may be; an older one says nothing.
  if (reply.features & proto::kFeatureShared) shared_cap_ = reply.shared_cap;
  ring_offered_ = (reply.features & proto::kFeatureRing) != 0;
  const uint64_t quota = reply.mem_left;
  quota_left_ = quota == UINT64_MAX ? INT64_MAX : static_cast<int64_t>(std::min<uint64_t>(quota, INT64_MAX));
  return Status::Ok();
}

Status Connection::SendWithFd(Op op, uint64_t tag, const std::vector<uint8_t>& body, int fd) {
  uint8_t hdr[proto::kHeaderSize];
  proto::EncodeHeader(FrameHeader{static_cast<uint32_t>(body.size()), static_cast<uint16_t>(op), 0,
                                  tag},
                      hdr);
  iovec iov[2] = {{hdr, sizeof(hdr)}, {const_cast<uint8_t*>(body.data()), body.size()}};
  return stream_->SendWithFd(iov, 2, fd);
}

void Connection::AttachShared(uint64_t server_cap) {
  const bool debug = std::getenv("RGPU_DEBUG") != nullptr;
  auto region = SharedRegion::Create();
  if (!region.ok() || (*region)->size() > server_cap) {
    if (debug)
      std::fprintf(stderr, "rgpu: no shared memory with %s: %s\n", address_.c_str(),
                   region.ok() ? "the server takes smaller regions" : region.status().message().c_str());
    return;
  }
  Status s =
      SendWithFd(Op::AttachShared, next_tag_.fetch_add(1) + 1,
                 proto::EncodeBody(proto::AttachSharedRequest{(*region)->size()}), (*region)->fd());
  FrameHeader h;
  std::vector<uint8_t> rb;
  if (s.ok()) s = stream_->RecvFrame(&h, &rb, 1 << 20);
  if (s.ok() && (h.op != static_cast<uint16_t>(Op::AttachShared) || !(h.flags & proto::kFlagReply)))
    s = Status::Error(CL_DEVICE_NOT_AVAILABLE, "unexpected answer to AttachShared");
  if (s.ok()) s = ParseReply(std::move(rb)).status;
  if (!s.ok()) {
    // Refused (another user namespace, a server that takes none): the socket carries it all.
    if (debug) std::fprintf(stderr, "rgpu: no shared memory with %s: %s\n", address_.c_str(), s.message().c_str());
    return;
  }
  (*region)->CloseFd();  // rgpud holds its own mapping now
  shared_ = std::move(region.value());
}

void Connection::AttachRing(std::chrono::milliseconds timeout) {
  const bool debug = std::getenv("RGPU_DEBUG") != nullptr;
  auto say = [&](const std::string& why) {
    if (debug)
      std::fprintf(stderr, "rgpu: no control rings with %s: %s\n", address_.c_str(), why.c_str());
  };
  // Pages mapped at once: a first touch of each would cost a request a fault.
  auto m = MakeSealedMemfd("rgpu-ring", proto::kRingFileBytes, /*populate=*/true);
  if (!m.ok()) return say(m.status().message());
  struct CloseFd {
    int fd;
    ~CloseFd() { ::close(fd); }
  } closer{m->fd};
  auto ring = std::make_unique<proto::Ring>(m->base, proto::Ring::End::kClient);
  const uint64_t tag = next_tag_.fetch_add(1) + 1;
  if (Status s =
          SendWithFd(Op::AttachRing, tag,
                     proto::EncodeBody(proto::AttachRingRequest{proto::kRingFileBytes}), m->fd);
      !s.ok())
    return say(s.message());
  // Accepted, the answer comes through the ring; refused, through the socket.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool through_ring = false;
  for (;;) {
    if (ring->Readable() > 0) {
      through_ring = true;
      break;
    }
    pollfd pf{stream_->fd(), POLLIN, 0};
    if (::poll(&pf, 1, 1) > 0) break;
    if (std::chrono::steady_clock::now() > deadline) return say("no answer to AttachRing");
  }
  if (through_ring) stream_->UseRing(std::move(ring));
  FrameHeader h;
  std::vector<uint8_t> rb;
  Status s = stream_->RecvFrame(&h, &rb, 1 << 20);
  if (s.ok() && (h.op != static_cast<uint16_t>(Op::AttachRing) || !(h.flags & proto::kFlagReply) ||
                 h.tag != tag))
    s = Status::Error(CL_DEVICE_NOT_AVAILABLE, "unexpected answer to AttachRing");
  if (s.ok()) s = ParseReply(std::move(rb)).status;
  if (!s.ok() && through_ring) Fail("control rings: " + s.message());  // no way back to the socket
  if (!s.ok()) return say(s.message());
  if (debug) std::fprintf(stderr, "rgpu: control rings with %s\n", address_.c_str());
}

struct Connection::Ticket {
  std::shared_ptr<Pending> pending;
  uint64_t tag = 0;
};

Result<std::shared_ptr<Connection::Ticket>> Connection::SendShared(Op op, const std::vector<uint8_t>& body,
                                                                  uint16_t flags, bool reply) {
  auto t = std::make_shared<Ticket>();
  if (reply) {
    t->pending = std::make_shared<Pending>();
    t->tag = next_tag_.fetch_add(1) + 1;
  }
  {
    std::lock_guard lk(mu_);
    if (!alive_) return Status::Error(CL_OUT_OF_RESOURCES, "connection to rgpud lost: " + fail_reason_);
    if (reply) pending_[t->tag] = t->pending;
  }
  // Written out now: the region's slot is waiting for rgpud to take it.
  std::lock_guard wl(write_mu_);
  {
    std::lock_guard lk(buf_mu_);
    AppendFrame(op, t->tag, body.data(), body.size(), nullptr, 0, flags);
  }
  if (Status s = WriteOut(); !s.ok()) return s;
  return t;
}

Reply Connection::Await(const std::shared_ptr<Ticket>& t) {
  auto& p = t->pending;
  SpinReceiving([&] { return p->done.load(std::memory_order_acquire) || !alive_; });
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return p->done.load() || !alive_; });
  pending_.erase(t->tag);
  if (!p->done) {
    Reply failed;
    failed.status = Status::Error(CL_OUT_OF_RESOURCES, "connection to rgpud lost: " + fail_reason_);
    return failed;
  }
  last_write_ns_.store(0, std::memory_order_relaxed);  // answered: rgpud has read all before it
  return std::move(p->reply);
}

void Connection::AppendFrame(Op op, uint64_t tag, const uint8_t* body, size_t n, const void* tail,
                             size_t tail_len, uint16_t flags) {
  uint8_t hdr[proto::kHeaderSize];
  proto::EncodeHeader(FrameHeader{static_cast<uint32_t>(n + tail_len), static_cast<uint16_t>(op),
                                  flags, tag},
                      hdr);
  out_.insert(out_.end(), hdr, hdr + proto::kHeaderSize);
  out_.insert(out_.end(), body, body + n);
  if (tail_len)
    out_.insert(out_.end(), static_cast<const uint8_t*>(tail),
                static_cast<const uint8_t*>(tail) + tail_len);
}

bool Connection::ChargeQuota(uint64_t bytes) {
  if (bytes > static_cast<uint64_t>(INT64_MAX)) return false;
  int64_t cur = quota_left_.load();
  do {
    if (cur < static_cast<int64_t>(bytes)) return false;
  } while (!quota_left_.compare_exchange_weak(cur, cur - static_cast<int64_t>(bytes)));
  return true;
}

void Connection::RefundQuota(uint64_t bytes) {
  int64_t cur = quota_left_.load();
  // An unlimited quota stays unlimited (no overflow past INT64_MAX).
  while (cur != INT64_MAX &&
         !quota_left_.compare_exchange_weak(
             cur, cur > INT64_MAX - static_cast<int64_t>(bytes) ? INT64_MAX
                                                                : cur + static_cast<int64_t>(bytes))) {
  }
}

Status Connection::WriteOut(bool flusher) {
  std::vector<uint8_t> chunk;
  {
    std::lock_guard lk(buf_mu_);
    chunk.swap(out_);
    ++gathering_;
    // Everything gathered goes with this write: the flush timer has nothing left to do. Off
    // before the send, which over TCP on a small host can outlast kGather and let the timer
    // wake the flusher for nothing (half of launch+finish round trips did on 2 CPUs). The
    // flusher's own loop keeps its state: it takes what comes during its writes.
    if (!flusher) DisarmFlush();
  }
  if (chunk.empty()) return Status::Ok();
  iovec iov{chunk.data(), chunk.size()};
  Status s = stream_->SendAll(&iov, 1);
  last_write_ns_.store(NowNs(), std::memory_order_relaxed);
  stamps::Mark(stamps::Point::kWritten, static_cast<uint32_t>(chunk.size()));
  if (!s.ok()) Fail(s.message());
  // Hand the capacity back so steady streaming does not reallocate.
  std::lock_guard lk(buf_mu_);
  if (out_.empty()) {
    chunk.clear();
    out_.swap(chunk);
    // Everything went: the flusher need not wake (its own writes keep the timer armed for
    // what comes during them; other callers disarmed it before their send).
    DisarmFlush();
  }
  return s;
}

Status Connection::Flush() {
  if (!alive_) return Status::Error(CL_OUT_OF_RESOURCES, "connection to rgpud lost");
  std::lock_guard wl(write_mu_);
  return WriteOut();
}

Status Connection::SendBulk(Op op, uint64_t tag, const std::vector<uint8_t>& body,
                            const void* data, size_t len) {
  // All the data goes as PutData chunks, each its own frame so other threads' requests can go
  // between them; the request follows with none. Chunks go from the caller's memory to the
  // socket and from the socket into rgpud's staging buffer, where data in the request's own
  // frame is copied once more at each end (all of a 1 MiB piece of a pipelined write).
  std::lock_guard bulk(bulk_mu_);
  const auto* p = static_cast<const uint8_t*>(data);
  // Each chunk names the blob's total size, so the server sizes its buffer once.
  const std::vector<uint8_t> put = proto::EncodeBody(proto::PutDataRequest{len});
  for (size_t off = 0; off < len; off += proto::kDataChunk) {
    const size_t n = std::min<size_t>(proto::kDataChunk, len - off);
    std::lock_guard wl(write_mu_);
    Status s = WriteOut();
    if (!s.ok()) return s;
    s = stream_->SendFrame(FrameHeader{static_cast<uint32_t>(put.size() + n),
                                       static_cast<uint16_t>(Op::PutData), 0, 0},
                           put.data(), put.size(), p + off, n);
    if (!s.ok()) {
      Fail(s.message());
      return s;
    }
  }
  std::lock_guard wl(write_mu_);
  {
    std::lock_guard lk(buf_mu_);
    AppendFrame(op, tag, body.data(), body.size(), nullptr, 0);
  }
  return WriteOut();
}

Status Connection::Send(Op op, const std::vector<uint8_t>& body, const void* data, size_t data_len,
                        Gathered* where) {
  if (where) *where = {};
  if (!alive_) return Status::Error(CL_OUT_OF_RESOURCES, "connection to rgpud lost");
  if (data_len >= proto::kDataChunk) return SendBulk(op, 0, body, data, data_len);
  return Queue(op, 0, body.data(), body.size(), data, data_len, 0, where);
}

bool Connection::ZeroIfLastGathered(const Gathered& where, size_t body_len, size_t offset,
                                    uint64_t expect) {
  if (where.gathering == 0 || offset + 8 > body_len) return false;
  std::lock_guard lk(buf_mu_);
  if (where.gathering != gathering_ || where.end != out_.size()) return false;
  uint8_t* field = out_.data() + out_.size() - body_len + offset;
  if (proto::GetLE(field, 8) != expect) return false;
  std::memset(field, 0, 8);
  return true;
}

Status Connection::Queue(Op op, uint64_t tag, const uint8_t* body, size_t n, const void* tail,
                         size_t tail_len, uint16_t flags, Gathered* where) {
  // With control rings, rgpud's reader awake and caught up, and nothing gathered, the
  // request goes straight into the ring: a copy, no system call (neither a write nor the
  // flush timer's), and rgpud starts on it at once: a launch is on the device while this
  // thread still asks for the read that follows. The rest of a burst, and requests made while
  // another thread writes, are gathered for the flusher as over a socket: written one by one,
  // bursts of 100,000 launches ran at 0.86-0.92 of native against 0.90-0.97 gathered (H200,
  // bench/results/2026-11-27-session19/call6). Over a socket, a request kWriteEvery after
  // the last write goes out at once with everything gathered before it.
  std::unique_lock wl(write_mu_, std::defer_lock);
  const bool ring = stream_->HasRing();
  const bool may_write =
      (ring ? stream_->PeerCaughtUp()
            : WriteThrough() && NowNs() - last_write_ns_.load(std::memory_order_relaxed) >=
                                    std::chrono::nanoseconds(kWriteEvery).count()) &&
      wl.try_lock();
  bool write_now = false;
  {
    std::lock_guard lk(buf_mu_);
    write_now = may_write && (out_.empty() || !ring);
    AppendFrame(op, tag, body, n, tail, tail_len, flags);
    write_now = write_now || out_.size() >= kFlushThreshold;
    if (!write_now) ScheduleFlush();
    if (where && !write_now) *where = {gathering_, out_.size()};
  }
  if (!write_now) return Status::Ok();
  if (!wl.owns_lock()) wl.lock();
  return WriteOut();
}

Reply Connection::Call(Op op, const std::vector<uint8_t>& body, const void* data,
                       size_t data_len) {
  Reply failed;
  auto p = std::make_shared<Pending>();
  uint64_t tag = next_tag_.fetch_add(1) + 1;
  {
    std::lock_guard lk(mu_);
    if (!alive_) {
      failed.status = Status::Error(CL_OUT_OF_RESOURCES, "connection to rgpud lost: " + fail_reason_);
      return failed;
    }
    pending_[tag] = p;
  }
  Status s;
  if (data_len >= proto::kDataChunk) {
    s = SendBulk(op, tag, body, data, data_len);
  } else {
    std::lock_guard wl(write_mu_);
    {
      std::lock_guard lk(buf_mu_);
      AppendFrame(op, tag, body.data(), body.size(), data, data_len);
    }
    s = WriteOut();
  }
  SpinReceiving([&] { return p->done.load(std::memory_order_acquire) || !alive_; });
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return p->done.load() || !alive_; });
  pending_.erase(tag);
  if (!p->done) {
    failed.status = Status::Error(CL_OUT_OF_RESOURCES, "connection to rgpud lost: " + fail_reason_);
    return failed;
  }
  last_write_ns_.store(0, std::memory_order_relaxed);  // answered: rgpud has read all before it
  return std::move(p->reply);
}

Status Connection::StartRead(Op op, const std::vector<uint8_t>& body,
                             std::shared_ptr<ReadSink> sink, bool blocking, uint16_t flags) {
  auto p = std::make_shared<Pending>();
  p->sink = std::move(sink);
  uint64_t tag = next_tag_.fetch_add(1) + 1;
  {
    std::lock_guard lk(mu_);
    if (!alive_) return Status::Error(CL_OUT_OF_RESOURCES, "connection to rgpud lost");
    pending_[tag] = p;
  }
  if (blocking) {
    // Written out by this thread now: waking the flusher would only cost a hand-off.
    std::lock_guard wl(write_mu_);
    {
      std::lock_guard lk(buf_mu_);
      AppendFrame(op, tag, body.data(), body.size(), nullptr, 0, proto::kFlagWaiting | flags);
    }
    Status ws = WriteOut();
    stamps::Mark(stamps::Point::kReadWritten);
    return ws;
  }
  return Queue(op, tag, body.data(), body.size(), nullptr, 0, flags);
}

void Connection::ArmFlush(std::chrono::nanoseconds delay) {
  itimerspec when{};
  // A zero time would disarm the timer: "at once" is the next nanosecond.
  when.it_value.tv_sec = static_cast<time_t>(delay.count() / 1000000000);
  when.it_value.tv_nsec = static_cast<long>(std::max<int64_t>(delay.count() % 1000000000, 1));
  timerfd_settime(flush_timer_, 0, &when, nullptr);
}

void Connection::DisarmFlush() {
  if (!flush_armed_) return;
  const itimerspec off{};
  timerfd_settime(flush_timer_, 0, &off, nullptr);
  flush_armed_ = flush_soon_ = false;
}

void Connection::ScheduleFlush() {
  if (!flush_armed_) {
    flush_armed_ = true;
    ArmFlush(kGather);
  } else if (!flush_soon_ && out_.size() >= kFlushThreshold / 4) {
    // Enough gathered to be worth a write now.
    flush_soon_ = true;
    ArmFlush(std::chrono::nanoseconds(0));
  }
}

void Connection::FlushLoop() {
  proto::NameThread("rgpu-flush");
  for (;;) {
    uint64_t fired = 0;
    if (read(flush_timer_, &fired, sizeof(fired)) < 0 && errno != EINTR && errno != EAGAIN) return;
    // Write, and write again at once while the application queues more during each write (a
    // long burst streams out as it comes); back to the timer when a write finds nothing new.
    for (;;) {
      {
        std::lock_guard lk(buf_mu_);
        if (stopping_) return;
        if (out_.empty()) {
          flush_armed_ = flush_soon_ = false;
          break;
        }
        // Requests queued during this write need not set the timer: this loop takes them.
        flush_armed_ = flush_soon_ = true;
      }
      std::lock_guard wl(write_mu_);
      WriteOut(/*flusher=*/true);
    }
  }
}

void Connection::WatchLoop() {
  proto::NameThread("rgpu-liveness");
  using Clock = std::chrono::steady_clock;
  const auto tick = std::clamp(heartbeat_interval_ / 2, std::chrono::milliseconds(20),
                               std::chrono::milliseconds(250));
  proto::PeerWatch watch(peer_timeout_, Clock::now());
  std::unique_lock lk(buf_mu_);
  while (!stopping_ && alive_) {
    watch_cv_.wait_for(lk, tick, [&] { return stopping_; });
    if (stopping_) return;
    lk.unlock();  // application threads append under buf_mu_; the socket is looked at without it
    const auto now = Clock::now();
    watch.Observe(*stream_, now);
    if (watch.Dead(now)) {
      char why[160];
      std::snprintf(why, sizeof(why), "no sign of life from rgpud for %.1f s (peer timeout %.1f s)",
                    watch.Silent(now).count() / 1000.0, peer_timeout_.count() / 1000.0);
      std::fprintf(stderr, "rgpu: server %s: %s\n", address_.c_str(), why);
      Fail(why);
      return;
    }
    lk.lock();
    if (watch.Quiet(now, heartbeat_interval_) && out_.empty()) {
      // Queued like any request and written by the flusher: this thread never blocks on
      // the socket, so a stalled send cannot keep it from noticing a dead server.
      AppendFrame(Op::Heartbeat, 0, nullptr, 0, nullptr, 0);
      ScheduleFlush();
    }
  }
}

void Connection::Fail(const std::string& why) {
  std::vector<std::shared_ptr<Pending>> sinks;
  {
    std::lock_guard lk(mu_);
    if (!alive_.exchange(false)) return;
    fail_reason_ = why;
    for (auto& [tag, p] : pending_)
      if (p->sink) sinks.push_back(p);
    cv_.notify_all();
  }
  if (getenv("RGPU_DEBUG")) std::fprintf(stderr, "rgpu: connection to %s lost: %s\n", address_.c_str(), why.c_str());
  for (auto& p : sinks) p->sink->Done(Status::Error(CL_OUT_OF_RESOURCES, "connection lost: " + why));
  stream_->Shutdown();
}

namespace {
// Set while this thread handles received frames: a sink or callback run from there that
// waits must not try to read the socket again (recv_mu_ is not recursive).
thread_local bool t_receiving = false;
}  // namespace

bool Connection::StandAside() {
  std::unique_lock lk(aside_mu_);
  aside_cv_.wait_for(lk, kAsideLook, [&] { return called_back_; });
  return std::exchange(called_back_, false);
}

void Connection::CallReceiverBack() {
  {
    std::lock_guard lk(aside_mu_);
    called_back_ = true;
  }
  aside_cv_.notify_one();
}

void Connection::ReceiveLoop() {
  proto::NameThread("rgpu-receive");
  uint64_t seen = 0;  // spins_ when the receiver last chose where to wait
  for (;;) {
    if (aside_) {
      // While callers wait, each reads its own answer (SpinReceiving): stay off the socket,
      // and every kAsideLook read what came between their waits (a frame that comes then, an
      // event's completion say, waits at most that long). Back to the socket once a look finds
      // that no caller waited since the last.
      const uint64_t now = spins_.load(std::memory_order_relaxed);
      if (spinners_.load(std::memory_order_acquire) > 0 || now != seen) {
        seen = now;
        StandAside();
        if (!alive_) return;
        // Not while a caller reads: it might be sleeping on the socket for its own answer.
        if (spinners_.load(std::memory_order_acquire) == 0) PumpFrames();
        continue;
      }
    }
    std::unique_lock lk(recv_mu_);
    if (pump_ && !in_->Buffered()) {
      // Sleep until bytes arrive without taking them: a thread waiting in SpinReceiving
      // may read them first. (Bytes already buffered are handled at once: the socket may
      // have nothing more to wake us with.)
      lk.unlock();
      if (!stream_->WaitReadable()) {
        Fail(std::string("poll: ") + std::strerror(errno));
        return;
      }
      lk.lock();
      if (!in_->Ready()) continue;  // a waiting thread took them
    }
    t_receiving = true;
    const bool more = ReceiveFrame();
    t_receiving = false;
    if (!more) return;
  }
}

bool Connection::MayPump() const { return pump_ && !t_receiving; }

bool Connection::PumpFrames() {
  if (!pump_ || t_receiving) return true;
  if (!recv_mu_.try_lock()) return false;
  std::lock_guard lk(recv_mu_, std::adopt_lock);
  t_receiving = true;
  // With control rings a look at the ring is a load; the socket (wake bytes, a hang-up) is
  // asked every 16th time, as a spinning caller comes back here again and again.
  static thread_local unsigned looks = 0;
  const bool socket_too = !stream_->HasRing() || (++looks & 15) == 0;
  while (alive_ && in_->Ready(socket_too) && ReceiveFrame()) {
  }
  t_receiving = false;
  return true;
}

std::shared_ptr<Connection::Pending> Connection::PendingFor(uint64_t tag, bool take_if_sink) {
  std::lock_guard lk(mu_);
  auto it = pending_.find(tag);
  if (it == pending_.end()) return nullptr;
  std::shared_ptr<Pending> p = it->second;
  if (take_if_sink && p->sink) pending_.erase(it);
  return p;
}

bool Connection::ReceiveFrame() {
  proto::BufferedReader& in = *in_;
  uint8_t hdr[proto::kHeaderSize] = {};
  Status s = in.Read(hdr, proto::kHeaderSize);
  const FrameHeader h = proto::DecodeHeader(hdr);
  if (s.ok() && h.body_len > proto::kMaxBody + 64) s = Status::Protocol("oversized frame from server");
  if (s.ok() && h.op == static_cast<uint16_t>(Op::ReadData) && (h.flags & proto::kFlagNotify) &&
      h.body_len >= proto::ReadDataNotice::kBytes)
    s = ReceiveReadData(h);
  else if (s.ok())
    s = ReceiveBody(h);
  if (!s.ok()) {
    Fail(s.message());
    return false;
  }
  return true;
}

Status Connection::ReceiveReadData(const FrameHeader& h) {
  // Read data goes straight into the application's memory when the sink allows it.
  proto::BufferedReader& in = *in_;
  proto::ReadDataNotice note;
  if (Status s = proto::ReadFields(in, &note); !s.ok()) return s;
  const uint64_t off = note.offset;
  const size_t len = h.body_len - proto::ReadDataNotice::kBytes;
  std::shared_ptr<Pending> p = PendingFor(h.tag, false);
  const bool fits = p && p->sink && off <= p->sink->size && len <= p->sink->size - off;
  if (uint8_t* direct = fits ? p->sink->Direct(off, len) : nullptr) return in.Read(direct, len);
  rx_body_.resize(len);
  if (len)
    if (Status s = in.Read(rx_body_.data(), len); !s.ok()) return s;
  if (fits) p->sink->Data(off, rx_body_.data(), len);
  return Status::Ok();
}

Status Connection::ReceiveBody(const FrameHeader& h) {
  std::vector<uint8_t>& body = rx_body_;
  body.resize(h.body_len);
  if (h.body_len)
    if (Status s = in_->Read(body.data(), h.body_len); !s.ok()) return s;
  if (!(h.flags & proto::kFlagReply)) return HandleNotice(h);
  DeliverReply(h.tag);
  return Status::Ok();
}

void Connection::DeliverReply(uint64_t tag) {
  std::shared_ptr<Pending> p = PendingFor(tag, /*take_if_sink=*/true);
  if (!p) return;
  if (p->sink) {
    p->sink->Done(ParseReply(std::move(rx_body_)).status);
    rx_body_ = {};
    return;
  }
  std::lock_guard lk(mu_);
  p->reply = ParseReply(std::move(rx_body_));
  rx_body_ = {};
  p->done.store(true, std::memory_order_release);
  cv_.notify_all();
}

Status Connection::HandleNotice(const FrameHeader& h) {
  Reader r(rx_body_.data(), rx_body_.size());
  switch (static_cast<Op>(h.op)) {
    case Op::ReadData: {  // data the fast path above did not take (a body cut short)
      proto::ReadDataNotice note;
      proto::ReadDataNotice::Decode(r, &note);  // fails, and the rest is then empty
      const uint64_t off = note.offset;
      size_t len = 0;
      const uint8_t* data = r.rest(&len);
      std::shared_ptr<Pending> p = PendingFor(h.tag, false);
      if (p && p->sink && off <= p->sink->size && len <= p->sink->size - off) p->sink->Data(off, data, len);
      break;
    }
    case Op::EventDone: {
      proto::EventDoneNotice note;
      if (proto::EventDoneNotice::Decode(r, &note) && on_event_done)
        on_event_done(note.event, note.status);
      break;
    }
    case Op::AsyncError: {
      proto::AsyncErrorNotice note;
      const bool ok = proto::AsyncErrorNotice::Decode(r, &note);
      if (getenv("RGPU_DEBUG"))
        std::fprintf(stderr, "rgpu: %s (id %llu) failed on the server: %s\n",
                     proto::OpName(note.op), static_cast<unsigned long long>(note.object),
                     note.message.c_str());
      if (ok && on_async_error) on_async_error(note.op, note.object, note.code, note.message);
      break;
    }
    case Op::Heartbeat:  // a sign of life only; WatchLoop saw its bytes arrive
      break;
    case Op::Goodbye: {
      proto::GoodbyeNotice bye;
      proto::GoodbyeNotice::Decode(r, &bye);  // cut short or too long: no reason given
      const std::string& why = bye.reason;
      std::fprintf(stderr, "rgpu: server %s ended the session: %s\n", address_.c_str(), why.c_str());
      return Status::Protocol("server ended the session: " + why);
    }
    default:
      break;
  }
  return Status::Ok();
}

}  // namespace rgpu::client
