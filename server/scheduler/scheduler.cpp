#include "server/scheduler/scheduler.h"

#include <CL/cl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>

#include "proto/cpu_relax.h"
#include "proto/stamps.h"
#include "proto/thread_name.h"

namespace rgpu::server {
namespace {

// A tenant counts as active for this long after its last launch, so that a tenant issuing
// short kernels at a steady rate is seen as present between them.
constexpr auto kActiveWindow = std::chrono::milliseconds(200);
// SchedulerOptions::spin_feed: the dispatcher spins at most this long at a time before it
// looks at its timers again.
constexpr auto kFeedSpin = std::chrono::milliseconds(2);

using proto::CpuRelax;
// Slices on the device at once from held launches: two keep it busy while the dispatcher
// reacts; one while a latency-critical tenant is active, so it waits behind one slice at most.
constexpr int kHeldDepth = 2;
// A slice of a best-effort launch (which cannot be stopped once on the device) holds at
// most this much measured device time, whatever the quantum.
constexpr double kMaxSliceUs = 2000;
// SchedulerOptions::direct_in_turn: the most a launch may be expected to cost to go direct in
// its turn (no more than a slice between best-effort tenants), and the most that the turn's
// direct launches may be expected to keep the device busy for at once (what kHeldDepth such
// slices hold): what an arrival after a pause may wait for, held or direct.
constexpr double kDirectInTurnNs = kMaxSliceUs * 1000;
constexpr double kDirectInTurnAheadNs = kHeldDepth * kMaxSliceUs * 1000;
// A held launch is planned in at most this many fine pieces; the dispatcher merges
// consecutive pieces into slices of about one quantum.
constexpr size_t kFinePieces = 256;
// Direct launches with events: the dispatcher is asked to harvest every kHarvestEvery, the
// launching thread harvests itself past kHarvestHere unharvested, kHarvestBatch at a time.
constexpr size_t kHarvestEvery = 256;
constexpr size_t kHarvestHere = 4096;
constexpr size_t kHarvestBatch = 256;
// Direct launches of kernels measured below kSampledBelowNs get an event (and a measurement)
// once every SchedulerOptions::sample_every launches when the application asked for none;
// those of a tenant with no other tenant active, below kSampledAloneBelowNs. Nothing needs
// the event of a tenant alone but its accounting, and the event cost NVIDIA's driver enough
// to delay the kernel: a request (a 370 us kernel, then a 4-byte read) took 13-17 us longer
// at p50 with one on every launch (H100, docs/scheduling.md). The bound keeps what runs on
// the device unseen by the scheduler, launch by launch, short.
constexpr double kSampledBelowNs = 50'000;
constexpr double kSampledAloneBelowNs = 2'000'000;
// Work-groups that take less device time than this each are not run preemptibly but in
// slices: every work-group of a run claims its id with an atomic on one counter, and for a
// streaming kernel of millions of tiny groups those atomics cost more than its work (measured
// on an H100: saxpy over 2 GiB, about 0.5 ns of work per group, took 1.37x as long as runs),
// while a stop would save little: the groups not started drain about as slowly as they run.
constexpr double kRunGroupMinNs = 20;
// Sizes remembered per kernel: a kernel launched at ever new sizes starts over past this.
constexpr size_t kMaxCostSizes = 64;

KernelArgValue HiddenArg(const cl_ulong16& v) {
  KernelArgValue a;
  a.kind = KernelArgValue::Kind::Bytes;
  a.bytes.assign(&v, sizeof(v));
  return a;
}

// A rewritten kernel's two hidden arguments (slicer.h): the launch description, and the
// control buffer of a preemptible run (NULL for anything else).
void AppendHidden(std::vector<KernelArgValue>& args, const cl_ulong16& launch, BkMem* ctl) {
  args.push_back(HiddenArg(launch));
  KernelArgValue c;
  c.kind = KernelArgValue::Kind::Mem;
  c.mem = ctl;
  args.push_back(std::move(c));
}

// Every measured cost (a kernel's launches, slices, work-groups, narrow runs) is this running
// average of its samples, so that one sample moves it by less than a third; the first sample
// (no average yet: 0) stands alone.
double Ewma(double average, double sample) {
  return average > 0 ? 0.7 * average + 0.3 * sample : sample;
}

// Work-items of a launch (its global size).
size_t WorkItems(const NDRange& r) {
  size_t items = 1;
  for (uint32_t i = 0; i < r.dims; ++i) items *= r.global[i];
  return items;
}

slicer::LaunchShape ShapeOf(const NDRange& r) {
  slicer::LaunchShape s;
  s.dims = r.dims;
  s.local_given = r.has_local;
  for (int i = 0; i < 3; ++i) {
    s.offset[i] = r.has_offset ? r.offset[i] : 0;
    s.global[i] = r.global[i];
    s.local[i] = r.local[i];
  }
  return s;
}

NDRange RangeOf(const slicer::LaunchShape& launch, const slicer::Slice& s) {
  NDRange r;
  r.dims = launch.dims;
  r.has_offset = true;
  r.has_local = launch.local_given;
  for (int i = 0; i < 3; ++i) {
    r.offset[i] = s.offset[i];
    r.global[i] = s.global[i];
    r.local[i] = launch.local[i];
  }
  return r;
}

// What rgpud logs of a tenant's (or an anonymous session's) scheduling when it ends.
std::string UsageLine(const SchedUsage& u) {
  return fmt::format(
      "{} launches, {} slices, {} runs ({} preempted), {} run whole, {:.3f} ms device time, {} "
      "latency-critical launches behind slices, {} overran their turn, {} chained, {} gated ({} "
      "first on their queue, {} at once, {} of them through launch threads, {} parked, {} of them "
      "behind a launch they waited for, {} after their queue's work, {} gated after all), {} held, "
      "{} charged an estimate ({:.3f} ms), {} turns ({} ended idle), {} user events made",
      u.launches, u.slices, u.runs, u.preempted, u.unsliceable, u.device_ns / 1e6, u.behind_slices,
      u.overruns, u.chained, u.gated, u.gated_first, u.at_once, u.at_once_piped, u.parked,
      u.parked_chained, u.parked_settled, u.park_timeouts, u.held, u.estimated,
      u.estimated_ns / 1e6, u.turns, u.turns_idle, u.user_events);
}

}  // namespace

std::string Scheduler::TenantKeyOf(const Tenant* tenant, uint64_t session_id) {
  // Without a config every session is the anonymous tenant; share between sessions then.
  if (!tenant || tenant->id == "anonymous") return "session-" + std::to_string(session_id);
  return tenant->id;
}

Result<Policy> ParsePolicy(const std::string& name) {
  if (name == "fifo") return Policy::Fifo;
  // "seed001" is split's first name: configs and scripts that still say it keep working.
  if (name == "split" || name == "seed001") return Policy::Split;
  if (name == "fair") return Policy::Fair;
  return Status::Error(CL_INVALID_VALUE, "unknown policy '" + name + "' (fifo, split, fair)");
}

const char* PolicyName(Policy p) {
  switch (p) {
    case Policy::Fifo: return "fifo";
    case Policy::Split: return "split";
    default: return "fair";
  }
}

struct Scheduler::Held {
  LaunchRequest req;
  std::string tenant;
  bool sliceable = false;
  slicer::SlicePlan plan;   // fine pieces (when sliceable)
  size_t next = 0;          // next fine piece to dispatch
  size_t done = 0;          // fine pieces finished
  size_t total = 1;         // fine pieces in all
  int in_flight = 0;
  bool ready = false;       // everything the launch waits for has completed
  bool cancelled = false;
  int32_t status = CL_COMPLETE;
  BkEvent* gate = nullptr;  // user event the application's event waits on
  BkEvent* app_event = nullptr;  // the application's event (one reference)
  // The kernel itself waits for `gate` on the application's queue, and its event is
  // app_event (SchedulerOptions::gate_chained); gate_open: the dispatcher has set the gate;
  // gated_first: gated with no held launch before it (SchedulerOptions::gate_first).
  bool gated = false;
  bool gated_first = false;
  bool gate_open = false;
  // parked: it waits in its session's thread, not behind a gate (Scheduler::Park); park_go:
  // the dispatcher has given it the device, as ledger sequence park_seq.
  bool parked = false;
  // It waited for its queue's work to end first (Scheduler::SettleQueue): that of a held launch
  // before it (parked_after_wait), or other work (parked_settled).
  bool parked_after_wait = false;
  bool parked_settled = false;
  bool park_go = false;
  uint64_t park_seq = 0;
  bool undispatched = false;  // no dispatch has reached it yet (Scheduler::AwaitDispatch)
  std::shared_ptr<LaunchTimes> times = std::make_shared<LaunchTimes>();
  // Preemptible runs (slicer::PlanRun): `done`/`total` count work-groups; `next` is `total`
  // while a run is on the device (everything left is in it), else `done`.
  bool preemptible = false;
  slicer::RunPlan run;
  BkMem* ctl = nullptr;           // {stop, counter, limit, -}
  Bytes ctl_out, ctl_in;          // written before a run, read back after it
  BkEvent* ctl_written = nullptr;  // the run's control write: a stop waits for it
  bool stop_sent = false;
  Clock::time_point run_started{};
  uint64_t run_limit = 0;
  // Pieces of it on the device that the scheduler no longer counts as the device's: they
  // overran their turn (ReleaseOverrun), or went on while such work was there (DispatchOne).
  // Nothing more of it is dispatched until they end.
  int detached = 0;
  bool overran = false;  // its pieces overran their turn (counted in Scheduler::overran_)
  // How its next slice's or run's end is watched (set by DispatchOne for the dispatch it makes).
  Urgency watch = Urgency::kUrgent;
  // The held launch directly before it on the same in-order application queue
  // (SchedulerOptions::chain_held): once everything of that one is on the device, this one's
  // pieces may follow on rgpud's queue without waiting for `ready`. Reset when that one leaves
  // the tenant's queue, so that a stream of launches does not keep every earlier one alive.
  std::shared_ptr<Held> behind;
  // Everything of it is on the device (or done) and nothing failed: a launch behind it may go
  // there too. Never for preemptible runs: a stop leaves work that goes on later, before
  // anything behind it. (Tried: the next launch's first run queued behind a run of everything
  // left, taking that run's stop word by a copy on the device so that it claimed nothing if
  // the run was stopped. Beside an LC tenant, 0.2 ms launches gained nothing under fair and
  // their LC p99 rose, H100, bench/results/2026-11-28-session22/call5.)
  bool AllOut() const {
    return !preemptible && next >= total && status >= 0 && !cancelled && detached == 0;
  }
  // All of it has run, though the dispatcher may not have dropped it yet.
  bool Ended() const { return in_flight == 0 && done >= total; }
};

Scheduler::Scheduler(Backend* backend, SchedulerOptions options, uint32_t device_cores,
                     size_t wave_items, uint32_t compute_units, std::function<Clock::time_point()> clock)
    : clock_(std::move(clock)),
      backend_(backend),
      options_(options),
      device_cores_(std::max<uint32_t>(device_cores, 1)),
      wave_items_(wave_items),
      compute_units_(std::max<uint32_t>(compute_units, 1)) {
  if (TraceRequests()) lc_trace_ = std::make_unique<LcTrace>();
  dispatcher_ = std::thread([this] { DispatchLoop(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  Wake();
  dispatcher_.join();
  for (auto& d : direct_) backend_->Release(proto::ObjType::Event, d.event);
  for (const auto& s : slice_events_) backend_->Release(proto::ObjType::Event, s.event);
  for (auto& [key, st] : tenants_)
    spdlog::info("tenant {} scheduling ({}): {}", key, PolicyName(options_.policy),
                 UsageLine(st.usage));
}

Scheduler::TenantState& Scheduler::StateFor(const LaunchRequest& req) {
  auto [it, fresh] = req.tenant_key.empty()
                         ? tenants_.try_emplace(TenantKeyOf(req.tenant, req.session_id))
                         : tenants_.try_emplace(req.tenant_key);
  const std::string& key = it->first;
  TenantState& st = it->second;
  if (fresh) {
    st.usage.tenant = key;
    st.usage.weight = req.tenant ? std::max(req.tenant->weight, 1e-6) : 1.0;
    st.priority = req.tenant ? req.tenant->priority : Priority::BestEffort;
    st.tenant = req.tenant;
  }
  return st;
}

int Scheduler::ActiveTenants() {
  auto now = Now();
  int n = 0;
  for (auto& [key, st] : tenants_)
    if (st.in_flight > 0 || !st.queue.empty() || now - st.last_submit < kActiveWindow) ++n;
  return n;
}

void Scheduler::Completed(uint64_t seq, const std::string& tenant, const ProfilingTimes* t) {
  // NVIDIA left QUEUED and SUBMIT at 0, with START and END that did not measure the kernel, for
  // direct launches behind held work (ChooseEvent): counted (and the first few logged), to see
  // whether other launches get such times too.
  if (t && t->queued == 0 && t->submit == 0 && t->start > 1'000'000'000) {
    if (odd_times_++ < 10)
      spdlog::debug(
          "tenant {}: a launch's profiling times without QUEUED and SUBMIT (ran {:.1f} us)", tenant,
          (static_cast<double>(t->end) - static_cast<double>(t->start)) / 1e3);
  }
  // A kernel's END - START spans other tenants' turns on the device; the ledger charges each
  // tenant its share of every instant, once every launch that could overlap is done.
  auto charges = t && t->end > t->start ? ledger_.Report(seq, tenant, t->start, t->end) : ledger_.Drop(seq);
  for (const auto& c : charges) Charge(c.tenant, c.ns);
  if (lc_trace_ && t) {
    auto it = tenants_.find(tenant);
    lc_trace_->Kernel(it != tenants_.end() && it->second.priority == Priority::LatencyCritical, *t);
  }
}

void Scheduler::Charge(const std::string& tenant, uint64_t ns) {
  auto it = tenants_.find(tenant);
  if (it == tenants_.end()) return;
  it->second.usage.device_ns += ns;
  it->second.vtime += ns / it->second.usage.weight;  // the fair clock runs on what is charged
  if (on_device_time) on_device_time(it->second.tenant, ns);
}

Result<LaunchResult> Scheduler::Submit(LaunchRequest req) {
  if (req.tenant_key.empty()) req.tenant_key = TenantKeyOf(req.tenant, req.session_id);
  size_t slices = 0;
  bool hold = false;
  bool drain = false;
  const bool traced = lc_trace_ != nullptr;
  const auto entered = traced ? Clock::now() : Clock::time_point{};
  {
    std::lock_guard lk(mu_);
    const auto locked = traced ? Clock::now() : Clock::time_point{};
    TenantState& st = StateFor(req);
    st.usage.launches++;
    const bool was_idle = st.in_flight == 0 && st.queue.empty();
    const auto now = Now();
    const bool long_idle = was_idle && now - st.last_submit > kActiveWindow;
    if (st.priority == Priority::LatencyCritical && options_.policy == Policy::Fair) {
      // It runs at once; best-effort work on the device stops at its next work-group. (Also
      // in a context group, where the LC kernel could start beside that work: stopping it
      // after the launch instead left the LC p99 as it was or worse, docs/scheduling.md.)
      StopRuns(std::nullopt);
      drain = !long_idle && MayDrain(req);
      // No best-effort work goes on the device while it waits for them.
      if (drain) lc_requests_++;
      if (traced) {
        req.trace_entered = entered;
        req.trace_locked = locked;
        req.trace_stopped = Clock::now();
      }
    }
    st.last_submit = now;
    st.context = req.context;
    st.last_session = req.session_id;
    if (options_.policy == Policy::Split) {
      const size_t items = WorkItems(req.range);
      int active = ActiveTenants();
      // Algorithm 1: no split for a lone tenant or a launch smaller than the device.
      if (options_.force_slices) slices = options_.force_slices;
      else if (active > 1 && items >= device_cores_)
        slices = static_cast<size_t>(std::lround(active * options_.alpha));
    } else if (options_.policy == Policy::Fair) {
      const bool others = OthersActive(st, now);
      // Latency-critical launches never wait in rgpud, and a tenant alone on the device
      // launches directly: holding costs a round of the dispatcher per slice. Also a tenant
      // that still has held launches: a direct launch on an in-order queue waits behind them
      // there (their events are that queue's markers), and on another queue nothing orders
      // the two anyway. Holding it for as long as any of its launches were held kept a tenant
      // that had once shared the device held for good under a closed loop (a launch always
      // held when the next came): a best-effort tenant alone in a context group, started
      // within kActiveWindow of a latency-critical one, ran at 0.52 of its native rate
      // (H100, bench/results/2026-11-28-session22/call3).
      const bool be = st.priority != Priority::LatencyCritical;
      const double direct_ns = be && others ? DirectInTurnNs(st, req, now) : 0;
      hold = options_.force_slices > 0 || options_.force_runs || (be && others && direct_ns == 0);
      if (hold) st.usage.held++;
      if (!hold && direct_ns > 0)
        turn_direct_until_ = std::max(turn_direct_until_, now) +
                             std::chrono::nanoseconds(static_cast<int64_t>(direct_ns));
      // The fair clock of the tenants sharing the device: the least virtual time among
      // them, never going back.
      bool any = false;
      double floor = 0;
      for (auto& [key, o] : tenants_)
        if (&o != &st && (o.in_flight > 0 || !o.queue.empty())) {
          floor = any ? std::min(floor, o.vtime) : o.vtime;
          any = true;
        }
      if (any) vclock_ = std::max(vclock_, floor);
      if (long_idle) {
        // Back after a real pause: it starts level with the others, neither credited for the
        // idle time nor still paying for what it used before it (a tenant busy in an
        // earlier phase would otherwise wait until newcomers caught up with its past).
        st.vtime = vclock_;
      } else if (hold && was_idle && any) {
        // Between two of its own launches: no credit for the gap.
        st.vtime = std::max(st.vtime, floor);
      }
    }
  }
  // Sliced launches go on the device from this thread, after the pipe's; so do held ones,
  // but for one that goes at once (Hold decides).
  if (req.pipe && (drain || slices > 1 || (!hold && req.pipe_held_only) ||
                   (hold && (!options_.gate_at_once || !options_.pipe_loops)))) {
    req.pipe->Wait();
    req.pipe = nullptr;
  }
  if (drain) {
    DrainSlices(req.context);
    auto r = Direct(req, true);  // on the device now (or failed): it holds the others back
    std::lock_guard lk(mu_);
    lc_requests_--;
    Wake();
    return r;
  }
  if (hold) {
    auto r = Hold(req);
    if (r.ok()) r->held = true;
    return r;
  }
  if (slices > 1) return SplitInPlace(req, slices);
  return Direct(req, true);
}

bool Scheduler::Drainable(const SliceOnDevice& s, const BkContext* context) const {
  return s.context == context && s.expected_ns > 0 &&
         s.expected_ns <= 2000.0 * options_.lc_slice_us;
}

bool Scheduler::MayDrain(const LaunchRequest& req) const {
  if (options_.drain_slices_us <= 0) return false;
  double slices_ns = 0;
  for (const auto& s : launching_)
    if (Drainable(s, req.context)) slices_ns += s.expected_ns;
  for (const auto& s : slice_events_)
    if (Drainable(s, req.context)) slices_ns += s.expected_ns;
  if (slices_ns == 0) return false;
  // Beside the slices the kernel runs up to 1.7x its length; waiting costs what is left of
  // them. A kernel shorter than the slices gains less than it waits (a 50 us kernel beside
  // two slices of 50 us: its p99 1.46-1.67x native with no wait, 1.87-1.94x with one; H200,
  // docs/scheduling.md "Session 21"). An unmeasured kernel waits.
  const double ns = MeasuredLaunchNs(req);
  return ns <= 0 || ns >= options_.drain_ratio * slices_ns;
}

double Scheduler::MeasuredLaunchNs(const LaunchRequest& req) const {
  auto k = launch_cost_.find(req.kernel);
  if (k == launch_cost_.end()) return 0;
  auto c = k->second.find(WorkItems(req.range));
  return c != k->second.end() && c->second.measured ? c->second.ns : 0;
}

void Scheduler::DrainSlices(const BkContext* context) {
  // Spins: the slices end within tens of microseconds, sooner than a sleeping thread wakes.
  const auto until = Clock::now() + std::chrono::nanoseconds(
                                        static_cast<int64_t>(options_.drain_slices_us * 1000));
  std::vector<BkEvent*> slices;
  for (;;) {
    {
      std::lock_guard lk(mu_);
      // A slice being put on the device right now (decided before this request began) is
      // waited for too, once it has its event.
      if (std::none_of(launching_.begin(), launching_.end(),
                       [&](const SliceOnDevice& s) { return Drainable(s, context); })) {
        for (const auto& s : slice_events_)
          if (Drainable(s, context)) {
            backend_->Retain(proto::ObjType::Event, s.event);
            slices.push_back(s.event);
          }
        break;
      }
    }
    if (Clock::now() >= until) break;
    CpuRelax();
  }
  for (BkEvent* e : slices) {
    while (backend_->EventStatus(e) > CL_COMPLETE && Clock::now() < until) CpuRelax();
    backend_->Release(proto::ObjType::Event, e);
  }
}

Scheduler::EventChoice Scheduler::ChooseEvent(const LaunchRequest& req, CostKey& ck) {
  // An event costs NVIDIA's driver about what a launch costs (rgpu-probe-driver, H200: 8.2 us
  // per launch without, 16.1 us with). Short kernels nobody asked an event for get one only every
  // sample_every launches; the others are charged the kernel's measured cost.
  EventChoice c;
  std::lock_guard lk(mu_);
  c.seq = ledger_.Submit();
  TenantState& st = StateFor(req);
  c.latency_critical = st.priority == Priority::LatencyCritical;
  // A launch behind held work of its tenant's that has not ended waits in the driver for that
  // work's user event, and NVIDIA's profiling times of such a launch do not measure the
  // kernel: the first direct launch of a best-effort tenant alone again after its held
  // launches read 0.86 ms for a 15 ms kernel (H200, bench/results/2026-12-02-session35/call1).
  // Taken as the kernel's cost, that had the next 63 launches charged 0.86 ms each (sampled,
  // as launches under 2 ms of a tenant alone are): 0.62 of what the tenant ran.
  if (!st.queue.empty()) ck.measures = false;
  CostBySize& sizes = launch_cost_[ck.kernel];
  if (sizes.size() >= kMaxCostSizes && !sizes.count(ck.items)) sizes.clear();
  LaunchCost& cost = sizes[ck.items];
  // Asked only where it decides: a short best-effort launch (every launch of a burst) never
  // looks at the other tenants.
  auto alone = [&] { return !OthersActive(st, Now()); };
  // A latency-critical launch with no other tenant about: nothing waits for its end.
  const bool lc_alone = c.latency_critical && options_.lc_sampled_events && !lc_trace_ && alone();
  // A launch whose event the application asked for is sampled alike: it gets its event, but
  // the scheduler reads it only every sample_every launches (reading each one's profiling:
  // bursts of such launches at 0.48-0.52 of the native rate, 0.55-0.57 sampled, H200,
  // bench/results/2026-11-29-session30/call2).
  if ((!c.latency_critical || lc_alone) && req.queue_in_order) {
    const bool sampled =
        lc_alone || cost.ns < kSampledBelowNs || (cost.ns < kSampledAloneBelowNs && alone());
    if (cost.measured && sampled && ++cost.since_sample < options_.sample_every) {
      c.need_event = req.want_event;
      c.harvest = false;
      c.estimate_ns = cost.ns;
      // Done for the ledger and charged its measured cost now, under this lock, not after the
      // driver's enqueue under a second one: nothing will report on it. (Should the enqueue
      // then fail, the estimate stays charged: the kernel ran before, so that is rare, and the
      // device-time counters only ever grow.)
      Completed(c.seq, req.tenant_key, nullptr);
      Charge(req.tenant_key, static_cast<uint64_t>(c.estimate_ns));
      st.usage.estimated++;
      st.usage.estimated_ns += static_cast<uint64_t>(c.estimate_ns);
    } else {
      cost.since_sample = 0;
    }
  }
  return c;
}

void Scheduler::WatchLatencyCritical(BkEvent* ev, const std::string& key, uint64_t seq,
                                     CostKey ck) {
  // The dispatcher holds best-effort slices back while this runs: tell it the moment it ends.
  backend_->OnComplete(ev, [this, key, seq, ck, ev](int32_t) {
    auto t = backend_->Profiling(ev);
    std::lock_guard lk(mu_);
    if (t.ok() && t->end > t->start) UpdateLaunchCost(ck, static_cast<double>(t->end - t->start));
    Completed(seq, key, t.ok() ? &*t : nullptr);
    auto it = tenants_.find(key);
    if (it != tenants_.end()) it->second.in_flight--;
    Wake();
  });
}

Result<LaunchResult> Scheduler::Direct(LaunchRequest& req, bool whole_hidden) {
  // The request is spent here: its argument snapshot takes the hidden argument in place.
  if (req.slice_info && whole_hidden)
    AppendHidden(req.args, slicer::HiddenArgForWholeLaunch(), nullptr);
  stamps::Mark(stamps::Point::kDirectEntered);
  CostKey ck{req.kernel, WorkItems(req.range)};
  const EventChoice choice = ChooseEvent(req, ck);
  stamps::Mark(stamps::Point::kDirectChosen);
  const bool latency_critical = choice.latency_critical;
  const uint64_t seq = choice.seq;
  const bool traced = req.trace_entered != Clock::time_point{};
  const auto launching = traced ? Clock::now() : Clock::time_point{};
  Result<BkEvent*> ev = nullptr;
  const std::string& key = req.tenant_key;
  if (req.pipe && req.waits.empty() && !choice.need_event) {
    req.pipe->Push(req.queue, req.kernel, req.args, req.range);  // charged in ChooseEvent
  } else if (req.pipe && req.waits.empty() && (!choice.harvest || !latency_critical) &&
             (!req.want_event || req.piped_event)) {
    // An event for the accounting (ChooseEvent's sample), the application or both, made on
    // the pipe's thread so that the burst does not wait for the pipe here: the accounting's
    // kept for the harvest from there, the application's left in its PipedEvent.
    const bool harvest = choice.harvest;
    req.pipe->Push(
        req.queue, req.kernel, req.args, req.range,
        [this, key, ck, seq, harvest, pipe = req.pipe,
         slot = std::move(req.piped_event)](Result<BkEvent*> launched) {
          if (!launched.ok()) {
            if (harvest) {
              std::lock_guard lk(mu_);
              Completed(seq, key, nullptr);
            }
            if (slot)
              slot->event = launched.status();  // the session reports it
            else
              pipe->Fail(launched.status());
            return;
          }
          if (harvest) KeepDirect(*launched, key, ck, seq);
          if (slot)
            slot->event = *launched;
          else
            backend_->Release(proto::ObjType::Event, *launched);
        },
        harvest ? nullptr : req.twin);  // only the application reads it: unprofiled
    if (req.want_event) return LaunchResult{nullptr, nullptr, true};
  } else {
    if (req.pipe) req.pipe->Wait();
    ev = backend_->Launch(req.queue, req.kernel, req.args, req.range, req.waits, choice.need_event);
  }
  stamps::Mark(stamps::Point::kDirectLaunched);
  if (traced) {
    using us = std::chrono::duration<float, std::micro>;
    std::lock_guard lk(mu_);
    lc_trace_->Host(us(req.trace_locked - req.trace_entered).count(),
                    us(req.trace_stopped - req.trace_locked).count(),
                    us(launching - req.trace_stopped).count(),
                    us(Clock::now() - launching).count());
  }
  if (!ev.ok() && choice.harvest) {
    // No interval to report: done for the ledger at once, so it never holds up the others.
    // (A launch without an event is done for it already: ChooseEvent.)
    std::lock_guard lk(mu_);
    Completed(seq, key, nullptr);
  }
  if (!ev.ok()) return ev.status();
  if (!*ev || !choice.harvest) return LaunchResult{*ev, nullptr};  // charged in ChooseEvent
  if (!latency_critical) {
    KeepDirect(*ev, key, ck, seq);
    return LaunchResult{*ev, nullptr};
  }
  {
    std::lock_guard lk(mu_);
    TenantState& st = StateFor(req);
    st.in_flight++;
    // Slices the device really has not finished (the watcher may not have seen the end of
    // one yet): a status query each, cheap.
    int running = 0;
    for (const auto& s : slice_events_)
      if (backend_->EventStatus(s.event) > CL_COMPLETE) ++running;
    if (running > 0) {
      st.usage.behind_slices++;
      spdlog::trace("fair: latency-critical launch behind {} slices", running);
    }
  }
  WatchLatencyCritical(*ev, key, seq, ck);
  return LaunchResult{*ev, nullptr};
}

void Scheduler::KeepDirect(BkEvent* ev, const std::string& key, const CostKey& ck, uint64_t seq) {
  bool harvest_due = false, harvest_here = false;
  {
    std::lock_guard lk(mu_);
    auto it = tenants_.find(key);  // ChooseEvent made it
    if (it != tenants_.end()) it->second.in_flight++;
    backend_->Retain(proto::ObjType::Event, ev);  // held until harvested
    direct_.push_back({ev, key, ck, seq});
    // The dispatcher harvests every 20 ms, and is woken to harvest every kHarvestEvery
    // launches of a burst, which bounds the events held without asking the driver for a
    // status on every launch. Only when it falls far behind does this thread harvest.
    harvest_due = direct_.size() % kHarvestEvery == 0;
    harvest_here = harvest_due && direct_.size() >= kHarvestHere;
  }
  if (harvest_here)
    Harvest();
  else if (harvest_due)
    Wake();
}

void Scheduler::Harvest() {
  // One harvester at a time (session threads and the dispatcher both call this): the front
  // events are queried outside mu_, and only their harvester may pop and release them.
  std::unique_lock one(harvest_mu_, std::try_to_lock);
  if (!one.owns_lock()) return;
  std::vector<DirectLaunch> batch;
  std::vector<Result<ProfilingTimes>> times;
  for (;;) {
    batch.clear();
    times.clear();
    {
      std::lock_guard lk(mu_);
      const size_t n = std::min(direct_.size(), kHarvestBatch);
      batch.assign(direct_.begin(), direct_.begin() + static_cast<std::ptrdiff_t>(n));
    }
    // Profiling times exist only once a command is complete, so asking for them is also the
    // completion test: no status query per launch (each costs the driver more than the
    // times do). A failed command has no times; only then is its status asked.
    for (const auto& d : batch) {
      auto t = backend_->Profiling(d.event);
      if (!t.ok() && backend_->EventStatus(d.event) > CL_COMPLETE) break;  // still running
      times.push_back(std::move(t));
    }
    if (times.empty()) return;
    {
      // One lock and one wake-up for the whole batch: a wake-up per launch had the
      // dispatcher and this thread take mu_ in turn, about 9 us a launch on the H200.
      std::lock_guard lk(mu_);
      for (size_t i = 0; i < times.size(); ++i) {
        const DirectLaunch& d = batch[i];
        direct_.pop_front();  // d: only a harvester pops, and launches are only appended
        auto it = tenants_.find(d.tenant);
        if (it != tenants_.end()) it->second.in_flight--;
        auto& t = times[i];
        if (t.ok())
          UpdateLaunchCost(d.cost_key,
                           t->end > t->start ? static_cast<double>(t->end - t->start) : 0);
        Completed(d.seq, d.tenant, t.ok() ? &*t : nullptr);
      }
    }
    for (size_t i = 0; i < times.size(); ++i)
      backend_->Release(proto::ObjType::Event, batch[i].event);
    Wake();
    if (times.size() < batch.size()) return;
  }
}

Result<LaunchResult> Scheduler::Unsliced(LaunchRequest& req) {
  {
    std::lock_guard lk(mu_);
    StateFor(req).usage.unsliceable++;
  }
  return Direct(req, true);
}

// The profiling times of a sliced launch: the first start and the last end of its slices,
// published for the application's event once the last slice completed.
struct Scheduler::SliceTimes {
  std::mutex mu;
  size_t left = 0;
  uint64_t start = UINT64_MAX, end = 0, queued = UINT64_MAX, submit = UINT64_MAX;
  std::shared_ptr<LaunchTimes> times = std::make_shared<LaunchTimes>();

  void Add(const ProfilingTimes* t) {  // null: the slice's times could not be read
    bool last;
    {
      std::lock_guard lk(mu);
      if (t) {
        start = std::min(start, t->start);
        end = std::max(end, t->end);
        queued = std::min(queued, t->queued);
        submit = std::min(submit, t->submit);
      }
      last = --left == 0;
    }
    if (!last) return;
    if (start == UINT64_MAX)  // no slice's times: start 0 says so (LaunchTimes)
      times->Publish(0, 0, 0, 0);
    else
      times->Publish(queued, submit, start, end);
  }
};

Result<BkEvent*> Scheduler::LaunchSlice(LaunchRequest& req, const slicer::SlicePlan& p, size_t i,
                                        const std::shared_ptr<SliceTimes>& agg) {
  std::vector<KernelArgValue> args = req.args;
  AppendHidden(args, slicer::HiddenArgForSlice(p.launch, p.slices[i]), nullptr);
  // In an in-order queue the slices follow each other; out of order, each keeps the wait list.
  WaitList waits = (i == 0 || !req.queue_in_order) ? WaitList(req.waits) : WaitList();
  const std::string key = req.tenant_key;
  uint64_t seq;
  {
    std::lock_guard lk(mu_);
    seq = ledger_.Submit();
  }
  auto ev = backend_->Launch(req.queue, req.kernel, args, RangeOf(p.launch, p.slices[i]), waits);
  {
    std::lock_guard lk(mu_);
    if (!ev.ok()) {
      Completed(seq, key, nullptr);
      return ev.status();
    }
    StateFor(req).in_flight++;
  }
  // Outside mu_: the callback takes it, and may run at once if the slice is already done.
  backend_->OnComplete(*ev, [this, key, seq, e = *ev, agg](int32_t) {
    auto t = backend_->Profiling(e);
    agg->Add(t.ok() ? &*t : nullptr);
    std::lock_guard lk(mu_);
    Completed(seq, key, t.ok() ? &*t : nullptr);
    auto it = tenants_.find(key);
    if (it != tenants_.end()) {
      it->second.usage.slices++;
      it->second.in_flight--;
    }
    Wake();
  });
  return *ev;
}

Result<LaunchResult> Scheduler::SplitInPlace(LaunchRequest& req, size_t n) {
  if (!req.slice_info) return Unsliced(req);
  auto plan = slicer::PlanSlices(*req.slice_info, ShapeOf(req.range), n);
  if (!plan.ok()) {
    spdlog::debug("launch not sliced: {}", plan.status().message());
    return Unsliced(req);
  }
  const auto& p = plan.value();
  auto agg = std::make_shared<SliceTimes>();
  agg->left = p.slices.size();
  std::vector<BkEvent*> events;
  auto release = [&] {
    for (auto* e : events) backend_->Release(proto::ObjType::Event, e);
  };
  for (size_t i = 0; i < p.slices.size(); ++i) {
    auto ev = LaunchSlice(req, p, i, agg);
    if (!ev.ok()) return release(), ev.status();
    events.push_back(*ev);
  }
  // The application's event: the last slice in an in-order queue, else a marker on all.
  BkEvent* result;
  if (req.queue_in_order) {
    result = events.back();
    events.pop_back();
  } else {
    auto m = backend_->Marker(req.queue, events);
    if (!m.ok()) return release(), m.status();
    result = *m;
  }
  release();
  return LaunchResult{result, agg->times};
}

Result<LaunchResult> Scheduler::Hold(LaunchRequest& req) {
  // Whether it may follow the held launch before it on its queue (SchedulerOptions::chain_held):
  // its wait list, if any, must name only that launch's event (checked below).
  stamps::Mark(stamps::Point::kHoldEntered);
  const bool chainable = options_.chain_held && req.queue_in_order && req.queue_serial != 0;
  auto h = std::make_shared<Held>();
  h->req = std::move(req);
  // The session's launch thread, during a burst: a launch that goes at once goes through it
  // (LaunchAtOnce); anything else here waits for its launches first. Not kept in the held
  // launch, which may outlive the session.
  LaunchPipe* pipe = std::exchange(h->req.pipe, nullptr);
  std::shared_ptr<PipedEvent> slot = std::move(h->req.piped_event);
  h->req.twin = nullptr;
  auto drain_pipe = [&] {
    if (pipe) pipe->Wait();
    pipe = nullptr;
  };
  std::vector<BkEvent*> waited;  // the start marker waits for them; the held launch does not
  waited.swap(h->req.waits);
  h->tenant = h->req.tenant_key;  // Submit set it
  PlanHeld(*h);
  auto unplan = [&] {
    if (h->ctl) backend_->Release(proto::ObjType::Mem, h->ctl);
  };
  // Directly behind a held launch of the same queue: nothing else was enqueued between them,
  // so what it waits for is that launch alone (also when its wait list names that launch's
  // event, as libraries that chain kernels by events do), and rgpud's queue keeps their order.
  std::shared_ptr<Held> behind;
  bool behind_over = false;  // it has ended, though the dispatcher has not dropped it yet
  if (chainable) {
    std::lock_guard lk(mu_);
    auto last = last_held_.find(h->req.queue_serial);
    auto prev = last == last_held_.end() ? nullptr : last->second.lock();
    if (prev && !prev->cancelled && prev->req.queue_command + 1 == h->req.queue_command &&
        std::all_of(waited.begin(), waited.end(),
                    [&](BkEvent* w) { return w == prev->app_event; })) {
      behind_over = prev->Ended() && prev->status >= 0;
      behind = std::move(prev);
    }
  }
  const bool one_slice = h->sliceable && h->total == 1 && !h->preemptible;
  auto complete = [&](BkEvent* e) { return backend_->EventStatus(e) == CL_COMPLETE; };
  // Nothing left before it to wait for (a held launch before it that has ended counts as
  // nothing): the gate alone holds it.
  const bool nothing_before = one_slice && options_.gate_first && h->req.before_known &&
                              (!behind || behind_over) &&
                              (!h->req.before_event || complete(h->req.before_event)) &&
                              std::all_of(waited.begin(), waited.end(), complete);
  h->req.before_event = nullptr;  // the session's, valid during Submit only
  if (nothing_before) behind.reset();
  h->gated_first = nothing_before;
  h->gated = h->gated_first || (one_slice && behind && options_.gate_chained);
  if (h->gated && options_.gate_at_once) {
    // The dispatcher would put it on the device the moment it is queued: it goes from here.
    uint64_t seq = 0;
    bool now, elsewhere = false;
    stamps::Mark(stamps::Point::kHoldPlanned);
    {
      std::lock_guard lk(mu_);
      if (chainable && behind && !behind->cancelled) h->behind = behind;
      now = TakeAtOnce(h, &seq);
      if (!now) h->behind.reset();
      elsewhere = now && pipe && LcElsewhere(h->req.context, Now());
    }
    if (now) {
      // Through the launch thread (pipe_loops) unless a latency-critical tenant is active in
      // another context (LcElsewhere), or it has a wait list (then it never has a pipe).
      if (elsewhere || !waited.empty()) drain_pipe();
      return LaunchAtOnce(h, waited, seq, chainable, pipe, std::move(slot));
    }
  }
  drain_pipe();
  // Parking blocks the session's thread, which reads none of its client's frames meanwhile: not
  // where a launch of its tenant ahead of this one may wait for the client (a user event of the
  // session unset), which it could then not set before the park's limit.
  const bool may_park = options_.park_first && h->req.may_block;
  if (!h->gated_first && may_park && options_.gate_first && one_slice && h->req.queue_in_order &&
      SettleQueue(h.get(), waited)) {
    // Behind work of its queue that only the device has left to do (a held launch all on the
    // device, as in a closed loop two deep whose tenant's turn has just ended; a direct launch
    // still in flight; a command the session could not follow): once that has ended nothing is
    // before it, and it parks, where a gate or the markers' path would make a user event.
    behind.reset();
    h->gated_first = true;
    h->gated = true;
  }
  if (h->gated_first && may_park) {
    // Nothing before it and nothing it waits for: it waits here for its tenant's turn rather
    // than behind a user event (SchedulerOptions::park_first), then goes as at once.
    if (auto seq = Park(h)) return LaunchAtOnce(h, waited, *seq, chainable, nullptr, {});
  }
  auto gate = backend_->CreateUserEvent(h->req.context);
  if (!gate.ok()) return unplan(), gate.status();
  h->gate = *gate;
  if (h->gated) {
    // One slice of one wave behind another held launch, or with nothing unfinished before
    // it: the kernel itself goes on the application's queue now, waiting for the gate, which
    // the dispatcher opens when it is its turn. Its event is the application's: two markers
    // fewer than below, and the same order (SchedulerOptions::gate_chained, gate_first).
    std::vector<KernelArgValue> args = h->req.args;
    if (h->req.slice_info) AppendHidden(args, slicer::HiddenArgForWholeLaunch(), nullptr);
    BkEvent* gate_list[1] = {*gate};
    auto kernel =
        backend_->Launch(h->req.queue, h->req.kernel, args, h->req.range, gate_list, true);
    if (!kernel.ok()) {
      backend_->Release(proto::ObjType::Event, *gate);
      return unplan(), kernel.status();
    }
    h->app_event = *kernel;
  } else {
    // What the launch waits for: its wait list and, in an in-order queue, everything before it.
    auto start = backend_->Marker(h->req.queue, waited);
    if (!start.ok()) {
      backend_->Release(proto::ObjType::Event, *gate);
      return unplan(), start.status();
    }
    // The application's event: completes when the last slice has.
    BkEvent* gate_list[1] = {*gate};
    auto done = backend_->Marker(h->req.queue, gate_list);
    if (!done.ok()) {
      backend_->Release(proto::ObjType::Event, *gate);
      backend_->Release(proto::ObjType::Event, *start);
      return unplan(), done.status();
    }
    h->app_event = *done;
    backend_->OnComplete(
        *start,
        [this, h](int32_t status) {
          std::lock_guard lk(mu_);
          h->ready = true;
          if (status < 0) h->status = status;
          Wake();
        },
        Urgency::kUrgent);
    backend_->Release(proto::ObjType::Event, *start);
  }
  backend_->Flush(h->req.queue);
  backend_->Retain(proto::ObjType::Event, h->app_event);  // compared with later wait lists
  KeepNamed(*h);
  {
    std::lock_guard lk(mu_);
    TenantState& st = StateFor(h->req);
    if (!h->sliceable && !h->preemptible) st.usage.unsliceable++;
    st.usage.user_events++;  // its gate
    if (chainable) {
      if (behind && !behind->cancelled) h->behind = std::move(behind);
      last_held_[h->req.queue_serial] = h;
    }
    // Gated, it is ready now: the application's queue orders it behind the launch before it,
    // and the dispatcher opens its gate only once that one is all out (Candidate).
    if (h->gated) h->ready = true;
    st.queue.push_back(h);
    Undispatched(*h);
    KnowKernel(h->req.sched_kernel);
    if (h->gated) Wake();
  }
  return LaunchResult{h->app_event, h->gated ? nullptr : h->times};
}

void Scheduler::KeepNamed(const Held& h) {
  // What a held launch names stays alive until it has run, whatever the session releases
  // meanwhile (Finish releases them).
  backend_->Retain(proto::ObjType::Kernel, h.req.sched_kernel);
  for (const auto& a : h.req.args) {
    if (a.kind == KernelArgValue::Kind::Mem && a.mem) backend_->Retain(proto::ObjType::Mem, a.mem);
    if (a.kind == KernelArgValue::Kind::Sampler)
      backend_->Retain(proto::ObjType::Sampler, a.sampler);
  }
}

bool Scheduler::TakesAtOnce(const TenantState* pick, const Held& h, bool lc_active) const {
  if (DeviceTakes(pick, h, lc_active)) return true;
  // A closed loop's next launch comes as soon as the application has seen its oldest one
  // end, often before the completion watcher has: slices of this tenant that the device has
  // ended do not count (SchedulerOptions::pipe_loops; a status query each).
  if (!options_.pipe_loops || h.preemptible || on_device_ != pick || overran_ > 0 ||
      LcElsewhere(h.req.context, Now()))
    return false;
  const int depth = lc_active ? SliceDepthBesideLc(h) : kHeldDepth;
  int ended = 0;
  for (const auto& s : slice_events_)
    if (s.held && s.held->tenant == h.tenant && backend_->EventStatus(s.event) == CL_COMPLETE)
      ++ended;
  return device_in_flight_ - ended < depth;
}

void Scheduler::KnowKernel(BkKernel* kernel) {
  // Measured by its first piece.
  cost_ns_.try_emplace(kernel, 0.0);
  group_cost_ns_.try_emplace(kernel, 0.0);
  item_cost_ns_.try_emplace(kernel, 0.0);
  narrow_.try_emplace(kernel);
}

bool Scheduler::TakeAtOnce(const std::shared_ptr<Held>& h, uint64_t* seq) {
  TenantState& st = StateFor(h->req);
  KnowKernel(h->req.sched_kernel);
  // Queued as the dispatcher would find it, and asked what DispatchOne asks.
  h->ready = true;
  st.queue.push_back(h);
  const auto now = Now();
  const LcState lc = LatencyCriticalState(now);
  if (PickTenant(lc, now) != &st || Candidate(st) != h || !TakesAtOnce(&st, *h, lc.active)) {
    st.queue.pop_back();
    h->ready = false;
    return false;
  }
  // Counted on the device as DispatchOne counts it; no gate to open (Finish sets none).
  *seq = Commit(st, h, lc, now).seq;
  st.usage.at_once++;
  h->gate_open = true;
  return true;
}

std::optional<uint64_t> Scheduler::Park(const std::shared_ptr<Held>& h) {
  // Longer than a few quanta per waiting tenant: work that overran its turn holds the device.
  constexpr auto kParkLimit = std::chrono::milliseconds(1000);
  std::unique_lock lk(mu_);
  TenantState& st = StateFor(h->req);
  KnowKernel(h->req.sched_kernel);
  h->ready = true;  // nothing before it can still be running (gated_first)
  h->parked = true;
  st.queue.push_back(h);
  st.usage.parked++;
  if (h->parked_after_wait) st.usage.parked_chained++;
  if (h->parked_settled) st.usage.parked_settled++;
  Wake();
  if (park_cv_.wait_for(lk, kParkLimit, [&] { return h->park_go; })) return h->park_seq;
  // Not given the device in time: out of the queue again, to be gated as before. (No
  // dispatch can have reached it: that sets park_go under the lock.)
  auto it = std::find(st.queue.begin(), st.queue.end(), h);
  if (it != st.queue.end()) st.queue.erase(it);
  h->parked = false;
  h->ready = false;
  st.usage.park_timeouts++;
  return std::nullopt;
}

bool Scheduler::SettleQueue(Held* h, const std::vector<BkEvent*>& waited) {
  BkEvent* held_event = nullptr;  // the last held launch of its queue, still on the device
  {
    // A held launch of its queue that is not all on the device may wait for its turn (its gate,
    // or a preemptible run's next run) for several quanta, in which NVIDIA's wait spins: leave
    // it to the gates' path then.
    std::lock_guard lk(mu_);
    if (undispatched_queues_.count(h->req.queue) > 0) return false;
    if (auto last = last_held_.find(h->req.queue_serial); last != last_held_.end()) {
      if (auto prev = last->second.lock(); prev && !prev->Ended()) {
        if (!prev->AllOut()) return false;
        held_event = prev->app_event;
      }
    }
  }
  // Waits that can still hang on something other than the queue's device work (the client,
  // another queue) leave it to the gates' path; one on the held launch before it (libraries
  // chain kernels by events) ends with the queue.
  auto complete = [&](BkEvent* e) { return backend_->EventStatus(e) == CL_COMPLETE; };
  if (!std::all_of(waited.begin(), waited.end(),
                   [&](BkEvent* w) { return w == held_event || complete(w); }))
    return false;
  // Nothing the session has queued waits for its client (LaunchRequest::may_block), and the
  // session's launch thread has put everything on the queue (Hold drained it), so this ends
  // with the device's work.
  if (!backend_->Finish(h->req.queue).ok() || !std::all_of(waited.begin(), waited.end(), complete))
    return false;
  if (held_event)
    h->parked_after_wait = true;
  else
    h->parked_settled = true;
  return true;
}

void Scheduler::AtOnceFailed(const std::shared_ptr<Held>& h, uint64_t seq, const Status& s) {
  {
    std::lock_guard lk(mu_);
    Launched(h.get(), nullptr);
  }
  const int32_t code = s.code() < 0 ? s.code() : CL_OUT_OF_RESOURCES;
  SliceDone(h, 1, seq, code, nullptr);  // off the device; the dispatcher drops it
}

void Scheduler::AtOnceLaunched(const std::shared_ptr<Held>& h, uint64_t seq, BkEvent* ev) {
  backend_->Retain(proto::ObjType::Event, ev);  // h->app_event's: compared with later wait lists
  backend_->Retain(proto::ObjType::Event, ev);  // slice_events_'s
  backend_->Flush(h->req.queue);
  stamps::Mark(stamps::Point::kAtOnceFlushed);
  {
    std::lock_guard lk(mu_);
    h->app_event = ev;
    Launched(h.get(), ev);
  }
  backend_->OnComplete(
      ev, [this, h, seq, ev](int32_t st) { SliceDone(h, 1, seq, st, ev); }, h->watch);
  stamps::Mark(stamps::Point::kAtOnceWatched);
}

Result<LaunchResult> Scheduler::LaunchAtOnce(const std::shared_ptr<Held>& h,
                                             const std::vector<BkEvent*>& waited, uint64_t seq,
                                             bool chainable, LaunchPipe* pipe,
                                             std::shared_ptr<PipedEvent> slot) {
  stamps::Mark(stamps::Point::kAtOnceTaken);
  KeepNamed(*h);
  std::vector<KernelArgValue> args = h->req.args;
  if (h->req.slice_info) AppendHidden(args, slicer::HiddenArgForWholeLaunch(), nullptr);
  stamps::Mark(stamps::Point::kAtOnceNamed);
  if (pipe) {
    // Through the session's launch thread, behind its launches (on the profiling queue: the
    // accounting reads this slice's times), so that the session answers the frames after it
    // while the driver takes it. Counted on the device meanwhile (launching_).
    const bool want_event = static_cast<bool>(slot);
    pipe->Push(h->req.queue, h->req.kernel, args, h->req.range,
               [this, h, seq, pipe, slot = std::move(slot)](Result<BkEvent*> launched) {
                 if (!launched.ok()) {
                   AtOnceFailed(h, seq, launched.status());
                   if (slot)
                     slot->event = launched.status();  // the session reports it
                   else
                     pipe->Fail(launched.status());
                   return;
                 }
                 AtOnceLaunched(h, seq, *launched);
                 if (slot)
                   slot->event = *launched;  // the application's reference
                 else
                   backend_->Release(proto::ObjType::Event, *launched);
               });
    std::lock_guard lk(mu_);
    if (chainable) last_held_[h->req.queue_serial] = h;
    StateFor(h->req).usage.at_once_piped++;
    return LaunchResult{nullptr, nullptr, want_event};
  }
  // On its in-order queue it follows what is before it; what it waits for is complete, or
  // the launch before it.
  auto kernel = backend_->Launch(h->req.queue, h->req.kernel, args, h->req.range, waited, true);
  stamps::Mark(stamps::Point::kAtOnceEnqueued);
  if (!kernel.ok()) return AtOnceFailed(h, seq, kernel.status()), kernel.status();
  {
    std::lock_guard lk(mu_);
    if (chainable) last_held_[h->req.queue_serial] = h;
  }
  AtOnceLaunched(h, seq, *kernel);
  return LaunchResult{*kernel, nullptr};  // the application's reference
}

void Scheduler::PlanHeld(Held& h) {
  if (!h.req.slice_info) return;
  bool runs_pay, whole;
  {
    std::lock_guard lk(mu_);
    runs_pay = RunsPay(h.req.sched_kernel);
    whole = WholeWave(h);
  }
  if (whole && PlanSlicesOf(h)) return;
  // Preemptible runs first, unless the kernel's work-groups are too small for them to pay;
  // then slices; then runs all the same (better than running whole).
  if (!options_.force_slices && runs_pay && PlanRuns(h)) return;
  if (PlanSlicesOf(h)) return;
  if (!options_.force_slices && !runs_pay) PlanRuns(h);
}

bool Scheduler::PlanRuns(Held& h) {
  const slicer::LaunchShape shape = ShapeOf(h.req.range);
  // With no local size rgpud picks one, up to the kernel's limit on this device.
  size_t max_local = 0;
  std::vector<uint8_t> raw;
  if (!h.req.range.has_local &&
      backend_->GetInfo(proto::InfoFamily::KernelWorkGroup, h.req.sched_kernel, h.req.device, 0,
                        CL_KERNEL_WORK_GROUP_SIZE, &raw).ok() &&
      raw.size() == sizeof(size_t))
    std::memcpy(&max_local, raw.data(), sizeof(size_t));
  auto run = slicer::PlanRun(*h.req.slice_info, shape, max_local);
  if (!run.ok()) {
    spdlog::debug("launch not preemptible: {}", run.status().message());
    return false;
  }
  if (!h.req.ctl_queue) return false;
  auto ctl = backend_->CreateBuffer(h.req.context, CL_MEM_READ_WRITE, slicer::kControlBytes, {});
  if (!ctl.ok()) {
    spdlog::debug("no control buffer for a preemptible run: {}", ctl.status().message());
    return false;
  }
  h.run = run.value();
  h.preemptible = true;
  h.ctl = *ctl;
  h.ctl_out = std::make_shared<ByteVec>(slicer::kControlBytes);
  h.ctl_in = std::make_shared<ByteVec>(slicer::kControlBytes);
  h.total = h.run.total_groups;
  return true;
}

bool Scheduler::PlanSlicesOf(Held& h) {
  // Slices of whole work-groups, each at least one full wave of the device: a slice smaller
  // than that still takes as long as a wave (measured on an H200: a 2-group slice of a
  // 528-group launch took as long as all 528), so cutting below it only multiplies the time.
  const size_t pieces =
      options_.force_slices
          ? options_.force_slices
          : std::clamp<size_t>(WorkItems(h.req.range) / std::max<size_t>(wave_items_, 1), 1,
                               kFinePieces);
  auto plan = slicer::PlanSlices(*h.req.slice_info, ShapeOf(h.req.range), pieces);
  if (!plan.ok()) {
    spdlog::debug("launch not sliced: {}", plan.status().message());
    return false;
  }
  h.plan = std::move(plan.value());
  h.sliceable = true;
  h.total = h.plan.slices.size();
  return true;
}

bool Scheduler::WholeWave(const Held& h) {
  // A launch of one wave or less: every work-group is on the device from the start, so a
  // stop cuts nothing, and a run only adds its control words and keeps the next launch of the
  // queue from following it. One exception: beside an active LC tenant, work-groups that last
  // longer than a run should may go in narrow runs (RunGroups), which shorten an arrival's
  // wait; they are tried, and kept where they pay (NarrowRuns::Pick).
  if (!options_.whole_wave || options_.force_runs || WorkItems(h.req.range) > wave_items_)
    return false;
  if (!options_.narrow_runs || !LcActiveIn(nullptr, Now())) return true;
  // The launch's device time, measured when a launch of its kernel went as a slice; unknown
  // (never measured, or only as runs) it goes as a slice, which measures it.
  auto c = cost_ns_.find(h.req.sched_kernel);
  if (c == cost_ns_.end() || c->second <= 0) return true;
  if (c->second <= 1000.0 * std::min(options_.quantum_us, options_.lc_run_us)) return true;
  if (options_.narrow_width) return NarrowIndex(options_.narrow_width) < 0;
  auto n = narrow_.find(h.req.sched_kernel);
  return n != narrow_.end() && n->second.Pick() < 0;
}

bool Scheduler::RunsPay(BkKernel* kernel) {
  if (options_.force_runs) return true;
  auto it = group_cost_ns_.find(kernel);
  return it == group_cost_ns_.end() || it->second <= 0 || it->second >= kRunGroupMinNs;
}

void Scheduler::StopRuns(std::optional<uint64_t> session) {
  // A write, not a fill: NVIDIA fills with a kernel, whose work-groups queue behind the run's
  // own (measured on the H200: the stop then took effect only as the run ended); a write is a
  // copy, which the copy engine does while the run's work-groups occupy the device.
  static const Bytes kStop = [] {
    auto b = std::make_shared<ByteVec>(4);
    const uint32_t one = 1;
    std::memcpy(b->data(), &one, 4);
    return b;
  }();
  for (auto& h : runs_) {
    if (h->stop_sent || (session && h->req.session_id != *session)) continue;
    // After the run's own control write (which clears the flag), on a queue of its own so that
    // it does not wait for the run: the running work-groups see it at their next claim.
    BkEvent* after[1] = {h->ctl_written};
    auto ev = backend_->Write(h->req.ctl_queue, h->ctl, 0, kStop,
                              h->ctl_written ? WaitList(after) : WaitList());
    if (!ev.ok()) {
      spdlog::debug("stop flag not written: {}", ev.status().message());
      continue;
    }
    backend_->Flush(h->req.ctl_queue);
    backend_->Release(proto::ObjType::Event, *ev);
    h->stop_sent = true;
  }
}

std::shared_ptr<Scheduler::Held> Scheduler::Candidate(const TenantState& st) {
  for (size_t i = 0; i < st.queue.size(); ++i) {
    const auto& h = st.queue[i];
    if (i > 0 && h->behind != st.queue[i - 1]) return nullptr;
    if (!h->AllOut()) return h;
  }
  return nullptr;
}

bool Scheduler::Dispatchable(const Held& h) {
  return (h.ready || (h.behind && h.behind->AllOut())) && !h.cancelled && h.next < h.total &&
         h.detached == 0;
}

bool Scheduler::OthersWaiting() const {
  for (const auto& [key, st] : tenants_) {
    if (&st == on_device_) continue;
    const auto h = Candidate(st);
    if (h && Dispatchable(*h)) return true;
  }
  return false;
}

void Scheduler::StopRunPastQuantum(Clock::time_point now) {
  if (!on_device_) return;
  auto run = std::find_if(runs_.begin(), runs_.end(), [](auto& r) { return r->detached == 0; });
  if (run == runs_.end()) return;
  const auto quantum = std::chrono::nanoseconds(static_cast<int64_t>(options_.quantum_us * 1000));
  const auto due = (*run)->run_started + quantum;
  if (!OthersWaiting()) return;
  if (now >= due) {
    StopRuns(std::nullopt);
  } else if (wake_at_ == Clock::time_point{} || due < wake_at_) {
    wake_at_ = due;
  }
}

bool Scheduler::ReleaseOverrun(Clock::time_point now) {
  if (device_in_flight_ == 0 || !on_device_ || on_device_->queue.empty() || !OthersWaiting())
    return false;
  const auto due = progress_at_ + std::chrono::nanoseconds(static_cast<int64_t>(
                                      (options_.quantum_us + options_.overrun_us) * 1000));
  if (now < due) {
    if (wake_at_ == Clock::time_point{} || due < wake_at_) wake_at_ = due;
    return false;
  }
  // What of the tenant is on the device belongs to the head of its queue and the launches
  // chained behind it (Held::behind): each of them stops counting as the device's.
  const Held& head = *on_device_->queue.front();
  StopRuns(head.req.session_id);  // a run past its quantum has had one; a stop costs nothing
  spdlog::info(
      "fair: tenant {}'s work on the device made no progress for {:.1f} ms; the next tenant "
      "runs beside it",
      head.tenant, std::chrono::duration<double, std::milli>(now - progress_at_).count());
  for (auto& q : on_device_->queue) {
    Held& h = *q;
    if (h.in_flight == 0 || h.detached > 0) continue;
    overran_kernels_.insert(h.req.sched_kernel);
    h.detached += h.in_flight;
    if (!h.overran) {
      h.overran = true;
      overran_++;
    }
  }
  on_device_->usage.overruns++;
  device_in_flight_ = 0;
  on_device_ = nullptr;
  turn_ = nullptr;  // its turn ends with it
  progress_at_ = now;
  return true;
}

void Scheduler::DispatchLoop() {
  proto::NameThread("rgpud-dispatch");
  std::unique_lock lk(mu_);
  while (!stop_) {
    if (!DispatchOne(lk)) {
      const auto now = Now();
      StopRunPastQuantum(now);
      if (ReleaseOverrun(now)) continue;  // the waiting tenant's work goes now
      auto until = now + std::chrono::milliseconds(20);
      if (wake_at_ != Clock::time_point{} && wake_at_ < until) until = wake_at_;
      wake_at_ = {};
      if (options_.spin_feed && (!slice_events_.empty() || !runs_.empty()) &&
          LcActiveIn(nullptr, now)) {
        // Held work is on the device beside an active latency-critical tenant: its slices are
        // short, and the device idles from one's end until the next is launched. A sleeping
        // dispatcher takes a thread wake-up to learn of that end (SchedulerOptions::spin_feed).
        const uint64_t seen = wakes_.load(std::memory_order_acquire);
        const auto spin_end = Clock::now() + std::min<Clock::duration>(until - now, kFeedSpin);
        lk.unlock();
        while (wakes_.load(std::memory_order_acquire) == seen && Clock::now() < spin_end)
          CpuRelax();
        lk.lock();
      } else {
        // A duration, not a time point: the scheduler's clock may be a test's (Scheduler's
        // constructor), and the wait itself is always in real time.
        cv_.wait_for(lk, until - now);
      }
    }
    if (!direct_.empty()) {
      lk.unlock();
      Harvest();
      lk.lock();
    }
  }
}

bool Scheduler::FinishOneOver(std::unique_lock<std::mutex>& lk) {
  for (auto& [key, st] : tenants_) {
    if (st.queue.empty()) continue;
    auto& h = st.queue.front();
    const bool over = h->in_flight == 0 && (h->done >= h->total || (h->ready && h->status < 0) || h->cancelled);
    if (!over) continue;
    auto held = h;
    st.queue.pop_front();
    if (!st.queue.empty() && st.queue.front()->behind == held) {
      // Its predecessor is done: if it ended well, nothing holds this one back any longer;
      // if not, it waits for the driver's word (its `ready`), as any other launch does.
      Held& next = *st.queue.front();
      if (held->status >= 0 && !held->cancelled) next.ready = true;
      // Gated, it has no start marker to report the failure: it fails here, its gate set to
      // the error, so that its kernel never runs.
      else if (next.gated && !next.gate_open && next.status >= 0)
        next.status = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
      next.behind.reset();
    }
    Dispatched(*held);  // dropped before any dispatch (cancelled, or what it waited for failed)
    lk.unlock();
    Finish(*held, held->status);
    lk.lock();
    return true;
  }
  return false;
}

Scheduler::LcState Scheduler::LatencyCriticalState(Clock::time_point now) {
  const auto guard_end = LcServedPlus(options_.lc_guard_us);
  LcState lc{lc_requests_ > 0 || now < guard_end, false};
  if (lc_requests_ == 0 && now < guard_end && (wake_at_ == Clock::time_point{} || guard_end < wake_at_))
    wake_at_ = guard_end;
  for (auto& [key, st] : tenants_) {
    if (st.priority != Priority::LatencyCritical) continue;
    if (st.in_flight > 0) lc.busy = true;
    if (now - st.last_submit < kActiveWindow) lc.active = true;
  }
  const auto whole_end = LcServedPlus(options_.lc_whole_guard_us);
  if (lc.active && now < whole_end) lc.whole_until = whole_end;
  return lc;
}

void Scheduler::Undispatched(Held& h) {
  h.undispatched = true;
  undispatched_events_.insert(h.app_event);
  undispatched_queues_[h.req.queue]++;
  undispatched_.fetch_add(1, std::memory_order_relaxed);
}

void Scheduler::Dispatched(Held& h) {
  if (!std::exchange(h.undispatched, false)) return;
  undispatched_events_.erase(h.app_event);
  if (auto it = undispatched_queues_.find(h.req.queue);
      it != undispatched_queues_.end() && --it->second == 0)
    undispatched_queues_.erase(it);
  undispatched_.fetch_sub(1, std::memory_order_relaxed);
  dispatched_cv_.notify_all();
}

void Scheduler::AwaitDispatch(std::span<BkEvent* const> events, const BkQueue* queue,
                              std::chrono::milliseconds limit) {
  if (!options_.await_dispatch || undispatched_.load(std::memory_order_relaxed) == 0) return;
  std::unique_lock lk(mu_);
  dispatched_cv_.wait_for(lk, limit, [&] {
    if (queue && undispatched_queues_.count(queue) > 0) return false;
    return std::none_of(events.begin(), events.end(),
                        [&](const BkEvent* e) { return undispatched_events_.count(e) > 0; });
  });
}

void Scheduler::Wake() {
  wakes_.fetch_add(1, std::memory_order_release);
  cv_.notify_all();
}

bool Scheduler::LcElsewhere(const BkContext* context, Clock::time_point now) const {
  return LcActiveIn(nullptr, now) && !LcActiveIn(context, now);
}

bool Scheduler::LcActiveIn(const BkContext* context, Clock::time_point now) const {
  for (const auto& [key, st] : tenants_)
    if (st.priority == Priority::LatencyCritical && (!context || st.context == context) &&
        now - st.last_submit < kActiveWindow)
      return true;
  return false;
}

bool Scheduler::OthersActive(const TenantState& st, Clock::time_point now) const {
  for (const auto& [key, o] : tenants_)
    if (&o != &st && (o.in_flight > 0 || !o.queue.empty() || now - o.last_submit < kActiveWindow))
      return true;
  return false;
}

Scheduler::TenantState* Scheduler::PickTenant(const LcState& lc_state, Clock::time_point now) {
  TenantState* pick = nullptr;
  TenantState* other = nullptr;  // the best-effort tenant other than turn_ that has used least
  bool turn_ready = false;       // the tenant whose turn it is has a launch to go
  for (auto& [key, st] : tenants_) {
    const auto h = Candidate(st);
    if (!h || !Dispatchable(*h)) continue;
    const bool lc = st.priority == Priority::LatencyCritical;
    if (!lc && lc_state.busy) continue;  // best-effort work waits while latency-critical work runs
    if (!lc && lc_state.whole_until != Clock::time_point{} && !h->sliceable && !h->preemptible &&
        LcActiveIn(h->req.context, now)) {
      // Nothing cuts or stops a launch that runs whole, and in a context it shares with a
      // latency-critical tenant (a context group) the device does not time-slice the two
      // either: it waits longer after a latency-critical request (lc_whole_guard_us), and the
      // others go meanwhile.
      if (wake_at_ == Clock::time_point{} || lc_state.whole_until < wake_at_)
        wake_at_ = lc_state.whole_until;
      continue;
    }
    if (&st == turn_)
      turn_ready = true;
    else if (!lc && (!other || VtimeOf(st, now) < VtimeOf(*other, now)))
      other = &st;
    if (!pick || (lc && pick->priority != Priority::LatencyCritical) ||
        (lc == (pick->priority == Priority::LatencyCritical) &&
         VtimeOf(st, now) < VtimeOf(*pick, now)))
      pick = &st;
  }
  // Latency-critical work goes first. Among best-effort tenants, the one whose turn it is
  // keeps the device until its quantum has passed (SchedulerOptions::be_turns).
  if (!pick || pick->priority == Priority::LatencyCritical || !options_.be_turns || !turn_)
    return pick;
  if (InTurn(now)) {
    if (turn_ready) return turn_;
    // Its work on the device has just ended and its next launch has not come yet: wait a
    // little for it rather than change context (once a turn: a wait that ran out ends it),
    // counted from its last sign of life: its held work ending, or a launch it made (one
    // that went direct, DirectInTurnNs, ends without the dispatcher's knowing, so the wait
    // counts from when such launches are expected to end: counted from the launch, a turn of
    // 0.74 ms direct launches ended at each one's first 100 us, and with a context per tenant
    // the device then changed context at every launch, 0.92 of fifo's total, H200). Not for
    // work it has queued that cannot go yet: that may wait for anything.
    const auto last = std::max({turn_idle_since_, turn_->last_submit, turn_direct_until_});
    if (device_in_flight_ == 0 && turn_->queue.empty() && last >= turn_start_) {
      const auto until =
          last + std::chrono::nanoseconds(static_cast<int64_t>(options_.turn_wait_us * 1000));
      if (now < until) {
        if (wake_at_ == Clock::time_point{} || until < wake_at_) wake_at_ = until;
        return nullptr;
      }
      turn_->usage.turns_idle++;
      turn_ = nullptr;
    }
    return pick;
  }
  // Its turn is over: the waiting tenant that has used least goes next, and the one whose
  // turn it was begins another only while it is a whole turn behind that one. (Turns run
  // past the quantum by the slices in flight when it passes: the least used alone would have
  // two tenants leapfrog each other in double turns.)
  if (pick == turn_ && other &&
      VtimeOf(*turn_, now) + options_.quantum_us * 1000.0 / turn_->usage.weight >
          VtimeOf(*other, now))
    return other;
  return pick;
}

double Scheduler::VtimeOf(const TenantState& st, Clock::time_point now) const {
  if (&st != turn_ || !options_.be_turns) return st.vtime;
  // Its turn's device time is charged as its slices end and the ledger settles them, some
  // after the turn: counted from the turn's start until its work on the device last ended
  // (or now), so that a turn that has just ended does not look unused and begin again.
  const bool idle = on_device_ != turn_ && turn_idle_since_ >= turn_start_;
  const double turn_ns =
      std::chrono::duration<double, std::nano>((idle ? turn_idle_since_ : now) - turn_start_)
          .count();
  return std::max(st.vtime, turn_vtime_ + turn_ns / st.usage.weight);
}

double Scheduler::DirectInTurnNs(const TenantState& st, const LaunchRequest& req,
                                 Clock::time_point now) const {
  // Held, a closed loop of short launches paid rgpud's held path on every launch of its turn
  // (one wave of 30 us: about 1.7 times its loop's turn alone; a loop one deep of 0.74 ms
  // launches of many waves: 0.90 of fifo's total). Only while no latency-critical tenant is
  // active, and only for a launch expected to take no longer than a slice, while the turn's
  // direct launches already on the device are expected to end within two slices: a direct
  // launch cannot be cut or stopped, so an arrival after a pause waits for it as for a slice.
  if (!options_.be_turns || !options_.direct_in_turn || &st != turn_ || !InTurn(now) ||
      overran_ > 0 || (device_in_flight_ > 0 && on_device_ != &st))
    return 0;
  const bool beside_lc = LcActiveIn(nullptr, now);
  if (beside_lc && !DirectBesideLc(req, now)) return 0;
  // Its held launches must have ended on the device: one that has not would hold a direct
  // launch back on the queue unseen. One that has ended may still wait to be dropped from its
  // queue by the dispatcher while a closed loop, told of its end, launches again: held behind
  // it, every launch of a loop one deep was held in turn (0.92 of fifo's total, H200).
  for (const auto& h : st.queue)
    if (h->in_flight > 0 || h->done < h->total || h->status < 0 || h->cancelled) return 0;
  const double ns = ExpectedLaunchNs(req);
  const double most_ns = beside_lc ? options_.lc_slice_us * 1000 : kDirectInTurnNs;
  const double ahead_ns =
      beside_lc ? options_.lc_slice_depth * options_.lc_slice_us * 1000 : kDirectInTurnAheadNs;
  if (ns <= 0 || ns > most_ns) return 0;
  const double ahead =
      turn_direct_until_ > now
          ? std::chrono::duration<double, std::nano>(turn_direct_until_ - now).count()
          : 0.0;
  return ahead + ns <= ahead_ns ? ns : 0;
}

bool Scheduler::DirectBesideLc(const LaunchRequest& req, Clock::time_point now) const {
  if (!options_.direct_beside_lc || lc_requests_ > 0) return false;
  bool shares_context = false;
  for (const auto& [key, o] : tenants_) {
    if (o.priority != Priority::LatencyCritical) continue;
    if (o.in_flight > 0) return false;
    shares_context |= o.context == req.context && now - o.last_submit < kActiveWindow;
  }
  // In a context the LC tenant shares, its next request would queue behind the launch there
  // rather than switch to it: the longer guard of launches that run whole.
  return now >= LcServedPlus(shares_context ? options_.lc_whole_guard_us : options_.lc_guard_us);
}

Scheduler::Clock::time_point Scheduler::LcServedPlus(double us) const {
  return lc_served_ + std::chrono::nanoseconds(static_cast<int64_t>(us * 1000));
}

double Scheduler::ExpectedLaunchNs(const LaunchRequest& req) const {
  // Measured for this kernel and size when such a launch went direct (with an event); else
  // from its held slices' or runs' cost per work-item.
  if (const double ns = MeasuredLaunchNs(req); ns > 0) return ns;
  auto w = item_cost_ns_.find(req.sched_kernel);
  if (w == item_cost_ns_.end() || w->second <= 0) return 0;
  return w->second * static_cast<double>(WorkItems(req.range));
}

bool Scheduler::InTurn(Clock::time_point now) const {
  return options_.be_turns && turn_ != nullptr &&
         now - turn_start_ <
             std::chrono::nanoseconds(static_cast<int64_t>(options_.quantum_us * 1000));
}

bool Scheduler::DeviceTakes(const TenantState* pick, const Held& h, bool lc_active) const {
  // One tenant's held work on the device at a time.
  if (device_in_flight_ > 0 && on_device_ != pick) return false;
  if (h.preemptible) {
    // A second run may queue behind the first, claiming from the same counter, so that the
    // device does not idle while rgpud learns that the first ended; never after a stop.
    const bool chain = device_in_flight_ == 1 && h.in_flight == 1 && !h.stop_sent;
    return device_in_flight_ == 0 || chain;
  }
  return device_in_flight_ < (lc_active ? SliceDepthBesideLc(h) : kHeldDepth);
}

int Scheduler::SliceDepthBesideLc(const Held& h) const {
  // More than one only for slices that fit the slice length: a slice is never less than a
  // wave, and two waves of long work-groups queued would double an arrival's wait. An
  // unmeasured kernel's first slice measures it, alone.
  if (!h.sliceable) return 1;
  auto it = cost_ns_.find(h.req.sched_kernel);
  const bool fits =
      it != cost_ns_.end() && it->second > 0 && it->second <= options_.lc_slice_us * 1000.0;
  return fits ? static_cast<int>(std::max<uint32_t>(1, options_.lc_slice_depth)) : 1;
}

size_t Scheduler::SliceCount(const Held& h, bool beside_lc) {
  if (!h.sliceable) return 1;
  double piece_ns = 0;  // measured cost of one fine piece, 0 when unknown
  auto it = cost_ns_.find(h.req.sched_kernel);
  if (it != cost_ns_.end() && it->second > 0) piece_ns = std::max(it->second, 1.0);
  // Slices cannot be stopped: at most kMaxSliceUs even between best-effort tenants (a
  // latency-critical request after a pause waits for one), shorter beside an active one.
  double budget_ns = std::min(options_.quantum_us, kMaxSliceUs) * 1000.0;
  if (beside_lc) budget_ns = std::min(budget_ns, options_.lc_slice_us * 1000.0);
  size_t count = 1;  // the first piece measures the kernel
  if (!options_.force_slices && piece_ns != 0) count = std::max<size_t>(1, static_cast<size_t>(budget_ns / piece_ns));
  return std::min(count, h.total - h.next);
}

bool Scheduler::DispatchOne(std::unique_lock<std::mutex>& lk) {
  // Drop finished or failed launches at the heads of the queues; state may then have
  // changed, so the caller looks again.
  if (FinishOneOver(lk)) return true;
  const auto now = Now();
  const LcState lc = LatencyCriticalState(now);
  TenantState* pick = PickTenant(lc, now);
  if (!pick) return false;
  auto h = Candidate(*pick);  // PickTenant found it dispatchable
  if (!DeviceTakes(pick, *h, lc.active)) return false;
  const Dispatch d = Commit(*pick, h, lc, now);
  lk.unlock();
  if (h->preemptible)
    DispatchRun(h, d.seq, d.fresh_run, d.run);
  else
    DispatchSlices(h, d.first, d.count, d.seq);
  lk.lock();
  return true;
}

Scheduler::Dispatch Scheduler::Commit(TenantState& pick, const std::shared_ptr<Held>& h,
                                      const LcState& lc, Clock::time_point now) {
  Dispatched(*h);
  if (!h->ready || (h->gated && !h->gated_first)) {
    // Chained: it follows the launch before it on rgpud's queue (gated: on the application's).
    h->ready = true;
    pick.usage.chained++;
  }
  if (h->gated) pick.usage.gated++;
  if (h->gated_first) pick.usage.gated_first++;
  const bool beside_lc = lc.active && pick.priority != Priority::LatencyCritical;
  Dispatch d;
  d.first = h->next;
  d.count = SliceCount(*h, beside_lc);
  // A run with no other of its launch on the device starts afresh: its control write clears
  // any stop; a chained one goes on from the counter.
  d.fresh_run = h->preemptible && h->in_flight == 0;
  if (h->preemptible) {
    d.run = RunGroups(*h, d.first, beside_lc);
    d.count = d.run.groups;
    if (d.fresh_run) {
      h->stop_sent = false;
      h->run_started = now;
    }
  }
  h->next += d.count;
  h->in_flight++;
  pick.in_flight++;
  if (overran_kernels_.count(h->req.sched_kernel) > 0 && !h->overran) {
    // Its kernel's work overran its turn before (a persistent kernel): it goes on as such.
    h->overran = true;
    overran_++;
  }
  if (overran_ > 0) {
    // Work that overran its turn is on the device, and the GPU time-slices it with whatever
    // else is there: one tenant at a time would leave the others a share of one tenant among
    // them. Every waiting tenant's work goes on (one piece of each at a time), as under fifo.
    h->detached++;
  } else {
    device_in_flight_++;
    on_device_ = &pick;
  }
  if (pick.priority != Priority::LatencyCritical && (turn_ != &pick || !InTurn(now))) {
    turn_ = &pick;  // a best-effort tenant's turn begins (PickTenant)
    pick.usage.turns++;
    turn_start_ = now;
    turn_vtime_ = pick.vtime;
  }
  d.seq = ledger_.Submit();
  progress_at_ = now;
  if (h->preemptible) runs_.push_back(h);
  h->watch = beside_lc && options_.spin_feed ? Urgency::kSpin : Urgency::kUrgent;
  if (!h->preemptible) {
    // What it is expected to cost (a sliced launch's measured cost per fine piece; 0 unknown).
    auto c = cost_ns_.find(h->req.sched_kernel);
    const double expected_ns =
        h->sliceable && c != cost_ns_.end() ? c->second * static_cast<double>(d.count) : 0;
    launching_.push_back(SliceOnDevice{nullptr, h->req.context, expected_ns, h.get()});
  }
  return d;
}

void Scheduler::Launched(const Held* h, BkEvent* ev) {
  auto it = std::find_if(launching_.begin(), launching_.end(),
                         [h](const SliceOnDevice& s) { return s.held == h; });
  if (it == launching_.end()) return;
  if (ev) {
    it->event = ev;
    slice_events_.push_back(*it);
  }
  launching_.erase(it);
}

void Scheduler::DispatchSlices(std::shared_ptr<Held> h, size_t first, size_t count, uint64_t seq) {
  if (h->parked) {
    // Its session's thread, waiting in Park, puts it on the device (LaunchAtOnce); it is
    // counted on the device meanwhile (launching_).
    {
      std::lock_guard g(mu_);
      h->park_go = true;
      h->park_seq = seq;
    }
    park_cv_.notify_all();
    return;
  }
  if (h->gated) {
    // Its kernel waits on the application's queue: opening the gate puts it on the device.
    BkEvent* ev = h->app_event;
    {
      std::lock_guard g(mu_);
      backend_->Retain(proto::ObjType::Event, ev);
      Launched(h.get(), ev);
      h->gate_open = true;
    }
    backend_->SetUserEventStatus(h->gate, CL_COMPLETE);
    backend_->OnComplete(
        ev, [this, h, count, seq, ev](int32_t st) { SliceDone(h, count, seq, st, ev); }, h->watch);
    return;
  }
  std::vector<KernelArgValue> args = h->req.args;
  NDRange range = h->req.range;
  if (h->sliceable) {
    // Merge consecutive fine pieces: they are contiguous along the sliced dimension.
    slicer::Slice merged = h->plan.slices[first];
    const auto& last = h->plan.slices[first + count - 1];
    uint32_t d = h->plan.sliced_dim;
    merged.global[d] = last.offset[d] + last.global[d] - merged.offset[d];
    AppendHidden(args, slicer::HiddenArgForSlice(h->plan.launch, merged), nullptr);
    range = RangeOf(h->plan.launch, merged);
  } else if (h->req.slice_info) {
    AppendHidden(args, slicer::HiddenArgForWholeLaunch(), nullptr);
  }
  auto ev = backend_->Launch(h->req.exec_queue, h->req.sched_kernel, args, range, {});
  if (!ev.ok()) {
    {
      std::lock_guard g(mu_);
      Launched(h.get(), nullptr);
    }
    spdlog::debug("held launch failed: {}", ev.status().message());
    SliceDone(h, count, seq, ev.status().code() < 0 ? ev.status().code() : CL_OUT_OF_RESOURCES, nullptr);
    return;
  }
  backend_->Flush(h->req.exec_queue);
  {
    std::lock_guard g(mu_);
    backend_->Retain(proto::ObjType::Event, *ev);
    // DispatchOne described it in launching_; now it has its event.
    Launched(h.get(), *ev);
  }
  backend_->OnComplete(
      *ev, [this, h, count, seq, e = *ev](int32_t st) { SliceDone(h, count, seq, st, e); },
      h->watch);
  backend_->Release(proto::ObjType::Event, *ev);
}

// One run: write the control words, launch every group left, read the words back. The
// read's completion ends the run; the kernel's profiling times are its device time.
Scheduler::RunSize Scheduler::RunGroups(const Held& h, uint64_t first, bool beside_lc) {
  // A stop costs the device every group of the runs on it that has not started: each starts,
  // sees the flag and returns. For a launch of millions of small groups (a streaming kernel
  // over gigabytes) that drain took about as long as the work, so a run holds only about a
  // budget's worth of measured work: the quantum, or a latency-critical slice beside such a
  // tenant. Never less than a wave of the device; the first run of a kernel, unmeasured, is
  // two waves.
  size_t local = 1;
  for (cl_uint d = 0; d < h.run.launch.dims; ++d) local *= h.run.launch.local[d];
  const uint64_t wave = std::max<uint64_t>(1, wave_items_ / std::max<size_t>(local, 1));
  const uint64_t left = h.total - std::min(first, h.total);
  RunSize size{2 * wave, -1};
  auto it = group_cost_ns_.find(h.req.sched_kernel);
  if (it != group_cost_ns_.end() && it->second > 0) {
    const double budget_ns = 1000.0 * (beside_lc ? std::min(options_.quantum_us, options_.lc_run_us)
                                                 : options_.quantum_us);
    size.groups = std::max<uint64_t>(wave, static_cast<uint64_t>(budget_ns / it->second));
    // A wave of these work-groups lasts longer than the budget: each work-group does, and
    // a stop cannot cut one short. Narrow runs keep fewer on the device at once, each then
    // running faster, so that an arrival waits for one work-group's time at a low occupancy.
    auto n = narrow_.find(h.req.sched_kernel);
    if (beside_lc && options_.narrow_runs && n != narrow_.end() &&
        it->second * static_cast<double>(wave) > budget_ns) {
      size.narrow = options_.narrow_width ? NarrowIndex(options_.narrow_width) : n->second.Pick();
      if (size.narrow >= 0)
        size.groups = std::min<uint64_t>(wave, uint64_t{kNarrowWidths[size.narrow]} * compute_units_);
    }
  }
  size.groups = std::min(size.groups, left);
  return size;
}

int Scheduler::NarrowIndex(uint32_t width) {
  for (size_t i = 0; i < kNarrowWidths.size(); ++i)
    if (kNarrowWidths[i] == width) return static_cast<int>(i);
  return -1;
}

int Scheduler::NarrowRuns::Pick() const {
  for (int i : {1, 0, 2})
    if (run_ns[i] <= 0) return i;
  // Only widths whose runs last long enough that the commands around each run (its control
  // words, its launch) stay a small part of it.
  double best = 0;
  for (size_t i = 0; i < run_ns.size(); ++i)
    if (run_ns[i] >= kNarrowRunMinNs) best = std::max(best, kNarrowWidths[i] / run_ns[i]);
  for (size_t i = 0; i < run_ns.size(); ++i)
    if (run_ns[i] >= kNarrowRunMinNs && kNarrowWidths[i] / run_ns[i] >= 0.9 * best) return static_cast<int>(i);
  return -1;
}

void Scheduler::DispatchRun(std::shared_ptr<Held> h, uint64_t seq, bool fresh, RunSize size) {
  auto fail = [&](const Status& s) {
    spdlog::debug("preemptible run failed: {}", s.message());
    RunDone(h, seq, size, nullptr, s.code() < 0 ? s.code() : CL_OUT_OF_RESOURCES);
  };
  if (fresh) {
    // The control words restart from what is done; a chained run (queued behind one still on
    // the device) goes on claiming from the same counter, so it writes nothing.
    uint64_t limit = h->total;
    if (options_.force_runs) {
      // Tests: stop each run after a random number of work-groups, as a stop flag would.
      thread_local std::mt19937_64 rng(std::random_device{}());
      limit = h->done + 1 + rng() % (h->total - h->done);
    }
    h->run_limit = limit;
    const uint32_t words[4] = {0, static_cast<uint32_t>(h->done), static_cast<uint32_t>(limit), 0};
    std::memcpy(h->ctl_out->data(), words, sizeof words);
    auto written = backend_->Write(h->req.exec_queue, h->ctl, 0, h->ctl_out, {});
    if (!written.ok()) return fail(written.status());
    std::lock_guard g(mu_);
    if (h->ctl_written) backend_->Release(proto::ObjType::Event, h->ctl_written);
    h->ctl_written = *written;
  }
  std::vector<KernelArgValue> args = h->req.args;
  AppendHidden(args, h->run.HiddenArg(), h->ctl);
  const auto phys = h->run.Range(std::max<uint64_t>(size.groups, 1));
  NDRange range;
  range.dims = h->run.launch.dims;
  range.has_local = true;
  for (int i = 0; i < 3; ++i) {
    range.global[i] = phys.global[i];
    range.local[i] = phys.local[i];
  }
  auto kernel = backend_->Launch(h->req.exec_queue, h->req.sched_kernel, args, range, {});
  if (!kernel.ok()) return fail(kernel.status());
  auto read = backend_->Read(h->req.exec_queue, h->ctl, 0, slicer::kControlBytes, h->ctl_in, {});
  if (!read.ok()) {
    backend_->Release(proto::ObjType::Event, *kernel);
    return fail(read.status());
  }
  backend_->Flush(h->req.exec_queue);
  backend_->OnComplete(
      *read, [this, h, seq, size, k = *kernel](int32_t st) { RunDone(h, seq, size, k, st); },
      h->watch);
  backend_->Release(proto::ObjType::Event, *read);
}

void Scheduler::RunDone(std::shared_ptr<Held> h, uint64_t seq, RunSize size, BkEvent* kernel_event,
                        int32_t status) {
  ProfilingTimes t;
  bool timed = false;
  int32_t kernel_status = status;
  if (kernel_event) {
    kernel_status = std::min(kernel_status, backend_->EventStatus(kernel_event));
    auto p = backend_->Profiling(kernel_event);
    if (p.ok()) {
      t = *p;
      timed = true;
    }
    backend_->Release(proto::ObjType::Event, kernel_event);
  }
  uint32_t words[4] = {0, 0, 0, 0};
  std::memcpy(words, h->ctl_in->data(), sizeof words);
  std::lock_guard lk(mu_);
  // This run only: a chained run of the same launch may still be on the device.
  if (auto r = std::find(runs_.begin(), runs_.end(), h); r != runs_.end()) runs_.erase(r);
  Completed(seq, h->tenant, timed ? &t : nullptr);
  const uint64_t before = h->done;
  if (kernel_status >= 0) h->done = std::max<uint64_t>(before, std::min<uint64_t>(words[1], h->run_limit));
  else h->status = kernel_status;
  // With no run left on the device, the next one starts from what is done (a stopped run
  // claimed less than it was sized for); otherwise the chained run goes on from its claims.
  if (h->in_flight == 1) h->next = h->done;
  // A narrow run that ran all its work-groups measures its width.
  if (size.narrow >= 0 && timed && t.end > t.start && h->done - before == size.groups) {
    auto n = narrow_.find(h->req.sched_kernel);
    if (n != narrow_.end()) {
      double& ns = n->second.run_ns[size.narrow];
      const auto measured = static_cast<double>(t.end - t.start);
      if (ns <= 0 && lc_trace_)
        spdlog::info("narrow runs of kernel {}: {} work-groups per compute unit, {} in all: {:.0f} us",
                     static_cast<const void*>(h->req.sched_kernel), kNarrowWidths[size.narrow], size.groups,
                     measured / 1000);
      ns = Ewma(ns, measured);
    }
  }
  // A launch of one wave that ran whole in this run measures its wave as a slice would
  // (cost_ns_, which WholeWave asks). Without this, one slow sample (its cause not traced)
  // sent a kernel of 30 us waves to runs for good beside an LC tenant, and runs never
  // corrected it: its tenant kept 0.14 of native (H200, session 24, call 1).
  if (before == 0 && h->done == h->total && timed && t.end > t.start &&
      WorkItems(h->req.range) <= wave_items_)
    if (auto c = cost_ns_.find(h->req.sched_kernel); c != cost_ns_.end() && c->second > 0)
      c->second = Ewma(c->second, static_cast<double>(t.end - t.start));
  auto it = tenants_.find(h->tenant);
  if (it != tenants_.end()) {
    it->second.usage.runs++;
    // Stopped (by a flag, or by a test's limit) before the launch's end; a run that ended
    // at its own size is not preempted.
    if (h->done < h->total && kernel_status >= 0 && (h->stop_sent || h->run_limit < h->total))
      it->second.usage.preempted++;
    it->second.in_flight--;
  }
  PieceDone(*h, timed ? &t : nullptr, h->done - before);
}

void Scheduler::PieceDone(Held& h, const ProfilingTimes* t, uint64_t pieces) {
  if (t && t->end > t->start) {
    const double ns = static_cast<double>(t->end - t->start);
    // What one piece (a fine slice, or a work-group of a run) costs: sizes later slices.
    auto& costs = h.preemptible ? group_cost_ns_ : cost_ns_;
    auto c = costs.find(h.req.sched_kernel);
    if (pieces > 0 && c != costs.end()) c->second = Ewma(c->second, ns / pieces);
    // And per work-item (a piece's work-items: a slice's share, or a run's work-group), which
    // estimates a launch of any size (ExpectedLaunchNs). On a GPU a slice of less than a wave
    // takes a wave's time, so a kernel measured only so is overestimated at larger sizes,
    // never under.
    auto w = item_cost_ns_.find(h.req.sched_kernel);
    if (pieces > 0 && h.total > 0 && w != item_cost_ns_.end()) {
      const double piece_items =
          static_cast<double>(WorkItems(h.req.range)) / static_cast<double>(h.total);
      if (piece_items > 0)
        w->second = Ewma(w->second, ns / (static_cast<double>(pieces) * piece_items));
    }
    auto& times = *h.times;
    if (times.start == 0 || t->start < times.start) {
      times.start = t->start;
      times.queued = t->queued;
      times.submit = t->submit;
    }
    times.end = std::max(times.end, t->end);
  }
  // Nothing of ours left on the device: another tenant's held work may go.
  if (h.detached > 0) {
    if (--h.detached == 0 && h.overran) {
      h.overran = false;
      overran_--;
    }
  } else if (--device_in_flight_ == 0) {
    if (on_device_ == turn_) turn_idle_since_ = Now();
    on_device_ = nullptr;
  }
  h.in_flight--;
  progress_at_ = Now();
  Wake();
}

void Scheduler::SliceDone(std::shared_ptr<Held> h, size_t count, uint64_t seq, int32_t status, BkEvent* ev) {
  ProfilingTimes t;
  bool timed = false;
  if (ev) {
    auto p = backend_->Profiling(ev);
    if (p.ok()) {
      t = *p;
      timed = true;
    }
  }
  std::lock_guard lk(mu_);
  if (ev) {
    auto it = std::find_if(slice_events_.begin(), slice_events_.end(),
                           [ev](const SliceOnDevice& s) { return s.event == ev; });
    if (it != slice_events_.end()) {
      slice_events_.erase(it);
      backend_->Release(proto::ObjType::Event, ev);
    }
  }
  Completed(seq, h->tenant, timed ? &t : nullptr);
  auto it = tenants_.find(h->tenant);
  if (it != tenants_.end()) {
    TenantState& st = it->second;
    if (h->sliceable) st.usage.slices++;
    st.in_flight--;
  }
  h->done += count;
  if (status < 0) h->status = status;
  PieceDone(*h, timed ? &t : nullptr, h->sliceable ? count : 0);
}

void Scheduler::Finish(Held& h, int32_t status) {
  // Before its event completes (the gate below): start 0 if no piece's times could be read.
  h.times->MarkReady();
  if (h.gate) {
    if (!h.gate_open) backend_->SetUserEventStatus(h.gate, status < 0 ? status : CL_COMPLETE);
    backend_->Release(proto::ObjType::Event, h.gate);
  }
  if (h.app_event) backend_->Release(proto::ObjType::Event, h.app_event);
  backend_->Release(proto::ObjType::Kernel, h.req.sched_kernel);
  if (h.ctl) backend_->Release(proto::ObjType::Mem, h.ctl);
  if (h.ctl_written) backend_->Release(proto::ObjType::Event, h.ctl_written);
  for (auto& a : h.req.args) {
    if (a.kind == KernelArgValue::Kind::Mem && a.mem) backend_->Release(proto::ObjType::Mem, a.mem);
    if (a.kind == KernelArgValue::Kind::Sampler) backend_->Release(proto::ObjType::Sampler, a.sampler);
  }
  std::lock_guard lk(mu_);
  // A launch enqueued after this one has ended waits for the driver's word as before.
  if (auto it = last_held_.find(h.req.queue_serial); it != last_held_.end()) {
    const auto last = it->second.lock();
    if (!last || last.get() == &h) last_held_.erase(it);
  }
  Wake();
}

void Scheduler::CancelSession(uint64_t session_id) {
  std::unique_lock lk(mu_);
  for (auto& [key, st] : tenants_)
    for (auto& h : st.queue)
      if (h->req.session_id == session_id) {
        h->cancelled = true;
        if (h->status >= 0) h->status = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
      }
  StopRuns(session_id);  // its run on the device ends at its next work-group
  if (lc_trace_) lc_trace_->Summarise("session " + std::to_string(session_id) + " ended");
  Wake();
  // Wait until the dispatcher has dropped every launch of the session.
  cv_.wait(lk, [&] {
    for (auto& [key, st] : tenants_)
      for (auto& h : st.queue)
        if (h->req.session_id == session_id) return false;
    return true;
  });
  // Forget per-session tenants (anonymous sessions) so the table does not grow.
  auto it = tenants_.find("session-" + std::to_string(session_id));
  if (it == tenants_.end() && spdlog::should_log(spdlog::level::debug))
    for (const auto& [key, st] : tenants_)
      if (st.tenant && st.last_session == session_id)
        spdlog::debug("session {} ended; tenant {} so far: {}", session_id, key,
                      UsageLine(st.usage));
  if (it != tenants_.end()) {
    const SchedUsage& u = it->second.usage;
    spdlog::info("session {} scheduling ({}): {}", session_id, PolicyName(options_.policy),
                 UsageLine(u));
    if (on_device_ == &it->second) on_device_ = nullptr;
    if (turn_ == &it->second) turn_ = nullptr;
    tenants_.erase(it);
  }
  // What the soak watches (scripts/soak_vanishing_clients.sh): none of these may grow with
  // the number of sessions that came and went. The ending session's kernels still count.
  spdlog::debug(
      "scheduler tables: {} tenants, {} kernels' launch costs, {} kernels' slice costs, "
      "{} kernels' run costs, {} direct launches in flight, {} ledger intervals ({} "
      "unsettled, {} settled early), {} launches timed without QUEUED and SUBMIT",
      tenants_.size(), launch_cost_.size(), cost_ns_.size(), group_cost_ns_.size(), direct_.size(),
      ledger_.retained(), ledger_.unsettled(), ledger_.forced(), odd_times_);
}

void Scheduler::ForgetKernel(BkKernel* kernel) {
  std::lock_guard lk(mu_);
  launch_cost_.erase(kernel);
  cost_ns_.erase(kernel);
  group_cost_ns_.erase(kernel);
  item_cost_ns_.erase(kernel);
  narrow_.erase(kernel);
  overran_kernels_.erase(kernel);
}

void Scheduler::UpdateLaunchCost(const CostKey& key, double ns) {
  if (!key.measures) return;
  auto k = launch_cost_.find(key.kernel);
  if (k == launch_cost_.end()) return;  // forgotten while the launch ran
  auto c = k->second.find(key.items);
  if (c == k->second.end()) return;
  LaunchCost& cost = c->second;
  if (!cost.measured)
    spdlog::debug("launch cost of kernel {} over {} work-items: first measured {:.1f} us",
                  static_cast<const void*>(key.kernel), key.items, ns / 1e3);
  cost.ns = cost.measured ? Ewma(cost.ns, ns) : ns;
  cost.measured = true;
}

void Scheduler::LatencyCriticalRequest(bool begin) {
  if (options_.policy != Policy::Fair) return;
  std::lock_guard lk(mu_);
  if (begin) {
    lc_requests_++;
    return;
  }
  lc_requests_--;
  lc_served_ = Now();
  Wake();
}

std::vector<SchedUsage> Scheduler::Usage() {
  std::lock_guard lk(mu_);
  std::vector<SchedUsage> out;
  for (auto& [key, st] : tenants_) out.push_back(st.usage);
  return out;
}

}  // namespace rgpu::server
