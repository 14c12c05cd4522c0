// Every clEnqueue*. Non-blocking commands are queued on the connection and return at once:
// the event id is ours, the server resolves wait lists, and nothing waits for the network.
#include <algorithm>
#include <cstdlib>

#include "client/enqueue_common.h"
#include "client/enqueue_shared.h"
#include "client/parallel_copy.h"
#include "proto/info.h"
#include "proto/messages.h"
#include "proto/pieces.h"
#include "proto/stamps.h"

namespace rgpu::client {

using proto::Op;
using proto::Writer;

// The helpers below are shared with enqueue_image.cpp (client/enqueue_common.h).

cl_int Begin(Command& c, cl_command_queue q, cl_uint n, const cl_event* list, cl_event* event) {
  if (!ValidQueue(q)) return CL_INVALID_COMMAND_QUEUE;
  if (cl_int rc = CheckWaitList(q->context, n, list); rc != CL_SUCCESS) return rc;
  c.q = q;
  c.event_id = event ? q->conn().NewId() : 0;
  PutCommandHeader(c.w, q, c.event_id, n, list);
  return CL_SUCCESS;
}

void Finish(Command& c, cl_command_type type, cl_event* event, cl_event made) {
  if (!event) return;
  *event = made ? made : NewEvent(c.q, type, c.event_id);
}

cl_int CheckMem(cl_command_queue q, cl_mem m) {
  if (!ValidMem(m)) return CL_INVALID_MEM_OBJECT;
  // CL_INVALID_CONTEXT if the context of command_queue and buffer are not the same
  if (m->context != q->context) return CL_INVALID_CONTEXT;
  return CL_SUCCESS;
}

bool InBounds(cl_mem m, size_t off, size_t size) { return off <= m->size && size <= m->size - off; }

// Data of a read lands straight in the application's memory as chunks arrive, unless an
// earlier read of an in-order queue that fills overlapping memory is still pending when the
// first chunk comes (rgpud may answer a later read first: a blocking one from its reader, or
// as completion callbacks run): then the data waits and is copied in as the event lands, in
// the queue's order. Chunks of one read arrive on one thread, one after another.
struct LinearSink : ReadSink {
  uint8_t* dst;
  cl_event ev;
  cl_command_queue q;
  std::unique_ptr<uint8_t[]> staged;  // set at the first chunk when the data must wait
  bool decided = false;
  uint8_t* To(size_t off) {
    if (!decided) {
      decided = true;
      if (!(q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) &&
          q->EarlierReadPendingInto(ev->read_seq, ev->read_into))
        staged.reset(new uint8_t[size]);
    }
    return (staged ? staged.get() : dst) + off;
  }
  void Data(size_t off, const uint8_t* p, size_t len) override { std::memcpy(To(off), p, len); }
  uint8_t* Direct(size_t off, size_t) override { return To(off); }
  void Land(int32_t status) override {
    if (staged && status >= 0) ParallelCopy(dst, staged.get(), size);
  }
  void Done(const Status& s) override {
    ReadLanded(ev, q, s.ok() ? CL_COMPLETE : s.code());
    Drop(ev);
    Drop(q);
  }
};

// The event that stands for a read: the application's (if it asked) or a private one.
cl_event ReadEvent(Command& c, cl_command_type type, cl_event* event, HostRange into) {
  cl_event e = NewEvent(c.q, type, c.event_id);
  e->is_read = true;
  e->read_into = into;
  if (!event) e->app_refs = 0;  // private: only our references keep it
  return e;
}

cl_int StartRead(Command& c, Op op, std::shared_ptr<ReadSink> sink, cl_event e, cl_bool blocking,
                 cl_command_type type, cl_event* event) {
  e->on_landing = [sink](cl_int status) { sink->Land(status); };
  c.q->AddPendingRead(e);
  Hold(e);
  Hold(c.q);
  Status s = c.q->conn().StartRead(op, c.body, sink, blocking);
  if (!s.ok()) {
    sink->Done(s);
    if (!event) Drop(e);
    return CL_OUT_OF_RESOURCES;
  }
  cl_int rc = CL_SUCCESS;
  if (blocking) {
    c.q->conn().SpinReceiving([&] { return e->landed_hint.load(std::memory_order_acquire); });
    {
      std::unique_lock lk(e->mu);
      e->cv.wait(lk, [&] { return e->landed; });
      stamps::Mark(stamps::Point::kReadLanded);
      // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the read is blocking and the status of
      // any event in its wait list is negative
      if (e->local_status < 0) rc = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
    if (!(c.q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
      c.q->WaitReadsBefore(e->read_seq);
  }
  if (event) *event = e;
  else Drop(e);
  (void)type;
  if (blocking) stamps::Mark(stamps::Point::kReadReturns);
  return rc;
}

bool RectArgsValid(const size_t* origin, const size_t* region, size_t& row, size_t& slice) {
  if (!origin || !region || region[0] == 0 || region[1] == 0 || region[2] == 0) return false;
  if (row == 0) row = region[0];
  if (slice == 0) slice = region[1] * row;
  // CL_INVALID_VALUE if row pitch is not 0 and is less than region[0], or slice pitch is not 0
  // and is less than region[1] * row pitch (or not a multiple of the row pitch)
  return row >= region[0] && slice >= region[1] * row && slice % row == 0;
}

size_t RectExtent(const size_t* origin, const size_t* region, size_t row, size_t slice) {
  return (origin[2] + region[2] - 1) * slice + (origin[1] + region[1] - 1) * row + origin[0] +
         region[0];
}

proto::Triple ToTriple(const size_t* v) { return {v[0], v[1], v[2]}; }

namespace {
proto::BufferRectRequest BufferRect(cl_mem m, const size_t* origin, const size_t* region, size_t row,
                                    size_t slice) {
  return proto::BufferRectRequest{m->id, ToTriple(origin), ToTriple(region), row, slice};
}
}  // namespace

namespace {
// A read without the host-access rule: clEnqueueMapBuffer reads a CL_MEM_HOST_WRITE_ONLY
// buffer for CL_MAP_WRITE (the mapped region must show the buffer's contents).
cl_int ReadBuffer(cl_command_queue q, cl_mem m, cl_bool blocking, size_t off, size_t size,
                  void* ptr, cl_uint n, const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (UseShared(q, size, /*read=*/true)) {
    cl_event e = ReadEvent(c, CL_COMMAND_READ_BUFFER, event, RangeOf(ptr, size));
    if (!blocking && FitsReadSlots(size)) {
      const cl_int rc = ReadSharedLater(q, m, off, size, ptr, n, list, c.event_id, e);
      if (event && rc == CL_SUCCESS) *event = e;
      else Drop(e);
      return rc;
    }
    // A non-blocking read larger than the read slots runs through the region in this call,
    // as a blocking one does: the socket moves it at a fraction of the region's speed (H100:
    // 0.15x native for 64 MiB, against 2.4x), and nothing it can wait for needs this thread
    // (UseShared refuses reads while a user event is unset). The caller pays the read's time
    // now rather than at its wait.
    // Its data goes into `ptr` during the call: an earlier read of the queue that fills the
    // same memory lands first (none can wait on this thread: UseShared).
    if (!(q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
      q->WaitReadsInto(RangeOf(ptr, size));
    const cl_int rc = ReadShared(q, m, off, size, ptr, n, list, c.event_id);
    // Its event completes after those of the reads before it on an in-order queue (ReadLanded).
    if (!(q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) q->WaitReads();
    ReadLanded(e, nullptr, rc == CL_SUCCESS ? CL_COMPLETE : rc);
    if (event) *event = e;
    else Drop(e);
    return rc;
  }
  proto::ReadBufferRequest{m->id, off, size}.EncodeTo(c.w);
  cl_event e = ReadEvent(c, CL_COMMAND_READ_BUFFER, event, RangeOf(ptr, size));
  auto sink = std::make_shared<LinearSink>();
  sink->size = size;
  sink->dst = static_cast<uint8_t*>(ptr);
  sink->ev = e;
  sink->q = q;
  return StartRead(c, Op::ReadBuffer, sink, e, blocking, CL_COMMAND_READ_BUFFER, event);
}
}  // namespace

cl_int EnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool blocking, size_t off, size_t size,
                         void* ptr, cl_uint n, const cl_event* list, cl_event* event) {
  if (!ValidQueue(q)) return CL_INVALID_COMMAND_QUEUE;
  if (cl_int rc = CheckWaitList(q->context, n, list); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckMem(q, m); rc != CL_SUCCESS) return rc;
  // CL_INVALID_VALUE if the region being read is out of bounds, or ptr is NULL or size is 0
  if (!InBounds(m, off, size) || !ptr || size == 0) return CL_INVALID_VALUE;
  if (blocking) stamps::Mark(stamps::Point::kReadCall);
  // CL_INVALID_OPERATION if clEnqueueReadBuffer is called on buffer which has been created
  // with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS
  if (m->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)) return CL_INVALID_OPERATION;
  return ReadBuffer(q, m, blocking, off, size, ptr, n, list, event);
}

namespace {
// Over the socket, a large write on an in-order queue goes as several WriteBuffer commands of
// proto::PieceBytes each: rgpud hands each to the device as soon as it has arrived, while the
// next one is still on the wire (issue 12, outcome 3). The first carries the wait list, the
// last the command's event; the queue being in order, the last completing means all have.
cl_int WritePieces(cl_command_queue q, cl_mem m, size_t off, size_t size, const void* ptr,
                   cl_uint n, const cl_event* list, uint64_t event_id) {
  const auto* src = static_cast<const uint8_t*>(ptr);
  const size_t piece = proto::PieceBytes(size);
  const size_t pieces = (size + piece - 1) / piece;
  for (size_t i = 0; i < pieces; ++i) {
    const size_t at = i * piece, len = std::min(piece, size - at);
    std::vector<uint8_t> body;
    Writer w(&body);
    PutCommandHeader(w, q, i + 1 == pieces ? event_id : 0, i == 0 ? n : 0, i == 0 ? list : nullptr);
    proto::WriteBufferRequest{m->id, off + at, len}.EncodeTo(w);
    if (!q->conn().Send(Op::WriteBuffer, body, src + at, len).ok()) return CL_OUT_OF_RESOURCES;
  }
  return CL_SUCCESS;
}
}  // namespace

cl_int EnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool blocking, size_t off, size_t size,
                          const void* ptr, cl_uint n, const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckMem(q, m); rc != CL_SUCCESS) return rc;
  if (!InBounds(m, off, size) || !ptr || size == 0) return CL_INVALID_VALUE;
  // CL_INVALID_OPERATION if clEnqueueWriteBuffer is called on buffer which has been created
  // with CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS
  if (m->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)) return CL_INVALID_OPERATION;
  // The data is copied now, so what the application wrote must be there: earlier reads into
  // this memory have to land first.
  WaitHostReads(q, n, list, RangeOf(ptr, size));
  const bool in_order = !(q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  if (UseShared(q, size, /*read=*/false) || (in_order && size >= proto::kPiecedFrom)) {
    const cl_int rc = UseShared(q, size, false) ? WriteShared(q, m, off, size, ptr, n, list, c.event_id)
                                                : WritePieces(q, m, off, size, ptr, n, list, c.event_id);
    if (rc != CL_SUCCESS) return rc;
    Finish(c, CL_COMMAND_WRITE_BUFFER, event);
    return CL_SUCCESS;
  }
  proto::WriteBufferRequest{m->id, off, size}.EncodeTo(c.w);
  if (!q->conn().Send(Op::WriteBuffer, c.body, ptr, size).ok()) return CL_OUT_OF_RESOURCES;
  // A blocking write may return once the data is copied (the specification's words).
  (void)blocking;
  Finish(c, CL_COMMAND_WRITE_BUFFER, event);
  return CL_SUCCESS;
}

cl_int EnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_off, size_t dst_off,
                         size_t size, cl_uint n, const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckMem(q, src); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckMem(q, dst); rc != CL_SUCCESS) return rc;
  if (size == 0 || !InBounds(src, src_off, size) || !InBounds(dst, dst_off, size))
    return CL_INVALID_VALUE;
  // CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same and the regions overlap
  if (src == dst && src_off < dst_off + size && dst_off < src_off + size) return CL_MEM_COPY_OVERLAP;
  proto::CopyBufferRequest{src->id, dst->id, src_off, dst_off, size}.EncodeTo(c.w);
  if (!q->conn().Send(Op::CopyBuffer, c.body).ok()) return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_COPY_BUFFER, event);
  return CL_SUCCESS;
}

