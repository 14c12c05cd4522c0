#include "server/session.h"

#include <CL/cl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <system_error>
#include <thread>

#include "proto/cpu_relax.h"
#include "proto/info.h"
#include "proto/messages.h"
#include "proto/pieces.h"
#include "proto/stamps.h"
#include "proto/thread_name.h"
#include "server/server.h"

namespace rgpu::server {

using proto::FrameHeader;
using proto::ObjType;
using proto::Op;
using proto::Reader;
using proto::Writer;

// ---------------------------------------------------------------- Outbox

void Outbox::Push(FrameHeader h, std::vector<uint8_t> body) {
  h.body_len = static_cast<uint32_t>(body.size());
  std::vector<uint8_t> framed(proto::kHeaderSize + body.size());
  proto::EncodeHeader(h, framed.data());
  if (!body.empty()) std::memcpy(framed.data() + proto::kHeaderSize, body.data(), body.size());
  PushFramed(std::move(framed));
}

void Outbox::PushFramed(std::vector<uint8_t> frames) {
  std::unique_lock lk(mu_);
  if (closed_) return;
  if (!sending_ && control_.empty() && bulk_.empty()) {
    // Nothing queued and nobody writing: send from this thread (often a device completion
    // callback), sparing a wake-up of the writer thread on every answer. Never block here:
    // what the socket does not take at once goes to the writer.
    sending_ = true;
    lk.unlock();
    struct iovec iov{frames.data(), frames.size()};
    const size_t sent = stream_->TrySend(&iov, 1);
    lk.lock();
    sending_ = false;
    if (sent < frames.size() && !closed_) {
      Frame rest;
      rest.raw = true;
      rest.body.assign(frames.begin() + sent, frames.end());
      pending_ += rest.body.size();
      control_.push_front(std::move(rest));
    }
    // The writer sleeps until there is something to send. Waking it when there is nothing
    // (the usual case: the answer went out whole) cost a thread wake-up per answer, which
    // on a small machine takes a core from the device's own threads.
    if (closed_ || !control_.empty() || !bulk_.empty()) cv_.notify_one();
    return;
  }
  Frame f;
  f.raw = true;
  f.body = std::move(frames);
  pending_ += f.body.size();
  control_.push_back(std::move(f));
  cv_.notify_one();
}

void Outbox::PushBulk(FrameHeader h, std::vector<uint8_t> prefix, Bytes data, size_t off,
                      size_t len) {
  std::lock_guard lk(mu_);
  if (closed_) return;
  pending_ += proto::kHeaderSize + prefix.size() + len;
  bulk_.push_back(Frame{h, std::move(prefix), false, std::move(data), off, len});
  cv_.notify_one();
}

void Outbox::Run() {
  proto::NameThread("rgpud-writer");
  struct Finished {
    Outbox* o;
    ~Finished() {
      std::lock_guard lk(o->mu_);
      o->finished_ = true;
      o->drained_.notify_all();
    }
  } finished{this};
  for (;;) {
    Frame f;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return !sending_ && (closed_ || !control_.empty() || !bulk_.empty()); });
      if (!control_.empty()) {
        f = std::move(control_.front());
        control_.pop_front();
      } else if (!bulk_.empty()) {
        f = std::move(bulk_.front());
        bulk_.pop_front();
      } else {
        return;  // closed and drained
      }
      sending_ = true;
    }
    Status s;
    if (f.raw) {
      struct iovec iov{f.body.data(), f.body.size()};
      s = stream_->SendAll(&iov, 1);
    } else {
      f.h.body_len = static_cast<uint32_t>(f.body.size() + f.len);
      s = stream_->SendFrame(f.h, f.body.data(), f.body.size(),
                             f.bulk ? f.bulk->data() + f.off : nullptr, f.len);
    }
    std::lock_guard lk(mu_);
    sending_ = false;
    const size_t wrote = (f.raw ? 0 : proto::kHeaderSize) + f.body.size() + f.len;
    pending_ -= std::min(pending_, wrote);
    drained_.notify_all();
    if (!s.ok()) {
      closed_ = true;
      control_.clear();
      bulk_.clear();
      // Nothing more can reach the client (a failed socket, or control rings whose client
      // set their indices out of range): end the session's reading too.
      if (s.is_protocol()) spdlog::info("ending a session: {}", s.message());
      stream_->Shutdown();
      return;
    }
  }
}

size_t Outbox::Pending() {
  std::lock_guard lk(mu_);
  return pending_;
}

void Outbox::Reserve(size_t n) {
  std::lock_guard lk(mu_);
  pending_ += n;
}

void Outbox::Unreserve(size_t n) {
  std::lock_guard lk(mu_);
  pending_ -= std::min(pending_, n);
  drained_.notify_all();
}

bool Outbox::WaitDrained(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  return drained_.wait_for(lk, timeout, [&] { return finished_; });
}

bool Outbox::WaitBelow(size_t limit) {
  std::unique_lock lk(mu_);
  drained_.wait(lk, [&] { return closed_ || pending_ <= limit; });
  return !closed_;
}

void Outbox::Close() {
  std::lock_guard lk(mu_);
  closed_ = true;
  cv_.notify_all();
  drained_.notify_all();
}

std::vector<uint8_t> ReplyBody(const Status& s, const std::vector<uint8_t>& fields) {
  std::vector<uint8_t> body;
  Writer w(&body);
  proto::ReplyStatus::Of(s).EncodeTo(w);
  w.raw(fields.data(), fields.size());
  return body;
}

std::vector<uint8_t> ReadDataFields(uint64_t offset) {
  std::vector<uint8_t> body;  // not EncodeBody: GCC 12 warns (wrongly) where that inlines
  Writer w(&body);
  proto::ReadDataNotice{offset}.EncodeTo(w);
  return body;
}

void SendReply(Outbox& out, uint16_t op, uint64_t tag, const Status& s,
               const std::vector<uint8_t>& fields) {
  if (tag == 0) return;
  out.Push(FrameHeader{0, op, proto::kFlagReply, tag}, ReplyBody(s, fields));
}

namespace {

// How long a wait inline waits for its launches' turn (Server::AwaitDispatch) before it
// waits in the driver all the same: a turn comes within a few quanta per tenant.
constexpr std::chrono::milliseconds kAwaitTurnLimit{1000};

int32_t ErrorFor(ObjType t) {
  switch (t) {
    case ObjType::Context: return CL_INVALID_CONTEXT;
    case ObjType::Queue: return CL_INVALID_COMMAND_QUEUE;
    case ObjType::Mem: return CL_INVALID_MEM_OBJECT;
    case ObjType::Program: return CL_INVALID_PROGRAM;
    case ObjType::Kernel: return CL_INVALID_KERNEL;
    case ObjType::Event: return CL_INVALID_EVENT;
    case ObjType::Sampler: return CL_INVALID_SAMPLER;
    default: return CL_INVALID_VALUE;
  }
}

}  // namespace

// ---------------------------------------------------------------- Session

Session::Session(Server* server, uint64_t id, std::unique_ptr<proto::Stream> stream,
                 std::string peer)
    : server_(server), id_(id), stream_(std::move(stream)), peer_(std::move(peer)) {
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  unix_socket_ = getsockname(stream_->fd(), reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
                 local.ss_family == AF_UNIX;
  outbox_ = std::make_shared<Outbox>(stream_.get());
  writer_ = std::thread([ob = outbox_] { ob->Run(); });
  if (TraceRequests()) trace_ = std::make_unique<RequestTrace>();
}

void Session::RequestTrace::Log(uint64_t session) const {
  auto q = [](std::vector<float> v, double at) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return static_cast<double>(v[std::min(v.size() - 1, static_cast<size_t>(at * v.size()))]);
  };
  spdlog::warn("session {} request trace (us, p50/p99): launch frame to enqueued {:.1f}/{:.1f} (n {}; to the "
               "scheduler {:.1f}/{:.1f}), read frame to device answer {:.1f}/{:.1f} (n {}), answer to socket "
               "{:.1f}/{:.1f}",
               session, q(launch_us, 0.5), q(launch_us, 0.99), launch_us.size(), q(submit_us, 0.5),
               q(submit_us, 0.99), q(read_wait_us, 0.5),
               q(read_wait_us, 0.99), read_wait_us.size(), q(send_us, 0.5), q(send_us, 0.99));
}

Session::~Session() {
  {
    std::lock_guard lk(aside_mu_);
    aside_quit_ = true;
    aside_cv_.notify_all();
  }
  if (aside_thread_.joinable()) aside_thread_.join();
  outbox_->Close();
  if (writer_.joinable()) writer_.join();
  pinned_.reset();  // unregistered in ReleaseAll; its memory goes with the last slot held
  if (pinned_counted_) server_->EndPinned();
}

