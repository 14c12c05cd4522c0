// The buffer and kernel commands (clEnqueue*; the image commands' handlers are in
// server/session_image.cpp): one handler per operation, each decoding its
// message (proto/messages.h) before it touches any object, so that a malformed request
// changes nothing. A command that names something it may not (a released buffer, another
// session's event) fails as a command: its event stands failed and the client hears of it
// (Session::CommandFailed); only a malformed frame ends the session.
#include <CL/cl.h>

#include <algorithm>

#include "proto/messages.h"
#include "proto/pieces.h"
#include "proto/stamps.h"
#include "server/server.h"
#include "server/session.h"

namespace rgpu::server {

namespace {
// Reads up to this size, for a client blocked on them, are answered from the reader thread.
constexpr size_t kInlineReadMax = size_t{256} * 1024;

Status Malformed() { return Status::Protocol("malformed command body"); }

template <typename Message>
bool DecodeAll(proto::Reader& r, Message* m) {
  return Message::Decode(r, m) && r.done();
}

void Copy3(const proto::Triple& from, size_t to[3]) {
  for (int i = 0; i < 3; ++i) to[i] = static_cast<size_t>(from[i]);
}
}  // namespace

using proto::FrameHeader;
using proto::ObjType;
using proto::Op;
using proto::Reader;
using proto::Writer;

void Session::RequestTrace::Keep(std::vector<float>& v, std::chrono::steady_clock::time_point since) {
  const float us = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - since).count();
  if (v.size() < (1u << 20)) v.push_back(us);  // at most a million samples per figure
}

Session::CommandHandler Session::HandlerFor(uint16_t op) {
  switch (static_cast<Op>(op)) {
    case Op::WriteBuffer: return &Session::EnqueueWriteBuffer;
    case Op::ReadBuffer: return &Session::EnqueueReadBuffer;
    case Op::CopyBuffer: return &Session::EnqueueCopyBuffer;
    case Op::WriteBufferRect: return &Session::EnqueueWriteBufferRect;
    case Op::ReadBufferRect: return &Session::EnqueueReadBufferRect;
    case Op::CopyBufferRect: return &Session::EnqueueCopyBufferRect;
    case Op::FillBuffer: return &Session::EnqueueFillBuffer;
    case Op::NDRangeKernel: return &Session::EnqueueNDRangeKernel;
    case Op::Marker:
    case Op::Barrier: return &Session::EnqueueMarkerOrBarrier;
    case Op::MigrateMemObjects: return &Session::EnqueueMigrateMemObjects;
    case Op::ReadImage: return &Session::EnqueueReadImage;
    case Op::WriteImage: return &Session::EnqueueWriteImage;
    case Op::CopyImage: return &Session::EnqueueCopyImage;
    case Op::CopyImageToBuffer: return &Session::EnqueueCopyImageToBuffer;
    case Op::CopyBufferToImage: return &Session::EnqueueCopyBufferToImage;
    case Op::FillImage: return &Session::EnqueueFillImage;
    default: return nullptr;
  }
}

Status Session::Enqueue(const FrameHeader& h, Reader& r, CommandHandler handler) {
  Command c;
  c.frame = &h;
  if (!proto::CommandHeader::Decode(r, &c.head)) return Status::Protocol("malformed command header");
  return (this->*handler)(c, r);
}

// ---------------------------------------------------------------- shared steps

Status Session::ResolveCommand(Command& c) {
  auto q = Lookup<QueueRecord>(c.head.queue);
  if (!q.ok()) return q.status();
  c.queue_record = *q;
  c.queue = (*q)->handle;
  c.number = ++(*q)->commands;
  auto waits = ResolveWaits(c.head.waits);
  if (!waits.ok()) return waits.status();
  c.waits = std::move(*waits);
  return Status::Ok();
}

Status Session::Fail(const Command& c, const Status& s) {
  return CommandFailed(*c.frame, c.head.queue, c.head.event, s);
}

Result<BkMem*> Session::BufferOf(uint64_t id) {
  auto e = Lookup<MemRecord>(id);
  if (!e.ok()) return e.status();
  return (*e)->handle;
}