cl_int EnqueueReadBufferRect(cl_command_queue q, cl_mem m, cl_bool blocking,
                             const size_t* buffer_origin, const size_t* host_origin,
                             const size_t* region, size_t buffer_row, size_t buffer_slice,
                             size_t host_row, size_t host_slice, void* ptr, cl_uint n,
                             const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckMem(q, m); rc != CL_SUCCESS) return rc;
  if (!ptr || !host_origin || !RectArgsValid(buffer_origin, region, buffer_row, buffer_slice) ||
      !RectArgsValid(host_origin, region, host_row, host_slice))
    return CL_INVALID_VALUE;
  if (RectExtent(buffer_origin, region, buffer_row, buffer_slice) > m->size) return CL_INVALID_VALUE;
  // CL_INVALID_OPERATION if clEnqueueReadBufferRect is called on buffer which has been
  // created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS
  if (m->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)) return CL_INVALID_OPERATION;
  BufferRect(m, buffer_origin, region, buffer_row, buffer_slice).EncodeTo(c.w);
  cl_event e = ReadEvent(c, CL_COMMAND_READ_BUFFER_RECT, event,
                         RangeOf(ptr, RectExtent(host_origin, region, host_row, host_slice)));
  auto sink = std::make_shared<RectSink>();
  sink->size = region[0] * region[1] * region[2];
  sink->packed.resize(sink->size);
  sink->host = static_cast<uint8_t*>(ptr);
  std::memcpy(sink->host_origin, host_origin, sizeof(sink->host_origin));
  std::memcpy(sink->region, region, sizeof(sink->region));
  sink->row_pitch = host_row;
  sink->slice_pitch = host_slice;
  sink->ev = e;
  sink->q = q;
  return StartRead(c, Op::ReadBufferRect, sink, e, blocking, CL_COMMAND_READ_BUFFER_RECT, event);
}

