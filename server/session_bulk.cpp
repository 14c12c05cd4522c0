// Large buffer reads over the socket, pipelined (issue 12, outcome 3): the device's copy of
// one piece overlaps the sending of the piece before, instead of the whole read landing
// before its first byte is sent.
#include <CL/cl.h>

#include <atomic>

#include "proto/messages.h"
#include "proto/pieces.h"
#include "server/server.h"
#include "server/session.h"

namespace rgpu::server {

using proto::FrameHeader;
using proto::Op;
using proto::Writer;

namespace {

// What the pieces of one read share: how many are still out, and the first failure. The
// last to finish sends the reply, behind every piece's data in the bulk lane.
struct ReadPieces {
  std::shared_ptr<Outbox> out;
  size_t size;
  uint16_t op;
  uint64_t tag;
  std::atomic<size_t> left;
  std::atomic<int32_t> failed{CL_SUCCESS};

  // Piece `data` (null for the extra count) holds the read's bytes from `at` on.
  void Done(int32_t st, size_t at, const Bytes& data) {
    if (st != CL_COMPLETE) {
      int32_t ok = CL_SUCCESS;
      failed.compare_exchange_strong(ok, st < 0 ? st : CL_OUT_OF_RESOURCES);
    } else if (data && failed.load() == CL_SUCCESS) {
      for (size_t o = 0; o < data->size(); o += proto::kDataChunk) {
        out->PushBulk(FrameHeader{0, static_cast<uint16_t>(Op::ReadData), proto::kFlagNotify, tag},
                      ReadDataFields(at + o), data, o,
                      std::min<size_t>(proto::kDataChunk, data->size() - o));
      }
    }
    if (left.fetch_sub(1) != 1) return;
    const int32_t f = failed.load();
    out->PushBulk(FrameHeader{0, op, proto::kFlagReply, tag},
                  ReplyBody(f == CL_SUCCESS ? Status::Ok() : Status::Error(f, "read failed")), nullptr, 0, 0);
    out->Unreserve(size);
  }
};
}  // namespace

Result<BkEvent*> Session::PipelinedRead(const FrameHeader& h, BkQueue* queue, BkMem* mem,
                                        size_t offset, size_t size, std::span<BkEvent* const> waits) {
  Backend& bk = server_->backend();
  const size_t piece = proto::PieceBytes(size);
  const size_t pieces = (size + piece - 1) / piece;
  // One count more than the pieces, given back once all are enqueued: no piece that
  // completes at once can send the reply before the others exist.
  auto read = std::make_shared<ReadPieces>();
  read->out = outbox_;
  read->size = size;
  read->op = h.op;
  read->tag = h.tag;
  read->left = pieces + 1;
  outbox_->Reserve(size);  // until the reply is queued
  BkEvent* last = nullptr;
  for (size_t i = 0; i < pieces; ++i) {
    const size_t at = i * piece, len = std::min(piece, size - at);
    // The queue is in order: the first piece waits for the command's wait list, the others
    // follow it, and the last one's completion is the command's.
    // Each piece has a buffer of its own from the pool, back there once sent: a large read
    // reuses a few warm buffers instead of faulting in one as large as itself.
    Bytes piece = server_->buffers().Acquire(len);
    piece->resize(len);
    auto ev = bk.Read(queue, mem, offset + at, len, piece, i == 0 ? waits : std::span<BkEvent* const>(), false);
    if (!ev.ok() && i == 0) {
      // Nothing is on the device: the caller answers the failure (Session::CommandFailed).
      outbox_->Unreserve(size);
      return ev.status();
    }
    if (!ev.ok()) {
      read->left -= pieces - i - 1;  // pieces never enqueued; this one is the Done below
      read->Done(ev.status().code(), at, nullptr);
      break;
    }
    bk.OnComplete(*ev, [read, at, piece](int32_t st) { read->Done(st, at, piece); });
    if (last) bk.Release(proto::ObjType::Event, last);
    last = *ev;
  }
  read->Done(CL_COMPLETE, 0, nullptr);  // the extra count
  return last;
}

}  // namespace rgpu::server
