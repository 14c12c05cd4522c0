// One client connection: its object table, its request handlers and its outbound queue.
//
// Ids are chosen by the client (so that creating an object costs no round trip) and are
// only meaningful inside the session that chose them: every request is resolved against
// this session's table, with the object's type checked, and nothing else.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "proto/messages.h"
#include "proto/stamps.h"
#include "proto/transport.h"
#include "proto/wire.h"
#include "server/backend/backend.h"
#include "server/buffer_pool.h"
#include "server/scheduler/scheduler.h"
#include "server/scheduler/slicer.h"
#include "server/session_objects.h"
#include "server/pinned_staging.h"
#include "server/shared_region.h"
#include "server/tenant.h"

namespace rgpu::server {

class Server;

// A reply's body: the status (OpenCL code and message), then the reply's own fields.
std::vector<uint8_t> ReplyBody(const Status& s, const std::vector<uint8_t>& fields = {});
// A ReadData notice's fields (the data, at `offset` of the read, follows them).
std::vector<uint8_t> ReadDataFields(uint64_t offset);

class Outbox;
// Queues a reply to the request tagged `tag` (none for tag 0: the client waits for nothing).
void SendReply(Outbox& out, uint16_t op, uint64_t tag, const Status& s,
               const std::vector<uint8_t>& fields = {});

// Frames waiting to go to the client. Small control frames go before bulk chunks so that a
// large read does not delay the answers queued behind it.
class Outbox {
 public:
  explicit Outbox(proto::Stream* stream) : stream_(stream) {}
  void Push(proto::FrameHeader h, std::vector<uint8_t> body);
  // Frames already encoded back to back (header and body each), sent as one write.
  void PushFramed(std::vector<uint8_t> frames);
  // A chunk of bulk data `data[off, off+len)` preceded by `prefix` in one frame.
  void PushBulk(proto::FrameHeader h, std::vector<uint8_t> prefix, Bytes data, size_t off,
                size_t len);
  void Run();    // the writer thread's loop
  void Close();  // stops Run after what is queued has been sent or the stream failed
  // Bytes queued and not yet written, plus bytes Reserve()d for answers still being made
  // (reads in flight). The session stops reading requests while this is over its bound.
  size_t Pending();
  void Reserve(size_t n);
  void Unreserve(size_t n);
  // Blocks until Pending() <= limit or the outbox closed; false if closed.
  bool WaitBelow(size_t limit);
  // After Close(): waits at most `timeout` for the writer to drain; false if it did not.
  bool WaitDrained(std::chrono::milliseconds timeout);