std::optional<std::string> Session::ServeFrame(std::vector<uint8_t>& body) {
  if (!WaitForRoom()) return std::string("client closed the connection");
  if (!serving_aside_) PollForNextFrame();
  FrameHeader h;
  uint8_t hdr[proto::kHeaderSize];
  Status s = in_.Read(hdr, proto::kHeaderSize);
  if (s.ok()) {
    h = proto::DecodeHeader(hdr);
    // The poll window runs from here (PollForNextFrame): one clock read a frame, ~20 ns.
    if (h.op != static_cast<uint16_t>(Op::Heartbeat))
      last_request_ = std::chrono::steady_clock::now();
    if (h.body_len > server_->options().max_frame)
      s = Status::Protocol("frame body of " + std::to_string(h.body_len) +
                           " bytes exceeds the limit of " +
                           std::to_string(server_->options().max_frame));
  }
  // Every frame but a launch waits for the launch thread's launches (PipeFor); setting an
  // argument (kept here until a launch) and a heartbeat neither wait nor end a burst, nor
  // does releasing an event (Release decides, once it knows what is released). A flush
  // and a wait for events end a burst and wait only for what they need (Flush, WaitEvents).
  if (s.ok()) {
    const auto op = static_cast<Op>(h.op);
    if (op == Op::WaitEvents) {
      loop_waits_ = launched_since_wait_ ? loop_waits_ + 1 : 0;
      launched_since_wait_ = false;
    }
    if (op == Op::NDRangeKernel) {
      ++launch_run_;
      launched_since_wait_ = true;
    } else if (op != Op::SetKernelArg && op != Op::Heartbeat && op != Op::Release) {
      launch_run_ = 0;
      const bool own_wait =
          (op == Op::Flush || op == Op::WaitEvents) && server_->sched_options().pipe_loops;
      if (pipe_ && !own_wait) s = WaitLaunches();
    }
  }
  if (s.ok() && h.op == static_cast<uint16_t>(Op::PutData) && hello_done_ && h.flags == 0) {
    s = ReceivePutData(h);
    if (s.ok()) {
      stats_.bytes_in += proto::kHeaderSize + h.body_len;
      if (const Tenant* t = tenant()) server_->Usage(t).bytes_in += proto::kHeaderSize + h.body_len;
      return std::nullopt;
    }
  } else if (s.ok()) {
    body.resize(h.body_len);
    if (h.body_len) s = in_.Read(body.data(), h.body_len);
  }
  if (!s.ok()) {
    if (!s.is_protocol()) return std::string("client closed the connection");
    server_->metrics().CountError(ErrorKind::Protocol);
    return s.message();
  }
  stats_.bytes_in += proto::kHeaderSize + body.size();
  if (const Tenant* t = tenant()) server_->Usage(t).bytes_in += proto::kHeaderSize + body.size();
  if (trace_ && !serving_aside_) frame_in_ = std::chrono::steady_clock::now();
  if (serving_aside_) ++served_aside_;
  Stamp(stamps::Point::kFrameIn, h.op);
  Reader r(body.data(), body.size());
  // A latency-critical tenant's requests (its blocking reads too) keep best-effort work
  // off the device while they are served (Scheduler::LatencyCriticalRequest).
  const Tenant* t = tenant();
  const bool lc = t && t->priority == Priority::LatencyCritical;
  if (lc) server_->LatencyCriticalRequest(true);
  s = Dispatch(h, r);
  if (pipe_) ReportLaunchFailure();
  Stamp(stamps::Point::kFrameDone, h.op);
  if (lc) server_->LatencyCriticalRequest(false);
  // What was released while the reader was parked, now that the reader's frame is done.
  if (!serving_aside_ && !deferred_releases_.empty()) ReleaseDeferred();
  if (!s.ok() && s.is_protocol()) {
    std::string reason =
        std::string("protocol error in ") + proto::OpName(h.op) + ": " + s.message();
    if (hello_done_) server_->metrics().CountError(ErrorKind::Protocol);
    // Tell the client why before hanging up.
    Notify(Op::Goodbye, 0, proto::EncodeBody(proto::GoodbyeNotice{reason}));
    return reason;
  }
  if (static_cast<Op>(h.op) == Op::Goodbye) return std::string("client closed the connection");
  // The aside thread saw the session end while this frame was served.
  if (!serving_aside_ && ended_aside_) return *ended_aside_;
  return std::nullopt;
}

void Session::Serve() {
  std::string reason = "client closed the connection";
  std::vector<uint8_t> body;
  for (;;) {
    if (auto end = ServeFrame(body)) {
      reason = std::move(*end);
      break;
    }
  }
  uint64_t piped = 0, on_twins = 0;
  if (pipe_) {
    // Its events enter the table (or are released), to go with the rest (ReleaseAll); a
    // protocol error there changes nothing now.
    (void)WaitLaunches();
    piped = pipe_->Pushed();
    on_twins = pipe_->OnTwins();
    pipe_.reset();
  }
  if (trace_) trace_->Log(id_);
  size_t objects = objects_.size();
  const std::string shared_note =
      (shared_bytes_ ? ", " + std::to_string(shared_bytes_ >> 10) + " KiB through the shared region"
                     : "") +
      (stream_->HasRing() ? std::string(", frames through control rings") : "") +
      (launch_events_ ? ", " + std::to_string(launch_events_) + " launches with an event" : "") +
      (served_aside_
           ? ", " + std::to_string(served_aside_) + " frames served aside during long waits"
           : "") +
      (piped ? ", " + std::to_string(piped) + " launches through its launch thread (" +
                   std::to_string(piped_events_) + " with the application's events, " +
                   std::to_string(on_twins) + " on unprofiled twins)"
             : "");
  ReleaseAll();
  if (const Tenant* t = tenant()) server_->Leave(t);
  // Connections that never authenticated are counted by the gate, not logged one by one.
  spdlog::log(tenant() ? spdlog::level::info : spdlog::level::debug,
              "session {} end: {} ({}), {} commands, {} objects released{}", id_, peer_, reason,
              stats_.commands.load(), objects, shared_note);
  // Let the last answers (a Goodbye, say) go out, but never wait long on a client that
  // does not read.
  outbox_->Close();
  outbox_->WaitDrained(std::chrono::seconds(2));
  stream_->Shutdown();
  if (writer_.joinable()) writer_.join();
}

void Session::PollForNextFrame() {
  const Tenant* t = tenant();
  if (!t) return;  // not before authentication
  if (in_.Buffered()) return;  // the next frame is here already (a burst): nothing to wait for
  const auto& o = server_->options();
  const bool lc = t->priority == Priority::LatencyCritical;
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
      last_request_ + std::max(lc ? o.lc_poll : o.poll, unix_socket_ ? o.local_poll : o.poll) -
      std::chrono::steady_clock::now());
  if (left.count() <= 0 || !server_->BeginPoll(lc)) return;
  in_.Spin(left, [this] { return !server_->stopping(); });
  server_->EndPoll();
}

Status Session::CommandFailed(const FrameHeader& h, uint64_t queue_id, uint64_t event_id,
                              const Status& s) {
  const Op op = static_cast<Op>(h.op);
  if (op == Op::ReadBuffer || op == Op::ReadBufferRect || op == Op::ReadImage) Reply(h, s);
  // Stand a failed event in for the command so that waiters see its status.
  auto q = Lookup<QueueRecord>(queue_id);
  if (event_id != 0 && q.ok()) {
    auto ctx = Lookup<ContextRecord>((*q)->parent);
    auto ev = ctx.ok() ? server_->backend().FailedEvent((*ctx)->handle, s.code())
                       : Result<BkEvent*>(ctx.status());
    if (ev.ok()) {
      EventRecord e;
      e.handle = *ev;
      e.parent = (*q)->parent;
      InsertOwned(event_id, std::move(e));
    }
  }
  AsyncFailure(op, event_id, s);
  return Status::Ok();
}

Status Session::WaitLaunches() {
  pipe_->Wait();
  ReportLaunchFailure();
  return piped_.empty() ? Status::Ok() : ResolvePipedEvents();
}

void Session::ReportLaunchFailure() {
  // As a launch without an event that failed in this thread is (CommandFailed).
  if (Status f = pipe_->TakeFailure(); !f.ok()) AsyncFailure(Op::NDRangeKernel, 0, f);
}

bool Session::CanWaitInline() const {
  return unset_user_events_ == 0 && server_->options().inline_waits && !serving_aside_;
}

// ---------------------------------------------------------------- parking and the aside thread

void Session::Park() {
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  server_->NoteParked(now);
  parked_since_.store(now, std::memory_order_relaxed);
  frames_.store(kParked);  // publishes parked_since_ and what the reader did before
}

void Session::Unpark() {
  int s = kParked;
  if (frames_.compare_exchange_strong(s, kReader)) return;
  // Handed to the aside thread: taken back at once if it serves nothing now. Between frames
  // it holds them for a look at the socket (a system call) every nap: spin through that
  // rather than sleep, as a sleeper's wake-up costs tens to hundreds of microseconds at the
  // tail (bench/results/2026-12-04-session49/call7/). Only a frame it is serving is waited
  // for.
  const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
  for (unsigned i = 0;; ++i) {
    s = kAsideIdle;
    if (frames_.compare_exchange_weak(s, kReader)) return;
    if ((i & 15) == 15 && std::chrono::steady_clock::now() > spin_until) break;
    proto::CpuRelax();
  }
  std::unique_lock lk(aside_mu_);
  want_back_.store(true);
  for (;;) {
    s = kAsideIdle;
    if (frames_.compare_exchange_strong(s, kReader)) break;
    aside_cv_.wait(lk, [&] { return frames_.load() != kAsideBusy; });
  }
  want_back_.store(false);
}

