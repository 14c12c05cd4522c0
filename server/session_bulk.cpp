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
  // When it began, when the last piece was enqueued and when the first piece's data was
  // handed to the outbox (ns after `begun`): logged at debug level when the read ends, to
  // tell a read the device holds up from one the socket does.
  std::chrono::steady_clock::time_point begun = std::chrono::steady_clock::now();
  std::atomic<int64_t> enqueued_ns{0}, first_ns{0};
  size_t pieces = 0, piece_bytes = 1;
  std::unique_ptr<std::atomic<int64_t>[]> done_ns;  // per piece, when its data was queued

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
      int64_t none = 0;
      const int64_t now = SinceBegun();
      first_ns.compare_exchange_strong(none, now);
      if (done_ns && at / piece_bytes < pieces) done_ns[at / piece_bytes] = now;
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
    auto q = [&](size_t i) { return done_ns && i < pieces ? done_ns[i].load() / 1e6 : 0.0; };
    spdlog::debug(
        "pipelined read of {} KiB in {} pieces: enqueued {:.3f} ms, first piece {:.3f} ms, "
        "last {:.3f} ms; pieces 1/4 {:.3f} 1/2 {:.3f} 3/4 {:.3f}",
        size >> 10, pieces, enqueued_ns.load() / 1e6, first_ns.load() / 1e6, SinceBegun() / 1e6,
        q(pieces / 4), q(pieces / 2), q(3 * pieces / 4));
  }
};
// A piece enqueued whose data has not been handed to the outbox yet.
struct Unsent {
  BkEvent* ev;
  size_t at;
  Bytes data;
};

// The pieces the enqueuing loop left running, oldest first, each holding a reference to its
// event. Only the oldest is watched: the queue is in order, so no later one is done before
// it, and the completion watcher, which asks every event it watches for its status on each
// sweep (2-4 us a query in NVIDIA's driver), then asks one event per read instead of one per
// piece (16 reads of 16 MiB in flight are 256 pieces).
struct PieceChain : std::enable_shared_from_this<PieceChain> {
  Backend* bk = nullptr;
  std::shared_ptr<ReadPieces> read;
  std::deque<Unsent> left;

  // The oldest piece ended with `st`: hands it over, and every later one already done, and
  // watches the next.
  void Settle(int32_t st) {
    for (;;) {
      Unsent u = std::move(left.front());
      left.pop_front();
      read->Done(st, u.at, u.data);
      bk->Release(proto::ObjType::Event, u.ev);
      if (left.empty()) return;
      st = bk->EventStatus(left.front().ev);
      if (st > CL_COMPLETE) {
        bk->OnComplete(left.front().ev,
                       [self = shared_from_this()](int32_t s) { self->Settle(s); });
        return;
      }
    }
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
  read->done_ns.reset(new std::atomic<int64_t>[pieces]());
  outbox_->Reserve(size);  // until the reply is queued
  // Pieces enqueued whose data has not been handed to the outbox yet, oldest first. Once a
  // few reads into pageable memory are queued, NVIDIA's driver copies each one inside its
  // enqueue call, and rgpud's completion watcher learns of none until the loop ends: on an
  // H200 every piece of a 256 MiB read reached the outbox 23-31 ms in, all within 0.3 ms,
  // and the socket idled meanwhile (session 16, bench/results/2026-11-27-h200-session16).
  // So the loop hands over each piece it finds complete between enqueues itself (a status
  // query, a few microseconds per piece of 1-4 MiB), and leaves the watcher only the pieces
  // still running when it ends.
  std::deque<Unsent> unsent;
  BkEvent* last = nullptr;   // the newest piece's event: the command's, if no later one comes
  bool last_handed = false;  // it was handed over (and kept, not released)
  auto hand_over_done = [&] {
    while (!unsent.empty()) {
      Unsent& u = unsent.front();
      const int32_t st = bk.EventStatus(u.ev);
      if (st > CL_COMPLETE) return;  // in order: the later ones are not done either
      read->Done(st, u.at, u.data);
      if (u.ev != last)
        bk.Release(proto::ObjType::Event, u.ev);
      else
        last_handed = true;
      unsent.pop_front();
    }
  };
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
      if (!CanWaitInline())
        read_window_->TakeAnyway(len);
      else
        for (;;) {
          hand_over_done();
          if (read_window_->Take(len, std::chrono::microseconds(200))) break;
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
    if (last_handed) bk.Release(proto::ObjType::Event, last);
    last_handed = false;
    last = *ev;
    unsent.push_back(Unsent{*ev, at, std::move(piece)});
    hand_over_done();
  }
  if (!unsent.empty()) {
    // The chain holds a reference to each event; `last` (unsent's newest) also goes to the
    // caller.
    bk.Retain(proto::ObjType::Event, last);
    auto chain = std::make_shared<PieceChain>();
    chain->bk = &bk;
    chain->read = read;
    chain->left = std::move(unsent);
    bk.OnComplete(chain->left.front().ev, [chain](int32_t st) { chain->Settle(st); });
  }
  read->enqueued_ns = read->SinceBegun();
  read->Done(CL_COMPLETE, 0, nullptr);  // the extra count
  return last;
}

}  // namespace rgpu::server
