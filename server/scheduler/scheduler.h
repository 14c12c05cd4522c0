// The scheduler: every kernel launch of every session goes through it.
//
// Policies (docs/scheduling.md):
//   fifo     launches go straight to the device in submission order, never sliced;
//   split    when several tenants are active and the launch is larger than the device, it
//            is cut into active_tenants * alpha equal slices, enqueued back to back (the
//            first policy of the project, Algorithm 1 of its seed 001; "seed001" is still
//            accepted as its name);
//   fair     weighted fair sharing of measured device time: launches of a tenant that shares
//            the device are held in rgpud and fed to the device by a dispatcher thread, one
//            tenant's work at a time, least weighted device time first. Latency-critical
//            launches never wait: they go to the device at once and stop the best-effort work
//            on it. Best-effort work runs as preemptible runs (slicer::PlanRun: work-groups
//            claim group ids from a counter and return at a stop flag) so that stopping it
//            costs at most the work-groups already running; what cannot run that way runs in
//            slices bounded by measured time, or whole. A tenant alone launches directly.
//
// Every policy measures device time per tenant from profiling events (accounting): the
// DeviceLedger (ledger.h) shares each instant among the tenants with a kernel running then.
//
// Threading: Submit and CancelSession are called from session threads; the dispatcher thread
// feeds held launches to the device; completion callbacks run on backend threads. All shared
// state is under mu_.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "server/backend/backend.h"
#include "server/scheduler/launch_pipe.h"
#include "server/scheduler/lc_trace.h"
#include "server/scheduler/ledger.h"
#include "server/scheduler/slicer.h"
#include "server/tenant.h"