Status Session::EndCommand(const Command& c, Result<BkEvent*> ev, std::shared_ptr<LaunchTimes> times) {
  if (!ev.ok()) return Fail(c, ev.status());
  // Backpressure (WaitForRoom) counts what the device has not finished.
  TrackUnfinished(*ev);
  if (*ev) {
    c.queue_record->judged_command = c.number;
    c.queue_record->judged_seq = issued_;  // its checkpoint's
  }
  if (c.head.event == 0) {
    if (*ev) server_->backend().Release(ObjType::Event, *ev);  // a launch may have none
    return Status::Ok();
  }
  EventRecord e;
  e.handle = *ev;
  e.parent = c.queue_record->parent;
  e.times = std::move(times);
  return InsertOwned(c.head.event, std::move(e));
}

// ---------------------------------------------------------------- transfers

template <typename Read>
Status Session::ReadAndAnswer(Command& c, uint64_t size, const Read& read) {
  Bytes dst = server_->buffers().Acquire(size);
  dst->resize(size);
  const bool inline_read = WaitsInline(c, size);
  Stamp(stamps::Point::kReadIssued, inline_read);
  // A read waited for here needs an event only for the client (the driver's blocking call
  // says how it ended); without one it is complete and untracked once answered.
  const bool want_event = !inline_read || c.head.event != 0;
  Result<BkEvent*> ev = [&] {
    Parked parked(this, inline_read);  // the driver's blocking read
    return read(dst, inline_read, want_event);
  }();
  if (!ev.ok()) return Fail(c, ev.status());
  AnswerRead(c, *ev, dst, inline_read);
  if (!*ev) {
    // Waited for here: it and everything before it on an in-order queue are complete.
    c.queue_record->judged_command = c.number;
    c.queue_record->judged_seq = 0;
    return Status::Ok();
  }
  return EndCommand(c, ev);
}


Status Session::EnqueueWriteBuffer(Command& c, Reader& r) {
  proto::WriteBufferRequest m;
  if (!proto::WriteBufferRequest::Decode(r, &m)) return Malformed();
  if (auto pinned = TakePinnedBlob(m.size, r)) {
    // The device copies from pinned memory, which stays taken until the copy completes.
    if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
    auto mem = BufferOf(m.mem);
    if (!mem.ok()) return Fail(c, mem.status());
    return EndCommand(c, server_->backend().WriteFrom(c.queue, *mem, m.offset, m.size, pinned->data,
                                                      pinned->hold, c.waits));
  }
  auto blob = TakeBlob(m.size, r);
  if (!blob.ok()) return blob.status();
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  auto mem = BufferOf(m.mem);
  if (!mem.ok()) return Fail(c, mem.status());
  return EndCommand(c, server_->backend().Write(c.queue, *mem, m.offset, *blob, c.waits));
}

Status Session::EnqueueReadBuffer(Command& c, Reader& r) {
  proto::ReadBufferRequest m;
  if (!DecodeAll(r, &m)) return Malformed();
  if (c.frame->tag == 0) return Status::Protocol("ReadBuffer needs a tag");
  // Bound what a read may make the server allocate.
  if (m.size > server_->options().max_staging_bytes)
    return Status::Protocol("read larger than the per-session transfer limit");
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  auto mem = BufferOf(m.mem);
  if (!mem.ok()) return Fail(c, mem.status());
  // A large read (none that large waits inline) goes out piece by piece as the device reads
  // it (Session::PipelinedRead), from buffers of its own.
  static_assert(proto::kReadPiecedFrom > kInlineReadMax);
  if (c.queue_record->in_order && m.size >= proto::kReadPiecedFrom) {
    auto ctx = Lookup<ContextRecord>(c.queue_record->parent);
    auto ev = PipelinedRead(*c.frame, c.queue, *mem, m.offset, m.size, c.waits, c.head.event != 0,
                            ctx.ok() ? (*ctx)->handle : nullptr);
    if (ev.ok() && !*ev) return Status::Ok();  // waited for, answered, and no event asked
    return EndCommand(c, ev);
  }
  return ReadAndAnswer(c, m.size, [&](const Bytes& dst, bool inline_read, bool want_event) {
    return server_->backend().Read(c.queue, *mem, m.offset, m.size, dst, c.waits, inline_read,
                                   want_event);
  });
}