 private:
  struct Frame {
    proto::FrameHeader h;
    std::vector<uint8_t> body;
    bool raw = false;  // body holds bytes already framed (the rest of a partial send)
    Bytes bulk;
    size_t off = 0, len = 0;
  };
  proto::Stream* stream_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Frame> control_;  // GUARDED_BY(mu_)
  std::deque<Frame> bulk_;     // GUARDED_BY(mu_)
  bool closed_ = false;        // GUARDED_BY(mu_)
  bool sending_ = false;       // GUARDED_BY(mu_): a thread is writing to the stream
  size_t pending_ = 0;         // GUARDED_BY(mu_)
  bool finished_ = false;      // GUARDED_BY(mu_): Run returned
  std::condition_variable drained_;
};

struct SessionStats {
  std::atomic<uint64_t> commands{0};
  std::atomic<uint64_t> bytes_in{0};
  std::atomic<uint64_t> bytes_out{0};
};

class Session {
 public:
  Session(Server* server, uint64_t id, std::unique_ptr<proto::Stream> stream, std::string peer);
  ~Session();
  // Serves the connection until it closes; then releases everything the client owned.
  void Serve();
  void Stop() { stream_->Shutdown(); }
  // Ends the session after what is queued for the client has been written.
  void StopReading() { stream_->ShutdownRead(); }
  // Graceful stop: tells the client why (Goodbye) before the connection is cut.
  void SayGoodbye(const std::string& why);
  uint64_t id() const { return id_; }
  // A request stamp (proto/stamps.h) of this session: its id in the argument's upper 12 bits.
  void Stamp(stamps::Point p, uint32_t arg = 0) const {
    stamps::Mark(p, arg | static_cast<uint32_t>(id_ << 20));
  }
  size_t LiveObjects() const { return live_objects_.load(); }
  // The tenant the session authenticated as; nullptr until Hello succeeded.
  const Tenant* tenant() const { return tenant_.load(); }
  const std::string& peer() const { return peer_; }
  uint64_t Commands() const { return stats_.commands.load(); }
  uint64_t CommandsInFlight() const { return in_flight_.load(); }
  // Heartbeats (proto/wire.h kFeatureHeartbeat): whether the client said at Hello that it
  // sends them, and one sent to it. For the server's watchdog, which never blocks.
  bool heartbeat() const { return heartbeat_.load(); }
  void SendHeartbeat() { Notify(proto::Op::Heartbeat, 0, {}); }
  const proto::Stream& stream() const { return *stream_; }
  // For the server's park watcher (Server::WatchParked): if the reader has sat in a device
  // wait for at least `after`, this session's aside thread takes over its frames until the
  // wait ends (see Park). Never blocks.
  void ServeAsideIfParked(std::chrono::steady_clock::time_point now,
                          std::chrono::microseconds after);

 private:
  // One frame read and served. Returns why the session ends, if it does.
  std::optional<std::string> ServeFrame(std::vector<uint8_t>& body);

  // An inline wait (CanWaitInline) parks the reader in the driver; while it is parked the
  // session's other frames are not read. So a wait that lasts (ServerOptions::serve_aside)
  // hands the frames to a second thread, the aside thread, which serves what the client's
  // other threads send (a flag write that the waited kernel polls for, say) until the wait
  // ends, then hands them back. One thread at a time serves the session: the reader between
  // Park and Unpark runs nothing of it but the driver's call, and takes the frames back
  // before it touches anything else. Objects released meanwhile are released once the
  // reader's frame is done (their handles may be in the driver's call).
  // Park costs a clock read and three stores; Unpark a compare-and-swap, and it waits for the
  // aside thread only while that thread is in the middle of a frame.
  class Parked {
   public:
    explicit Parked(Session* s, bool park = true) : s_(park ? s : nullptr) {
      if (s_) s_->Park();
    }
    ~Parked() {
      if (s_) s_->Unpark();
    }
    Parked(const Parked&) = delete;
    Parked& operator=(const Parked&) = delete;