cl_int EnqueueWriteBufferRect(cl_command_queue q, cl_mem m, cl_bool blocking,
                              const size_t* buffer_origin, const size_t* host_origin,
                              const size_t* region, size_t buffer_row, size_t buffer_slice,
                              size_t host_row, size_t host_slice, const void* ptr, cl_uint n,
                              const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckMem(q, m); rc != CL_SUCCESS) return rc;
  if (!ptr || !host_origin || !RectArgsValid(buffer_origin, region, buffer_row, buffer_slice) ||
      !RectArgsValid(host_origin, region, host_row, host_slice))
    return CL_INVALID_VALUE;
  if (RectExtent(buffer_origin, region, buffer_row, buffer_slice) > m->size) return CL_INVALID_VALUE;
  // CL_INVALID_OPERATION if clEnqueueWriteBufferRect is called on buffer which has been
  // created with CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS
  if (m->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)) return CL_INVALID_OPERATION;
  WaitHostReads(q, n, list, RangeOf(ptr, RectExtent(host_origin, region, host_row, host_slice)));
  // Pack the host rectangle tightly; the server writes it with pitches equal to the region.
  std::vector<uint8_t> packed(region[0] * region[1] * region[2]);
  uint8_t* out = packed.data();
  const auto* host = static_cast<const uint8_t*>(ptr);
  for (size_t z = 0; z < region[2]; ++z)
    for (size_t y = 0; y < region[1]; ++y) {
      std::memcpy(out, host + (host_origin[2] + z) * host_slice + (host_origin[1] + y) * host_row +
                           host_origin[0],
                  region[0]);
      out += region[0];
    }
  proto::WriteBufferRectRequest{BufferRect(m, buffer_origin, region, buffer_row, buffer_slice),
                                packed.size()}
      .EncodeTo(c.w);
  if (!q->conn().Send(Op::WriteBufferRect, c.body, packed.data(), packed.size()).ok())
    return CL_OUT_OF_RESOURCES;
  (void)blocking;
  Finish(c, CL_COMMAND_WRITE_BUFFER_RECT, event);
  return CL_SUCCESS;
}

