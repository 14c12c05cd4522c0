// One client connection to one rgpud.
//
// Asynchronous requests are appended to an output buffer and written by a flusher thread
// (or by the next synchronous call), so an application thread that enqueues work pays a
// memcpy, not a system call or a network round trip. Synchronous calls (tag != 0) wait for
// the reply with the same tag, delivered by the receiver thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/shared_region.h"
#include "proto/cpu_relax.h"
#include "proto/transport.h"
#include "proto/wire.h"

namespace rgpu::client {

// How long a thread waiting for a synchronous answer spins before it sleeps, in
// microseconds: RGPU_SPIN_US, default 10000 with 8 CPUs or more, else 50. A native driver's
// blocking call spins or yields for
// its whole wait; a thread that sleeps instead pays a futex wake-up, often on a core that went
// idle, when the answer comes (on the H200 host such wake-ups put about 0.5 ms on the p99 of
// a 0.4 ms request). After 20 us the spinner yields between looks, so a runnable thread of the
// device or of rgpud on a machine with few cores gets the core.
uint32_t SpinLimitUs();

// Waits up to SpinLimitUs() for `ready()` without sleeping.
template <typename Ready>
bool SpinBriefly(Ready ready) {
  using C = std::chrono::steady_clock;
  const auto limit = std::chrono::microseconds(SpinLimitUs());
  const auto start = C::now();
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 15) == 15) {
      auto spent = C::now() - start;
      if (spent > limit) return false;
      if (spent > std::chrono::microseconds(20)) std::this_thread::yield();
    }
    proto::CpuRelax();
  }
}

// What the server said about one device at Hello: its queries, decoded to host form.
struct RemoteDevice {
  std::map<uint32_t, std::vector<uint8_t>> info;
  uint32_t server_index = 0;  // the number requests use for it
};

// A reply: the status the server sent and the bytes that follow it.
struct Reply {
  Status status;
  std::vector<uint8_t> body;  // fields after (status, message)
  size_t at = 0;              // where the fields start in `body`
  proto::Reader reader() const { return proto::Reader(body.data() + at, body.size() - at); }
};

// Receives the data of a read as it arrives, then its final status.
struct ReadSink {
  virtual ~ReadSink() = default;
  // `off` and `len` were checked against the size of the read.
  virtual void Data(size_t off, const uint8_t* p, size_t len) = 0;
  virtual void Done(const Status& s) = 0;
  // Where `len` bytes at `off` may be received directly (no intermediate copy), or null.
  virtual uint8_t* Direct(size_t off, size_t len) { return nullptr; }
  // Run once, just before the read's event lands, in the order of the queue's reads
  // (ReadLanded): where staged data goes to the application.
  virtual void Land(int32_t status) {}
  size_t size = 0;
};

class Connection {
 public:
  static Result<std::shared_ptr<Connection>> Open(const std::string& address,
                                                  const std::string& token,
                                                  std::chrono::milliseconds timeout);
  ~Connection();

  uint64_t NewId() { return next_id_.fetch_add(1, std::memory_order_relaxed); }
  const std::vector<RemoteDevice>& devices() const { return devices_; }
  const std::string& address() const { return address_; }
  const std::string& server_name() const { return server_name_; }
  bool alive() const { return alive_.load(); }
  // The tenant's device-memory quota as the server reported it at Hello, kept here so
  // that clCreateBuffer can refuse a buffer over quota at once (creation is asynchronous).
  // The server enforces the quota too, across all of the tenant's sessions.
  bool ChargeQuota(uint64_t bytes);
  void RefundQuota(uint64_t bytes);

