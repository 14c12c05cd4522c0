// clEnqueueWriteBuffer / clEnqueueReadBuffer through the shared region (client/shared_region.h,
// docs/protocol.md "Shared memory"): the data crosses in slots of the region instead of the
// socket, one request per slot, so that copying one slot overlaps the device's copy of the
// one before. Only the first request carries the wait list and only the last the command's
// event: the queue is in order, so the last one completing means all have.
#include <algorithm>
#include <deque>

#include "client/enqueue_shared.h"
#include "client/parallel_copy.h"
#include "proto/messages.h"

namespace rgpu::client {

using proto::Op;
using proto::Writer;

namespace {
// Below these, the socket does as well: a write returns once its bytes are in the socket,
// where a shared write may wait for room the device has not yet given back; a read pays one
// round trip either way.
constexpr size_t kSharedMinWrite = size_t{256} * 1024;
constexpr size_t kSharedMinRead = size_t{64} * 1024;

std::vector<uint8_t> SlotRequest(cl_command_queue q, cl_mem m, size_t chunk, size_t chunks,
                                 uint64_t event_id, cl_uint n, const cl_event* list, size_t at,
                                 size_t len, uint64_t region_off) {
  std::vector<uint8_t> body;
  Writer w(&body);
  const bool first = chunk == 0, last = chunk + 1 == chunks;
  PutCommandHeader(w, q, last ? event_id : 0, first ? n : 0, first ? list : nullptr);
  proto::SharedTransferRequest{m->id, at, len, region_off}.EncodeTo(w);
  return body;
}
}  // namespace

bool UseShared(cl_command_queue q, size_t size, bool read) {
  Connection& conn = q->conn();
  if (size < (read ? kSharedMinRead : kSharedMinWrite) || !conn.shared()) return false;
  // Out-of-order queues would need every slot's event joined: the socket takes those.
  if (q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) return false;
  // A read holds the read slots until the device answers; with a user event unset, that
  // answer could wait on a later call of this process, which must not find the slots taken.
  return !read || conn.unset_user_events.load() == 0;
}

cl_int WriteShared(cl_command_queue q, cl_mem m, size_t off, size_t size, const void* ptr,
                   cl_uint n, const cl_event* list, uint64_t event_id) {
  Connection& conn = q->conn();
  SharedRegion& region = *conn.shared();
  std::lock_guard lk(region.write_mu);
  const auto* src = static_cast<const uint8_t*>(ptr);
  const size_t chunks = (size + SharedRegion::kSlotBytes - 1) / SharedRegion::kSlotBytes;
  for (size_t i = 0; i < chunks; ++i) {
    const size_t at = i * SharedRegion::kSlotBytes;
    const size_t len = std::min<size_t>(SharedRegion::kSlotBytes, size - at);
    SharedRegion::Slot slot;
    if (!region.LendForWrite(len, [&] { return conn.alive(); }, &slot)) return CL_OUT_OF_RESOURCES;
    ParallelCopy(slot.p, src + at, len);
    auto body = SlotRequest(q, m, i, chunks, event_id, n, list, off + at, len, slot.off);
    if (!conn.SendShared(Op::WriteBuffer, body, proto::kFlagShared, false).ok()) return CL_OUT_OF_RESOURCES;
  }
  return CL_SUCCESS;
}

cl_int ReadShared(cl_command_queue q, cl_mem m, size_t off, size_t size, void* ptr, cl_uint n,
                  const cl_event* list, uint64_t event_id) {
  Connection& conn = q->conn();
  SharedRegion& region = *conn.shared();
  const SharedRegion::ReadRange range = region.AcquireRead(size);
  struct GiveBack {
    SharedRegion& r;
    const SharedRegion::ReadRange& range;
    ~GiveBack() { r.ReleaseRead(range); }
  } give_back{region, range};
  auto* dst = static_cast<uint8_t*>(ptr);
  const size_t chunks = (size + SharedRegion::kSlotBytes - 1) / SharedRegion::kSlotBytes;
  std::deque<std::shared_ptr<Connection::Ticket>> in_flight;
  cl_int rc = CL_SUCCESS;
  size_t sent = 0;
  auto send_next = [&] {
    const size_t at = sent * SharedRegion::kSlotBytes;
    const size_t len = std::min<size_t>(SharedRegion::kSlotBytes, size - at);
    auto body =
        SlotRequest(q, m, sent, chunks, event_id, n, list, off + at, len, range.Piece(sent).off);
    auto t = conn.SendShared(Op::ReadBuffer, body, proto::kFlagShared | proto::kFlagWaiting, true);
    if (!t.ok()) return false;
    in_flight.push_back(*t);
    ++sent;
    return true;
  };
  // Keep every piece of the range busy: the device fills piece i + 1 while piece i is copied
  // out (a read larger than the read half goes round its slots).
  while (sent < chunks && in_flight.size() < SharedRegion::kSlotsPerDirection)
    if (!send_next()) {
      rc = CL_OUT_OF_RESOURCES;
      break;
    }
  for (size_t i = 0; !in_flight.empty(); ++i) {
    Reply rep = conn.Await(in_flight.front());
    in_flight.pop_front();
    if (!rep.status.ok()) {
      // As the socket path reports a read that failed on the server (client/enqueue.cpp).
      if (rc == CL_SUCCESS) rc = conn.alive() ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_OUT_OF_RESOURCES;
      continue;
    }
    if (rc != CL_SUCCESS) continue;
    const size_t at = i * SharedRegion::kSlotBytes;
    ParallelCopy(dst + at, range.Piece(i).p, std::min<size_t>(SharedRegion::kSlotBytes, size - at));
    if (sent < chunks && !send_next()) rc = CL_OUT_OF_RESOURCES;
  }
  return rc;
}

bool CreateShared(Connection& conn, const proto::CreateBufferRequest& req, const void* data,
                  cl_int* err) {
  if (!conn.shared() || req.size < kSharedMinWrite || req.size > SharedRegion::kSlotBytes)
    return false;
  SharedRegion& region = *conn.shared();
  std::lock_guard lk(region.write_mu);
  SharedRegion::Slot slot;
  if (!region.LendForWrite(
          req.size, [&] { return conn.alive(); }, &slot)) {
    *err = CL_OUT_OF_RESOURCES;
    return true;
  }
  ParallelCopy(slot.p, data, req.size);
  std::vector<uint8_t> body;
  Writer w(&body);
  req.EncodeTo(w);
  proto::SharedInitRequest{slot.off}.EncodeTo(w);
  *err = conn.SendShared(Op::CreateBuffer, body, proto::kFlagShared, false).ok()
             ? CL_SUCCESS
             : CL_OUT_OF_RESOURCES;
  return true;
}

bool FitsReadSlots(size_t size) { return size <= SharedRegion::kSlotsPerDirection * SharedRegion::kSlotBytes; }

namespace {
// The replies of a non-blocking read's slot requests: the last one to arrive (any thread)
// lands the read's event. Its range of the read half is copied out and given back as the
// event lands (Land), in the order of the queue's reads: several reads are in flight at once,
// rgpud may answer a later one first, and their memory may overlap.
struct SlotsSink : ReadSink {
  std::shared_ptr<Connection> conn;  // keeps the region mapped
  SharedRegion::ReadRange range;
  uint8_t* dst = nullptr;
  size_t bytes = 0;
  cl_event ev = nullptr;
  cl_command_queue q = nullptr;
  std::mutex mu;
  size_t left = 0;            // GUARDED_BY(mu): replies still to come
  cl_int status = CL_SUCCESS;  // GUARDED_BY(mu): the first failure