cl_int EnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                             const size_t* dst_origin, const size_t* region, size_t src_row,
                             size_t src_slice, size_t dst_row, size_t dst_slice, cl_uint n,
                             const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckMem(q, src); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckMem(q, dst); rc != CL_SUCCESS) return rc;
  if (!RectArgsValid(src_origin, region, src_row, src_slice) ||
      !RectArgsValid(dst_origin, region, dst_row, dst_slice))
    return CL_INVALID_VALUE;
  if (RectExtent(src_origin, region, src_row, src_slice) > src->size ||
      RectExtent(dst_origin, region, dst_row, dst_slice) > dst->size)
    return CL_INVALID_VALUE;
  proto::CopyBufferRectRequest{src->id, dst->id, ToTriple(src_origin), ToTriple(dst_origin),
                               ToTriple(region), src_row, src_slice, dst_row, dst_slice}
      .EncodeTo(c.w);
  if (!q->conn().Send(Op::CopyBufferRect, c.body).ok()) return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_COPY_BUFFER_RECT, event);
  return CL_SUCCESS;
}

cl_int EnqueueFillBuffer(cl_command_queue q, cl_mem m, const void* pattern, size_t pattern_size,
                         size_t off, size_t size, cl_uint n, const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckMem(q, m); rc != CL_SUCCESS) return rc;
  // CL_INVALID_VALUE if pattern is NULL, pattern_size is not one of {1..128} powers of two,
  // or offset and size are not multiples of pattern_size, or out of bounds
  if (!pattern || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) ||
      off % pattern_size || size % pattern_size || !InBounds(m, off, size))
    return CL_INVALID_VALUE;
  const auto* pat = static_cast<const uint8_t*>(pattern);
  proto::FillBufferRequest{m->id, {pat, pat + pattern_size}, off, size}.EncodeTo(c.w);
  if (!q->conn().Send(Op::FillBuffer, c.body).ok()) return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_FILL_BUFFER, event);
  return CL_SUCCESS;
}

void* EnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool blocking, cl_map_flags flags,
                       size_t off, size_t size, cl_uint n, const cl_event* list, cl_event* event,
                       cl_int* err) {
  if (!ValidQueue(q)) return SetErr(err, CL_INVALID_COMMAND_QUEUE), nullptr;
  if (cl_int rc = CheckMem(q, m); rc != CL_SUCCESS) return SetErr(err, rc), nullptr;
  if (cl_int rc = CheckWaitList(q->context, n, list); rc != CL_SUCCESS) return SetErr(err, rc), nullptr;
  const cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
  // CL_INVALID_VALUE if region is out of bounds, size is 0, or values in map_flags are not
  // valid (CL_MAP_WRITE_INVALIDATE_REGION excludes the others)
  if (!InBounds(m, off, size) || size == 0 || (flags & ~known) ||
      ((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE))))
    return SetErr(err, CL_INVALID_VALUE), nullptr;
  // CL_INVALID_OPERATION if buffer has been created with CL_MEM_HOST_WRITE_ONLY or
  // CL_MEM_HOST_NO_ACCESS and CL_MAP_READ is set in map_flags, or with CL_MEM_HOST_READ_ONLY
  // or CL_MEM_HOST_NO_ACCESS and CL_MAP_WRITE or CL_MAP_WRITE_INVALIDATE_REGION is set in
  // map_flags; except where the device itself allows the map (rgpud asked it).
  if (proto::MapRefused(m->flags, flags,
                        q->device->Get<uint32_t>(proto::kDeviceMapsBeyondHostAccess, 0)))
    return SetErr(err, CL_INVALID_OPERATION), nullptr;
  bool owned = m->host_ptr == nullptr;
  const size_t bytes = (size + 4095) / 4096 * 4096;
  void* ptr = nullptr;
  if (owned) {
    std::lock_guard lk(m->mu);
    if (m->spare_map && m->spare_bytes >= bytes) {
      ptr = m->spare_map;
      m->spare_map = nullptr;
      m->spare_bytes = 0;
    }
  }
  if (!ptr) ptr = owned ? std::aligned_alloc(4096, bytes) : static_cast<char*>(m->host_ptr) + off;
  if (!ptr) return SetErr(err, CL_OUT_OF_HOST_MEMORY), nullptr;
  cl_int rc;
  if (flags & CL_MAP_WRITE_INVALIDATE_REGION) {
    // Nothing to fetch; a marker keeps the command's place and its wait list.
    extern cl_int EnqueueMarkerWithWaitList(cl_command_queue, cl_uint, const cl_event*, cl_event*);
    rc = EnqueueMarkerWithWaitList(q, n, list, event);
    if (rc == CL_SUCCESS && event) (*event)->type = CL_COMMAND_MAP_BUFFER;
    if (blocking && rc == CL_SUCCESS) rc = WaitEvents(n, list) == CL_SUCCESS ? CL_SUCCESS
                                                                         : CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  } else {
    rc = ReadBuffer(q, m, blocking, off, size, ptr, n, list, event);
    if (rc == CL_SUCCESS && event) (*event)->type = CL_COMMAND_MAP_BUFFER;
  }
  if (rc != CL_SUCCESS) {
    if (owned) std::free(ptr);
    return SetErr(err, rc), nullptr;
  }
  {
    std::lock_guard lk(m->mu);
    m->maps.push_back({ptr, off, size, flags, owned});
  }
  SetErr(err, CL_SUCCESS);
  return ptr;
}