namespace rgpu::server {

enum class Policy { Fifo, Split, Fair };
Result<Policy> ParsePolicy(const std::string& name);
const char* PolicyName(Policy p);

struct SchedulerOptions {
  Policy policy = Policy::Fair;
  double alpha = 2.0;  // split: slices per active tenant
  // fair: how much device time one best-effort tenant's turn lasts before another waiting
  // best-effort tenant gets the device (a run is stopped then; slices are at most 2 ms each,
  // and the tenant with the least weighted device time goes next).
  double quantum_us = 8000.0;
  // fair: held best-effort work that has made no progress on the device (no run, slice or
  // launch of it ended) for a quantum plus this long while another tenant waits no longer
  // keeps that tenant off the device: the next one's work goes beside it and the GPU
  // time-slices the two, as it does for separate processes. A work-group that ignores stop
  // flags (a persistent kernel waiting for its host) or a launch that cannot be stopped
  // would otherwise hold every other best-effort tenant back until it ended. Not shorter: a
  // launch of a few long work-groups (the lab's core-intensive kernel, 55 ms) that went
  // beside others after 33 ms took twice as long beside G-mem tenants, which gained nothing.
  double overrun_us = 100000.0;
  // fair: a best-effort tenant's turn holds whatever its launches are. While its turn lasts
  // (a quantum of wall time from its first dispatch) it keeps the device whenever it has a
  // launch to go, though another has used less; when its work on the device ends and nothing
  // of it is queued, the device waits up to turn_wait_us for its next launch before another
  // tenant's turn begins (at most one wait a turn: a tenant that has gone idle costs the
  // device at most that much a quantum). Without turns, tenants whose launches are short (a
  // closed loop of 30 us kernels) alternated launch by launch, each change of context costing
  // the device about 140 us: on the H200, 2 and 4 such tenants ran at 0.65 and 0.62 of fifo's
  // total; with turns 1.12 and 0.77, and with the wait too 1.16 and 1.05 (docs/scheduling.md,
  // "Equal tenants of every kind").
  bool be_turns = true;
  double turn_wait_us = 100.0;
  // fair: in its turn, while no latency-critical tenant is active, a tenant's launch expected
  // to take no longer than a slice (2 ms) goes to the device directly, as a tenant's alone
  // does, instead of through the held path (Scheduler::DirectInTurnNs): 2 and 4 tenants of 30 us
  // launches then ran at 1.26 and 1.00 of fifo's total, against 0.94 and 0.78 held.
  bool direct_in_turn = true;
  // fair, with direct_in_turn: also beside an active latency-critical tenant, between its
  // requests (none being served, and lc_guard_us after, or lc_whole_guard_us in a context the
  // LC tenant shares), for a launch expected to take at most lc_slice_us while the turn's
  // direct launches on the device are expected to end within lc_slice_depth x lc_slice_us: an
  // arrival then waits for about what held slices beside it would make it wait for, and the
  // launch skips the held path's cost (Scheduler::DirectInTurnNs). Beside the 370 µs LC
  // tenants, 30 µs BE launches rose from 0.37-0.57 of native to 0.47-0.77 (higher in 23 of 24
  // paired runs), the LC p99 within the runs' spread (H200, docs/scheduling.md "Session 43").
  bool direct_beside_lc = true;
  // fair: best-effort slices (launches that cannot run preemptibly) beside an active
  // latency-critical tenant are sized to at most this much measured device time each...
  double lc_slice_us = 50.0;
  // ...and this many of them are on the device at once, so that the device does not idle
  // while rgpud learns that one ended and launches the next. An arrival waits for what is
  // queued: at most lc_slice_depth x lc_slice_us. A kernel whose smallest slice (a wave)
  // lasts longer than lc_slice_us has one at a time. One slice of 150 us at a time (the old
  // default) left the device idle between slices: a memory-bound BE tenant beside an LC one
  // got 0.56-0.65 of its native solo rate, against 0.62-0.72 with two of 50 us, and the LC
  // p99 was the same or lower (H100, two runs, docs/scheduling.md "Session 14").
  uint32_t lc_slice_depth = 2;
  // fair: preemptible runs beside an active latency-critical tenant hold about this much
  // measured device time (never less than a wave; a stop ends them early).
  double lc_run_us = 150.0;
  // fair: beside an active latency-critical tenant, a preemptible run whose work-groups last
  // longer than lc_run_us each (a full wave of them would hold the device for one
  // work-group's time at full occupancy, which a stop cannot shorten) launches only a few
  // work-groups per compute unit: each runs faster at lower occupancy, and the run ends
  // after one work-group's time. How many per unit is measured: the fewest that keep the
  // kernel's rate (Scheduler::NarrowRuns).
  bool narrow_runs = true;
  // fair: the width of narrow runs, in work-groups per compute unit: 0 = the narrowest that
  // keeps 90% of the best measured rate; 1, 2 or 4 = always that width.
  uint32_t narrow_width = 0;
  // A latency-critical tenant's launches, while no other tenant is active, get an event (and
  // a measurement of their cost) only every sample_every-th time when the application asked for
  // none, as short best-effort launches always do: nothing waits for their end then, and an event
  // costs the driver about 6 us a launch (H200). Tracing keeps every event.
  bool lc_sampled_events = true;
  // Short launches the application asked no event for get one (a measurement of their cost)
  // only every this many times. 64 rather than 16: on the H200 the rate of 100,000 launches
  // went from 0.76-0.82 of native to 0.81-1.01 over Unix and 0.91-1.05 over TCP
  // (bench/results/2026-11-26-h200-session10/launch-ab/).
  uint32_t sample_every = 64;
  // fair: best-effort work resumes this long after a latency-critical request was served.
  double lc_guard_us = 50.0;
  // fair: ...and a best-effort launch that runs whole (a program from a binary: nothing cuts
  // or stops it) in a context it shares with an active LC tenant (a context group) this long
  // after. An LC tenant that has fallen behind sends its next request within tens of
  // microseconds of the last answer; a whole launch put on the device in that gap holds every
  // request behind it for the launch's length, since in one context the device does not
  // time-slice, and the LC tenant never caught up: p99 38-278x native beside 15 ms
  // launches, 20-36x with this guard (H100, docs/scheduling.md "Session 14").
  double lc_whole_guard_us = 1000.0;
  // fair: while held best-effort work is on the device beside an active latency-critical
  // tenant, the dispatcher spins (a core) instead of sleeping until a slice or run ends, and
  // the backend's completion watcher sweeps without pausing (Urgency::kSpin): the next
  // slice goes on the device within microseconds of the last one's end, where a sleeping
  // thread's wake-up left the device idle for tens to hundreds of microseconds per slice on
  // a GPU host's VM. rgpud turns it on with 8 CPUs or more (--spin-feed).
  bool spin_feed = false;
  // fair: a latency-critical launch in a context where best-effort slices are on the device
  // (a context group) waits for the short ones (expected to last at most twice lc_slice_us)
  // to end, at most this long, before it goes to the device. Launched beside them, its
  // work-groups were dealt out to compute units unevenly around theirs: a 365 us kernel ran
  // 620 us at the median beside memory-bound slices of 30-55 us, against 367 us launched
  // once they had ended (H200, natively in one context; docs/scheduling.md "Session 21").
  // 0: no wait. Separate contexts never wait here: the device switches between them anyway.
  double drain_slices_us = 1000.0;
  // fair, with drain_slices_us: only a latency-critical kernel measured to take at least this
  // many times the slices' expected time waits for them (1: any kernel at least as long).
  // Opt-in, not shown to help: with no wait at all (--lc-drain-us=0) a 50 us LC kernel beside
  // 30 us BE launches read 1.25-1.33x native at p99 against 1.48-1.70x waiting (H200, session
  // 47, calls 7-8), but a ratio of 2 in one run on a disturbed host did not (call 9).
  double drain_ratio = 1.0;
  // fair: a held launch directly behind another held launch on an in-order queue of the
  // application (nothing else was enqueued between them, and it waits for nothing else)
  // goes on the device behind that one's last slice, on the same queue of rgpud, without
  // waiting for the driver to report the first complete through the application's queue
  // (its gate, then two markers, then a completion callback). See Scheduler::Candidate.
  bool chain_held = true;
  // fair: a held launch of at most one wave of work-items (every work-group is on the
  // device from the start, so a stop would cut none of them) goes as one slice rather than
  // as a preemptible run: no control words to write before it and read after it, and the
  // next held launch of its queue may chain onto it (chain_held), which never follows a run.
  bool whole_wave = true;
  // fair: such a held launch of one slice that follows another (chain_held) goes onto the
  // application's queue at once, its kernel waiting for a user event that the dispatcher sets
  // when it is its turn: the kernel's own event is the application's, and no markers are made
  // around it (each costs NVIDIA's driver about what a launch does).
  bool gate_chained = true;
  // fair: the same for a held launch of one slice that is first on its queue: everything
  // before it on its in-order queue is complete (LaunchRequest::before_known) and so is every
  // event it waits for, as in a closed loop that waits for each launch before the next.
  bool gate_first = true;
  // fair: such a launch (gate_chained, gate_first) that the dispatcher would put on the device
  // the moment it is queued goes there from the submitting thread instead, without a gate:
  // no user event, no hand-off to the dispatcher, and nothing for the driver to resolve before
  // the kernel may start. On since session 27 (docs/scheduling.md, "Session 27": the whole
  // matrix with and without it in one run).
  bool gate_at_once = true;
  // Closed loops of launches (launch, flush, wait for an earlier launch: a best-effort tenant
  // with launches in flight) use the session's launch thread (LaunchPipe) for their held
  // launches: a flush and a wait for events made already do not wait for its launches, a
  // wait wakes it for the next launch, and a held launch that goes at once (gate_at_once)
  // goes through it (LaunchRequest::pipe_held_only), its tenant's
  // slices that ended on the device not counted against it (TakesAtOnce), except beside a
  // latency-critical tenant active in another context (LcElsewhere). Off: such frames wait
  // for the thread, and held launches go from the session's thread (as in session 31).
  bool pipe_loops = true;
  // A session about to wait in the driver for a held launch that has not gone on the device
  // yet sleeps until it has (AwaitDispatch): NVIDIA's wait spins a CPU while it lasts, and a
  // best-effort tenant may wait several quanta for its turn. Off: AwaitDispatch returns at once.
  bool await_dispatch = true;
  // fair: a launch that would be gated with nothing unfinished before it (gate_first) and
  // that cannot go at once waits in the submitting thread until the dispatcher gives its
  // tenant the device (at most a second; then it is gated as before), and then goes at once
  // (Scheduler::Park): no user event. One behind work of its queue that only the device has
  // left to do (a held launch all on the device, a direct launch in flight) first waits for
  // that to end (Scheduler::SettleQueue), then parks. On NVIDIA's OpenCL the first
  // user event of a context leaves a driver thread spinning a CPU until the context is
  // released; with four tenants' `tiny` loops each context had one, and every enqueue on the
  // host took half as long again (docs/scheduling.md, "Session 41"). With every wait for a
  // turn parked, four such loops ran 1.47-1.49x as fast as under `fifo`, against 1.02-1.09
  // gated (H200, docs/scheduling.md "Session 42"). The session reads none of its client's
  // frames meanwhile, as in an inline wait, so only a session none of whose user events is unset
  // parks (LaunchRequest::may_block).
  bool park_first = true;
  // Tests: cut every sliceable launch into this many slices (0 = policy decides).
  uint32_t force_slices = 0;
  // Tests: every launch that can is held and run preemptibly, each run stopped after a random
  // number of work-groups.
  bool force_runs = false;
};

// Profiling times of a launch that ran as several slices: first slice's start to last
// slice's end. The launch's event itself is a marker; its times would say nothing. Ready once
// the launch has ended; start 0 then says that no slice's times could be read, and the
// session answers with the event's own (Session::GetEventProfiling).
struct LaunchTimes {
  std::atomic<bool> ready{false};
  uint64_t queued = 0, submit = 0, start = 0, end = 0;

