// Large buffer reads over the socket, pipelined (issue 12, outcome 3): the device's copy of
// one piece overlaps the sending of the piece before, instead of the whole read landing
// before its first byte is sent.
#include <CL/cl.h>

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <deque>

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
  // Logged at debug level when the read ends, to tell a read the device holds up from one
  // the socket does: ns after `begun` at which the loop had enqueued every piece, and at
  // which the first piece and those at a quarter, half and three quarters of the read were
  // handed to the outbox.
  std::chrono::steady_clock::time_point begun = std::chrono::steady_clock::now();
  size_t pieces = 0, piece_bytes = 1;
  std::atomic<int64_t> enqueued_ns{0}, first_ns{0};
  std::atomic<int64_t> quarter_ns[3] = {0, 0, 0};

  int64_t SinceBegun() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                begun)
        .count();
  }

  // Piece `data` (null for the extra count) holds the read's bytes from `at` on.
  void Done(int32_t st, size_t at, const Bytes& data) {
    if (st != CL_COMPLETE) {
      int32_t ok = CL_SUCCESS;
      failed.compare_exchange_strong(ok, st < 0 ? st : CL_OUT_OF_RESOURCES);
    } else if (data && failed.load() == CL_SUCCESS) {
      Timed(at / piece_bytes);
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
    spdlog::debug(
        "pipelined read of {} KiB in {} pieces: enqueued {:.3f} ms, first piece {:.3f} ms, "
        "last {:.3f} ms; pieces 1/4 {:.3f} 1/2 {:.3f} 3/4 {:.3f}",
        size >> 10, pieces, enqueued_ns.load() / 1e6, first_ns.load() / 1e6, SinceBegun() / 1e6,
        quarter_ns[0].load() / 1e6, quarter_ns[1].load() / 1e6, quarter_ns[2].load() / 1e6);
  }

 private:
  void Timed(size_t piece) {
    if (!spdlog::should_log(spdlog::level::debug)) return;
    const int64_t now = SinceBegun();
    int64_t none = 0;
    first_ns.compare_exchange_strong(none, now);
    for (size_t q = 0; q < 3; ++q)
      if (piece == (q + 1) * pieces / 4) quarter_ns[q] = now;
  }
};

// A read's pieces enqueued and not yet handed to the outbox, oldest first, each holding a
// reference to its event. The queue is in order, so no piece is done before the one ahead
// of it: only the oldest is ever asked for its status or watched. The completion watcher
// asks every event it watches on each sweep (2-4 us a query in NVIDIA's driver); so it asks
// one event per read, not one per piece (16 reads of 16 MiB in flight are 256 pieces).
// The enqueuing loop uses it alone; once the loop has ended, only the watcher does.
struct PieceChain : std::enable_shared_from_this<PieceChain> {
  struct Piece {
    BkEvent* ev;
    size_t at;
    Bytes data;
  };
  Backend* bk = nullptr;
  std::shared_ptr<ReadPieces> read;
  std::deque<Piece> left;

  // Hands every piece the device has finished to the outbox; false if some are still running.
  bool HandOverDone() {
    while (!left.empty()) {
      const int32_t st = bk->EventStatus(left.front().ev);
      if (st > CL_COMPLETE) return false;
      HandOverOldest(st);
    }
    return true;
  }

  // From the loop's end on: the watcher hands over the rest as the oldest completes.
  void WatchRest() {
    if (HandOverDone()) return;
    bk->OnComplete(left.front().ev, [self = shared_from_this()](int32_t st) {
      self->HandOverOldest(st);
      self->WatchRest();
    });
  }

 private:
  void HandOverOldest(int32_t st) {
    Piece p = std::move(left.front());
    left.pop_front();
    read->Done(st, p.at, p.data);
    bk->Release(proto::ObjType::Event, p.ev);
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
  read->pieces = pieces;
  read->piece_bytes = piece;
  outbox_->Reserve(size);  // until the reply is queued
  // Once a few reads into pageable memory are queued, NVIDIA's driver copies each one inside
  // its enqueue call, and rgpud's completion watcher learns of none until the loop ends: on
  // an H200 every piece of a 256 MiB read reached the outbox 23-31 ms in, all within 0.3 ms,
  // and the socket idled meanwhile (session 16, bench/results/2026-11-27-h200-session16).
  // So the loop hands over each piece it finds complete between enqueues itself (a status
  // query, a few microseconds per piece of 1-4 MiB), and leaves the watcher only the pieces
  // still running when it ends.
  auto chain = std::make_shared<PieceChain>();
  chain->bk = &bk;
  chain->read = read;
  BkEvent* last = nullptr;  // the newest piece's event, retained once more: the command's
  for (size_t i = 0; i < pieces; ++i) {
    const size_t at = i * piece, len = std::min(piece, size - at);
    // The queue is in order: the first piece waits for the command's wait list, the others
    // follow it, and the last one's completion is the command's.
    // Each piece has a buffer of its own from the pool, back there once sent: a large read
    // reuses a few warm buffers instead of faulting in one as large as itself.
    // At most kReadWindowBytes staged: past that the loop waits for the writer to send,
    // handing over what the device has finished meanwhile (the writer may be waiting for it).
    // Not while a user event of the session is unset: the read may wait for it, and only this
    // thread can read the request that sets it; the window is then exceeded instead.
    if (!read_window_->Take(len, std::chrono::microseconds(0))) {
      if (!CanWaitInline()) {
        read_window_->TakeAnyway(len);
      } else {
        do chain->HandOverDone();
        while (!read_window_->Take(len, std::chrono::microseconds(200)));
      }
    }
    Bytes piece = read_window_->Hold(server_->buffers().Acquire(len), len);
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
    if (last) bk.Release(proto::ObjType::Event, last);
    last = *ev;
    bk.Retain(proto::ObjType::Event, last);
    chain->left.push_back(PieceChain::Piece{*ev, at, std::move(piece)});
    chain->HandOverDone();
  }
  chain->WatchRest();
  read->enqueued_ns = read->SinceBegun();
  read->Done(CL_COMPLETE, 0, nullptr);  // the extra count
  return last;
}

}  // namespace rgpu::server