Status Session::EnqueueCopyBuffer(Command& c, Reader& r) {
  proto::CopyBufferRequest m;
  if (!DecodeAll(r, &m)) return Malformed();
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  auto src = BufferOf(m.src);
  if (!src.ok()) return Fail(c, src.status());
  auto dst = BufferOf(m.dst);
  if (!dst.ok()) return Fail(c, dst.status());
  return EndCommand(
      c, server_->backend().Copy(c.queue, *src, *dst, m.src_offset, m.dst_offset, m.size, c.waits));
}

namespace {
// The buffer's side of a rectangle as the request gives it; the host's side is packed.
Rect RectOf(const proto::BufferRectRequest& m) {
  Rect ra;
  Copy3(m.origin, ra.buffer_origin);
  Copy3(m.region, ra.region);
  ra.buffer_row_pitch = m.row_pitch;
  ra.buffer_slice_pitch = m.slice_pitch;
  ra.host_row_pitch = ra.region[0];
  ra.host_slice_pitch = ra.region[0] * ra.region[1];
  return ra;
}
}  // namespace

Status Session::EnqueueWriteBufferRect(Command& c, Reader& r) {
  proto::WriteBufferRectRequest m;
  if (!proto::WriteBufferRectRequest::Decode(r, &m)) return Malformed();
  auto blob = TakeBlob(m.size, r);
  if (!blob.ok()) return blob.status();
  if ((*blob)->size() != m.rect.PackedSize()) return Status::Protocol("rect data size mismatch");
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  auto mem = BufferOf(m.rect.mem);
  if (!mem.ok()) return Fail(c, mem.status());
  return EndCommand(c, server_->backend().WriteRect(c.queue, *mem, RectOf(m.rect), *blob, c.waits));
}

Status Session::EnqueueReadBufferRect(Command& c, Reader& r) {
  proto::BufferRectRequest m;
  if (!DecodeAll(r, &m)) return Malformed();
  if (c.frame->tag == 0) return Status::Protocol("ReadBufferRect needs a tag");
  const uint64_t size = m.PackedSize();
  if (size > server_->options().max_staging_bytes)
    return Status::Protocol("read larger than the per-session transfer limit");
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  auto mem = BufferOf(m.mem);
  if (!mem.ok()) return Fail(c, mem.status());
  return ReadAndAnswer(c, size, [&](const Bytes& dst, bool, bool) {
    return server_->backend().ReadRect(c.queue, *mem, RectOf(m), dst, c.waits);
  });
}

Status Session::EnqueueCopyBufferRect(Command& c, Reader& r) {
  proto::CopyBufferRectRequest m;
  if (!DecodeAll(r, &m)) return Malformed();
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  auto src = BufferOf(m.src);
  if (!src.ok()) return Fail(c, src.status());
  auto dst = BufferOf(m.dst);
  if (!dst.ok()) return Fail(c, dst.status());
  Rect ra, rb;
  Copy3(m.src_origin, ra.buffer_origin);
  Copy3(m.dst_origin, rb.buffer_origin);
  Copy3(m.region, ra.region);
  ra.buffer_row_pitch = m.src_row_pitch;
  ra.buffer_slice_pitch = m.src_slice_pitch;
  rb.buffer_row_pitch = m.dst_row_pitch;
  rb.buffer_slice_pitch = m.dst_slice_pitch;
  return EndCommand(c, server_->backend().CopyRect(c.queue, *src, *dst, ra, rb, c.waits));
}

Status Session::EnqueueFillBuffer(Command& c, Reader& r) {
  proto::FillBufferRequest m;
  if (!DecodeAll(r, &m)) return Malformed();
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  auto mem = BufferOf(m.mem);
  if (!mem.ok()) return Fail(c, mem.status());
  return EndCommand(c, server_->backend().Fill(c.queue, *mem, m.pattern, m.offset, m.size, c.waits));
}

