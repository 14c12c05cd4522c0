// A session's second thread for the driver's kernel enqueues during a burst of launches.
//
// NVIDIA's clEnqueueNDRangeKernel takes 9-12 us of a thread on an H200 host; a session thread
// that makes it itself also reads, decodes and schedules each launch frame (about 1 us more),
// so a burst through rgpud ran at 0.82-0.87 of an application calling the driver directly.
// With a pipe, the session thread hands launches with no wait list whose event nobody outside
// the scheduler needs to this thread, in order, and goes on to the next frame while the driver
// enqueues the last.
//
// Order: the pipe's launches reach the driver in the order pushed. Anything else the session
// (or the scheduler, on its behalf) does with the driver that must come after them waits
// for Wait() first: every other command on the application's queues, object releases, a
// launch that waits for an event. Releases of events need no wait. A launch whose event the
// application asked for goes through the pipe too: the event reaches the session through
// a PipedEvent (scheduler.h), which it reads after Wait().
//
// Twins: NVIDIA's enqueue of a launch with an event takes 16 us on a queue with profiling
// and 10.6 without (rgpu-probe-driver --events, H200), and rgpud makes every application
// queue with profiling for its accounting. So a launch whose event only the application
// reads (the accounting did not sample it) may go on the queue's twin without profiling
// (Session::TwinOf), ordered across the two by events: it goes there once kTwinAfter
// launches in a row on the queue left events (the last one to wait for), and the next launch
// that goes back on the queue waits for the twin's last. Wait() then puts a barrier on each queue
// behind its twin's last launch, so whatever is enqueued on the queue next comes after them.
//
// Threading: Push, Wait, Flush, Nudge, Awake, Pushed and TakeFailure are called by the owning
// session thread only; the pipe's own thread calls the backend's Launch, each launch's `then`, and
// Fail from there. The backend is thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "proto/status.h"
#include "server/backend/backend.h"

namespace rgpu::server {

class LaunchPipe {
 public:
  explicit LaunchPipe(Backend& backend);
  ~LaunchPipe();  // waits for what was pushed, then ends the thread
  LaunchPipe(const LaunchPipe&) = delete;
  LaunchPipe& operator=(const LaunchPipe&) = delete;

  // What runs on the pipe's thread after a launch that asked for an event: it gets the
  // launch's event (one reference, its to release) or the failure, which it reports (Fail,
  // or to whoever waits for the event); a launch without one reports its failure itself.
  using Then = std::function<void(Result<BkEvent*>)>;
  // Queues the launch (with an event only when `then` is set); blocks only while kSlots
  // launches are pending. `twin`: q's twin without profiling, where the launch may go (see
  // Twins above; only with `then`), or null.
  void Push(BkQueue* q, BkKernel* k, std::span<const KernelArgValue> args, const NDRange& range,
            Then then = {}, BkQueue* twin = nullptr);
  // Returns once every pushed launch has been handed to the driver (spins: they take
  // microseconds each), each queue ordered behind its twin's launches.
  void Wait();
  // clFlush of q (and its twin, if any) after the launches pushed so far, without waiting
  // for them: the pipe's thread flushes once it has handed them to the driver, or, when it
  // has already, the calling thread flushes now. A closed loop that launches, flushes and
  // waits for an earlier launch (the matrix's BE tenants) then gets its answer while the
  // driver still takes the new launch, not after. The twin is flushed only if a launch went
  // on it since its last flush here: a closed loop flushes after every launch, and flushing
  // an idle twin each time cost a tenant alone in such a loop 0.1-0.2 of its rate (H200,
  // docs/scheduling.md "Session 33").
  void Flush(BkQueue* q, BkQueue* twin);
  // The thread is not asleep: a launch pushed now costs no wake-up before it reaches the
  // driver. It spins for kIdleSpinUs after its last launch before it sleeps.
  bool Awake() const { return !sleeping_.load(std::memory_order_acquire); }
  // Wakes the thread to spin for kIdleSpinUs, as after a launch: a launch expected soon (a
  // closed loop's next, after its wait) then finds it awake (Session::PipeFor).
  void Nudge();
  // Launches pushed so far, and handed to the driver so far (their `then` has run).
  uint64_t Pushed() const { return pushed_.load(std::memory_order_relaxed); }
  uint64_t Done() const { return done_.load(std::memory_order_acquire); }
  // Launches that went on a twin so far.
  uint64_t OnTwins() const { return on_twins_.load(std::memory_order_relaxed); }
  // The first launch that failed since the last call, if any (ok otherwise).
  Status TakeFailure();
  // Keeps a failure for TakeFailure (the first since the last take wins); any thread.
  void Fail(const Status& s);

  static constexpr size_t kSlots = 256;
  static constexpr int kIdleSpinUs = 200;
  // Launches in a row with an event on a queue (since Wait) before the next goes on its twin.
  // A switch costs two flushes and, at the next Wait, a barrier; a launch on the twin saves
  // ~5.5 us (NVIDIA, H200): a few launches between waits (a request of two kernels and a
  // read) would lose more than they gain.
  static constexpr uint32_t kTwinAfter = 8;

 private:
  struct Job {
    BkQueue* queue = nullptr;
    BkKernel* kernel = nullptr;
    std::vector<KernelArgValue> args;  // keeps its capacity from one use of the slot to the next
    NDRange range;
    Then then;
    BkQueue* twin = nullptr;
  };
  // Where the launches of a queue with a twin stand: owned by the pipe's thread while it
  // runs launches, by the session's in Wait (nothing is pushed meanwhile).
  struct Twin {
    BkQueue* queue = nullptr;  // the application's queue
    BkQueue* twin = nullptr;   // its twin without profiling
    BkEvent* last = nullptr;   // the last launch's event, on either (a reference of ours), or null
    bool on_twin = false;      // the last launch went on the twin
    uint32_t evented = 0;      // launches in a row with an event, the last one included
  };
  void Run();
  // Returns once every pushed launch has been handed to the driver.
  void Drain();
  // Flushes the queues Flush asked for, if any are wanted (either thread).
  void FlushWanted();
  // Orders each queue behind its twin's launches and forgets where they stand (Wait).
  void Settle();
  // Launches j on its queue or its twin; the launch's event, if it asked for one.
  Result<BkEvent*> Launch(Job& j);

  Backend& backend_;
  std::array<Job, kSlots> jobs_;       // slot seq % kSlots: written by Push, read by Run
  std::atomic<uint64_t> pushed_{0};    // written by the session thread
  std::atomic<uint64_t> done_{0};      // written by the pipe's thread
  std::atomic<bool> sleeping_{false};  // the pipe's thread waits on cv_
  std::atomic<bool> failed_{false};    // failure_ holds a status not yet taken
  std::atomic<uint64_t> on_twins_{0};  // written by the pipe's thread
  std::atomic<bool> flush_wanted_{false};  // flush_ holds queues to flush after the launches
  std::vector<Twin> twins_;            // queues with a twin that had launches since the last Wait
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  bool nudged_ = false;  // GUARDED_BY(mu_)
  Status failure_;     // GUARDED_BY(mu_)
  std::vector<BkQueue*> flush_;  // GUARDED_BY(mu_)
  std::vector<BkQueue*> flush_twins_;  // GUARDED_BY(mu_): twins Flush named
  std::vector<BkQueue*> twins_used_;   // GUARDED_BY(mu_): twins launched on since their flush
  std::thread thread_;
};

}  // namespace rgpu::server