  // Sets the times and wakes WaitReady (MarkReady: the fields were filled in place).
  void Publish(uint64_t q, uint64_t s, uint64_t st, uint64_t e) {
    std::lock_guard lk(mu);
    queued = q, submit = s, start = st, end = e;
    ready = true;
    cv.notify_all();
  }
  void MarkReady() {
    std::lock_guard lk(mu);
    ready = true;
    cv.notify_all();
  }
  // A sliced launch's times come from its slices' completion callbacks, which may run just
  // after its event was seen complete: waits for them, at most `limit`.
  bool WaitReady(std::chrono::milliseconds limit) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, limit, [&] { return ready.load(); });
  }

 private:
  std::mutex mu;
  std::condition_variable cv;
};

// The event of a launch that the session's launch thread makes (LaunchRequest::piped_event):
// written on that thread before the pipe counts the launch done, read by the session after
// LaunchPipe::Wait. One reference, the reader's.
struct PipedEvent {
  Result<BkEvent*> event = nullptr;
};

struct LaunchRequest {
  uint64_t session_id = 0;
  const Tenant* tenant = nullptr;
  // Whose device time this is: TenantKeyOf(tenant, session_id), which Submit fills in when
  // the caller has not (a session keeps its own, made once).
  std::string tenant_key;
  BkContext* context = nullptr;
  BkQueue* queue = nullptr;        // the application's queue
  // Its twin without profiling (LaunchPipe, "Twins"), where a piped launch whose event only
  // the application reads may go; null: none.
  BkQueue* twin = nullptr;
  bool queue_in_order = true;
  BkQueue* exec_queue = nullptr;   // rgpud's own queue in the same context (held launches)
  BkQueue* ctl_queue = nullptr;    // a second one, for stop flags of preemptible runs
  int device = 0;                  // device index of the queue
  BkKernel* kernel = nullptr;      // used by the session thread (direct launches)
  BkKernel* sched_kernel = nullptr;  // a second instance used only by the dispatcher
  std::vector<KernelArgValue> args;  // the application's arguments, snapshot at submission
  const slicer::KernelInfo* slice_info = nullptr;  // null: the program was not rewritten
  NDRange range;
  std::vector<BkEvent*> waits;
  bool want_event = true;          // the application asked for the launch's event
  // The application's queue (a serial unique in rgpud; 0: unknown) and this command's number
  // on it: a held launch whose number follows that of the held launch before it on the same
  // in-order queue may go on the device behind it (SchedulerOptions::chain_held).
  uint64_t queue_serial = 0, queue_command = 0;
  // The command before it on its in-order queue, as far as the session can tell
  // (SchedulerOptions::gate_first): before_known false, it cannot; else that command and all
  // before it are complete when before_event is null, otherwise when that event is. The event
  // is the session's, borrowed for Submit only: Hold asks it only of a launch it would gate.
  bool before_known = false;
  BkEvent* before_event = nullptr;
  // The session's launch thread, where a burst is on (Session::PipeFor): a direct launch that
  // waits for nothing goes through it; anything else Submit does with the driver waits for it
  // first (LaunchPipe). Null: the calling thread launches.
  LaunchPipe* pipe = nullptr;
  // The pipe came for a closed loop of launches (SchedulerOptions::pipe_loops), not a burst:
  // only a held launch that goes at once uses it; any other waits for it and launches from
  // the calling thread, as without one (a tenant alone gained nothing through it).
  bool pipe_held_only = false;
  // With a pipe and want_event: where the pipe's thread leaves the application's event when
  // the launch goes through the pipe (LaunchResult::piped).
  std::shared_ptr<PipedEvent> piped_event;
  // The session may block on the device's work: nothing it has queued waits for its client (no
  // user event of its is unset; Session::CanWaitInline). Parking (SchedulerOptions::park_first)
  // may then wait for what is before a launch on its queue (Scheduler::SettleQueue); a launch
  // parks only then.
  bool may_block = false;
  // RGPU_TRACE_REQUESTS: when Submit was entered, got the lock and had written stop flags.
  std::chrono::steady_clock::time_point trace_entered{}, trace_locked{}, trace_stopped{};
};