  // A request gathered for the flusher, not yet written: which gathering (0: it was written
  // at once, or went as bulk) and where its frame ends in it.
  struct Gathered {
    uint64_t gathering = 0;
    size_t end = 0;
  };
  // Queues a request that wants no reply. `data` (optional) travels as bulk: PutData
  // chunks first, the request last, so small requests of other threads interleave. `where`
  // (optional) is told where the request was gathered.
  Status Send(proto::Op op, const std::vector<uint8_t>& body, const void* data = nullptr,
              size_t data_len = 0, Gathered* where = nullptr);
  // If the request `where` names is still gathered and the last one, and the u64 at
  // `offset` in its body of `body_len` bytes reads `expect`: sets it to 0 and returns true.
  // (An event released before its launch left: the launch goes without it.)
  bool ZeroIfLastGathered(const Gathered& where, size_t body_len, size_t offset, uint64_t expect);
  // Sends a request and waits for its reply.
  Reply Call(proto::Op op, const std::vector<uint8_t>& body, const void* data = nullptr,
             size_t data_len = 0);
  // Sends a read request; `sink` gets the data and the final status on the receiver thread.
  // `blocking`: the caller will wait for it (it is written out at once, and the server may
  // wait for the device on the connection's thread: proto::kFlagWaiting). `flags` are added
  // to the request's (proto::kFlagShared for a read into the shared region).
  Status StartRead(proto::Op op, const std::vector<uint8_t>& body, std::shared_ptr<ReadSink> sink,
                   bool blocking = false, uint16_t flags = 0);
  // Writes out everything queued so far.
  Status Flush();

  // Waits up to SpinLimitUs() for `ready()` without sleeping, and meanwhile reads the
  // frames that arrive on this thread when no other thread is reading them: the answer a
  // blocked call waits for then reaches it with no wake-up of the receiver thread (which,
  // asleep on an idle core, costs tens to hundreds of microseconds at the tail). Off with
  // RGPU_SPIN_RECV=0, and for TLS, whose decrypted bytes a poll of the socket cannot see.
  // With control rings the spinner counts itself as polling (rgpud then sends no wake byte
  // for the receiver thread), and hands on what came after its last look when it stops.
  // Over a socket where the receiver stands aside (ReceiveLoop), a caller whose spin ends
  // without its answer waits for it in a poll of the socket, and reads it itself.
  template <typename Ready>
  bool SpinReceiving(Ready ready) {
    // A thread that cannot read (RGPU_SPIN_RECV=0, or one inside a frame's handling already)
    // must not count as polling: rgpud would then not wake the receiver thread.
    if (!MayPump()) return SpinBriefly(ready);
    stream_->Spinning(true);
    spinners_.fetch_add(1, std::memory_order_acq_rel);
    spins_.fetch_add(1, std::memory_order_relaxed);
    bool got = SpinBriefly([&] { return ready() || (PumpFrames(), ready()); });
    stream_->Spinning(false);
    PumpFrames();
    got = got || ready();
    // The receiver stands aside: sleep on the socket itself, so that the answer costs one
    // wake-up (this thread's) rather than two in a row (the receiver's, then this thread's).
    while (aside_ && !got && alive_) {
      // Another thread reading may be taking this thread's answer: look again soon.
      const bool alone = PumpFrames() && spinners_.load(std::memory_order_acquire) == 1;
      if ((got = ready())) break;
      stream_->WaitReadableFor(alone ? kAsideLook : std::chrono::microseconds(50));
      PumpFrames();
      got = ready();
    }
    spinners_.fetch_sub(1, std::memory_order_acq_rel);
    return got;
  }

  // Shared memory for bulk data (client/shared_region.h): present when the connection is a
  // Unix socket, RGPU_SHM is not 0 and rgpud mapped the region; null otherwise.
  SharedRegion* shared() const { return shared_.get(); }
  // Writes out a request whose data is in the shared region (flags: proto::kFlagShared and
  // maybe kFlagWaiting). With `reply` it is tagged and its answer is awaited with Await.
  struct Ticket;
  Result<std::shared_ptr<Ticket>> SendShared(proto::Op op, const std::vector<uint8_t>& body,
                                             uint16_t flags, bool reply);
  Reply Await(const std::shared_ptr<Ticket>& t);
  // User events created and not yet set: while any is, a read could wait on this process's
  // own later call, so reads do not tie up the shared region (client/enqueue_shared.cpp).
  std::atomic<int> unset_user_events{0};

