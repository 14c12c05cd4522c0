// Bulk transfers through a client's shared region (docs/protocol.md, "Shared memory"):
// AttachShared maps it, and WriteBuffer / ReadBuffer marked kFlagShared name a range of it
// instead of carrying bytes. The device copies straight from and into the mapping.
#include <CL/cl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "server/server.h"
#include "server/session.h"

namespace rgpu::server {

using proto::FrameHeader;
using proto::ObjType;
using proto::Op;
using proto::Reader;

uint64_t Session::SharedCap() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  // Only a peer on this host can share memory with us, and only a Unix socket carries the
  // descriptor; TLS is TCP only.
  if (getsockname(stream_->fd(), reinterpret_cast<sockaddr*>(&ss), &len) != 0 || ss.ss_family != AF_UNIX)
    return 0;
  return server_->options().max_shared_bytes;
}

namespace {
// The refusal of AttachShared and AttachRing where SharedCap() is 0.
Status NoSharedMemoryHere() {
  return Status::Error(
      CL_INVALID_OPERATION,
      "no shared memory on this connection (not a Unix socket, or --max-shared-bytes 0)");
}
}  // namespace

Status Session::AttachShared(const FrameHeader& h, Reader& r) {
  proto::AttachSharedRequest req;
  const bool well_formed = proto::AttachSharedRequest::Decode(r, &req) && r.done();
  const uint64_t size = req.size;
  // Taken whatever follows, so that a refused descriptor is closed, never kept.
  const int fd = stream_->TakeReceivedFd();
  auto refuse = [&](const Status& s) {
    if (fd >= 0) ::close(fd);
    spdlog::debug("session {}: shared region refused: {}", id_, s.message());
    Reply(h, s);
    return Status::Ok();
  };
  if (!well_formed || h.tag == 0) {
    if (fd >= 0) ::close(fd);
    return Status::Protocol("malformed AttachShared");
  }
  if (shared_) return refuse(Status::Error(CL_INVALID_OPERATION, "a shared region is already attached"));
  const uint64_t cap = SharedCap();
  if (cap == 0) return refuse(NoSharedMemoryHere());
  if (fd < 0) return refuse(Status::Error(CL_INVALID_VALUE, "AttachShared came without a descriptor"));
  auto region = SharedRegion::Map(fd, size, cap);  // closes fd
  if (!region.ok()) {
    spdlog::debug("session {}: shared region refused: {}", id_, region.status().message());
    Reply(h, region.status());
    return Status::Ok();
  }
  shared_ = *region;
  spdlog::debug("session {}: shared region of {} KiB attached", id_, size >> 10);
  Reply(h, Status::Ok());
  return Status::Ok();
}

Status Session::AttachRing(const FrameHeader& h, Reader& r) {
  proto::AttachRingRequest req;
  const bool well_formed = proto::AttachRingRequest::Decode(r, &req) && r.done();
  const int fd = stream_->TakeReceivedFd();  // closed below whatever happens
  struct CloseFd {
    int fd;
    ~CloseFd() {
      if (fd >= 0) ::close(fd);
    }
  } closer{fd};
  if (!well_formed || h.tag == 0) return Status::Protocol("malformed AttachRing");
  auto refuse = [&](const Status& s) {
    spdlog::debug("session {}: control rings refused: {}", id_, s.message());
    Reply(h, s);
    return Status::Ok();
  };
  if (stream_->HasRing())
    return refuse(Status::Error(CL_INVALID_OPERATION, "control rings are already attached"));
  if (SharedCap() == 0) return refuse(NoSharedMemoryHere());
  // The switch must fall between two frames of each direction: before anything else was
  // asked (nothing of ours is being sent, no device work can answer later).
  if (!objects_.empty() || outbox_->Pending() != 0)
    return refuse(
        Status::Error(CL_INVALID_OPERATION, "control rings are attached before any other request"));
  if (fd < 0)
    return refuse(Status::Error(CL_INVALID_VALUE, "AttachRing came without a descriptor"));
  if (req.size != proto::kRingFileBytes)
    return refuse(Status::Error(CL_INVALID_VALUE, "control rings of " + std::to_string(req.size) +
                                                      " bytes (they are " +
                                                      std::to_string(proto::kRingFileBytes) + ")"));
  // Mapped whole at once: a first touch of each page would cost a request a fault.
  auto base = MapSealedMemfd(fd, req.size, "control ring file", /*populate=*/true);
  if (!base.ok()) return refuse(base.status());
  stream_->UseRing(std::make_unique<proto::Ring>(*base, proto::Ring::End::kServer));
  spdlog::debug("session {}: control rings attached", id_);
  Reply(h, Status::Ok());  // the first frame through the ring
  return Status::Ok();
}