   private:
    Session* s_;
  };
  void Park();
  void Unpark();
  void AsideLoop();  // the aside thread
  void ServeAside();
  void ReleaseDeferred();
  Status Dispatch(const proto::FrameHeader& h, proto::Reader& r);
  Status Hello(const proto::FrameHeader& h, proto::Reader& r);
  Status CreateContext(proto::Reader& r);
  Status CreateQueue(proto::Reader& r);
  Status CreateBuffer(proto::Reader& r);
  // CreateBuffer whose initial contents are in the shared region (server/session_shared.cpp).
  Status CreateBufferShared(proto::Reader& r);
  // Registers the attached shared region with context `ctx_id` if it is the first the region
  // is copied in (SharedRegion::Register); logs a refusal at debug level.
  void RegisterShared(uint64_t ctx_id);
  // A buffer of the session's from a decoded request and its initial contents (empty or
  // `req.size` bytes); failures that are the application's are reported asynchronously.
  Status MakeBuffer(const proto::CreateBufferRequest& req, std::span<const uint8_t> init);
  Status CreateSubBuffer(proto::Reader& r);
  Status CreateProgramWithSource(proto::Reader& r);
  Status CreateProgramWithBinary(const proto::FrameHeader& h, proto::Reader& r);
  Status BuildProgram(const proto::FrameHeader& h, proto::Reader& r);
  Status CompileProgram(const proto::FrameHeader& h, proto::Reader& r);
  Status LinkProgram(const proto::FrameHeader& h, proto::Reader& r);
  Status CreateKernel(proto::Reader& r);
  Status CloneKernel(proto::Reader& r);
  Status SetKernelArg(proto::Reader& r);
  Status CreateUserEvent(proto::Reader& r);
  Status SetUserEventStatus(proto::Reader& r);
  Status Release(proto::Reader& r);
  Status ReleaseObject(const proto::ReleaseRequest& req);
  Status GetInfo(const proto::FrameHeader& h, proto::Reader& r);
  Status GetEventProfiling(const proto::FrameHeader& h, proto::Reader& r);
  // PutData is read straight from the socket into the staging buffer (no frame copy).
  Status ReceivePutData(const proto::FrameHeader& h);
  // The buffer and kernel commands (server/session_enqueue.cpp): Enqueue decodes the command
  // header and hands the rest to one handler per operation.
  struct Command {
    const proto::FrameHeader* frame = nullptr;
    proto::CommandHeader head;
    QueueRecord* queue_record = nullptr;  // set by ResolveCommand, as are the three below
    BkQueue* queue = nullptr;
    std::vector<BkEvent*> waits;
    uint64_t number = 0;  // its place on the queue (QueueRecord::commands)
  };
  // The handler of a buffer, image or kernel command; null for any other op.
  using CommandHandler = Status (Session::*)(Command&, proto::Reader&);
  static CommandHandler HandlerFor(uint16_t op);
  Status Enqueue(const proto::FrameHeader& h, proto::Reader& r, CommandHandler handler);
  Status EnqueueWriteBuffer(Command& c, proto::Reader& r);
  Status EnqueueReadBuffer(Command& c, proto::Reader& r);
  Status EnqueueCopyBuffer(Command& c, proto::Reader& r);
  Status EnqueueWriteBufferRect(Command& c, proto::Reader& r);
  Status EnqueueReadBufferRect(Command& c, proto::Reader& r);
  Status EnqueueCopyBufferRect(Command& c, proto::Reader& r);
  Status EnqueueFillBuffer(Command& c, proto::Reader& r);
  Status EnqueueNDRangeKernel(Command& c, proto::Reader& r);
  Status EnqueueMarkerOrBarrier(Command& c, proto::Reader& r);
  Status EnqueueMigrateMemObjects(Command& c, proto::Reader& r);
  // Image commands (server/session_image.cpp).
  Status EnqueueReadImage(Command& c, proto::Reader& r);
  Status EnqueueWriteImage(Command& c, proto::Reader& r);
  Status EnqueueCopyImage(Command& c, proto::Reader& r);
  Status EnqueueCopyImageToBuffer(Command& c, proto::Reader& r);
  Status EnqueueCopyBufferToImage(Command& c, proto::Reader& r);
  Status EnqueueFillImage(Command& c, proto::Reader& r);
  // The image `id`, if `at` lies inside it (CL_INVALID_VALUE if not).
  Result<MemRecord*> ImageIn(uint64_t id, const ImageRegion& at);
  // Looks up the command's queue and wait list.
  Status ResolveCommand(Command& c);
  // The command could not start (Session::CommandFailed).
  Status Fail(const Command& c, const Status& s);
  Result<BkMem*> BufferOf(uint64_t id);
  // The command is on the device as `ev`: counted until it completes, and its event kept
  // under the id the client chose (or released when it chose none). Fails the command if
  // `ev` is an error.
  Status EndCommand(const Command& c, Result<BkEvent*> ev, std::shared_ptr<LaunchTimes> times = {});
  // Reads: whether this thread waits for the device and answers at once (small reads a
  // client blocks on), and the answer itself: the data then the reply, now or when `ev`
  // completes.
  bool WaitsInline(const Command& c, uint64_t size) const;
  // A read of `size` bytes into a buffer of its own: `read(dst, inline_read, want_event)`
  // enqueues it (told whether this thread will wait for it, and whether it needs an event:
  // a read waited for here that the client asked no event for needs none), and the answer
  // follows (AnswerRead), then EndCommand. Defined in server/session_enqueue.cpp, its only
  // user.
  template <typename Read>
  Status ReadAndAnswer(Command& c, uint64_t size, const Read& read);
  void AnswerRead(const Command& c, BkEvent* ev, Bytes dst, bool inline_read);
  void AnswerReadNow(const Command& c, BkEvent* ev, const Bytes& dst);
  void AnswerReadWhenDone(const Command& c, BkEvent* ev, Bytes dst);
  // Launches: the buffers, images and samplers the kernel's arguments name, looked up now;
  // and what `fair` needs to hold and run the launch itself.
  Status BindKernelArgs(KernelRecord& ke);
  Status FillFairLaunch(const Command& c, const KernelRecord& ke, LaunchRequest& req);
  // The launch thread for this launch, or null (then the pipe's launches are on the driver
  // before this returns): see ServerOptions::launch_thread.
  Result<LaunchPipe*> PipeFor(const Command& c);
  // The queue's twin without profiling (LaunchPipe, "Twins"), made at the first call, or null
  // where it has none: the application asked for profiling or more than an in-order queue, a
  // twin could not be made, or ServerOptions::twin_queues is off.
  BkQueue* TwinOf(QueueRecord& q);
  // Waits for the pipe's launches (before any other command), reports a failed one, and
  // enters the events they made (ResolvePipedEvents). An error ends the session.
  Status WaitLaunches();
  void ReportLaunchFailure();
  // The application's events of launches through the pipe, in the order pushed, until the
  // pipe has made them: entered then as EndCommand enters an event, or released at once
  // if the application released them meanwhile (Release, which needs no wait for them).
  struct PipedLaunch {
    uint64_t event_id = 0, queue_id = 0, command = 0;
    uint64_t seq = 0;     // its place in the session's command count (TrackUnfinished)
    uint64_t pushed = 0;  // the pipe's count of launches pushed, this one included
    std::shared_ptr<PipedEvent> made;
    bool released = false;
  };
  std::deque<PipedLaunch> piped_;
  uint64_t piped_events_ = 0;  // such launches so far (logged at the session's end)
  uint64_t launch_events_ = 0;  // launches that came with an event id (logged there too)
  // Enters the events the pipe has made (all: every one, after LaunchPipe::Wait); during a
  // burst, those made so far once kEnterPipedAt wait.
  Status ResolvePipedEvents(bool all = true);
  static constexpr size_t kEnterPipedAt = 2 * LaunchPipe::kSlots;
  Status Flush(proto::Reader& r);
  Status Finish(const proto::FrameHeader& h, proto::Reader& r);
  Status WaitEvents(const proto::FrameHeader& h, proto::Reader& r);
  Status WatchEvent(proto::Reader& r);
  Status Stats(const proto::FrameHeader& h, proto::Reader& r);
  // Images and samplers (server/session_image.cpp).
  Status CreateImage(const proto::FrameHeader& h, proto::Reader& r);
  Status GetSupportedImageFormats(const proto::FrameHeader& h, proto::Reader& r);
  Status CreateSampler(proto::Reader& r);
  // Shared bulk regions (server/session_shared.cpp): the client's memfd, and WriteBuffer /
  // ReadBuffer requests whose data is in it (proto::kFlagShared).
  Status AttachShared(const proto::FrameHeader& h, proto::Reader& r);
  // Moves the connection's frames to control rings (proto/ring.h); the answer goes through them.
  Status AttachRing(const proto::FrameHeader& h, proto::Reader& r);
  Status EnqueueShared(const proto::FrameHeader& h, proto::Reader& r);
  // A large ReadBuffer over the socket on an in-order queue (server/session_bulk.cpp): read
  // in pieces of proto::ReadPieceBytes, each sent as soon as the device has it, while the next is
  // read (a read the client waits for: by blocking calls, here). Answers the client itself
  // (data, then the reply) unless it fails before any piece is on the device; returns the last
  // piece's event (the command's), or null for a read waited for here with no event wanted.
  Result<BkEvent*> PipelinedRead(const proto::FrameHeader& h, BkQueue* queue, BkMem* mem,
                                 size_t offset, size_t size, std::span<BkEvent* const> waits,
                                 bool want_event, BkContext* ctx);
  // The session's pinned staging if it is registered with `ctx`: made on first use (if the
  // server has room for it), for the first context asked only. Null otherwise.
  PinnedStaging* PinnedFor(BkContext* ctx);
  // The largest region this connection may attach: 0 unless it is a Unix socket.
  uint64_t SharedCap() const;
  // Looks up an image (a memory object made by CreateImage) or, with `image` false, a buffer.
  Result<MemRecord*> LookupMem(uint64_t id, bool image);
  // Whether a kernel argument value may go to the argument `index` of kernel `k`.
  Status CheckArgKind(const KernelRecord& k, uint32_t index, KernelArgValue::Kind kind,
                      std::span<const uint8_t> bytes);
  // Charges `size` bytes of device memory to the tenant; false when over its quota.
  bool ChargeMemory(uint64_t size);
  void RefundMemory(uint64_t size);
  // Backpressure: waits while the session has too much unfinished or unsent work.
  bool WaitForRoom();
  // A command (buffer or image) that could not start: the reply a read's caller waits for, a
  // failed event standing in for the command's, and an AsyncError.
  Status CommandFailed(const proto::FrameHeader& h, uint64_t queue_id, uint64_t event_id,
                       const Status& s);
  // The events a command's wait list names, each looked up in this session's table;
  // CL_INVALID_EVENT_WAIT_LIST for an id that is not one of its events.
  Result<std::vector<BkEvent*>> ResolveWaits(const std::vector<uint64_t>& ids);
  // Busy-polls the socket for a while before the reader sleeps in recv() (ServerOptions::poll):
  // until that long after the last request (heartbeats do not count, or an idle client's
  // heartbeats would keep a core busy for ever).
  void PollForNextFrame();
  // Counts a command handed to the device until it completes (backpressure, status). Its
  // event, when it has one (a launch may not: see Scheduler::Direct), is kept as a
  // checkpoint: once complete, the commands counted before it are taken as complete too
  // (exact for in-order queues; for a bound on what a client may queue, close enough).
  void TrackUnfinished(BkEvent* ev);
  // Drops complete checkpoints from the front, at most kReapBatch of them; with `all`, every
  // complete one, from anywhere.
  void ReapUnfinished(bool all);
  // Whether the reader may block on the device for a client that waits (clFinish,
  // clWaitForEvents, a blocking read) instead of handing the answer to the backend's
  // completion thread: one thread hand-off less per synchronous call. Only with
  // --inline-waits (ServerOptions::inline_waits) and while no user event of this session is
  // unset (commands never wait on another session's events), and never on the aside thread.
  // The reader parks while it waits (Parked), so that a wait that lasts leaves the session's
  // other frames to the aside thread (docs/architecture.md, step 10).
  bool CanWaitInline() const;