  // Unsolicited notifications (event completion, asynchronous errors) go to these.
  std::function<void(uint64_t event_id, int32_t status)> on_event_done;
  std::function<void(uint16_t op, uint64_t id, int32_t code, const std::string& msg)> on_async_error;

 private:
  Connection() = default;
  Status Handshake(const std::string& token, bool want_shared);
  // Creates the shared region and passes it to rgpud (AttachShared); on any refusal the
  // connection goes on without it.
  void AttachShared(uint64_t server_cap);
  // Writes one frame with `fd` attached (SCM_RIGHTS) straight to the socket: only before the
  // threads start (AttachShared, AttachRing).
  Status SendWithFd(proto::Op op, uint64_t tag, const std::vector<uint8_t>& body, int fd);
  // Moves every frame to control rings in shared memory (proto/ring.h, AttachRing); refused,
  // the connection goes on over the socket.
  void AttachRing(std::chrono::milliseconds timeout);
  void ReceiveLoop();
  // Reads and handles one frame from in_ (requires recv_mu_); false once the connection
  // failed or the server ended it.
  bool ReceiveFrame();
  // Its parts: ReadData straight into the sink's memory where it can go; any other frame's
  // body, then a reply to its waiter or a notice (events, errors, Goodbye) to its handler.
  Status ReceiveReadData(const proto::FrameHeader& h);
  Status ReceiveBody(const proto::FrameHeader& h);
  void DeliverReply(uint64_t tag);
  Status HandleNotice(const proto::FrameHeader& h);
  // Handles the frames that can be read now without waiting, unless another thread is
  // reading (requires nothing; takes recv_mu_ if free). False if another thread was.
  bool PumpFrames();
  // Whether this thread may read frames while it waits (PumpFrames does something).
  bool MayPump() const;
  // Over a socket, while callers wait: the receiver thread waits here, off the socket, up to
  // kAsideLook at a time (ReceiveLoop). True if called back (the connection ends).
  bool StandAside();
  void CallReceiverBack();
  // Writes out what asynchronous calls queued, when the flush timer fires.
  void FlushLoop();
  // Sets the flush timer to fire `delay` from now (at once for 0). Requires buf_mu_.
  void ArmFlush(std::chrono::nanoseconds delay);
  // Stops an armed flush timer: nothing gathered is left for the flusher. Requires buf_mu_.
  void DisarmFlush();
  // After something queued: the flusher writes it out within kGather unless a synchronous
  // call does first. Requires buf_mu_.
  void ScheduleFlush();
  // With a server that speaks Heartbeat: sends one when nothing was sent for the interval
  // the server named, and fails the connection (every pending and later call) when the
  // server showed no life for its timeout. Never waits on the socket or the device.
  void WatchLoop();
  void AppendFrame(proto::Op op, uint64_t tag, const uint8_t* body, size_t n, const void* tail,
                   size_t tail_len, uint16_t flags = 0);
  // An asynchronous request: straight out where control rings reach an awake rgpud that has
  // taken everything before it, else gathered for the flusher (written at once beyond
  // kFlushThreshold).
  Status Queue(proto::Op op, uint64_t tag, const uint8_t* body, size_t n, const void* tail,
               size_t tail_len, uint16_t flags, Gathered* where = nullptr);
  // Writes out what is gathered (requires write_mu_). `flusher`: called from FlushLoop, which
  // keeps the flush timer's state itself; any other caller disarms it. (A parameter, not a
  // thread_local: a thread_local of this dlopen'd library, set by the flusher, made
  // LeakSanitizer's exit-time scan of dynamic TLS crash in 1 of 2 matmul runs under load.)
  Status WriteOut(bool flusher = false);
  Status SendBulk(proto::Op op, uint64_t tag, const std::vector<uint8_t>& body, const void* data,
                  size_t len);
  void Fail(const std::string& why);