void Session::ServeAsideIfParked(std::chrono::steady_clock::time_point now,
                                 std::chrono::microseconds after) {
  if (frames_.load() != kParked || aside_done_.load()) return;
  const int64_t since = parked_since_.load(std::memory_order_relaxed);
  if (now.time_since_epoch().count() - since < std::chrono::nanoseconds(after).count()) return;
  int s = kParked;
  if (!frames_.compare_exchange_strong(s, kAsideIdle)) return;  // unparked meanwhile
  std::lock_guard lk(aside_mu_);
  if (!aside_thread_.joinable()) {
    try {
      aside_thread_ = std::thread(&Session::AsideLoop, this);
    } catch (const std::system_error& e) {
      // No thread to be had (the process's limit): the reader keeps its frames, as before
      // there was an aside thread, and this session is not asked again.
      spdlog::warn("session {}: no aside thread ({}); its other frames wait for its waits", id_,
                   e.what());
      aside_done_.store(true);
      s = kAsideIdle;
      frames_.compare_exchange_strong(s, kParked);  // or the reader took them back already
      return;
    }
  }
  aside_go_ = true;
  aside_cv_.notify_all();
}

void Session::AsideLoop() {
  proto::NameThread("rgpud-aside");
  std::unique_lock lk(aside_mu_);
  for (;;) {
    aside_cv_.wait(lk, [&] { return aside_go_ || aside_quit_; });
    if (aside_quit_) break;
    aside_go_ = false;
    lk.unlock();
    ServeAside();
    lk.lock();
  }
}

void Session::ServeAside() {
  std::vector<uint8_t> body;
  for (;;) {
    int s = kAsideIdle;
    if (!frames_.compare_exchange_strong(s, kAsideBusy)) return;  // the reader took them back
    // Only what is there: the reader takes the frames back as soon as its wait ends.
    bool served = false;
    if (!want_back_.load() && !ended_aside_ && (in_.Buffered() || stream_->Readable())) {
      serving_aside_ = true;
      if (auto end = ServeFrame(body)) {
        // The session ends: the reader ends it once its wait is over; nothing more aside.
        ended_aside_ = std::move(end);
        aside_done_.store(true);
      }
      serving_aside_ = false;
      served = true;
    }
    frames_.store(kAsideIdle);
    if (want_back_.load()) {
      std::lock_guard lk(aside_mu_);
      aside_cv_.notify_all();
    }
    // Bytes end the nap (with control rings the client sends a wake byte while it lasts). A
    // poll here instead, in the reader's poll window, took a second thread's 4-byte reads
    // beside an H200 wait from 113-117 to 101-102 us at p50: not worth a core
    // (bench/results/2026-12-04-session49/call6/).
    if (!served) stream_->WaitReadable(kAsideTick);
  }
}

void Session::ReleaseDeferred() {
  auto reqs = std::move(deferred_releases_);
  deferred_releases_.clear();
  for (const auto& req : reqs)
    (void)ReleaseObject(req);  // a launch-thread failure is reported there
}

