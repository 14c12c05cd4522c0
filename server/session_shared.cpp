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

Status Session::AttachShared(const FrameHeader& h, Reader& r) {
  const uint64_t size = r.u64();
  // Taken whatever follows, so that a refused descriptor is closed, never kept.
  const int fd = stream_->TakeReceivedFd();
  auto refuse = [&](const Status& s) {
    if (fd >= 0) ::close(fd);
    spdlog::debug("session {}: shared region refused: {}", id_, s.message());
    Reply(h, s);
    return Status::Ok();
  };
  if (!r.done() || h.tag == 0) {
    if (fd >= 0) ::close(fd);
    return Status::Protocol("malformed AttachShared");
  }
  if (shared_) return refuse(Status::Error(CL_INVALID_OPERATION, "a shared region is already attached"));
  const uint64_t cap = SharedCap();
  if (cap == 0)
    return refuse(Status::Error(CL_INVALID_OPERATION,
                                "no shared memory on this connection (not a Unix socket, or "
                                "--max-shared-bytes 0)"));
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

Status Session::EnqueueShared(const FrameHeader& h, Reader& r) {
  const bool write = static_cast<Op>(h.op) == Op::WriteBuffer;
  proto::CommandHeader head;
  proto::SharedTransferRequest t;
  if (!proto::CommandHeader::Decode(r, &head) || !proto::SharedTransferRequest::Decode(r, &t) || !r.done())
    return Status::Protocol("malformed shared transfer");
  const uint64_t queue_id = head.queue, event_id = head.event;
  const std::vector<uint64_t>& wait_ids = head.waits;
  const uint64_t mem_id = t.mem, offset = t.offset, size = t.size, region_off = t.region_offset;
  if (!shared_) return Status::Protocol("shared data named, but no shared region is attached");
  if (!write && h.tag == 0) return Status::Protocol("ReadBuffer needs a tag");
  auto at = shared_->Range(region_off, size);
  if (!at.ok()) return at.status();

  std::shared_ptr<SharedRegion> region = shared_;
  // The client waits for a written slot to come back: it does whatever happens to the command.
  auto fail = [&](const Status& s) {
    if (write) region->Release(region_off, size);
    return CommandFailed(h, queue_id, event_id, s);
  };
  auto q = Lookup(queue_id, ObjType::Queue);
  if (!q.ok()) return fail(q.status());
  auto* queue = static_cast<BkQueue*>((*q)->handle);
  auto resolved = ResolveWaits(wait_ids);
  if (!resolved.ok()) return fail(resolved.status());
  std::vector<BkEvent*> waits = std::move(*resolved);
  auto m = Lookup(mem_id, ObjType::Mem);
  if (!m.ok()) return fail(m.status());
  auto* mem = static_cast<BkMem*>((*m)->handle);
  // The first transfer in a context registers the region with it (pinned-speed copies).
  if (auto ctx = Lookup((*q)->parent, ObjType::Context); ctx.ok() &&
      !region->Register(server_->backend(), static_cast<BkContext*>((*ctx)->handle)))
    spdlog::debug("session {}: shared region not registered with context {}", id_, (*q)->parent);

  Backend& bk = server_->backend();
  Result<BkEvent*> ev = Status::Error(CL_INVALID_OPERATION, "unhandled");
  if (write && CanWaitInline()) {
    // The device reads the slot itself; it goes back to the client when the copy is done.
    ev = bk.WriteFrom(queue, mem, offset, size, *at, region, waits);
    if (ev.ok()) bk.OnComplete(*ev, [region, region_off, size](int32_t) { region->Release(region_off, size); });
  } else if (write) {
    // A user event of this session is unset, so the write may wait on the client itself:
    // copy the slot out and give it back now, so the client never waits on itself.
    Bytes copy = server_->buffers().Acquire(size);
    copy->resize(size);
    std::memcpy(copy->data(), *at, size);
    region->Release(region_off, size);
    ev = bk.Write(queue, mem, offset, copy, waits);
  } else {
    const bool inline_read = (h.flags & proto::kFlagWaiting) && CanWaitInline();
    ev = bk.ReadInto(queue, mem, offset, size, *at, region, waits, inline_read);
    if (ev.ok() && inline_read) {
      const int32_t st = bk.EventStatus(*ev);
      Reply(h, st == CL_COMPLETE ? Status::Ok() : Status::Error(st < 0 ? st : CL_OUT_OF_RESOURCES, "read failed"));
    } else if (ev.ok()) {
      bk.OnComplete(*ev, [out = outbox_, op = h.op, tag = h.tag](int32_t st) {
        out->Push(FrameHeader{0, op, proto::kFlagReply, tag},
                  ReplyBody(st == CL_COMPLETE ? Status::Ok() : Status::Error(st, "read failed")));
      });
    }
  }
  if (!ev.ok()) {
    // A failed write was given back above (copy) or never lent to the device (WriteFrom).
    if (write && CanWaitInline()) region->Release(region_off, size);
    return CommandFailed(h, queue_id, event_id, ev.status());
  }
  shared_bytes_ += size;
  TrackUnfinished(*ev);
  if (event_id == 0) {
    bk.Release(ObjType::Event, *ev);
    return Status::Ok();
  }
  Entry e;
  e.type = ObjType::Event;
  e.handle = *ev;
  e.parent = (*q)->parent;
  return InsertOwned(event_id, std::move(e));
}

}  // namespace rgpu::server