void Session::RegisterShared(uint64_t ctx_id) {
  // The first copy in a context registers the region with it (pinned-speed copies).
  if (auto ctx = Lookup<ContextRecord>(ctx_id);
      ctx.ok() && !shared_->Register(server_->backend(), (*ctx)->handle))
    spdlog::debug("session {}: shared region not registered with context {}", id_, ctx_id);
}

Status Session::CreateBufferShared(Reader& r) {
  proto::CreateBufferRequest req;
  proto::SharedInitRequest init;
  if (!proto::CreateBufferRequest::Decode(r, &req) || !proto::SharedInitRequest::Decode(r, &init) ||
      !r.done())
    return Status::Protocol("malformed shared CreateBuffer");
  if (!shared_) return Status::Protocol("shared data named, but no shared region is attached");
  if (req.data_size != req.size)
    return Status::Protocol("shared initial data does not match the buffer size");
  auto at = shared_->Range(init.region_offset, req.size);
  if (!at.ok()) return at.status();
  // The driver copies the contents before CreateBuffer returns; the granules go back to the
  // client then, whatever the outcome.
  RegisterShared(req.context);
  Status s = MakeBuffer(req, std::span<const uint8_t>(*at, req.size));
  shared_->Release(init.region_offset, req.size);
  if (s.ok() && Lookup<MemRecord>(req.mem).ok()) shared_bytes_ += req.size;  // made, not refused
  return s;
}

Status Session::EnqueueShared(const FrameHeader& h, Reader& r) {
  const bool write = static_cast<Op>(h.op) == Op::WriteBuffer;
  Command c;
  c.frame = &h;
  proto::SharedTransferRequest t;
  if (!proto::CommandHeader::Decode(r, &c.head) || !proto::SharedTransferRequest::Decode(r, &t) || !r.done())
    return Status::Protocol("malformed shared transfer");
  if (!shared_) return Status::Protocol("shared data named, but no shared region is attached");
  if (!write && h.tag == 0) return Status::Protocol("ReadBuffer needs a tag");
  auto at = shared_->Range(t.region_offset, t.size);
  if (!at.ok()) return at.status();

  std::shared_ptr<SharedRegion> region = shared_;
  // The client waits for a written slot to come back: it does whatever happens to the command.
  auto fail = [&](const Status& s) {
    if (write) region->Release(t.region_offset, t.size);
    return Fail(c, s);
  };
  if (Status s = ResolveCommand(c); !s.ok()) return fail(s);
  auto mem = BufferOf(t.mem);
  if (!mem.ok()) return fail(mem.status());
  RegisterShared(c.queue_record->parent);

  Backend& bk = server_->backend();
  Result<BkEvent*> ev = Status::Error(CL_INVALID_OPERATION, "unhandled");
  if (write && CanWaitInline()) {
    // The device reads the slot itself; it goes back to the client when the copy is done.
    ev = bk.WriteFrom(c.queue, *mem, t.offset, t.size, *at, region, c.waits);
    if (!ev.ok()) return fail(ev.status());
    bk.OnComplete(*ev, [region, off = t.region_offset, size = t.size](int32_t) { region->Release(off, size); });
  } else if (write) {
    // A user event of this session is unset, so the write may wait on the client itself:
    // copy the slot out and give it back now, so the client never waits on itself.
    Bytes copy = server_->buffers().Acquire(t.size);
    copy->resize(t.size);
    std::memcpy(copy->data(), *at, t.size);
    region->Release(t.region_offset, t.size);
    ev = bk.Write(c.queue, *mem, t.offset, copy, c.waits);
  } else {
    const bool inline_read = (h.flags & proto::kFlagWaiting) && CanWaitInline();
    const bool want_event = !inline_read || c.head.event != 0;  // as in ReadAndAnswer
    {
      Parked parked(this, inline_read);
      ev = bk.ReadInto(c.queue, *mem, t.offset, t.size, *at, region, c.waits, inline_read,
                       want_event);
    }
    if (ev.ok() && inline_read) {
      const int32_t st = *ev ? bk.EventStatus(*ev) : CL_COMPLETE;
      Reply(h, st == CL_COMPLETE ? Status::Ok() : Status::Error(st < 0 ? st : CL_OUT_OF_RESOURCES, "read failed"));
    } else if (ev.ok()) {
      bk.OnComplete(*ev, [out = outbox_, op = h.op, tag = h.tag](int32_t st) {
        out->Push(FrameHeader{0, op, proto::kFlagReply, tag},
                  ReplyBody(st == CL_COMPLETE ? Status::Ok() : Status::Error(st, "read failed")));
      });
    }
  }
  if (ev.ok()) shared_bytes_ += t.size;
  if (ev.ok() && !*ev) return Status::Ok();  // a blocking read without an event: done
  return EndCommand(c, ev);
}

}  // namespace rgpu::server
