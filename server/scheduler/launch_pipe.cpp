#include "server/scheduler/launch_pipe.h"

#include <algorithm>
#include <chrono>

#include "proto/cpu_relax.h"
#include "proto/thread_name.h"

namespace rgpu::server {

namespace {

// Spins until `done()`, then gives the core away between looks: the pipe's thread takes
// microseconds per launch, or tens after a wake-up, but the driver may also block it while
// the device's own queue is full.
template <typename Done>
void WaitUntil(const Done& done) {
  for (int spins = 0; !done(); ++spins) {
    if (spins < 4096)
      proto::CpuRelax();
    else
      std::this_thread::yield();
  }
}

void AddOnce(std::vector<BkQueue*>& v, BkQueue* q) {
  if (q && std::find(v.begin(), v.end(), q) == v.end()) v.push_back(q);
}

}  // namespace

LaunchPipe::LaunchPipe(Backend& backend) : backend_(backend), thread_([this] { Run(); }) {}

LaunchPipe::~LaunchPipe() {
  Drain();
  try {
    Settle();  // the session has waited already, as a rule: nothing is left to settle
  } catch (...) {  // NOLINT(bugprone-empty-catch): only an allocation could throw, at exit
  }
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void LaunchPipe::Push(BkQueue* q, BkKernel* k, std::span<const KernelArgValue> args,
                      const NDRange& range, Then then, BkQueue* twin) {
  const uint64_t seq = pushed_.load(std::memory_order_relaxed);
  WaitUntil([&] { return seq - done_.load(std::memory_order_acquire) < kSlots; });  // a free slot
  Job& j = jobs_[seq % kSlots];
  j.queue = q;
  j.kernel = k;
  j.args.assign(args.begin(), args.end());
  j.range = range;
  j.then = std::move(then);
  j.twin = j.then ? twin : nullptr;
  // seq_cst with the thread's store of sleeping_ (Run): either it sees this launch before it
  // sleeps, or this sees it asleep and wakes it.
  pushed_.store(seq + 1, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst)) {
    std::lock_guard lk(mu_);
    cv_.notify_one();
  }
}

void LaunchPipe::Drain() {
  const uint64_t target = pushed_.load(std::memory_order_relaxed);
  WaitUntil([&] { return done_.load(std::memory_order_acquire) >= target; });
}

void LaunchPipe::Wait() {
  Drain();
  FlushWanted();
  Settle();
}

void LaunchPipe::Flush(BkQueue* q, BkQueue* twin) {
  {
    std::lock_guard lk(mu_);
    AddOnce(flush_, q);
    AddOnce(flush_twins_, twin);
  }
  // seq_cst with the thread's store of done_ and its load of flush_wanted_ (Run): either
  // this sees launches still pending, and the thread sees the wish once it has drained, or
  // this sees them all handed over and flushes itself. Both may flush: harmless.
  flush_wanted_.store(true, std::memory_order_seq_cst);
  if (done_.load(std::memory_order_seq_cst) < pushed_.load(std::memory_order_relaxed)) return;
  FlushWanted();
}

void LaunchPipe::Nudge() {
  if (!sleeping_.load(std::memory_order_acquire)) return;
  {
    std::lock_guard lk(mu_);
    nudged_ = true;
  }
  cv_.notify_one();
}

void LaunchPipe::FlushWanted() {
  if (!flush_wanted_.exchange(false, std::memory_order_seq_cst)) return;
  std::vector<BkQueue*> queues;
  {
    std::lock_guard lk(mu_);
    queues.swap(flush_);
    for (BkQueue* t : flush_twins_)
      if (auto u = std::find(twins_used_.begin(), twins_used_.end(), t); u != twins_used_.end()) {
        twins_used_.erase(u);
        queues.push_back(t);
      }
    flush_twins_.clear();
  }
  for (BkQueue* q : queues) backend_.Flush(q);
}

void LaunchPipe::Settle() {
  // What the session enqueues next on a queue comes after its twin's launches.
  for (Twin& t : twins_) {
    if (t.on_twin) {
      backend_.Flush(t.twin);  // another queue's event in a wait list: it must be submitted
      if (!backend_.Barrier(t.queue, WaitList{&t.last, 1}, /*want_event=*/false).ok())
        backend_.Finish(t.twin);  // ordered by waiting for them here instead
    }
    if (t.last) backend_.Release(proto::ObjType::Event, t.last);
  }
  twins_.clear();
  // Every twin's launches are flushed now (here, or when the launches went back to the
  // queue), and a queue is released only after a Wait: none is left to flush, nor named.
  std::lock_guard lk(mu_);
  twins_used_.clear();
}

Result<BkEvent*> LaunchPipe::Launch(Job& j) {
  const bool want_event = static_cast<bool>(j.then);
  Twin* t = nullptr;
  for (Twin& x : twins_)
    if (x.queue == j.queue) t = &x;
  if (!t && !j.twin)
    return backend_.Launch(j.queue, j.kernel, j.args, j.range, WaitList{}, want_event);
  if (!t) t = &twins_.emplace_back(Twin{j.queue, j.twin});
  // To the twin once kTwinAfter launches in a row left events on the queue (the last one to
  // wait for); back to the queue behind the twin's last launch (which always has an event).
  const bool to_twin = j.twin && (t->on_twin || (t->last && t->evented >= kTwinAfter));
  BkEvent* wait = nullptr;
  if (to_twin != t->on_twin) {
    wait = t->last;
    backend_.Flush(t->on_twin ? t->twin : t->queue);
  }
  auto ev = backend_.Launch(to_twin ? t->twin : t->queue, j.kernel, j.args, j.range,
                            wait ? WaitList{&wait, 1} : WaitList{}, want_event);
  if (!ev.ok()) return ev;  // nothing enqueued: where the launches stand is unchanged
  if (*ev) backend_.Retain(proto::ObjType::Event, *ev);
  if (t->last) backend_.Release(proto::ObjType::Event, t->last);
  t->last = *ev;
  t->on_twin = to_twin;
  t->evented = *ev ? t->evented + 1 : 0;
  if (to_twin) {
    on_twins_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lk(mu_);  // before done_ moves past it: FlushWanted then sees it
    AddOnce(twins_used_, t->twin);
  }
  return ev;
}

void LaunchPipe::Fail(const Status& s) {
  std::lock_guard lk(mu_);
  if (failure_.ok()) failure_ = s;  // the first one is reported
  failed_.store(true, std::memory_order_release);
}

Status LaunchPipe::TakeFailure() {
  if (!failed_.load(std::memory_order_acquire)) return Status::Ok();
  std::lock_guard lk(mu_);
  failed_.store(false, std::memory_order_relaxed);
  Status s = std::move(failure_);
  failure_ = Status::Ok();
  return s;
}

void LaunchPipe::Run() {
  proto::NameThread("rgpud-launch");
  using Clock = std::chrono::steady_clock;
  uint64_t next = 0;
  auto idle_since = Clock::now();
  for (;;) {
    if (pushed_.load(std::memory_order_acquire) > next) {
      Job& j = jobs_[next % kSlots];
      const bool want_event = static_cast<bool>(j.then);
      auto ev = Launch(j);
      if (want_event) {
        j.then(std::move(ev));  // its failure too
        j.then = nullptr;
      } else if (!ev.ok()) {
        Fail(ev.status());
      } else if (*ev) {
        backend_.Release(proto::ObjType::Event, *ev);  // none was asked; never expected
      }
      done_.store(++next, std::memory_order_seq_cst);
      if (pushed_.load(std::memory_order_seq_cst) == next &&
          flush_wanted_.load(std::memory_order_seq_cst))
        FlushWanted();  // drained: the flushes asked for meanwhile (Flush)
      idle_since = Clock::now();
      continue;
    }
    if (Clock::now() - idle_since < std::chrono::microseconds(kIdleSpinUs)) {
      proto::CpuRelax();
      continue;
    }
    std::unique_lock lk(mu_);
    sleeping_.store(true, std::memory_order_seq_cst);
    cv_.wait(lk,
             [&] { return stop_ || nudged_ || pushed_.load(std::memory_order_seq_cst) > next; });
    nudged_ = false;
    sleeping_.store(false, std::memory_order_release);
    if (stop_ && pushed_.load(std::memory_order_acquire) == next) return;
    idle_since = Clock::now();
  }
}

}  // namespace rgpu::server