  void Data(size_t, const uint8_t*, size_t) override {}  // the data is in the slots
  void Done(const Status& s) override {
    {
      std::lock_guard lk(mu);
      if (!s.ok() && status == CL_SUCCESS)
        status = conn->alive() ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_OUT_OF_RESOURCES;
      if (--left > 0) return;
    }
    ReadLanded(ev, q, status == CL_SUCCESS ? CL_COMPLETE : status);
    Drop(ev);
    Drop(q);
  }
  void Land(int32_t landing) override {
    SharedRegion& region = *conn->shared();
    if (landing >= 0)
      for (size_t at = 0, i = 0; at < bytes; at += SharedRegion::kSlotBytes, ++i)
        ParallelCopy(dst + at, range.Piece(i).p,
                     std::min<size_t>(SharedRegion::kSlotBytes, bytes - at));
    region.ReleaseRead(range);
  }
};
}  // namespace

cl_int ReadSharedLater(cl_command_queue q, cl_mem m, size_t off, size_t size, void* ptr, cl_uint n,
                       const cl_event* list, uint64_t event_id, cl_event e) {
  Connection& conn = q->conn();
  SharedRegion& region = *conn.shared();
  const size_t chunks = (size + SharedRegion::kSlotBytes - 1) / SharedRegion::kSlotBytes;
  auto sink = std::make_shared<SlotsSink>();
  sink->range = region.AcquireRead(size);
  sink->conn = q->context->conn;
  sink->dst = static_cast<uint8_t*>(ptr);
  sink->bytes = size;
  sink->ev = e;
  sink->q = q;
  sink->left = chunks;
  e->on_landing = [sink](cl_int status) { sink->Land(status); };
  q->AddPendingRead(e);
  Hold(e);
  Hold(q);
  for (size_t i = 0; i < chunks; ++i) {
    const size_t at = i * SharedRegion::kSlotBytes;
    const size_t len = std::min<size_t>(SharedRegion::kSlotBytes, size - at);
    auto body =
        SlotRequest(q, m, i, chunks, event_id, n, list, off + at, len, sink->range.Piece(i).off);
    if (Status s = conn.StartRead(Op::ReadBuffer, body, sink, /*blocking=*/false, proto::kFlagShared); !s.ok()) {
      // The requests not sent count as failed replies: the last one lands the event.
      for (size_t j = i; j < chunks; ++j) sink->Done(s);
      return CL_OUT_OF_RESOURCES;
    }
  }
  return CL_SUCCESS;
}

}  // namespace rgpu::client