  // Looks `id` up as an object of kind R (server/session_objects.h); an id of no object, or
  // of another kind, is an error with the OpenCL code for R's type.
  template <typename R>
  Result<R*> Lookup(uint64_t id) {
    auto it = objects_.find(id);
    R* r = it == objects_.end() ? nullptr : std::get_if<R>(&it->second);
    if (!r) return NoSuchObject(id, R::kType);
    return r;
  }
  // The same for a type the request names (Release, GetInfo).
  Result<ObjectRecord*> Lookup(uint64_t id, proto::ObjType type);
  static Status NoSuchObject(uint64_t id, proto::ObjType type);
  Status Insert(uint64_t id, ObjectRecord o);
  // Insert for a record whose backend handles this session owns: released if it fails.
  Status InsertOwned(uint64_t id, ObjectRecord o);
  // Gives back what the object holds: its backend references, its quota, its counts.
  void ReleaseRecord(ObjectRecord& o);
  void ReleaseAll();
  // The bulk blob of `total` bytes a request carries: staged PutData bytes plus the frame's
  // tail (the rest of `r`).
  Result<Bytes> TakeBlob(uint64_t total, proto::Reader& r);
  // The blob of `total` bytes if all of it was staged in pinned memory (ReceivePutData), for
  // the requests that copy from it as it lies (WriteBuffer, CreateBuffer); else nullopt, and
  // TakeBlob takes it (copying it out of pinned memory if it is there).
  std::optional<PinnedStaging::Slot> TakePinnedBlob(uint64_t total, const proto::Reader& r);

