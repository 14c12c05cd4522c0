#include "server/scheduler/launch_pipe.h"

#include <chrono>

#include "proto/cpu_relax.h"

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

}  // namespace

LaunchPipe::LaunchPipe(Backend& backend) : backend_(backend), thread_([this] { Run(); }) {}

LaunchPipe::~LaunchPipe() {
  Wait();
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void LaunchPipe::Push(BkQueue* q, BkKernel* k, std::span<const KernelArgValue> args,
                      const NDRange& range, Then then) {
  const uint64_t seq = pushed_.load(std::memory_order_relaxed);
  WaitUntil([&] { return seq - done_.load(std::memory_order_acquire) < kSlots; });  // a free slot
  Job& j = jobs_[seq % kSlots];
  j.queue = q;
  j.kernel = k;
  j.args.assign(args.begin(), args.end());
  j.range = range;
  j.then = std::move(then);
  // seq_cst with the thread's store of sleeping_ (Run): either it sees this launch before it
  // sleeps, or this sees it asleep and wakes it.
  pushed_.store(seq + 1, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst)) {
    std::lock_guard lk(mu_);
    cv_.notify_one();
  }
}

void LaunchPipe::Wait() {
  const uint64_t target = pushed_.load(std::memory_order_relaxed);
  WaitUntil([&] { return done_.load(std::memory_order_acquire) >= target; });
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
  using Clock = std::chrono::steady_clock;
  uint64_t next = 0;
  auto idle_since = Clock::now();
  for (;;) {
    if (pushed_.load(std::memory_order_acquire) > next) {
      Job& j = jobs_[next % kSlots];
      const bool want_event = static_cast<bool>(j.then);
      auto ev = backend_.Launch(j.queue, j.kernel, j.args, j.range, WaitList{}, want_event);
      if (want_event) {
        j.then(std::move(ev));  // its failure too
        j.then = nullptr;
      } else if (!ev.ok()) {
        Fail(ev.status());
      } else if (*ev) {
        backend_.Release(proto::ObjType::Event, *ev);  // none was asked; never expected
      }
      done_.store(++next, std::memory_order_release);
      idle_since = Clock::now();
      continue;
    }
    if (Clock::now() - idle_since < std::chrono::microseconds(kIdleSpinUs)) {
      proto::CpuRelax();
      continue;
    }
    std::unique_lock lk(mu_);
    sleeping_.store(true, std::memory_order_seq_cst);
    cv_.wait(lk, [&] { return stop_ || pushed_.load(std::memory_order_seq_cst) > next; });
    sleeping_.store(false, std::memory_order_release);
    if (stop_ && pushed_.load(std::memory_order_acquire) == next) return;
    idle_since = Clock::now();
  }
}

}  // namespace rgpu::server