cl_int EnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void* ptr, cl_uint n,
                             const cl_event* list, cl_event* event) {
  if (!ValidQueue(q)) return CL_INVALID_COMMAND_QUEUE;
  if (cl_int rc = CheckMem(q, m); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckWaitList(q->context, n, list); rc != CL_SUCCESS) return rc;
  Mapping map{};
  {
    std::lock_guard lk(m->mu);
    auto it = std::find_if(m->maps.begin(), m->maps.end(), [&](const Mapping& x) { return x.ptr == ptr; });
    // CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by clEnqueueMapBuffer
    if (it == m->maps.end()) return CL_INVALID_VALUE;
    map = *it;
    m->maps.erase(it);
  }
  cl_int rc;
  if (map.image && (map.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))) {
    rc = WriteMappedImage(q, m, map, n, list, event);
  } else if (map.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) {
    rc = EnqueueWriteBuffer(q, m, CL_FALSE, map.offset, map.size, ptr, n, list, event);
  } else {
    extern cl_int EnqueueMarkerWithWaitList(cl_command_queue, cl_uint, const cl_event*, cl_event*);
    rc = EnqueueMarkerWithWaitList(q, n, list, event);
  }
  if (rc == CL_SUCCESS && event) (*event)->type = CL_COMMAND_UNMAP_MEM_OBJECT;
  if (map.owned && !map.image) {
    // The write copied the data already; keep the memory for the next map of this buffer.
    std::lock_guard lk(m->mu);
    if (!m->spare_map) {
      m->spare_map = map.ptr;
      m->spare_bytes = (map.size + 4095) / 4096 * 4096;
      map.owned = false;
    }
  }
  if (map.owned) std::free(map.ptr);
  return rc;
}