  void Reply(const proto::FrameHeader& req, const Status& s, const std::vector<uint8_t>& fields = {});
  void Notify(proto::Op op, uint64_t tag, std::vector<uint8_t> body);
  // An asynchronous request failed: the client learns it through the command's event (if
  // it asked for one) and an AsyncError notification.
  void AsyncFailure(proto::Op op, uint64_t id, const Status& s);

  Server* server_;
  uint64_t id_;
  bool untimed_logged_ = false;  // GetEventProfiling answered with an event's own times
  bool refused_logged_ = false;  // GetEventProfiling refused a complete event's times
  std::unique_ptr<proto::Stream> stream_;
  proto::BufferedReader in_{stream_.get()};  // the reader thread's only way to read stream_
  std::string peer_;
  bool unix_socket_ = false;  // the stream is a Unix socket (ServerOptions::local_poll)
  std::shared_ptr<Outbox> outbox_;
  // Socket read pieces staged and not yet sent (Session::PipelinedRead).
  static constexpr size_t kReadWindowBytes = size_t{32} << 20;
  std::shared_ptr<StagingWindow> read_window_ = std::make_shared<StagingWindow>(kReadWindowBytes);
  std::shared_ptr<PinnedStaging> pinned_;  // see PinnedFor; the reader thread's only
  bool pinned_asked_ = false;              // made or refused once, not asked again
  bool pinned_counted_ = false;            // holds one of Server::BeginPinned's slots
  std::thread writer_;
  bool hello_done_ = false;
  std::string client_name_;
  std::atomic<const Tenant*> tenant_{nullptr};
  std::atomic<bool> heartbeat_{false};
  // Commands handed to the device and not yet seen complete (read by status queries).
  std::atomic<uint64_t> in_flight_{0};