struct LaunchResult {
  BkEvent* event = nullptr;            // one reference for the caller; null if !want_event or piped
  std::shared_ptr<LaunchTimes> times;  // set when the event's own profiling is not the kernel's
  bool piped = false;                  // the event comes through LaunchRequest::piped_event
  bool held = false;                   // the scheduler held it (fair, with others about)
};

struct SchedUsage {
  std::string tenant;
  double weight = 1.0;
  uint64_t device_ns = 0;
  uint64_t launches = 0;
  uint64_t slices = 0;
  uint64_t unsliceable = 0;  // launches that had to run whole under a slicing policy
  uint64_t runs = 0;         // preemptible runs (fair)
  uint64_t preempted = 0;    // runs stopped before their end
  // Latency-critical tenants: launches that found best-effort slices on the device.
  uint64_t behind_slices = 0;
  // Fair: times its held work overran its turn and the next tenant went beside it.
  uint64_t overruns = 0;
  // Fair: held launches that went on the device behind the one before them on their queue
  // before the driver reported that one complete (SchedulerOptions::chain_held).
  uint64_t chained = 0;
  // Fair: launches that waited on the application's queue behind a gate: chained ones
  // (SchedulerOptions::gate_chained) and those first on their queue (gated_first,
  // SchedulerOptions::gate_first).
  uint64_t gated = 0;
  uint64_t gated_first = 0;
  // Of the gated ones, those the submitting thread put on the device at once, without a gate
  // (SchedulerOptions::gate_at_once).
  uint64_t at_once = 0;
  // Of those, the ones a session's launch thread put there (LaunchPipe).
  uint64_t at_once_piped = 0;
  // Of the gated first ones, those that waited for the device in their session instead of
  // behind a gate (SchedulerOptions::park_first), and those of them that waited too long and
  // were gated all the same.
  uint64_t parked = 0;
  uint64_t park_timeouts = 0;
  // Of the parked ones, those that waited for their queue's work to end first
  // (Scheduler::SettleQueue): behind a held launch on the device, and behind other work.
  uint64_t parked_chained = 0;
  uint64_t parked_settled = 0;
  // Fair: turns of the device it began (SchedulerOptions::be_turns), and of them those that
  // ended before their quantum because its work ran out and its next launch did not come within
  // turn_wait_us (the rest ran their quantum, or it left).
  uint64_t turns = 0;
  uint64_t turns_idle = 0;
  // Fair: user events the scheduler made for its held launches (their gates). On NVIDIA's OpenCL
  // the first one of a context leaves a driver thread spinning a CPU until the context is
  // released (SchedulerOptions::park_first).
  uint64_t user_events = 0;
  // Fair: launches held because another tenant was active (Scheduler::Hold), whether they
  // then waited for the dispatcher or went at once (at_once); the rest went direct.
  uint64_t held = 0;
  // Launches charged their kernel's measured cost, without an event of their own (sampled:
  // SchedulerOptions::sample_every), and what they were charged.
  uint64_t estimated = 0;
  uint64_t estimated_ns = 0;
};

class Scheduler {
 public:
  using Clock = std::chrono::steady_clock;
  // `device_cores`: split's "cores of the device"; `wave_items`: work-items the device
  // runs at once (fair never cuts a launch into slices smaller than that). `clock`: what
  // the policies read as now (tests give the fake backend's simulated time); empty means
  // Clock::now.
  // `compute_units`: the device's (narrow runs are sized in work-groups per unit).
  Scheduler(Backend* backend, SchedulerOptions options, uint32_t device_cores, size_t wave_items,
            uint32_t compute_units, std::function<Clock::time_point()> clock = {});
  ~Scheduler();