Status Session::EnqueueMarkerOrBarrier(Command& c, Reader& r) {
  if (!r.done()) return Malformed();
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  Backend& bk = server_->backend();
  const bool marker = static_cast<Op>(c.frame->op) == Op::Marker;
  return EndCommand(c, marker ? bk.Marker(c.queue, c.waits) : bk.Barrier(c.queue, c.waits));
}

Status Session::EnqueueMigrateMemObjects(Command& c, Reader& r) {
  proto::MigrateMemObjectsRequest m;
  if (!DecodeAll(r, &m)) return Malformed();
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  std::vector<BkMem*> mems;
  for (uint64_t id : m.mems) {
    auto mem = BufferOf(id);
    if (!mem.ok()) return Fail(c, mem.status());
    mems.push_back(*mem);
  }
  return EndCommand(c, server_->backend().Migrate(c.queue, mems, m.flags, c.waits));
}

// ---------------------------------------------------------------- answering reads

bool Session::WaitsInline(const Command& c, uint64_t size) const {
  // A client blocked on a small read gets it from this thread as soon as the device is done:
  // no hand-off to the completion thread, none to the outbox's writer.
  return (c.frame->flags & proto::kFlagWaiting) && size <= kInlineReadMax && CanWaitInline();
}

void Session::AnswerRead(const Command& c, BkEvent* ev, Bytes dst, bool inline_read) {
  // The answer's bytes count against the outbox bound from now until they are sent.
  outbox_->Reserve(dst->size());
  if (inline_read) AnswerReadNow(c, ev, dst);
  else AnswerReadWhenDone(c, ev, dst);
}

void Session::AnswerReadNow(const Command& c, BkEvent* ev, const Bytes& dst) {
  Backend& bk = server_->backend();
  const uint16_t rop = c.frame->op;
  const uint64_t tag = c.frame->tag;
  Status ws = Status::Ok();
  if (static_cast<Op>(rop) != Op::ReadBuffer) {  // ReadBuffer was a blocking read already
    Parked parked(this);
    bk.Flush(c.queue);
    ws = bk.Wait(std::span<BkEvent* const>(&ev, 1));
  }
  // No event: a blocking read that returned, so it succeeded.
  const int32_t st = !ws.ok() ? ws.code() : ev ? bk.EventStatus(ev) : CL_COMPLETE;
  Stamp(stamps::Point::kReadAnswered);
  const auto answered = std::chrono::steady_clock::now();
  if (trace_) RequestTrace::Keep(trace_->read_wait_us, frame_in_);
  if (st == CL_COMPLETE) {
    // The data and the reply in one write.
    const std::vector<uint8_t> reply = ReplyBody(Status::Ok(), {});
    std::vector<uint8_t> frames;
    frames.reserve(2 * proto::kHeaderSize + proto::ReadDataNotice::kBytes + dst->size() +
                   reply.size());
    Writer w(&frames);
    uint8_t hdr[proto::kHeaderSize];
    proto::EncodeHeader(FrameHeader{static_cast<uint32_t>(proto::ReadDataNotice::kBytes +
                                                          dst->size()),
                                    static_cast<uint16_t>(Op::ReadData), proto::kFlagNotify, tag},
                        hdr);
    w.raw(hdr, sizeof hdr);
    proto::ReadDataNotice{0}.EncodeTo(w);
    w.raw(dst->data(), dst->size());
    proto::EncodeHeader(FrameHeader{static_cast<uint32_t>(reply.size()), rop, proto::kFlagReply,
                                    tag},
                        hdr);
    w.raw(hdr, sizeof hdr);
    w.raw(reply.data(), reply.size());
    outbox_->PushFramed(std::move(frames));
    Stamp(stamps::Point::kReadSent);
    if (trace_) RequestTrace::Keep(trace_->send_us, answered);
  } else {
    SendReply(*outbox_, rop, tag, Status::Error(st < 0 ? st : CL_OUT_OF_RESOURCES, "read failed"));
  }
  outbox_->Unreserve(dst->size());
}