bool Session::WaitForRoom() {
  const auto& o = server_->options();
  if (!outbox_->WaitBelow(o.max_outbox_bytes)) return false;
  // The wait is only ever long for a client that floods the device with commands.
  while (in_flight_.load() >= o.max_commands_in_flight) {
    ReapUnfinished(true);
    if (in_flight_.load() < o.max_commands_in_flight || server_->stopping()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void Session::TrackUnfinished(BkEvent* ev) {
  ++issued_;
  if (ev) {
    server_->backend().Retain(ObjType::Event, ev);
    checkpoints_.push_back({ev, issued_});
  }
  in_flight_.store(issued_ - completed_, std::memory_order_relaxed);
  // Status queries are cheap (about 0.3 us on the H200) but need not be made per command.
  // Releasing a complete event is not (NVIDIA: a batch of 32 took 50-136 us on an H100,
  // which every 32nd request of a client paid): once a few checkpoints wait, each command
  // drops a few, so no one command pays for many. Only a command that adds a checkpoint
  // looks at once (a launch without an event, most of a burst, adds none: asking the driver
  // on each of those cost a status query per launch while the front one ran).
  if (++tracked_since_reap_ >= 64 || (ev && checkpoints_.size() > kReapBatch))
    ReapUnfinished(false);
}

void Session::ReapUnfinished(bool all) {
  tracked_since_reap_ = 0;
  Backend& bk = server_->backend();
  auto drop_front = [&] {
    completed_ = std::max(completed_, checkpoints_.front().seq);
    bk.Release(ObjType::Event, checkpoints_.front().event);
    checkpoints_.pop_front();
  };
  for (size_t n = 0; !checkpoints_.empty() && (all || n < kReapBatch) &&
                     bk.EventStatus(checkpoints_.front().event) <= CL_COMPLETE;
       ++n)
    drop_front();
  if (all) {
    // Out-of-order queues, or another queue's command at the front: look past it.
    std::erase_if(checkpoints_, [&](const Checkpoint& c) {
      if (bk.EventStatus(c.event) > CL_COMPLETE) return false;
      bk.Release(ObjType::Event, c.event);
      ++completed_;  // that one command, at least
      return true;
    });
    if (checkpoints_.empty()) completed_ = issued_;
  }
  in_flight_.store(issued_ - std::min(completed_, issued_), std::memory_order_relaxed);
}

bool Session::ChargeMemory(uint64_t size) {
  auto& used = server_->Usage(tenant()).mem_bytes;
  const uint64_t quota = tenant()->mem_quota_bytes;
  uint64_t cur = used.load();
  do {
    if (quota != 0 && (size > quota || cur > quota - size)) return false;
  } while (!used.compare_exchange_weak(cur, cur + size));
  return true;
}

void Session::RefundMemory(uint64_t size) { server_->Usage(tenant()).mem_bytes -= size; }

Status Session::Dispatch(const FrameHeader& h, Reader& r) {
  // A sign of life only: the watchdog saw its bytes arrive (Server::WatchSessions).
  if (h.op == static_cast<uint16_t>(Op::Heartbeat) && hello_done_)
    return h.flags == 0 && r.done() ? Status::Ok() : Status::Protocol("malformed Heartbeat");
  ++stats_.commands;
  server_->CountCommand();
  if (const Tenant* t = tenant()) ++server_->Usage(t).commands;
  if (!hello_done_ && static_cast<Op>(h.op) != Op::Hello)
    return Status::Protocol("the first frame must be Hello");
  // The request flags: kFlagWaiting, on reads; kFlagShared, on WriteBuffer, ReadBuffer and
  // CreateBuffer.
  const Op rop = static_cast<Op>(h.op);
  if (h.flags & proto::kFlagShared) {
    const uint16_t rest = h.flags & ~proto::kFlagShared;
    if (rop == Op::CreateBuffer && rest == 0) return CreateBufferShared(r);
    if (!(rop == Op::WriteBuffer && rest == 0) &&
        !(rop == Op::ReadBuffer && (rest == 0 || rest == proto::kFlagWaiting)))
      return Status::Protocol("flags " + std::to_string(h.flags) + " not allowed on this request");
    return EnqueueShared(h, r);
  }
  if (h.flags != 0 && !(h.flags == proto::kFlagWaiting &&
                        (rop == Op::ReadBuffer || rop == Op::ReadBufferRect ||
                         rop == Op::ReadImage)))
    return Status::Protocol("flags " + std::to_string(h.flags) + " not allowed on this request");
  if (CommandHandler handler = HandlerFor(h.op)) return Enqueue(h, r, handler);
  switch (static_cast<Op>(h.op)) {
    case Op::Hello: return Hello(h, r);
    case Op::Goodbye: return Status::Ok();
    case Op::AttachShared: return AttachShared(h, r);
    case Op::AttachRing: return AttachRing(h, r);
    case Op::CreateContext: return CreateContext(r);
    case Op::CreateQueue: return CreateQueue(r);
    case Op::CreateBuffer: return CreateBuffer(r);
    case Op::CreateSubBuffer: return CreateSubBuffer(r);
    case Op::CreateProgramWithSource: return CreateProgramWithSource(r);
    case Op::CreateProgramWithBinary: return CreateProgramWithBinary(h, r);
    case Op::BuildProgram: return BuildProgram(h, r);
    case Op::CompileProgram: return CompileProgram(h, r);
    case Op::LinkProgram: return LinkProgram(h, r);
    case Op::CreateKernel: return CreateKernel(r);
    case Op::CloneKernel: return CloneKernel(r);
    case Op::SetKernelArg: return SetKernelArg(r);
    case Op::CreateUserEvent: return CreateUserEvent(r);
    case Op::SetUserEventStatus: return SetUserEventStatus(r);
    case Op::Release: return Release(r);
    case Op::GetInfo: return GetInfo(h, r);
    case Op::GetEventProfiling: return GetEventProfiling(h, r);
    case Op::PutData: return Status::Protocol("PutData out of place");
    case Op::Flush: return Flush(r);
    case Op::Finish: return Finish(h, r);
    case Op::WaitEvents: return WaitEvents(h, r);
    case Op::WatchEvent: return WatchEvent(r);
    case Op::Stats: return Stats(h, r);
    case Op::CreateImage: return CreateImage(h, r);
    case Op::GetSupportedImageFormats: return GetSupportedImageFormats(h, r);
    case Op::CreateSampler: return CreateSampler(r);
    default:
      return Status::Protocol("unknown op " + std::to_string(h.op));
  }
}

void Session::Reply(const FrameHeader& req, const Status& s, const std::vector<uint8_t>& fields) {
  SendReply(*outbox_, req.op, req.tag, s, fields);
}

void Session::Notify(Op op, uint64_t tag, std::vector<uint8_t> body) {
  outbox_->Push(FrameHeader{0, static_cast<uint16_t>(op), proto::kFlagNotify, tag},
                std::move(body));
}

void Session::AsyncFailure(Op op, uint64_t id, const Status& s) {
  spdlog::debug("session {}: {} failed: {}", id_, proto::OpName(static_cast<uint16_t>(op)),
                s.ToString());
  const proto::AsyncErrorNotice note{static_cast<uint16_t>(op), id,
                                     s.code() < 0 ? s.code() : CL_OUT_OF_RESOURCES, s.message()};
  Notify(Op::AsyncError, 0, proto::EncodeBody(note));
  server_->metrics().CountError(s.code() == CL_MEM_OBJECT_ALLOCATION_FAILURE ? ErrorKind::Quota
                                                                          : ErrorKind::Command);
}

Status Session::NoSuchObject(uint64_t id, ObjType type) {
  return Status::Error(ErrorFor(type), std::string("no ") + proto::ObjTypeName(type) + " with id " +
                                           std::to_string(id) + " in this session");
}

Result<ObjectRecord*> Session::Lookup(uint64_t id, ObjType type) {
  auto it = objects_.find(id);
  if (it == objects_.end() || TypeOf(it->second) != type) return NoSuchObject(id, type);
  return &it->second;
}

Status Session::Insert(uint64_t id, ObjectRecord o) {
  if (id == 0) return Status::Protocol("object id 0 is reserved");
  if (objects_.size() >= server_->options().max_objects_per_session)
    return Status::Protocol("too many objects in one session");
  auto [it, inserted] = objects_.try_emplace(id, std::move(o));
  if (!inserted) return Status::Protocol("object id " + std::to_string(id) + " already in use");
  ++live_objects_;
  server_->CountObjects(+1);
  return Status::Ok();
}

Status Session::InsertOwned(uint64_t id, ObjectRecord o) {
  void* handle = HandleOf(o);
  const auto* k = std::get_if<KernelRecord>(&o);
  BkKernel* sched_kernel = k ? k->sched_kernel : nullptr;
  ObjType type = TypeOf(o);
  Status s = Insert(id, std::move(o));
  if (!s.ok()) {
    server_->backend().Release(type, handle);
    if (sched_kernel) server_->backend().Release(ObjType::Kernel, sched_kernel);
  }
  return s;
}

void Session::ReleaseRecord(ObjectRecord& o) {
  Backend& bk = server_->backend();
  std::visit(
      [&](auto& r) {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, KernelRecord>)
          server_->ForgetKernel(r.handle, r.sched_kernel);
        bk.Release(R::kType, r.handle);
        if constexpr (std::is_same_v<R, ProgramRecord>)
          if (r.original) bk.Release(ObjType::Program, r.original);
        if constexpr (std::is_same_v<R, KernelRecord>)
          if (r.sched_kernel) bk.Release(ObjType::Kernel, r.sched_kernel);
        if constexpr (std::is_same_v<R, MemRecord>)
          if (r.charged) RefundMemory(r.charged);
        if constexpr (std::is_same_v<R, QueueRecord>) {
          if (r.twin)
            bk.Release(ObjType::Queue, r.twin);  // behind a barrier on r (LaunchPipe::Wait)
          server_->CountQueue(r.device, -1);
        }
      },
      o);
  --live_objects_;
  server_->CountObjects(-1);
}

void Session::ReleaseAll() {
  // Fail the user events nobody will ever set, so that the commands waiting on them end,
  // then let every queue drain before the memory it may be using goes away.
  for (auto& [id, o] : objects_)
    if (auto* ev = std::get_if<EventRecord>(&o); ev && ev->is_user_event)
      server_->backend().SetUserEventStatus(ev->handle,
                                            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  // Launches the scheduler still holds for this session are dropped (their events fail).
  server_->CancelScheduled(id_);
  for (auto& [id, o] : objects_)
    if (auto* q = std::get_if<QueueRecord>(&o)) server_->backend().Finish(q->handle);
  for (auto& [key, q] : exec_queues_) {
    server_->backend().Finish(q);
    server_->backend().Release(ObjType::Queue, q);
  }
  exec_queues_.clear();
  // Nothing copies to or from pinned staging any more: its registration goes now, while the
  // backend is sure to be there (a write's completion may hold a slot until much later).
  if (pinned_) pinned_->Unregister();
  if (shared_) shared_->Unregister();
  for (auto& c : checkpoints_) server_->backend().Release(ObjType::Event, c.event);
  checkpoints_.clear();
  completed_ = issued_;
  in_flight_ = 0;
  for (ObjType t : {ObjType::Event, ObjType::Kernel, ObjType::Program, ObjType::Sampler,
                    ObjType::Mem, ObjType::Queue, ObjType::Context}) {
    for (auto it = objects_.begin(); it != objects_.end();) {
      if (TypeOf(it->second) == t) {
        ReleaseRecord(it->second);
        it = objects_.erase(it);
      } else {
        ++it;
      }
    }
  }
  staging_.reset();
  staging_pinned_.reset();
  shared_.reset();  // unmapped once the device commands still using it have completed
}

// ---------------------------------------------------------------- handlers

Status Session::Hello(const FrameHeader& h, Reader& r) {
  if (hello_done_) return Status::Protocol("Hello sent twice");
  proto::HelloRequest hello;
  if (!proto::HelloRequest::Decode(r, &hello)) return Status::Protocol("bad Hello");
  const uint16_t version = hello.version, features = hello.features;
  const std::string& token = hello.token;
  client_name_ = hello.client_name;
  if (version != proto::kVersion) {
    Reply(h, Status::Error(CL_INVALID_OPERATION,
                           "protocol version " + std::to_string(version) +
                               " not supported (server speaks " +
                               std::to_string(proto::kVersion) + ")"));
    return Status::Protocol("version mismatch");
  }
  // Refusals are logged and counted by the server, once per burst of them (server/gate.h).
  auto auth = server_->Authenticate(id_, token);
  if (!auth.ok()) {
    Reply(h, auth.status());
    return Status::Protocol("authentication failed: " + auth.status().message());
  }
  const Tenant* tenant = *auth;
  hello_done_ = true;
  tenant_ = tenant;
  ++server_->Usage(tenant).sessions_total;
  spdlog::info("session {} start: {} ({}) tenant {}", id_, peer_, client_name_, tenant->id);
  proto::HelloReply reply;
  reply.session = id_;
  reply.server_name = server_->name();
  // Only the devices the tenant may use, each with its server index.
  const auto& devs = server_->backend().Devices();
  for (size_t i = 0; i < devs.size(); ++i)
    if (tenant->MayUse(static_cast<int>(i)))
      reply.devices.push_back({devs[i].queries, static_cast<uint32_t>(i)});
  // The memory the tenant may still allocate, so that the client can refuse a buffer over
  // quota at clCreateBuffer (the server still enforces it).
  const uint64_t quota = tenant->mem_quota_bytes;
  const uint64_t used = server_->Usage(tenant).mem_bytes.load();
  reply.mem_left = quota == 0 ? UINT64_MAX : quota - std::min(quota, used);
  reply.features = static_cast<uint16_t>(
      features & (proto::kFeatureHeartbeat | proto::kFeatureShared | proto::kFeatureRing));
  if (features & proto::kFeatureHeartbeat) {
    // When to send a Heartbeat, and how long a silent peer has before it counts as dead.
    reply.heartbeat_interval_ms =
        static_cast<uint32_t>(server_->options().heartbeat_interval().count());
    reply.peer_timeout_ms = static_cast<uint32_t>(server_->options().peer_timeout.count());
    heartbeat_ = true;
  }
  // The largest shared region this connection may attach (0: none: not a Unix socket).
  if (features & proto::kFeatureShared) reply.shared_cap = SharedCap();
  Reply(h, Status::Ok(), proto::EncodeBody(reply));
  return Status::Ok();
}

Status Session::CreateContext(Reader& r) {
  proto::CreateContextRequest req;
  if (!proto::CreateContextRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed CreateContext");
  const uint64_t id = req.context;
  const std::vector<int> devs(req.devices.begin(), req.devices.end());
  for (int d : devs)
    if (!tenant()->MayUse(d))
      return AsyncFailure(Op::CreateContext, id,
                          Status::Error(CL_INVALID_DEVICE, "device " + std::to_string(d) +
                                                               " is not one of this tenant's")),
             Status::Ok();
  const std::string& group = tenant()->context_group;
  auto ctx = group.empty() ? server_->backend().CreateContext(devs) : server_->SharedContext(group, devs);
  if (!ctx.ok()) {
    AsyncFailure(Op::CreateContext, id, ctx.status());
    return Status::Ok();
  }
  ContextRecord e;
  e.handle = *ctx;
  if (first_context_ == 0) first_context_ = id;
  return InsertOwned(id, e);
}

Status Session::CreateQueue(Reader& r) {
  proto::CreateQueueRequest req;
  if (!proto::CreateQueueRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed CreateQueue");
  const uint64_t id = req.queue, ctx_id = req.context, props = req.properties;
  const int dev = static_cast<int>(req.device);
  if (!tenant()->MayUse(dev))
    return AsyncFailure(Op::CreateQueue, id,
                        Status::Error(CL_INVALID_DEVICE, "device not one of this tenant's")),
           Status::Ok();
  auto ctx = Lookup<ContextRecord>(ctx_id);
  if (!ctx.ok()) return AsyncFailure(Op::CreateQueue, id, ctx.status()), Status::Ok();
  // Profiling is always on: the scheduler measures every tenant's device time. The client
  // still answers CL_PROFILING_INFO_NOT_AVAILABLE where the application did not ask for it.
  auto q = server_->backend().CreateQueue((*ctx)->handle, dev, props | CL_QUEUE_PROFILING_ENABLE);
  if (!q.ok()) return AsyncFailure(Op::CreateQueue, id, q.status()), Status::Ok();
  QueueRecord e;
  e.handle = *q;
  e.parent = ctx_id;
  e.device = dev;
  e.in_order = !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  e.may_twin = props == 0 && server_->options().twin_queues;
  static std::atomic<uint64_t> next_serial{1};
  e.serial = next_serial.fetch_add(1, std::memory_order_relaxed);
  Status s = InsertOwned(id, e);
  if (s.ok()) server_->CountQueue(dev, +1);
  return s;
}

Result<Bytes> Session::TakeBlob(uint64_t total, Reader& r) {
  size_t tail_len = 0;
  const uint8_t* tail = r.rest(&tail_len);
  if (!r.ok() || total < tail_len)
    return Status::Protocol("data length " + std::to_string(total) + " is shorter than the " +
                            std::to_string(tail_len) + " bytes that follow it");
  // The part before the tail arrived as PutData chunks. The client sends one bulk blob at a
  // time, so it is either all of the staged bytes or none of them.
  const uint64_t staged = total - tail_len;
  const size_t have = staging_ ? staging_->size() : 0;
  Bytes blob;
  if (staged == 0) {
    // Another thread's blob may be staged meanwhile (its chunks and this request interleave).
    blob = server_->buffers().Acquire(tail_len);
  } else if (staging_pinned_) {
    // Staged in pinned memory for a request that does not copy from it in place.
    if (staged != staging_pinned_have_)
      return Status::Protocol("request names " + std::to_string(staged) + " staged bytes but " +
                              std::to_string(staging_pinned_have_) + " were staged");
    blob = server_->buffers().Acquire(total);
    blob->resize(staged);
    std::memcpy(blob->data(), staging_pinned_->data, staged);
    staging_pinned_.reset();
  } else if (staged == have) {
    blob = std::move(staging_);
    staging_.reset();
  } else {
    return Status::Protocol("request names " + std::to_string(staged) + " staged bytes but " +
                            std::to_string(have) + " were staged");
  }
  size_t at = blob->size();
  blob->resize(at + tail_len);
  if (tail_len) std::memcpy(blob->data() + at, tail, tail_len);
  return blob;
}

Status Session::ReceivePutData(const FrameHeader& h) {
  // Body: the PutData fields (the blob's total size), then the chunk's bytes.
  if (h.body_len < proto::PutDataRequest::kBytes)
    return Status::Protocol("PutData without its size");
  proto::PutDataRequest req;
  if (Status s = proto::ReadFields(in_, &req); !s.ok()) return s;
  const uint64_t total = req.total;
  const size_t n = h.body_len - proto::PutDataRequest::kBytes;
  const size_t have = staging_ ? staging_->size() : staging_pinned_ ? staging_pinned_have_ : 0;
  if (total > server_->options().max_staging_bytes || have + n > total)
    return Status::Protocol("staged data exceeds its announced size or the per-session limit");
  // Every chunk of a blob names the same total (a pinned slot holds the first chunk's).
  if (have > 0 && total != staging_total_)
    return Status::Protocol("a staged blob's chunks name different sizes");
  if (have == 0) staging_total_ = total;
  if (have == 0 && total >= proto::kReadPiecedFrom) {
    // A large blob lands in pinned memory where the session has it (registered with its
    // first context; a copy to another context's buffer is right, at the pageable rate).
    PinnedStaging* pinned = pinned_.get();
    if (!pinned && !pinned_asked_) {
      auto ctx = Lookup<ContextRecord>(first_context_);
      if (ctx.ok()) pinned = PinnedFor((*ctx)->handle);
    }
    if (pinned && total <= pinned->size())
      staging_pinned_ = pinned->Take(total, std::chrono::milliseconds(2));
    staging_pinned_have_ = 0;
  }
  if (staging_pinned_) {
    const size_t at = staging_pinned_have_;
    staging_pinned_have_ += n;
    return in_.Read(staging_pinned_->data + at, n);
  }
  if (!staging_) staging_ = server_->buffers().Acquire(total);
  staging_->resize(have + n);
  return in_.Read(staging_->data() + have, n);
}

std::optional<PinnedStaging::Slot> Session::TakePinnedBlob(uint64_t total, const Reader& r) {
  if (!staging_pinned_ || !r.ok() || r.remaining() != 0 || staging_pinned_have_ != total)
    return std::nullopt;
  auto slot = std::move(staging_pinned_);
  staging_pinned_.reset();
  return slot;
}

Status Session::CreateBuffer(Reader& r) {
  proto::CreateBufferRequest req;
  if (!proto::CreateBufferRequest::Decode(r, &req))
    return Status::Protocol("malformed CreateBuffer");
  if (req.data_size == req.size)
    if (auto pinned = TakePinnedBlob(req.data_size, r))
      return MakeBuffer(req, std::span<const uint8_t>(pinned->data, req.size));
  auto blob = TakeBlob(req.data_size, r);
  if (!blob.ok()) return blob.status();
  if (!(*blob)->empty() && (*blob)->size() != req.size)
    return Status::Protocol("initial data does not match the buffer size");
  return MakeBuffer(req, **blob);
}

Status Session::MakeBuffer(const proto::CreateBufferRequest& req, std::span<const uint8_t> init) {
  const uint64_t id = req.mem, ctx_id = req.context, flags = req.flags, size = req.size;
  auto ctx = Lookup<ContextRecord>(ctx_id);
  if (!ctx.ok()) return AsyncFailure(Op::CreateBuffer, id, ctx.status()), Status::Ok();
  // CL_MEM_OBJECT_ALLOCATION_FAILURE if there is a failure to allocate memory for buffer
  // object: here, the tenant's memory quota would be exceeded.
  if (!ChargeMemory(size))
    return AsyncFailure(Op::CreateBuffer, id,
                        Status::Error(CL_MEM_OBJECT_ALLOCATION_FAILURE,
                                      "tenant '" + tenant()->id + "' is over its memory quota")),
           Status::Ok();
  auto m = server_->backend().CreateBuffer((*ctx)->handle, flags, size, init);
  if (!m.ok()) {
    RefundMemory(size);
    return AsyncFailure(Op::CreateBuffer, id, m.status()), Status::Ok();
  }
  MemRecord e;
  e.handle = *m;
  e.parent = ctx_id;
  e.size = size;
  e.charged = size;
  Status s = InsertOwned(id, e);
  if (!s.ok()) RefundMemory(size);
  return s;
}

Status Session::CreateSubBuffer(Reader& r) {
  proto::CreateSubBufferRequest req;
  if (!proto::CreateSubBufferRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed CreateSubBuffer");
  const uint64_t id = req.mem, parent_id = req.parent, size = req.size;
  auto parent = Lookup<MemRecord>(parent_id);
  if (!parent.ok()) return AsyncFailure(Op::CreateSubBuffer, id, parent.status()), Status::Ok();
  auto m = server_->backend().CreateSubBuffer((*parent)->handle, req.flags, req.origin, size);
  if (!m.ok()) return AsyncFailure(Op::CreateSubBuffer, id, m.status()), Status::Ok();
  MemRecord e;
  e.handle = *m;
  e.parent = (*parent)->parent;
  e.size = size;
  return InsertOwned(id, e);
}

Status Session::CreateProgramWithSource(Reader& r) {
  proto::CreateProgramWithSourceRequest req;
  if (!proto::CreateProgramWithSourceRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed CreateProgramWithSource");
  const uint64_t id = req.program, ctx_id = req.context;
  const std::string& src = req.source;
  auto ctx = Lookup<ContextRecord>(ctx_id);
  if (!ctx.ok()) return AsyncFailure(Op::CreateProgramWithSource, id, ctx.status()), Status::Ok();
  auto p = server_->backend().CreateProgramWithSource((*ctx)->handle, src);
  if (!p.ok()) return AsyncFailure(Op::CreateProgramWithSource, id, p.status()), Status::Ok();
  ProgramRecord e;
  e.handle = *p;
  e.parent = ctx_id;
  e.source = std::move(req.source);
  return InsertOwned(id, std::move(e));
}

Status Session::CreateProgramWithBinary(const FrameHeader& h, Reader& r) {
  proto::CreateProgramWithBinaryRequest req;
  if (!proto::CreateProgramWithBinaryRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed CreateProgramWithBinary");
  const uint64_t id = req.program, ctx_id = req.context;
  std::vector<int> devs;
  std::vector<std::string> bins;
  for (auto& b : req.binaries) {
    devs.push_back(static_cast<int>(b.device));
    bins.push_back(std::move(b.bytes));
  }
  auto ctx = Lookup<ContextRecord>(ctx_id);
  if (!ctx.ok()) return Reply(h, ctx.status()), Status::Ok();
  proto::CreateProgramWithBinaryReply answer;
  auto p = server_->backend().CreateProgramWithBinary((*ctx)->handle, devs, bins, &answer.status);
  const std::vector<uint8_t> f = proto::EncodeBody(answer);
  if (!p.ok()) return Reply(h, p.status(), f), Status::Ok();
  ProgramRecord e;
  e.handle = *p;
  e.parent = ctx_id;
  if (Status s = InsertOwned(id, std::move(e)); !s.ok()) return s;
  Reply(h, Status::Ok(), f);
  return Status::Ok();
}

namespace {
// Each kernel's argument shapes, kept so that SetKernelArg can refuse raw bytes for objects.
std::map<std::string, std::vector<ArgShape>> ShapesOf(const Result<std::vector<KernelDesc>>& ks) {
  std::map<std::string, std::vector<ArgShape>> out;
  if (ks.ok())
    for (const auto& k : ks.value()) out[k.name] = k.args;
  return out;
}

// The kernel list: names and the argument counts the application sees (a rewritten kernel's
// hidden argument is not counted), then the shape of each argument; no shapes when the
// kernels could not be listed.
std::vector<uint8_t> KernelListOf(const Result<std::vector<KernelDesc>>& ks,
                                  const slicer::RewrittenProgram* rewrite = nullptr) {
  proto::KernelList list;
  if (ks.ok()) {
    list.shapes.emplace();
    for (const auto& k : ks.value()) {
      const auto* info = rewrite ? rewrite->FindKernel(k.name) : nullptr;
      const uint32_t user_args = info ? info->user_arg_count : k.num_args;
      list.kernels.push_back({k.name, user_args});
      auto& args = list.shapes->emplace_back();
      const size_t n = std::min<size_t>(user_args, k.args.size());
      for (size_t i = 0; i < n; ++i)
        args.push_back({static_cast<uint8_t>(k.args[i].kind), k.args[i].size, k.args[i].also});
    }
  }
  return proto::EncodeBody(list);
}
}  // namespace

Status Session::BuildProgram(const FrameHeader& h, Reader& r) {
  proto::BuildProgramRequest req;
  if (!proto::BuildProgramRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed BuildProgram");
  const uint64_t id = req.program;
  const std::vector<int> devs(req.target.devices.begin(), req.target.devices.end());
  const std::string& options = req.target.options;
  auto p = Lookup<ProgramRecord>(id);
  if (!p.ok()) return Reply(h, p.status()), Status::Ok();
  ProgramRecord& e = **p;
  Backend& bk = server_->backend();
  // Under a slicing policy, build the program rewritten so its launches can be sliced
  // without changing results (server/scheduler/slicer.h); fall back to the original.
  if (!e.source.empty() && server_->sched_options().policy != Policy::Fifo) {
    auto rw = slicer::RewriteForSlicing(e.source, options);
    if (!rw.ok()) {
      spdlog::debug("session {}: program {} runs unsliced: {}", id_, id, rw.status().message());
    } else {
      auto ctx = Lookup<ContextRecord>(e.parent);
      auto p2 = ctx.ok() ? bk.CreateProgramWithSource((*ctx)->handle, rw.value().source)
                         : Result<BkProgram*>(ctx.status());
      if (p2.ok() && bk.BuildProgram(*p2, devs, options).ok()) {
        auto ks = bk.KernelsOf(*p2);
        std::vector<slicer::BuiltKernel> built;
        if (ks.ok())
          for (auto& k : ks.value()) built.push_back({k.name, k.num_args});
        slicer::Status check = slicer::CheckBuiltKernels(rw.value(), built);
        if (ks.ok() && check.ok()) {
          bk.Release(ObjType::Program, e.handle);
          e.handle = *p2;
          e.build_options = options;
          e.build_devices = devs;
          e.rewrite = std::make_shared<slicer::RewrittenProgram>(std::move(rw.value()));
          e.kernel_shapes = ShapesOf(ks);
          Reply(h, Status::Ok(), KernelListOf(ks, e.rewrite.get()));
          return Status::Ok();
        }
        spdlog::debug("session {}: program {} runs unsliced: {}", id_, id, check.message());
      }
      if (p2.ok()) bk.Release(ObjType::Program, *p2);
    }
  }
  e.rewrite.reset();
  auto* prog = e.handle;
  Status s = bk.BuildProgram(prog, devs, options);
  auto ks = bk.KernelsOf(prog);
  e.kernel_shapes = ShapesOf(ks);
  Reply(h, s, KernelListOf(ks));
  return Status::Ok();
}

Status Session::CompileProgram(const FrameHeader& h, Reader& r) {
  proto::CompileProgramRequest req;
  if (!proto::CompileProgramRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed CompileProgram");
  const std::vector<int> devs(req.target.devices.begin(), req.target.devices.end());
  std::vector<BkProgram*> headers;
  std::vector<std::string> names;
  Status lookup_err;
  for (auto& header : req.headers) {
    names.push_back(std::move(header.name));
    auto hp = Lookup<ProgramRecord>(header.program);
    if (!hp.ok()) lookup_err = hp.status();
    else headers.push_back((*hp)->handle);
  }
  auto p = Lookup<ProgramRecord>(req.program);
  if (!p.ok()) return Reply(h, p.status()), Status::Ok();
  if (!lookup_err.ok()) return Reply(h, lookup_err), Status::Ok();
  Reply(h,
        server_->backend().CompileProgram((*p)->handle, devs, req.target.options, headers, names));
  return Status::Ok();
}

Status Session::LinkProgram(const FrameHeader& h, Reader& r) {
  proto::LinkProgramRequest req;
  if (!proto::LinkProgramRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed LinkProgram");
  const uint64_t id = req.program, ctx_id = req.context;
  const std::vector<int> devs(req.target.devices.begin(), req.target.devices.end());
  std::vector<BkProgram*> inputs;
  Status lookup_err;
  for (uint64_t input : req.inputs) {
    auto ip = Lookup<ProgramRecord>(input);
    if (!ip.ok()) lookup_err = ip.status();
    else inputs.push_back((*ip)->handle);
  }
  auto ctx = Lookup<ContextRecord>(ctx_id);
  if (!ctx.ok()) return Reply(h, ctx.status()), Status::Ok();
  if (!lookup_err.ok()) return Reply(h, lookup_err), Status::Ok();
  auto p = server_->backend().LinkProgram((*ctx)->handle, devs, req.target.options, inputs);
  if (!p.ok()) return Reply(h, p.status()), Status::Ok();
  ProgramRecord e;
  e.handle = *p;
  e.parent = ctx_id;
  auto ks = server_->backend().KernelsOf(*p);
  e.kernel_shapes = ShapesOf(ks);
  const std::vector<uint8_t> f = KernelListOf(ks);
  if (Status s = InsertOwned(id, std::move(e)); !s.ok()) return s;
  Reply(h, Status::Ok(), f);
  return Status::Ok();
}

Status Session::CreateKernel(Reader& r) {
  proto::CreateKernelRequest req;
  if (!proto::CreateKernelRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed CreateKernel");
  const uint64_t id = req.kernel, prog_id = req.program;
  const std::string& name = req.name;
  auto p = Lookup<ProgramRecord>(prog_id);
  if (!p.ok()) return AsyncFailure(Op::CreateKernel, id, p.status()), Status::Ok();
  auto k = server_->backend().CreateKernel((*p)->handle, name);
  if (!k.ok()) return AsyncFailure(Op::CreateKernel, id, k.status()), Status::Ok();
  KernelRecord e;
  e.handle = *k;
  e.parent = prog_id;
  e.kernel_name = name;
  if (auto it = (*p)->kernel_shapes.find(name); it != (*p)->kernel_shapes.end())
    e.arg_shapes = it->second;
  // The fair policy's dispatcher needs its own instance (arguments are per kernel object);
  // made now, while the program is sure to exist: the application may release it next.
  if (server_->sched_options().policy == Policy::Fair) {
    auto sk = server_->backend().CreateKernel((*p)->handle, name);
    if (sk.ok()) e.sched_kernel = *sk;
  }
  if ((*p)->rewrite) {
    e.kernel_rewrite = (*p)->rewrite;
    e.slice_info = e.kernel_rewrite->FindKernel(name);
  }
  return InsertOwned(id, std::move(e));
}

// clCloneKernel: a new kernel of the same program and name with the source's arguments
// (they are applied at launch, so copying the session's record copies them).
Status Session::CloneKernel(Reader& r) {
  proto::CloneKernelRequest req;
  if (!proto::CloneKernelRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed CloneKernel");
  const uint64_t id = req.kernel, source_id = req.source;
  auto src = Lookup<KernelRecord>(source_id);
  if (!src.ok()) return AsyncFailure(Op::CloneKernel, id, src.status()), Status::Ok();
  const KernelRecord& s = **src;
  auto p = Lookup<ProgramRecord>(s.parent);
  if (!p.ok()) return AsyncFailure(Op::CloneKernel, id, p.status()), Status::Ok();
  auto* prog = (*p)->handle;
  auto k = server_->backend().CreateKernel(prog, s.kernel_name);
  if (!k.ok()) return AsyncFailure(Op::CloneKernel, id, k.status()), Status::Ok();
  KernelRecord e;
  e.handle = *k;
  e.parent = s.parent;
  e.kernel_name = s.kernel_name;
  e.args = s.args;
  e.arg_mem_ids = s.arg_mem_ids;
  e.arg_shapes = s.arg_shapes;
  e.kernel_rewrite = s.kernel_rewrite;
  e.slice_info = s.slice_info;
  if (s.sched_kernel) {
    auto sk = server_->backend().CreateKernel(prog, s.kernel_name);
    if (sk.ok()) e.sched_kernel = *sk;
  }
  return InsertOwned(id, std::move(e));
}

// The wire's argument kinds are the backend's.
using WireArg = proto::SetKernelArgRequest::Kind;
static_assert(static_cast<int>(WireArg::Bytes) == static_cast<int>(KernelArgValue::Kind::Bytes) &&
              static_cast<int>(WireArg::Mem) == static_cast<int>(KernelArgValue::Kind::Mem) &&
              static_cast<int>(WireArg::Local) == static_cast<int>(KernelArgValue::Kind::Local) &&
              static_cast<int>(WireArg::Sampler) == static_cast<int>(KernelArgValue::Kind::Sampler));

Status Session::SetKernelArg(Reader& r) {
  proto::SetKernelArgRequest m;
  if (!proto::SetKernelArgRequest::Decode(r, &m)) return Status::Protocol("malformed SetKernelArg");
  const uint64_t id = m.kernel;
  const uint32_t index = m.index;
  const auto kind = static_cast<KernelArgValue::Kind>(m.kind);
  KernelArgValue v;
  v.kind = kind;
  v.bytes.assign(m.bytes.data(), m.bytes.size());
  v.local_size = m.local_size;
  const uint64_t mem_id = m.object;  // a buffer's or a sampler's id, resolved at launch
  auto k = Lookup<KernelRecord>(id);
  if (!k.ok()) return AsyncFailure(Op::SetKernelArg, id, k.status()), Status::Ok();
  KernelRecord& e = **k;
  if (Status ks = CheckArgKind(e, index, kind, v.bytes.span()); !ks.ok())
    return AsyncFailure(Op::SetKernelArg, id, ks), Status::Ok();
  if (e.args.size() <= index) {
    e.args.resize(index + 1);
    e.arg_mem_ids.resize(index + 1);
  }
  e.args[index] = std::move(v);
  e.arg_mem_ids[index] = mem_id;
  return Status::Ok();
}

Status Session::CreateUserEvent(Reader& r) {
  proto::CreateUserEventRequest req;
  if (!proto::CreateUserEventRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed CreateUserEvent");
  const uint64_t id = req.event, ctx_id = req.context;
  auto ctx = Lookup<ContextRecord>(ctx_id);
  if (!ctx.ok()) return AsyncFailure(Op::CreateUserEvent, id, ctx.status()), Status::Ok();
  auto ev = server_->backend().CreateUserEvent((*ctx)->handle);
  if (!ev.ok()) return AsyncFailure(Op::CreateUserEvent, id, ev.status()), Status::Ok();
  EventRecord e;
  e.handle = *ev;
  e.parent = ctx_id;
  e.is_user_event = true;
  Status s = InsertOwned(id, std::move(e));
  if (s.ok()) ++unset_user_events_;
  return s;
}

Status Session::SetUserEventStatus(Reader& r) {
  proto::SetUserEventStatusRequest req;
  if (!proto::SetUserEventStatusRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed SetUserEventStatus");
  const uint64_t id = req.event;
  const int32_t status = req.status;
  auto e = Lookup<EventRecord>(id);
  if (!e.ok() || !(*e)->is_user_event)
    return AsyncFailure(Op::SetUserEventStatus, 0,
                        Status::Error(CL_INVALID_EVENT, "not a user event of this session")),
           Status::Ok();
  Status s = server_->backend().SetUserEventStatus((*e)->handle, status);
  if (!s.ok()) AsyncFailure(Op::SetUserEventStatus, 0, s);
  else if (!(*e)->user_event_set) {
    (*e)->user_event_set = true;
    --unset_user_events_;
  }
  return Status::Ok();
}

Status Session::Release(Reader& r) {
  proto::ReleaseRequest req;
  if (!proto::ReleaseRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed Release");
  if (serving_aside_) {
    // The parked reader's driver call may hold the object's handles: released after it.
    deferred_releases_.push_back(req);
    return Status::Ok();
  }
  return ReleaseObject(req);
}

Status Session::ReleaseObject(const proto::ReleaseRequest& req) {
  const uint64_t id = req.id;
  if (req.type == ObjType::Event) {  // needs no wait for the launch thread (Serve)
    for (auto p = piped_.rbegin(); p != piped_.rend(); ++p)  // not made yet: released then
      if (p->event_id == id && !p->released) return p->released = true, Status::Ok();
  } else {
    launch_run_ = 0;  // any other release waits, and ends a burst
    if (pipe_)
      if (Status s = WaitLaunches(); !s.ok()) return s;
  }
  auto e = Lookup(id, req.type);
  if (!e.ok()) return Status::Ok();  // creation failed earlier; the client was told then
  ReleaseRecord(**e);
  objects_.erase(id);
  return Status::Ok();
}

Status Session::GetInfo(const FrameHeader& h, Reader& r) {
  using F = proto::InfoFamily;
  proto::GetInfoRequest req;
  if (!proto::GetInfoRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed GetInfo");
  const F family = req.family;
  const uint64_t id = req.id;
  const uint32_t param = req.param, aux = req.aux;
  const int32_t device = req.device;
  std::vector<uint8_t> raw;
  Status s;
  if (family == F::Device) {
    if (id > INT32_MAX || !tenant()->MayUse(static_cast<int>(id)))
      return Reply(h, Status::Error(CL_INVALID_DEVICE, "no such device")), Status::Ok();
    s = server_->backend().DeviceInfo(static_cast<int>(id), param, &raw);
  } else {
    ObjType t = family == F::Program || family == F::ProgramBuild ? ObjType::Program
                : family == F::Event                              ? ObjType::Event
                : family == F::Kernel || family == F::KernelWorkGroup || family == F::KernelArg
                    ? ObjType::Kernel
                    : ObjType::None;
    auto e = Lookup(id, t);
    if (!e.ok()) return Reply(h, e.status()), Status::Ok();
    void* obj = HandleOf(**e);
    auto* program = std::get_if<ProgramRecord>(*e);
    const auto* kernel = std::get_if<KernelRecord>(*e);
    // A rewritten program's binaries must not carry the hidden argument, and its build log
    // must be the device's log of the application's own source (warnings point into it):
    // both come from the original, built on demand.
    const bool from_original =
        (family == F::Program && (param == CL_PROGRAM_BINARIES || param == CL_PROGRAM_BINARY_SIZES)) ||
        (family == F::ProgramBuild && param == CL_PROGRAM_BUILD_LOG);
    if (from_original && program && program->rewrite) {
      auto orig = OriginalProgram(*program);
      if (!orig.ok()) return Reply(h, orig.status()), Status::Ok();
      obj = *orig;
    }
    s = server_->backend().GetInfo(family, obj, device, aux, param, &raw);
    // A rewritten kernel has one argument more than the application wrote: hide it.
    if (s.ok() && family == F::Kernel && param == CL_KERNEL_NUM_ARGS && kernel &&
        kernel->slice_info && raw.size() == sizeof(cl_uint)) {
      cl_uint n = kernel->slice_info->user_arg_count;
      std::memcpy(raw.data(), &n, sizeof(n));
    }
  }
  if (!s.ok()) return Reply(h, s), Status::Ok();
  const auto value =
      proto::InfoValue::FromHost(proto::InfoKindOf(family, param), raw.data(), raw.size());
  Reply(h, s, proto::EncodeBody(value));
  return Status::Ok();
}

Status Session::GetEventProfiling(const FrameHeader& h, Reader& r) {
  proto::GetEventProfilingRequest req;
  if (!proto::GetEventProfilingRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed GetEventProfiling");
  auto e = Lookup<EventRecord>(req.event);
  if (!e.ok()) return Reply(h, e.status()), Status::Ok();
  Result<ProfilingTimes> t = Status::Error(CL_PROFILING_INFO_NOT_AVAILABLE, "not complete");
  BkEvent* bk_event = (*e)->handle;
  const std::shared_ptr<LaunchTimes>& times = (*e)->times;
  // Once the event is complete, a launch's pieces' times are on their way (LaunchTimes).
  if (times && !times->ready && bk_event && server_->backend().EventStatus(bk_event) == CL_COMPLETE)
    times->WaitReady(std::chrono::milliseconds(200));
  if (times && times->ready && times->start != 0) {
    t = ProfilingTimes{times->queued, times->submit, times->start, times->end};
  } else {
    // The event's own. For a launch run in pieces, only where none of its pieces' times could
    // be read (or they never came): they span its marker rather than the kernel, but a
    // complete command must answer something (and one not complete is refused here).
    if (bk_event) t = server_->backend().Profiling(bk_event);
    if (times && t.ok() && !untimed_logged_) {
      untimed_logged_ = true;
      spdlog::warn(
          "session {}: event {}, a launch run in pieces, answered with the event's own "
          "profiling times: none of its pieces' times could be read{}",
          id_, req.event, times->ready ? "" : " within 200 ms");
    }
  }
  if (!t.ok() && bk_event && !refused_logged_ &&
      server_->backend().EventStatus(bk_event) == CL_COMPLETE) {
    // A complete command whose times cannot be given: the application sees
    // CL_PROFILING_INFO_NOT_AVAILABLE (seen once on the H200, session 44, with a context group).
    refused_logged_ = true;
    spdlog::warn("session {}: event {} is complete but its profiling times are refused ({}): {}",
                 id_, req.event, t.status().code(),
                 !times          ? "no times of pieces"
                 : !times->ready ? "its pieces' times not ready within 200 ms"
                                 : "no piece of it was timed, and the event's own times fail");
  }
  if (!t.ok()) return Reply(h, t.status()), Status::Ok();
  const proto::GetEventProfilingReply answer{t->queued, t->submit, t->start, t->end};
  Reply(h, Status::Ok(), proto::EncodeBody(answer));
  return Status::Ok();
}

Result<BkProgram*> Session::OriginalProgram(ProgramRecord& prog) {
  if (prog.original) return prog.original;
  auto ctx = Lookup<ContextRecord>(prog.parent);
  if (!ctx.ok()) return ctx.status();
  Backend& bk = server_->backend();
  auto p = bk.CreateProgramWithSource((*ctx)->handle, prog.source);
  if (!p.ok()) return p.status();
  if (Status s = bk.BuildProgram(*p, prog.build_devices, prog.build_options); !s.ok()) {
    bk.Release(ObjType::Program, *p);
    return s;
  }
  prog.original = *p;
  return *p;
}

Result<std::vector<BkEvent*>> Session::ResolveWaits(const std::vector<uint64_t>& ids) {
  std::vector<BkEvent*> waits;
  waits.reserve(ids.size());
  for (uint64_t id : ids) {
    auto e = Lookup<EventRecord>(id);
    if (!e.ok())
      return Status::Error(CL_INVALID_EVENT_WAIT_LIST,
                           "wait list names unknown event " + std::to_string(id));
    waits.push_back((*e)->handle);
  }
  return waits;
}

Result<BkQueue*> Session::ExecQueue(uint64_t ctx_id, int device, bool control) {
  // Device index -1 - d keys the control queue of device d.
  const std::pair<uint64_t, int> key{ctx_id, control ? -1 - device : device};
  auto it = exec_queues_.find(key);
  if (it != exec_queues_.end()) return it->second;
  auto ctx = Lookup<ContextRecord>(ctx_id);
  if (!ctx.ok()) return ctx.status();
  auto q = server_->backend().CreateQueue((*ctx)->handle, device,
                                          control ? 0 : CL_QUEUE_PROFILING_ENABLE);
  if (!q.ok()) return q.status();
  exec_queues_[key] = *q;
  return *q;
}

Status Session::Flush(Reader& r) {
  proto::FlushRequest req;
  if (!proto::FlushRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed Flush");
  auto q = Lookup<QueueRecord>(req.queue);
  if (!q.ok()) return Status::Ok();
  if (pipe_ && server_->sched_options().pipe_loops) {
    // After the launch thread's launches, without waiting for them (LaunchPipe::Flush).
    pipe_->Flush((*q)->handle, (*q)->twin);
    return Status::Ok();
  }
  server_->backend().Flush((*q)->handle);
  return Status::Ok();
}

Status Session::Finish(const FrameHeader& h, Reader& r) {
  proto::FinishRequest req;
  if (!proto::FinishRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed Finish");
  auto q = Lookup<QueueRecord>(req.queue);
  if (!q.ok()) return Reply(h, q.status()), Status::Ok();
  if (CanWaitInline()) {
    // Nothing queued can wait for the client: the driver's own clFinish on this thread is
    // the shortest path from the device's completion to the answer (once nothing on the
    // queue waits for its tenant's turn: the driver's wait spins).
    const uint64_t enqueued = (*q)->commands;
    Status s;
    {
      Parked parked(this);
      server_->AwaitDispatch({}, (*q)->handle, kAwaitTurnLimit);
      s = server_->backend().Finish((*q)->handle);
    }
    if (s.ok()) {
      // Everything enqueued on it before is complete (LaunchRequest::before_known); the
      // aside thread may have enqueued more meanwhile.
      (*q)->judged_command = enqueued;
      (*q)->judged_seq = 0;
    }
    Reply(h, s);
    return Status::Ok();
  }
  // Otherwise never block the reader: a marker completes after everything before it.
  auto ev = server_->backend().Marker((*q)->handle, {});
  if (!ev.ok()) return Reply(h, ev.status()), Status::Ok();
  auto out = outbox_;
  uint16_t op = h.op;
  uint64_t tag = h.tag;
  server_->backend().Flush((*q)->handle);
  server_->backend().OnComplete(*ev, [out, op, tag](int32_t) {
    SendReply(*out, op, tag, Status::Ok());
  });
  server_->backend().Release(ObjType::Event, *ev);
  return Status::Ok();
}

Status Session::WaitEvents(const FrameHeader& h, Reader& r) {
  proto::WaitEventsRequest req;
  if (!proto::WaitEventsRequest::Decode(r, &req) || !r.done() || h.tag == 0)
    return Status::Protocol("malformed WaitEvents");
  // Events of launches the launch thread has made enter the table now; only a wait for one
  // it has not made yet waits for it (Serve does not): a closed loop's wait for its earlier
  // launch is answered while the thread hands the driver the launch just sent.
  if (pipe_ && !piped_.empty())
    if (Status s = ResolvePipedEvents(false); !s.ok()) return s;
  // A closed loop's next launch finds the thread awake, if it will go through it (held).
  if (pipe_ && server_->sched_options().pipe_loops && last_launch_held_) pipe_->Nudge();
  std::vector<BkEvent*> evs;
  for (uint64_t id : req.events) {
    auto e = Lookup<EventRecord>(id);
    if (!e.ok() && !piped_.empty()) {
      if (Status s = WaitLaunches(); !s.ok()) return s;
      e = Lookup<EventRecord>(id);
    }
    if (!e.ok()) return Reply(h, e.status()), Status::Ok();
    evs.push_back((*e)->handle);
  }
  struct Pending {
    std::mutex mu;
    size_t left;
    proto::WaitEventsReply answer;
  };
  auto pending = std::make_shared<Pending>();
  pending->left = evs.size();
  pending->answer.status.assign(evs.size(), CL_COMPLETE);
  auto out = outbox_;
  uint16_t op = h.op;
  uint64_t tag = h.tag;
  auto finish = [out, op, tag, pending] {
    SendReply(*out, op, tag, Status::Ok(), proto::EncodeBody(pending->answer));
  };
  if (evs.empty()) return finish(), Status::Ok();
  if (CanWaitInline()) {
    // As in Finish: nothing these events depend on needs the client, so wait right here.
    Status ws;
    {
      Parked parked(this);
      server_->AwaitDispatch(evs, nullptr, kAwaitTurnLimit);
      ws = server_->backend().Wait(evs);
    }
    Stamp(stamps::Point::kWaitDone);
    for (size_t i = 0; i < evs.size(); ++i) {
      int32_t st = server_->backend().EventStatus(evs[i]);
      // A wait that failed leaves some event unfinished; report the failure for it.
      pending->answer.status[i] = st > CL_COMPLETE && !ws.ok() ? ws.code() : st;
    }
    finish();
    return Status::Ok();
  }
  for (size_t i = 0; i < evs.size(); ++i) {
    server_->backend().OnComplete(evs[i], [pending, i, finish](int32_t st) {
      bool last;
      {
        std::lock_guard lk(pending->mu);
        pending->answer.status[i] = st;
        last = --pending->left == 0;
      }
      if (last) finish();
    });
  }
  return Status::Ok();
}

Status Session::WatchEvent(Reader& r) {
  proto::WatchEventRequest req;
  if (!proto::WatchEventRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed WatchEvent");
  const uint64_t id = req.event;
  auto e = Lookup<EventRecord>(id);
  if (!e.ok()) return AsyncFailure(Op::WatchEvent, id, e.status()), Status::Ok();
  auto out = outbox_;
  server_->backend().OnComplete((*e)->handle, [out, id](int32_t st) {
    out->Push(FrameHeader{0, static_cast<uint16_t>(Op::EventDone), proto::kFlagNotify, 0},
              proto::EncodeBody(proto::EventDoneNotice{id, st}));
  });
  return Status::Ok();
}

Status Session::Stats(const FrameHeader& h, Reader& r) {
  proto::StatsRequest req;
  if (!proto::StatsRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed Stats");
  proto::StatsReply reply;
  reply.objects = objects_.size();
  reply.total_objects = server_->TotalObjects();
  reply.session_count = server_->ActiveSessions();
  // What `rgpu status` shows. A tenant sees itself only, unless it is an admin (or there
  // is no config: everyone is the anonymous tenant then).
  const bool all = tenant()->admin || server_->options().tenants.empty();
  auto visible = [&](const Tenant* t) { return all || t == tenant(); };
  for (const auto& t : server_->tenants()) {
    if (!visible(t.get())) continue;
    TenantUsage& u = server_->Usage(t.get());
    reply.tenants.push_back({t->id, PriorityName(t->priority),
                             static_cast<uint64_t>(t->weight * 1000), u.sessions.load(),
                             u.mem_bytes.load(), t->mem_quota_bytes, u.device_ns.load(),
                             u.commands.load()});
  }
  for (const auto& s : server_->SessionSummaries())
    if (visible(s.tenant))
      reply.sessions.push_back({s.id, s.tenant->id, s.peer, s.objects, s.commands, s.in_flight});
  Reply(h, Status::Ok(), proto::EncodeBody(reply));
  return Status::Ok();
}

void Session::SayGoodbye(const std::string& why) {
  Notify(Op::Goodbye, 0, proto::EncodeBody(proto::GoodbyeNotice{why}));
}

}  // namespace rgpu::server