  const SchedulerOptions& options() const { return options_; }
  // The key under which a tenant's device time is kept (LaunchRequest::tenant_key).
  static std::string TenantKeyOf(const Tenant* tenant, uint64_t session_id);
  Result<LaunchResult> Submit(LaunchRequest req);
  // The session is ending: its held launches are dropped (their events fail) and this
  // returns once none of its slices is on the device.
  void CancelSession(uint64_t session_id);
  std::vector<SchedUsage> Usage();
  // The kernel is being released: what was measured of it is dropped (each session makes
  // its own kernels, and a released kernel's handle may come back as another kernel).
  void ForgetKernel(BkKernel* kernel);
  // A latency-critical tenant's request starts (true) or has been served (false): under fair,
  // best-effort work is not put on the device meanwhile, nor for lc_guard_us after, so that
  // the request's own transfers (a blocking read after its kernel) do not wait behind it.
  void LatencyCriticalRequest(bool begin);
  // Returns once none of `events` (the application's events of launches) and nothing on
  // `queue` (null: no queue) is a held launch still waiting for its turn, or after `limit`.
  // A session calls it before it waits for such events (or finishes such a queue) in the
  // driver: NVIDIA's wait spins a CPU for as long as it lasts, and a best-effort tenant's
  // launches may wait for its turn for several quanta. Returns at once when it holds none.
  void AwaitDispatch(std::span<BkEvent* const> events, const BkQueue* queue,
                     std::chrono::milliseconds limit);
  // Called with every measured kernel's device time (set once, before launches start).
  std::function<void(const Tenant*, uint64_t ns)> on_device_time;

 private:
  struct Held;
  struct TenantState {
    SchedUsage usage;
    const Tenant* tenant = nullptr;
    Priority priority = Priority::BestEffort;
    double vtime = 0;  // device ns / weight: the fair-share clock
    std::deque<std::shared_ptr<Held>> queue;  // held launches, in submission order
    int in_flight = 0;  // this tenant's launches or slices on the device
    std::chrono::steady_clock::time_point last_submit{};
    BkContext* context = nullptr;  // of its last launch
    uint64_t last_session = 0;     // of its last launch
  };