  std::string address_;
  std::string server_name_;
  std::unique_ptr<proto::Stream> stream_;
  std::vector<RemoteDevice> devices_;
  std::atomic<uint64_t> next_id_{1};
  std::atomic<uint64_t> next_tag_{1};
  std::atomic<bool> alive_{true};
  std::atomic<int64_t> quota_left_{INT64_MAX};
  std::string fail_reason_;  // GUARDED_BY(mu_)

  std::mutex bulk_mu_;   // one bulk upload at a time: PutData chunks share the staging area
  std::mutex write_mu_;  // held while writing to the socket; orders whole frames
  std::mutex buf_mu_;
  std::vector<uint8_t> out_;  // GUARDED_BY(buf_mu_): frames not yet written
  uint64_t gathering_ = 1;    // GUARDED_BY(buf_mu_): counts the times out_ was taken to write
  // The flusher sleeps in a read of this one-shot timer (a timerfd). Queuing a request arms
  // it instead of waking the flusher: a synchronous call that comes within the gathering
  // time writes everything out itself and disarms it, so no thread is woken at all.
  int flush_timer_ = -1;
  bool flush_armed_ = false;  // GUARDED_BY(buf_mu_): the timer is set and out_ waits for it
  bool flush_soon_ = false;   // GUARDED_BY(buf_mu_): set to fire at once (out_ is large)
  bool stopping_ = false;     // GUARDED_BY(buf_mu_)
  // When the last write to the socket ended (steady clock, ns): over a socket, an
  // asynchronous request that comes kWriteEvery after it writes out itself (Queue).
  std::atomic<int64_t> last_write_ns_{0};

  struct Pending {
    std::atomic<bool> done{false};  // set under mu_, read without it while spinning
    Reply reply;
    std::shared_ptr<ReadSink> sink;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  // The request waiting for `tag`'s answer; with take_if_sink, removed if a sink takes it
  // (a sink's reply is its last frame).
  std::shared_ptr<Pending> PendingFor(uint64_t tag, bool take_if_sink);
  std::unordered_map<uint64_t, std::shared_ptr<Pending>> pending_;  // GUARDED_BY(mu_)

  std::chrono::milliseconds heartbeat_interval_{0}, peer_timeout_{0};  // 0: not spoken
  uint64_t shared_cap_ = 0;  // the largest shared region the server takes (0: none)
  bool ring_offered_ = false;  // the server speaks AttachRing
  std::unique_ptr<SharedRegion> shared_;
  std::condition_variable watch_cv_;  // with buf_mu_: wakes WatchLoop to stop

  // Reading the socket: the receiver thread, or a thread spinning in SpinReceiving.
  std::mutex recv_mu_;
  std::unique_ptr<proto::BufferedReader> in_;  // GUARDED_BY(recv_mu_)
  std::vector<uint8_t> rx_body_;               // GUARDED_BY(recv_mu_)
  bool pump_ = false;  // waiting threads may read (set before the receiver starts)
  // The receiver stays off the socket while callers spin (set before the receiver starts):
  // over a socket both would wake for each answer (no control ring says who polls), and on a
  // small host that wake-up, and the receiver then queueing on recv_mu_ behind the spinner,
  // cost a round trip; a caller whose spin ended (50 us there) then slept until the receiver
  // woke it, a second wake-up. RGPU_RECV_ASIDE=0/1; default on below 8 CPUs.
  bool aside_ = false;
  std::atomic<int> spinners_{0};  // threads in SpinReceiving that may read
  static constexpr std::chrono::microseconds kAsideLook{1000};
  std::atomic<uint64_t> spins_{0};  // SpinReceiving calls so far (the receiver's clock)
  std::mutex aside_mu_;
  std::condition_variable aside_cv_;
  bool called_back_ = false;  // GUARDED_BY(aside_mu_)

  std::thread receiver_;
  std::thread flusher_;
  std::thread watcher_;
};

}  // namespace rgpu::client