  // rgpud's own queues in a context: the one held launches run on, or (control) the one
  // that stops preemptible runs without waiting behind them.
  Result<BkQueue*> ExecQueue(uint64_t ctx_id, int device, bool control = false);
  Result<BkProgram*> OriginalProgram(ProgramRecord& prog);
  std::map<std::pair<uint64_t, int>, BkQueue*> exec_queues_;
  // The scheduler's key for this session's tenant (Scheduler::TenantKeyOf), made at the first
  // launch: the tenant is fixed at Hello.
  std::string sched_key_;
  // Launch frames in a row, up to this one (Serve), and the thread that enqueues them once a
  // burst is on (PipeFor).
  int launch_run_ = 0;
  // Waits for events in a row, each after a launch (a closed loop: launch, flush, wait for an
  // earlier launch); with SchedulerOptions::pipe_loops, kBurst of them start the launch
  // thread as a burst does (PipeFor).
  int loop_waits_ = 0;
  bool launched_since_wait_ = false;
  bool loop_pipe_ = false;  // PipeFor's last pipe came for such a loop, not a burst
  // The scheduler held the last launch: only then does a wait nudge the launch thread (a
  // tenant alone in a loop launches from the session thread, and the thread would only spin).
  bool last_launch_held_ = false;
  std::unique_ptr<LaunchPipe> pipe_;