  Result<LaunchResult> Direct(LaunchRequest& req, bool whole_hidden);
  Result<LaunchResult> SplitInPlace(LaunchRequest& req, size_t slices);
  // A launch `split` cannot cut (no rewrite, or the slicer refused it) runs whole, counted.
  Result<LaunchResult> Unsliced(LaunchRequest& req);
  // One slice of a split launch on the application's queue, accounted when it completes.
  struct SliceTimes;
  Result<BkEvent*> LaunchSlice(LaunchRequest& req, const slicer::SlicePlan& p, size_t i,
                               const std::shared_ptr<SliceTimes>& agg);
  Result<LaunchResult> Hold(LaunchRequest& req);
  // Accounting. Every launch takes a ledger sequence number (under mu_) before it goes to
  // the device, and reports through Completed once it is done: with its profiling times, or
  // null when it has none (failed, or launched without an event: those are charged an
  // estimate directly with Charge). The ledger's settlements are charged through Charge.
  void Completed(uint64_t seq, const std::string& tenant, const ProfilingTimes* t);  // requires mu_
  void Charge(const std::string& tenant, uint64_t device_ns);                         // requires mu_
  // Accounts direct launches that have completed, oldest first, without waiting. Direct
  // launches are harvested rather than given a completion callback each: a callback costs
  // the driver a thread hand-off per launch, which showed in the launch rate.
  void Harvest();
  TenantState& StateFor(const LaunchRequest& req);  // requires mu_
  int ActiveTenants();                              // requires mu_
  void DispatchLoop();
  bool DispatchOne(std::unique_lock<std::mutex>& lk);  // requires mu_ held via lk
  // DispatchOne's steps (all require mu_): finish one launch at a queue's head that is over
  // (releasing mu_ meanwhile); whether latency-critical work is being served (busy: best-effort
  // work stays off the device) or recently arrived (active: best-effort work runs short); the
  // tenant whose work goes next; whether the device takes more of it now; and how many slices
  // of it go in one dispatch.
  bool FinishOneOver(std::unique_lock<std::mutex>& lk);
  bool InTurn(Clock::time_point now) const;  // a best-effort tenant's turn lasts (be_turns)
  // Whether a launch may go direct in its turn beside an active latency-critical tenant now
  // (SchedulerOptions::direct_beside_lc): none of its requests served or in flight, and its
  // guard over. Requires mu_.
  bool DirectBesideLc(const LaunchRequest& req, Clock::time_point now) const;
  // When the last latency-critical request was served, plus `us` (its guards). Requires mu_.
  Clock::time_point LcServedPlus(double us) const;
  // The device time of a launch that goes direct in its tenant's turn (be_turns), 0 for one
  // that is held.
  double DirectInTurnNs(const TenantState& st, const LaunchRequest& req,
                        Clock::time_point now) const;
  // The device time a launch is expected to take: measured for its kernel and size when such
  // a launch went direct (MeasuredLaunchNs), else from its held work; 0 unknown.
  double ExpectedLaunchNs(const LaunchRequest& req) const;
  double MeasuredLaunchNs(const LaunchRequest& req) const;
  // A tenant's vtime, its current turn counted as used (be_turns).
  double VtimeOf(const TenantState& st, Clock::time_point now) const;
  struct LcState {
    bool busy, active;
    // Until when best-effort launches that run whole stay off the device (lc_whole_guard_us
    // after the last latency-critical request) in a context an active latency-critical
    // tenant uses (LcActiveIn); the epoch when they need not.
    Clock::time_point whole_until{};
  };
  LcState LatencyCriticalState(Clock::time_point now);
  TenantState* PickTenant(const LcState& lc, Clock::time_point now);
  // Whether an active latency-critical tenant's last launch was in `context`, or with null,
  // whether any latency-critical tenant is active (requires mu_).
  bool LcActiveIn(const BkContext* context, Clock::time_point now) const;
  // A latency-critical tenant is active, and none in `context` (requires mu_). Beside one in
  // another context, faster feeding of a closed loop's held launches (pipe_loops) only puts
  // more context switches before its kernels: `fair` read LC p99 0.06-0.10x higher with it
  // (H200, docs/scheduling.md "Session 32"), so they go as before there.
  bool LcElsewhere(const BkContext* context, Clock::time_point now) const;
  // Wakes the dispatcher: a notify, and a count that a spinning dispatcher watches.
  void Wake();
  // The held launch of a tenant whose work goes on the device next: the head of its queue,
  // or, once everything of the head is on the device, the launch directly behind it on the
  // same application queue (Held::behind), and so on; null when none has work left to put
  // there.
  static std::shared_ptr<Held> Candidate(const TenantState& st);
  // Whether that launch can put work on the device now.
  static bool Dispatchable(const Held& h);
  // Whether a tenant other than the one on the device has dispatchable held work.
  bool OthersWaiting() const;  // requires mu_
  // Whether a tenant other than `st` has work in rgpud or on the device, or submitted within
  // kActiveWindow of `now`.
  bool OthersActive(const TenantState& st, Clock::time_point now) const;  // requires mu_
  bool DeviceTakes(const TenantState* pick, const Held& h, bool lc_active) const;
  // How many slices of `h` may be on the device at once beside an active LC tenant (requires mu_).
  int SliceDepthBesideLc(const Held& h) const;
  size_t SliceCount(const Held& h, bool beside_lc);
  // Fair: puts the picked launch's next run or slice on the device (mu_ released meanwhile).
  void PlanHeld(Held& h);  // preemptible runs, else slices, else whole
  bool PlanRuns(Held& h);
  bool PlanSlicesOf(Held& h);
  // The size of one run: its work-groups, and which narrow width it is (-1: not narrow).
  struct RunSize {
    uint64_t groups = 0;
    int narrow = -1;
  };
  // The next run of `h` from group `first` (requires mu_): bounded by measured time.
  RunSize RunGroups(const Held& h, uint64_t first, bool beside_lc);
  // What Commit decided for one dispatch of a held launch: its next pieces (first, count), or
  // its run, and the ledger's number for them.
  struct Dispatch {
    size_t first = 0, count = 0;
    uint64_t seq = 0;
    bool fresh_run = false;
    RunSize run;
  };
  // Counts the next piece of `h` (the candidate of `pick`, which the device takes) on the
  // device, as going there now (requires mu_); the caller then launches it.
  Dispatch Commit(TenantState& pick, const std::shared_ptr<Held>& h, const LcState& lc,
                  Clock::time_point now);
  // `fresh`: no other run of `h` is on the device, so the control words are (re)written.
  void DispatchRun(std::shared_ptr<Held> h, uint64_t seq, bool fresh, RunSize size);
  void DispatchSlices(std::shared_ptr<Held> h, size_t first, size_t count, uint64_t seq);
  // A latency-critical launch in a context where short best-effort slices are on the device
  // waits for them to end (SchedulerOptions::drain_slices_us): whether a slice is one to wait
  // for, whether this launch waits (requires mu_; a slice being launched counts), and the wait.
  struct SliceOnDevice;
  bool Drainable(const SliceOnDevice& s, const BkContext* context) const;
  bool MayDrain(const LaunchRequest& req) const;
  void DrainSlices(const BkContext* context);
  void RunDone(std::shared_ptr<Held> h, uint64_t seq, RunSize size, BkEvent* kernel_event, int32_t status);
  // A slice or run of `h` is off the device (requires mu_): its measured cost per piece
  // (`pieces` fine slices or work-groups; 0 measures nothing), the launch's profiling span.
  void PieceDone(Held& h, const ProfilingTimes* t, uint64_t pieces);
  // Whether launches of `kernel` should run as preemptible runs (requires mu_): not when its
  // work-groups are so small that claiming them costs more than stopping saves.
  bool RunsPay(BkKernel* kernel);
  // Whether a held launch goes as one slice for being one wave or less (whole_wave). Under mu_.
  bool WholeWave(const Held& h);
  // Sets the stop flag of every preemptible run on the device (of `session` only, when given).
  void StopRuns(std::optional<uint64_t> session);  // requires mu_
  // Stops the run on the device once it has had its quantum and another tenant waits.
  void StopRunPastQuantum(std::chrono::steady_clock::time_point now);  // requires mu_
  // The held work on the device has made no progress for a quantum plus overrun_us while
  // another tenant waits: it stops counting as the device's (SchedulerOptions::overrun_us).
  // True when it did.
  bool ReleaseOverrun(std::chrono::steady_clock::time_point now);  // requires mu_
  void SliceDone(std::shared_ptr<Held> h, size_t fine_count, uint64_t seq, int32_t status, BkEvent* ev);
  void Finish(Held& h, int32_t status);

  Clock::time_point Now() const { return clock_ ? clock_() : Clock::now(); }

