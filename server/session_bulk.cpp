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

  // A piece (`data` null for the extra count or a failure): the read's bytes from `at` on,
  // `len` of them, are in `data` from `data_off` on.
  void Done(int32_t st, size_t at, const Bytes& data, size_t data_off, size_t len) {
    if (st != CL_COMPLETE) {
      int32_t ok = CL_SUCCESS;
      failed.compare_exchange_strong(ok, st < 0 ? st : CL_OUT_OF_RESOURCES);
    } else if (data && failed.load() == CL_SUCCESS) {
      Timed(at / piece_bytes);
      for (size_t o = 0; o < len; o += proto::kDataChunk) {
        out->PushBulk(FrameHeader{0, static_cast<uint16_t>(Op::ReadData), proto::kFlagNotify, tag},
                      ReadDataFields(at + o), data, data_off + o,
                      std::min<size_t>(proto::kDataChunk, len - o));
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
    read->Done(st, p.at, p.data, 0, p.data ? p.data->size() : 0);
    bk->Release(proto::ObjType::Event, p.ev);
  }
};
}  // namespace

Result<BkEvent*> Session::PipelinedRead(const FrameHeader& h, BkQueue* queue, BkMem* mem,
                                        size_t offset, size_t size, std::span<BkEvent* const> waits,
                                        bool want_event, BkContext* ctx) {
  Backend& bk = server_->backend();
  const size_t piece = proto::ReadPieceBytes(size);
  const size_t pieces = (size + piece - 1) / piece;
  // A read the client waits for is read piece by piece with the driver's blocking call, each
  // piece handed to the outbox as that call returns, as a small read is (WaitsInline). Through
  // non-blocking reads a piece reached the outbox about 90 us after the one before on an H200,
  // whatever its size (256 KiB pieces: 2.9 GB/s, against 7.5 GB/s for the blocking call):
  // rgpud learns of each completion from the driver's callback or the watcher, and a 1 MiB
  // read took 444-460 us at p50 against 137 natively (bench/results/2026-11-27-session20).
  const bool blocking = (h.flags & proto::kFlagWaiting) && CanWaitInline();
  // Those pieces land in pinned memory where the session has it for this context
  // (PinnedStaging): the device copies straight into it, at several times the pageable rate.
  PinnedStaging* pinned = blocking ? PinnedFor(ctx) : nullptr;
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
    const bool last_piece = i + 1 == pieces;
    const auto piece_waits = i == 0 ? waits : std::span<BkEvent* const>();
    // A pinned slot, as the sender frees one (it sends at the socket's pace, a few ms at
    // most for what the staging holds); ordinary memory if none comes.
    // After a miss the rest of the read goes to ordinary memory: what holds the staging may
    // be a blob only this thread can consume, or a write behind a long kernel. No wait at
    // all while this session's own blob is staged there.
    auto slot = pinned && len <= pinned->size()
                    ? pinned->Take(len, staging_pinned_ ? std::chrono::milliseconds(0)
                                                        : std::chrono::milliseconds(20))
                    : std::nullopt;
    if (!slot) pinned = nullptr;
    Bytes piece;
    size_t piece_off = 0;
    if (slot) {
      piece = slot->hold;
      piece_off = slot->offset;
    } else {
      // Each piece has a buffer of its own from the pool, back there once sent: a large read
      // reuses a few warm buffers instead of faulting in one as large as itself.
      // At most kReadWindowBytes staged: past that the loop waits for the writer to send,
      // handing over what the device has finished meanwhile (the writer may be waiting for
      // it). Not while a user event of the session is unset: the read may wait for it, and
      // only this thread can read the request that sets it; the window is then exceeded.
      if (!read_window_->Take(len, std::chrono::microseconds(0))) {
        if (!CanWaitInline()) {
          read_window_->TakeAnyway(len);
        } else {
          do chain->HandOverDone();
          while (!read_window_->Take(len, std::chrono::microseconds(200)));
        }
      }
      piece = read_window_->Hold(server_->buffers().Acquire(len), len);
      piece->resize(len);
    }
    // Waited for: the driver's blocking call, no event but the command's (on the last piece,
    // and only if the client named one). Else enqueued, handed over as it completes.
    Result<BkEvent*> ev = static_cast<BkEvent*>(nullptr);
    if (blocking) {
      Parked parked(this);
      ev = bk.ReadInto(queue, mem, offset + at, len, piece->data() + piece_off, piece, piece_waits,
                       true, last_piece && want_event);
    } else {
      ev = bk.Read(queue, mem, offset + at, len, piece, piece_waits, false);
    }
    if (!ev.ok() && i == 0) {
      // Nothing is on the device: the caller answers the failure (Session::CommandFailed).
      outbox_->Unreserve(size);
      return ev.status();
    }
    if (!ev.ok()) {
      read->left -= pieces - i - 1;  // pieces never enqueued; this one is the Done below
      read->Done(ev.status().code(), at, nullptr, 0, 0);
      // The reply says how it ended; a waited read's client event must say so too (the
      // non-blocking path's is the last piece enqueued).
      if (blocking && want_event && ctx) {
        auto failed = bk.FailedEvent(ctx, ev.status().code());
        if (failed.ok()) last = *failed;
      }
      break;
    }
    if (blocking) {
      read->Done(CL_COMPLETE, at, piece, piece_off, len);
      if (*ev) last = *ev;  // the caller's reference; not retained twice
      continue;
    }
    if (last) bk.Release(proto::ObjType::Event, last);
    last = *ev;
    bk.Retain(proto::ObjType::Event, last);
    chain->left.push_back(PieceChain::Piece{*ev, at, std::move(piece)});
    chain->HandOverDone();
  }
  chain->WatchRest();
  read->enqueued_ns = read->SinceBegun();
  read->Done(CL_COMPLETE, 0, nullptr, 0, 0);  // the extra count
  return last;
}

PinnedStaging* Session::PinnedFor(BkContext* ctx) {
  if (!ctx) return nullptr;
  if (!pinned_asked_) {
    pinned_asked_ = true;
    const size_t bytes = server_->options().pinned_staging_bytes;
    if (bytes > 0 && server_->BeginPinned()) {
      pinned_ = PinnedStaging::Make(server_->backend(), ctx, bytes);
      if (pinned_)
        pinned_counted_ = true;
      else
        server_->EndPinned();
      spdlog::debug("session {}: {} KiB of pinned staging for socket reads{}", id_, bytes >> 10,
                    pinned_ ? "" : " refused by the device");
    }
  }
  return pinned_ && pinned_->context() == ctx ? pinned_.get() : nullptr;
}

}  // namespace rgpu::server