void Session::AnswerReadWhenDone(const Command& c, BkEvent* ev, Bytes dst) {
  // Send the data when the read completes; chunks go behind control frames.
  server_->backend().OnComplete(ev, [out = outbox_, dst, rop = c.frame->op, tag = c.frame->tag](int32_t st) {
    if (st == CL_COMPLETE) {
      for (size_t off = 0; off < dst->size(); off += proto::kDataChunk) {
        const size_t len = std::min<size_t>(proto::kDataChunk, dst->size() - off);
        out->PushBulk(FrameHeader{0, static_cast<uint16_t>(Op::ReadData), proto::kFlagNotify, tag},
                      ReadDataFields(off), dst, off, len);
      }
      // The final reply travels behind the data in the bulk lane: the client takes it as
      // "all data landed".
      out->PushBulk(FrameHeader{0, rop, proto::kFlagReply, tag}, ReplyBody(Status::Ok(), {}), nullptr, 0, 0);
    } else {
      SendReply(*out, rop, tag, Status::Error(st < 0 ? st : CL_OUT_OF_RESOURCES, "read failed"));
    }
    out->Unreserve(dst->size());
  });
}

// ---------------------------------------------------------------- kernels

Status Session::BindKernelArgs(KernelRecord& ke) {
  // Buffer, image and sampler arguments are resolved now: one released since SetKernelArg
  // is an error, never a dangling handle.
  for (size_t i = 0; i < ke.args.size(); ++i) {
    KernelArgValue& arg = ke.args[i];
    auto which = [i] { return "argument " + std::to_string(i); };  // for errors only
    if (arg.kind == KernelArgValue::Kind::Sampler) {
      auto smp = Lookup<SamplerRecord>(ke.arg_mem_ids[i]);
      if (!smp.ok())
        return Status::Error(CL_INVALID_KERNEL_ARGS, which() + " names a released sampler");
      arg.sampler = (*smp)->handle;
      continue;
    }
    if (arg.kind != KernelArgValue::Kind::Mem) continue;
    if (ke.arg_mem_ids[i] == 0) {
      arg.mem = nullptr;
      continue;
    }
    // An image argument takes an image, a buffer argument a buffer: the device may not
    // check, and would read one as the other.
    const auto shape = i < ke.arg_shapes.size() ? ke.arg_shapes[i].kind : ArgShape::Kind::Unchecked;
    auto m = shape == ArgShape::Kind::Image ? LookupMem(ke.arg_mem_ids[i], true)
             : shape == ArgShape::Kind::Mem ? LookupMem(ke.arg_mem_ids[i], false)
                                            : Lookup<MemRecord>(ke.arg_mem_ids[i]);
    if (!m.ok())
      return Status::Error(CL_INVALID_KERNEL_ARGS, which() + ": " + m.status().message());
    arg.mem = (*m)->handle;
  }
  return Status::Ok();
}

Status Session::FillFairLaunch(const Command& c, const KernelRecord& ke, LaunchRequest& req) {
  // `fair` may hold the launch and run it on rgpud's own queues of the context, and stop it
  // from the control queue (docs/scheduling.md).
  QueueRecord& q = *c.queue_record;
  auto ctx = Lookup<ContextRecord>(q.parent);
  if (!ctx.ok()) return ctx.status();
  req.context = (*ctx)->handle;
  if (!q.exec_queue || !q.ctl_queue) {
    auto xq = ExecQueue(q.parent, q.device);
    if (!xq.ok()) return xq.status();
    auto cq = ExecQueue(q.parent, q.device, /*control=*/true);
    if (!cq.ok()) return cq.status();
    q.exec_queue = *xq;
    q.ctl_queue = *cq;
  }
  req.exec_queue = q.exec_queue;
  req.ctl_queue = q.ctl_queue;
  req.device = q.device;
  if (!ke.sched_kernel) return Status::Error(CL_INVALID_KERNEL, "kernel has no scheduler instance");
  req.sched_kernel = ke.sched_kernel;
  req.may_block = CanWaitInline();
  // What the scheduler may know of the command before it on its in-order queue
  // (LaunchRequest::before_known): the first on its queue has none; otherwise only the one
  // just before counts, if the session can tell (not a launch without an event, nor a command
  // that failed), by its completion checkpoint. The event is not asked here: most launches
  // are not held, and asking costs the driver a call.
  if (!q.in_order) return Status::Ok();
  if (c.number == 1 || (q.judged_command != 0 && q.judged_command + 1 == c.number)) {
    req.before_known = true;
    if (c.number == 1 || q.judged_seq == 0) return Status::Ok();
    auto it = std::lower_bound(checkpoints_.begin(), checkpoints_.end(), q.judged_seq,
                               [](const Checkpoint& cp, uint64_t seq) { return cp.seq < seq; });
    // Gone: ReapUnfinished releases complete checkpoints only.
    if (it != checkpoints_.end() && it->seq == q.judged_seq) req.before_event = it->event;
  }
  return Status::Ok();
}