  // Parking (Park): who serves the session's frames. The reader (kReader), or nobody while
  // the reader is parked (kParked, since parked_since_: steady-clock nanoseconds), or the
  // aside thread, which takes them from kParked (the park watcher hands them over) and holds
  // them as kAsideBusy while it serves a frame; between frames (kAsideIdle) the reader takes
  // them back at once. Each change is one compare-and-swap.
  enum : int { kReader, kParked, kAsideIdle, kAsideBusy };
  std::atomic<int> frames_{kReader};
  std::atomic<int64_t> parked_since_{0};
  std::atomic<bool> want_back_{false};   // the reader waits for the aside thread's frame
  std::atomic<bool> aside_done_{false};  // the session ended aside: nothing more is handed over
  // The idle aside thread's nap: bytes (or a wake byte for a control ring's) end it sooner.
  static constexpr std::chrono::microseconds kAsideTick{250};
  std::mutex aside_mu_;
  std::condition_variable aside_cv_;
  bool aside_go_ = false, aside_quit_ = false;  // GUARDED_BY(aside_mu_)
  std::thread aside_thread_;
  // The next fields are the serving thread's: the reader's, or the aside thread's while the
  // reader is parked (handed over under aside_mu_).
  bool serving_aside_ = false;
  std::optional<std::string> ended_aside_;  // the aside thread saw the session end: why
  std::vector<proto::ReleaseRequest> deferred_releases_;  // served aside, done after the wait
  uint64_t served_aside_ = 0;                             // frames (logged at the end)

  // Touched only by the thread serving the session's frames (see above), hence no lock.
  std::unordered_map<uint64_t, ObjectRecord> objects_;
  Bytes staging_;  // PutData bytes of the blob being uploaded (null when none)
  // ... or, for a blob of 512 KiB or more once the session has pinned staging, in a slot of
  // it (the device then copies straight from it): the slot and how much has arrived.
  std::optional<PinnedStaging::Slot> staging_pinned_;
  uint64_t staging_pinned_have_ = 0;
  uint64_t staging_total_ = 0;  // the staged blob's size, as its first chunk named it
  uint64_t first_context_ = 0;  // the id of the session's first context (pinned staging's)
  std::shared_ptr<SharedRegion> shared_;  // the client's shared bulk region, if attached
  uint64_t shared_bytes_ = 0;             // bytes moved through it (logged at the end)
  size_t unset_user_events_ = 0;     // user events created and not yet set
  struct Checkpoint {
    BkEvent* event;  // one reference
    uint64_t seq;    // the command's number among those issued
  };
  std::deque<Checkpoint> checkpoints_;  // see TrackUnfinished
  // At most this many complete checkpoints are released on one command's path.
  static constexpr size_t kReapBatch = 4;
  uint64_t issued_ = 0, completed_ = 0;
  size_t tracked_since_reap_ = 0;
  std::atomic<size_t> live_objects_{0};
  SessionStats stats_;

  // RGPU_TRACE_REQUESTS=1: where a request's time goes inside rgpud (logged at session end):
  // a launch's frame to its enqueue, a blocking read's frame to the device's answer, and
  // that answer to the socket. Reader thread only.
  struct RequestTrace {
    std::vector<float> launch_us, submit_us, read_wait_us, send_us;  // submit: frame to Scheduler::Submit
    // Appends the microseconds since `since` (at most a million samples per figure).
    static void Keep(std::vector<float>& v, std::chrono::steady_clock::time_point since);
    void Log(uint64_t session) const;
  };
  std::unique_ptr<RequestTrace> trace_;
  std::chrono::steady_clock::time_point frame_in_{};  // when the current frame's body arrived
  std::chrono::steady_clock::time_point last_request_{};  // the last frame but Heartbeats
};

}  // namespace rgpu::server