  std::function<Clock::time_point()> clock_;
  Backend* backend_;
  SchedulerOptions options_;
  uint32_t device_cores_;
  size_t wave_items_;
  uint32_t compute_units_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, TenantState> tenants_;  // GUARDED_BY(mu_)
  // Measured device ns (EWMA; 0 until measured), by dispatcher kernel handle: per fine slice
  // of a sliced launch (cost_ns_) and per work-group of a preemptible run (group_cost_ns_).
  // Entries are made when a launch is held and erased by ForgetKernel; a measurement only
  // updates one, so that none comes back for a forgotten kernel.
  std::unordered_map<BkKernel*, double> cost_ns_;        // GUARDED_BY(mu_)
  std::unordered_map<BkKernel*, double> group_cost_ns_;  // GUARDED_BY(mu_)
  // The same measurements per work-item, slices and runs alike (ExpectedLaunchNs).
  std::unordered_map<BkKernel*, double> item_cost_ns_;  // GUARDED_BY(mu_)
  // Narrow runs (SchedulerOptions::narrow_runs) of a kernel, by width: work-groups per
  // compute unit kNarrowWidths[i]; the measured device ns of a whole run of that width
  // (EWMA; 0 until tried). Made and erased with group_cost_ns_.
  static constexpr std::array<uint32_t, 3> kNarrowWidths = {1, 2, 4};
  // A narrow run shorter than this is not used: each run costs a control write, a launch and
  // a read besides its work. The issue-4 benchmark's BE kernel (work-groups of about 0.1 ms
  // at full occupancy) ran at 0.39 of its solo rate in narrow runs much shorter than this
  // (H100), where runs of a wave give it about 0.56.
  static constexpr double kNarrowRunMinNs = 250'000;
  // The index of `width` in kNarrowWidths, -1 if it is not one of them.
  static int NarrowIndex(uint32_t width);
  struct NarrowRuns {
    std::array<double, 3> run_ns{};
    // The width to use: each untried one first (2, then 1, then 4), then, of the widths whose
    // runs last at least kNarrowRunMinNs, the narrowest whose work-groups per ns reach 90% of
    // the best one's; -1 when none lasts that long (the kernel then runs in ordinary runs).
    int Pick() const;
  };
  std::unordered_map<BkKernel*, NarrowRuns> narrow_;  // GUARDED_BY(mu_)
  // Kernels (dispatcher handles) whose held work overran its turn (ReleaseOverrun): their next
  // launches go on the device as overrunning work from the start, so the tenants behind them
  // do not wait a quantum plus overrun_us each time (a persistent kernel launched again).
  // Erased by ForgetKernel.
  std::unordered_set<BkKernel*> overran_kernels_;   // GUARDED_BY(mu_)
  int device_in_flight_ = 0;                        // GUARDED_BY(mu_)
  // Held launches that no dispatch has reached yet, by application event and by application
  // queue (AwaitDispatch); `undispatched_` counts them, read without the lock for a fast no.
  std::unordered_set<const BkEvent*> undispatched_events_;       // GUARDED_BY(mu_)
  std::unordered_map<const BkQueue*, int> undispatched_queues_;  // GUARDED_BY(mu_)
  std::atomic<int> undispatched_{0};
  std::condition_variable dispatched_cv_;
  std::condition_variable park_cv_;  // a parked launch's dispatch came (Park)
  void Undispatched(Held& h);  // requires mu_: it waits for its first dispatch
  void Dispatched(Held& h);    // requires mu_: it has had it, or will never have one
  double vclock_ = 0;  // GUARDED_BY(mu_): least virtual time of the busy tenants, monotonic
  DeviceLedger ledger_;                             // GUARDED_BY(mu_)
  uint64_t odd_times_ = 0;  // GUARDED_BY(mu_); launches timed without QUEUED and SUBMIT (Completed)
  // RGPU_TRACE_REQUESTS=1 only; the pointer is set before any launch, its contents GUARDED_BY(mu_).
  std::unique_ptr<LcTrace> lc_trace_;
  // Whose held slices those are: one tenant's at a time, so that no two tenants' slices
  // share the device (each slice's profiled time is then its tenant's alone: the fair clock
  // and the accounting stay exact, where overlapping contexts would time-slice and both be
  // charged for the overlap).
  TenantState* on_device_ = nullptr;    // GUARDED_BY(mu_)
  // The best-effort tenant whose turn it is (SchedulerOptions::be_turns), when it began, and
  // when its last held work on the device ended (PickTenant waits for its next launch).
  TenantState* turn_ = nullptr;          // GUARDED_BY(mu_)
  Clock::time_point turn_start_{};       // GUARDED_BY(mu_)
  Clock::time_point turn_idle_since_{};  // GUARDED_BY(mu_)
  double turn_vtime_ = 0;                // GUARDED_BY(mu_): its vtime then (VtimeOf)
  // When the direct launches made in turns are expected to have left the device (DirectInTurnNs).
  Clock::time_point turn_direct_until_{};  // GUARDED_BY(mu_)
  // Held slices dispatched (one reference each): their context, and how long they were
  // expected to run (measured cost; 0 when unknown).
  struct SliceOnDevice {
    BkEvent* event;
    BkContext* context;
    double expected_ns;
    const Held* held = nullptr;  // whose slice (launching_ entries)
  };
  std::vector<SliceOnDevice> slice_events_;  // GUARDED_BY(mu_)
  // Slices being launched now, by the dispatcher or at once by a submitting thread
  // (gate_at_once): counted on the device, their events not known yet.
  std::vector<SliceOnDevice> launching_;  // GUARDED_BY(mu_)
  // The entry of launching_ for `h`, moved to slice_events_ with its event (null: dropped).
  void Launched(const Held* h, BkEvent* ev);  // requires mu_
  // Whether the dispatcher would put `h` (a gated launch of one slice, not queued yet) on the
  // device now; if so, it is queued and counted there as the dispatcher would (requires mu_).
  bool TakeAtOnce(const std::shared_ptr<Held>& h, uint64_t* seq);
  // Entries for a held launch's kernel in the tables of measured costs (requires mu_).
  void KnowKernel(BkKernel* kernel);
  // Queues `h` (gated_first) for the dispatcher and waits until it gives it the device
  // (DispatchSlices): its dispatch's ledger sequence, counted on the device as TakeAtOnce
  // counts a launch; nothing if that did not come within kParkLimit (`h` is out of the
  // queue again).
  std::optional<uint64_t> Park(const std::shared_ptr<Held>& h);
  // For a launch that has something unfinished before it on its in-order queue (a held launch
  // all on the device, a direct launch in flight) and that parks rather than wait behind a user
  // event: waits in the session for its queue's work to end (backend Finish) when only the
  // device's work is left there: no held launch of the queue short of all on the device, and
  // none of `waited` unfinished but that launch's event. True when it has ended; then marks `h`
  // parked_after_wait (a held launch was before it) or parked_settled.
  bool SettleQueue(Held* h, const std::vector<BkEvent*>& waited);
  // A launch LaunchAtOnce made failed: off the device, its launch done with that status.
  void AtOnceFailed(const std::shared_ptr<Held>& h, uint64_t seq, const Status& s);
  // It is on the device with event `ev` (the application's reference stays the caller's):
  // flushed, h->app_event, counted as launched and watched as a slice.
  void AtOnceLaunched(const std::shared_ptr<Held>& h, uint64_t seq, BkEvent* ev);
  // DeviceTakes for such a launch, not counting its tenant's slices that have ended on the
  // device but are not reported yet (requires mu_).
  bool TakesAtOnce(const TenantState* pick, const Held& h, bool lc_active) const;
  // Retains the kernel and the memory objects and samplers a held launch names.
  void KeepNamed(const Held& h);
  // Puts a launch TakeAtOnce took on the device: its kernel on the application's queue,
  // watched as a slice (`waited`: its wait list; `seq`: its ledger number). With `pipe` (the
  // session's launch thread; `waited` is empty then) it goes through the pipe, and the
  // application's event, if asked for, comes through `slot`.
  Result<LaunchResult> LaunchAtOnce(const std::shared_ptr<Held>& h,
                                    const std::vector<BkEvent*>& waited, uint64_t seq,
                                    bool chainable, LaunchPipe* pipe,
                                    std::shared_ptr<PipedEvent> slot);
  // Held launches whose work overran its turn and is still on the device (ReleaseOverrun).
  int overran_ = 0;  // GUARDED_BY(mu_)
  // When held work last went on the device or came off it (ReleaseOverrun).
  Clock::time_point progress_at_{};  // GUARDED_BY(mu_)
  // The dispatcher's next timed look (the quantum of the run on the device ends).
  std::chrono::steady_clock::time_point wake_at_{};          // GUARDED_BY(mu_)
  // Preemptible runs on the device: at most one of the tenant on_device_ (two, chained), and
  // runs that overran their turn (ReleaseOverrun) until they end.
  std::vector<std::shared_ptr<Held>> runs_;                  // GUARDED_BY(mu_)
  // The last held launch of each application queue, by queue serial, while it is held
  // (SchedulerOptions::chain_held).
  std::unordered_map<uint64_t, std::weak_ptr<Held>> last_held_;  // GUARDED_BY(mu_)
  int lc_requests_ = 0;                                      // GUARDED_BY(mu_): being served
  std::chrono::steady_clock::time_point lc_served_{};        // GUARDED_BY(mu_): the last one ended
  // What a direct launch costs on the device, by kernel and work-items (EWMA of measured
  // launches; the launches between two measured ones are charged this). Made at submission
  // and erased by ForgetKernel, as cost_ns_.
  struct CostKey {
    BkKernel* kernel;
    size_t items;
    // Its times may update the cost (ChooseEvent says when they may not).
    bool measures = true;
    bool operator==(const CostKey&) const = default;
  };
  // Keeps a best-effort direct launch's event (a reference of its own) for the harvest. Called
  // by the launching thread: the session's, or its launch thread (LaunchPipe).
  void KeepDirect(BkEvent* ev, const std::string& key, const CostKey& ck, uint64_t seq);
  struct LaunchCost {
    double ns = 0;
    bool measured = false;
    uint32_t since_sample = 0;
  };
  // A direct launch's place in the ledger and whether it gets an event (Scheduler::Direct).
  struct EventChoice {
    uint64_t seq = 0;
    bool latency_critical = false, need_event = true;
    // The scheduler reads the launch's event for its accounting (false: charged the estimate
    // by ChooseEvent; the event, if any, is the application's only).
    bool harvest = true;
    double estimate_ns = 0;  // charged when not harvested, by ChooseEvent (see there)
  };
  // Also clears ck.measures where the launch's times would not measure its kernel.
  EventChoice ChooseEvent(const LaunchRequest& req, CostKey& ck);  // takes mu_
  // Completion of a latency-critical launch: charged, and the dispatcher woken.
  void WatchLatencyCritical(BkEvent* ev, const std::string& key, uint64_t seq, CostKey ck);
  using CostBySize = std::unordered_map<size_t, LaunchCost>;  // by work-items
  std::unordered_map<BkKernel*, CostBySize> launch_cost_;    // GUARDED_BY(mu_)
  // A direct launch's measured time, into its kernel's entry if it still has one.
  void UpdateLaunchCost(const CostKey& key, double ns);       // requires mu_
  struct DirectLaunch {
    BkEvent* event;
    std::string tenant;
    CostKey cost_key;
    uint64_t seq;  // ledger sequence number
  };
  std::deque<DirectLaunch> direct_;                 // GUARDED_BY(mu_)
  std::mutex harvest_mu_;                           // held by the one thread in Harvest
  bool stop_ = false;                               // GUARDED_BY(mu_)
  std::atomic<uint64_t> wakes_{0};                  // Wake() calls so far
  std::thread dispatcher_;
};

}  // namespace rgpu::server