cl_int EnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* offset,
                            const size_t* global, const size_t* local, cl_uint n,
                            const cl_event* list, cl_event* event) {
  stamps::Mark(stamps::Point::kLaunchCall);
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (!ValidKernel(k)) return CL_INVALID_KERNEL;
  // CL_INVALID_CONTEXT if context associated with command_queue and kernel are not the same
  if (k->program->context != q->context) return CL_INVALID_CONTEXT;
  // CL_INVALID_WORK_DIMENSION if work_dim is not a valid value (i.e. a value between 1 and 3)
  if (dims < 1 || dims > 3) return CL_INVALID_WORK_DIMENSION;
  // CL_INVALID_GLOBAL_WORK_SIZE if global_work_size is NULL or any of its values is 0
  if (!global) return CL_INVALID_GLOBAL_WORK_SIZE;
  for (cl_uint i = 0; i < dims; ++i)
    if (global[i] == 0) return CL_INVALID_GLOBAL_WORK_SIZE;
  {
    // CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified
    std::lock_guard lk(k->mu);
    for (bool set : k->arg_set)
      if (!set) return CL_INVALID_KERNEL_ARGS;
  }
  // Non-uniform work-groups: OpenCL C 2.0+ programs on a device that supports them.
  const bool non_uniform = k->program->non_uniform_ok &&
                           q->device->Get<cl_bool>(CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT);
  if (local) {
    size_t total = 1;
    size_t item_max[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    auto it = q->device->info.find(CL_DEVICE_MAX_WORK_ITEM_SIZES);
    if (it != q->device->info.end())
      std::memcpy(item_max, it->second.data(), std::min(it->second.size(), sizeof(item_max)));
    for (cl_uint i = 0; i < dims; ++i) {
      // CL_INVALID_WORK_GROUP_SIZE if local_work_size is specified and number of work-items
      // specified by global_work_size is not evenly divisible by local_work_size (unless the
      // device and the program allow non-uniform work-groups)
      if (local[i] == 0 || (!non_uniform && global[i] % local[i])) return CL_INVALID_WORK_GROUP_SIZE;
      // CL_INVALID_WORK_ITEM_SIZE if local_work_size[i] > CL_DEVICE_MAX_WORK_ITEM_SIZES[i]
      if (local[i] > item_max[i]) return CL_INVALID_WORK_ITEM_SIZE;
      total *= local[i];
    }
    if (total > q->device->Get<size_t>(CL_DEVICE_MAX_WORK_GROUP_SIZE, SIZE_MAX))
      return CL_INVALID_WORK_GROUP_SIZE;
  }
  proto::NDRangeKernelRequest launch;
  launch.kernel = k->id;
  launch.dims = dims;
  launch.has_offset = offset != nullptr;
  launch.has_local = local != nullptr;
  for (cl_uint i = 0; i < dims; ++i) {
    if (offset) launch.offset[i] = offset[i];
    launch.global[i] = global[i];
    if (local) launch.local[i] = local[i];
  }
  launch.EncodeTo(c.w);
  Connection::Gathered where;
  if (!q->conn().Send(Op::NDRangeKernel, c.body, nullptr, 0, &where).ok())
    return CL_OUT_OF_RESOURCES;
  stamps::Mark(stamps::Point::kLaunchQueued);
  Finish(c, CL_COMMAND_NDRANGE_KERNEL, event);
  if (event) {  // ReleaseEvent may take the event back out of the request
    (*event)->launch_gathering = where.gathering;
    (*event)->launch_end = where.end;
    (*event)->launch_body = c.body.size();
  }
  return CL_SUCCESS;
}

cl_int EnqueueTask(cl_command_queue q, cl_kernel k, cl_uint n, const cl_event* list, cl_event* event) {
  size_t one = 1;
  cl_int rc = EnqueueNDRangeKernel(q, k, 1, nullptr, &one, &one, n, list, event);
  if (rc == CL_SUCCESS && event) (*event)->type = CL_COMMAND_TASK;
  return rc;
}

cl_int EnqueueNativeKernel(cl_command_queue, void(CL_CALLBACK*)(void*), void*, size_t, cl_uint,
                           const cl_mem*, const void**, cl_uint, const cl_event*, cl_event*) {
  return CL_INVALID_OPERATION;  // host functions cannot run on a remote device
}

cl_int EnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event* list,
                                 cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (!q->conn().Send(Op::Marker, c.body).ok()) return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_MARKER, event);
  return CL_SUCCESS;
}

cl_int EnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n, const cl_event* list,
                                  cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (!q->conn().Send(Op::Barrier, c.body).ok()) return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_BARRIER, event);
  return CL_SUCCESS;
}

cl_int EnqueueMarker(cl_command_queue q, cl_event* event) {
  if (!event) return CL_INVALID_VALUE;
  return EnqueueMarkerWithWaitList(q, 0, nullptr, event);
}
cl_int EnqueueBarrier(cl_command_queue q) { return EnqueueBarrierWithWaitList(q, 0, nullptr, nullptr); }
cl_int EnqueueWaitForEvents(cl_command_queue q, cl_uint n, const cl_event* list) {
  if (n == 0 || !list) return CL_INVALID_VALUE;
  return EnqueueBarrierWithWaitList(q, n, list, nullptr);
}

cl_int EnqueueMigrateMemObjects(cl_command_queue q, cl_uint num, const cl_mem* mems,
                                cl_mem_migration_flags flags, cl_uint n, const cl_event* list,
                                cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  // CL_INVALID_VALUE if num_mem_objects is zero, mem_objects is NULL, or flags are invalid
  if (num == 0 || !mems ||
      (flags & ~(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)))
    return CL_INVALID_VALUE;
  // More objects than one request may name (rgpud would end the session over it).
  if (num > proto::kMaxMigrateObjects) return CL_OUT_OF_RESOURCES;
  proto::MigrateMemObjectsRequest migrate{flags, {}};
  for (cl_uint i = 0; i < num; ++i) {
    if (cl_int rc = CheckMem(q, mems[i]); rc != CL_SUCCESS) return rc;
    migrate.mems.push_back(mems[i]->id);
  }
  migrate.EncodeTo(c.w);
  if (!q->conn().Send(Op::MigrateMemObjects, c.body).ok()) return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_MIGRATE_MEM_OBJECTS, event);
  return CL_SUCCESS;
}

}  // namespace rgpu::client