Result<LaunchPipe*> Session::PipeFor(const Command& c) {
  // A burst: this many launch frames in a row start the thread, or it is awake from the last
  // burst (spinning: nothing to wake). One launch before a read (a request) stays here, as
  // the read would wait for the thread's wake-up.
  constexpr int kBurst = 8;
  const bool pipeable = server_->options().launch_thread && c.waits.empty();
  // So does a closed loop (launch, flush, wait for an earlier launch), whose waits wake it
  // for the next launch (WaitEvents) and are answered while it makes the newest.
  const bool loop = server_->sched_options().pipe_loops && loop_waits_ >= kBurst;
  if (pipeable && !pipe_ && (launch_run_ >= kBurst || loop))
    pipe_ = std::make_unique<LaunchPipe>(server_->backend());
  if (!pipe_) return nullptr;
  if (pipeable && (launch_run_ >= kBurst || pipe_->Awake())) {
    loop_pipe_ = launch_run_ < kBurst && loop;
    return pipe_.get();
  }
  if (Status s = WaitLaunches(); !s.ok()) return s;
  return nullptr;
}

BkQueue* Session::TwinOf(QueueRecord& q) {
  if (!q.may_twin) return q.twin;
  q.may_twin = false;  // one try
  auto ctx = Lookup<ContextRecord>(q.parent);
  if (!ctx.ok()) return nullptr;
  auto twin = server_->backend().CreateQueue((*ctx)->handle, q.device, 0);
  if (twin.ok()) q.twin = *twin;  // else the launches stay on q
  return q.twin;
}

Status Session::ResolvePipedEvents(bool all) {
  // A checkpoint for one in kCheckpointEvery of them: each holds its event until the reaper
  // sees it complete, and the last release of a complete event costs NVIDIA's driver far
  // more than that of one in flight (TrackUnfinished); backpressure needs no more than that.
  constexpr uint64_t kCheckpointEvery = 32;
  Backend& bk = server_->backend();
  Status first;
  const uint64_t done = all ? UINT64_MAX : pipe_->Done();
  for (; !piped_.empty() && piped_.front().pushed <= done; piped_.pop_front()) {
    PipedLaunch& p = piped_.front();
    Result<BkEvent*> made = std::move(p.made->event);
    if (!made.ok()) {
      // As a launch that failed in this thread: a failed event stands in for the
      // application's, and the client hears of it.
      FrameHeader h;
      h.op = static_cast<uint16_t>(Op::NDRangeKernel);
      CommandFailed(h, p.queue_id, p.released ? 0 : p.event_id, made.status());
      continue;
    }
    // What EndCommand does with an event, at the place the launch took in the command count.
    auto q = Lookup<QueueRecord>(p.queue_id);  // a release of it waited for this
    // And the last one entered after a wait, so that the command after it knows its
    // predecessor (FillFairLaunch).
    if (p.seq % kCheckpointEvery == 0 || (all && piped_.size() == 1)) {
      bk.Retain(ObjType::Event, *made);
      checkpoints_.push_back({*made, p.seq});
      if (q.ok() && (*q)->judged_command < p.command) {
        (*q)->judged_command = p.command;
        (*q)->judged_seq = p.seq;
      }
    }
    if (p.released || !q.ok()) {
      bk.Release(ObjType::Event, *made);
      continue;
    }
    EventRecord e;
    e.handle = *made;
    e.parent = (*q)->parent;
    // Fails only for an id in use or a full table: a protocol error, as at once it would be.
    if (Status s = InsertOwned(p.event_id, std::move(e)); !s.ok() && first.ok()) first = s;
  }
  if (checkpoints_.size() > kReapBatch) ReapUnfinished(false);
  return first;
}

Status Session::EnqueueNDRangeKernel(Command& c, Reader& r) {
  proto::NDRangeKernelRequest m;
  if (!DecodeAll(r, &m)) return Malformed();
  // Events it waits for that the launch thread makes must be in the table first.
  if (!piped_.empty() && !c.head.waits.empty())
    if (Status s = WaitLaunches(); !s.ok()) return s;
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  auto k = Lookup<KernelRecord>(m.kernel);
  if (!k.ok()) return Fail(c, k.status());
  KernelRecord& ke = **k;
  if (Status s = BindKernelArgs(ke); !s.ok()) return Fail(c, s);
  if (m.dims < 1 || m.dims > 3)
    return Fail(c, Status::Error(CL_INVALID_WORK_DIMENSION, "work_dim must be 1, 2 or 3"));
  LaunchRequest req;
  req.session_id = id_;
  req.tenant = tenant();
  if (sched_key_.empty()) sched_key_ = Scheduler::TenantKeyOf(req.tenant, id_);  // fixed at Hello
  req.tenant_key = sched_key_;
  req.queue = c.queue;
  req.queue_in_order = c.queue_record->in_order;
  req.queue_serial = c.queue_record->serial;
  req.queue_command = c.number;
  req.kernel = ke.handle;
  // Room for the two hidden arguments a rewritten kernel takes (Scheduler::Direct), so that
  // appending them does not copy every argument again.
  req.args.reserve(ke.args.size() + 2);
  req.args = ke.args;
  req.slice_info = ke.slice_info;
  req.range.dims = m.dims;
  req.range.has_offset = m.has_offset;
  req.range.has_local = m.has_local;
  Copy3(m.offset, req.range.offset);
  Copy3(m.global, req.range.global);
  Copy3(m.local, req.range.local);
  req.waits = c.waits;
  req.want_event = c.head.event != 0;
  launch_events_ += req.want_event;
  if (server_->sched_options().policy == Policy::Fair)
    if (Status s = FillFairLaunch(c, ke, req); !s.ok()) return Fail(c, s);
  auto pipe = PipeFor(c);
  if (!pipe.ok()) return pipe.status();
  req.pipe = *pipe;
  req.pipe_held_only = req.pipe && loop_pipe_;
  std::shared_ptr<PipedEvent> made;
  if (req.pipe && req.want_event) {
    req.piped_event = made = std::make_shared<PipedEvent>();
    req.twin = TwinOf(*c.queue_record);
  }
  if (trace_) RequestTrace::Keep(trace_->submit_us, frame_in_);
  Stamp(stamps::Point::kSubmit);
  auto launched = server_->scheduler(c.queue_record->device).Submit(std::move(req));
  Stamp(stamps::Point::kSubmitted);
  if (!launched.ok()) return Fail(c, launched.status());
  if (trace_) RequestTrace::Keep(trace_->launch_us, frame_in_);
  last_launch_held_ = launched->held;
  if (launched->piped) {
    TrackUnfinished(nullptr);  // its place in the count; its checkpoint comes with its event
    piped_.push_back(
        {c.head.event, c.head.queue, c.number, issued_, pipe_->Pushed(), std::move(made)});
    ++piped_events_;
    // Entered in batches during a long burst (bounded memory; each driver call this thread
    // makes meanwhile slows the pipe's enqueues: entering them one per launch frame cost
    // 0.05-0.09 of the native rate in bursts of 100, H200, session 30 call 3).
    return piped_.size() < kEnterPipedAt ? Status::Ok() : ResolvePipedEvents(false);
  }
  // Held or run from here: the pipe is drained (Scheduler::Submit); its events go first.
  if (!piped_.empty())
    if (Status s = WaitLaunches(); !s.ok()) return s;
  return EndCommand(c, launched->event, launched->times);
}

}  // namespace rgpu::server
