// The scheduler's policies (server/scheduler/scheduler.h) against the fake backend's
// simulated device time (tests/support/fake_backend.h): which launches run directly, which are
// held, sliced or run preemptibly, in what order held work reaches the device, what a
// latency-critical launch does to the run on the device, and what each tenant is charged.
// The scheduler reads the fake's virtual clock, so device time, the quantum and the "active"
// window are simulated; nothing here waits for a real kernel.
#include <gtest/gtest.h>

#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <thread>

#include "server/scheduler/scheduler.h"
#include "tests/support/fake_backend.h"

namespace rgpu::server {
namespace {

using fake::LaunchRecord;

// One tenant's session as the session code would set it up: a context, the application's
// queue, rgpud's two queues for held launches, a kernel (its name is the tenant's, so that
// the fake's records say whose launch each was) and its scheduler instance.
struct TenantSetup {
  Tenant tenant;
  uint64_t session = 0;
  BkContext* ctx = nullptr;
  BkQueue *app = nullptr, *exec = nullptr, *ctl = nullptr;
  BkKernel *kernel = nullptr, *sched_kernel = nullptr;
  BkMem* arg = nullptr;
  slicer::KernelInfo info;
  uint64_t commands = 0;  // enqueued on `app` so far, as the session counts them
  // What the session says of the next launch: everything before it on `app` is complete.
  bool queue_done_before = false;
  // ...and nothing it has queued waits for its client (LaunchRequest::may_block).
  bool may_block = true;
};

class SchedulerTest : public ::testing::Test {
 protected:
  // 4 "cores" (split's threshold) and waves of 256 work-items.
  static constexpr uint32_t kCores = 4;
  static constexpr size_t kWave = 256;

  // `wave`: work-items the device runs at once; `units`: its compute units.
  void Start(SchedulerOptions o, size_t wave = kWave, uint32_t units = kCores) {
    // The simulated clock stands still while the device idles, so a wait for the next launch
    // of the tenant whose turn it is would never end: tests that want it say so and move the
    // clock themselves (TheDeviceWaitsBrieflyForTheTurnsNextLaunch).
    if (!keep_turn_wait_) o.turn_wait_us = 0;
    // A parked launch waits in the submitting thread, here the test's, for the dispatcher,
    // which may need the clock to move: tests that want it say so (ParkFirstTest).
    if (!keep_park_first_) o.park_first = false;
    dev_.Simulate();
    // Far from the epoch, as steady_clock is: the scheduler's "never" is the epoch.
    sched_ = std::make_unique<Scheduler>(&dev_, o, kCores, wave, units, [this] {
      return Scheduler::Clock::time_point(std::chrono::seconds(1000)) +
             std::chrono::nanoseconds(dev_.NowNs());
    });
  }

  void TearDown() override {
    dev_.RunUntilIdle();
    for (BkEvent* e : events_) dev_.Release(proto::ObjType::Event, e);
    sched_.reset();
    using proto::ObjType;
    for (auto& t : tenants_) {
      dev_.Release(ObjType::Mem, t->arg);
      dev_.Release(ObjType::Kernel, t->kernel);
      dev_.Release(ObjType::Kernel, t->sched_kernel);
      for (BkQueue* q : {t->app, t->exec, t->ctl}) dev_.Release(ObjType::Queue, q);
      dev_.Release(ObjType::Context, t->ctx);
    }
    // Everything the scheduler took (events, gates, control buffers, argument references)
    // it gave back.
    EXPECT_EQ(dev_.LiveObjects(), 0);
  }

  // `share`: the context of another tenant (a context group), else one of its own.
  TenantSetup& AddTenant(const std::string& id, double weight = 1.0,
                         Priority priority = Priority::BestEffort, BkContext* share = nullptr) {
    auto t = std::make_unique<TenantSetup>();
    t->tenant.id = id;
    t->tenant.weight = weight;
    t->tenant.priority = priority;
    t->session = tenants_.size() + 1;
    const int device = 0;
    if (share) dev_.Retain(proto::ObjType::Context, share);
    t->ctx = share ? share : *dev_.CreateContext(std::span<const int>(&device, 1));
    t->app = *dev_.CreateQueue(t->ctx, 0, CL_QUEUE_PROFILING_ENABLE);
    t->exec = *dev_.CreateQueue(t->ctx, 0, CL_QUEUE_PROFILING_ENABLE);
    t->ctl = *dev_.CreateQueue(t->ctx, 0, CL_QUEUE_PROFILING_ENABLE);
    BkProgram* p =
        *dev_.CreateProgramWithSource(t->ctx, "kernel void " + id + "(global float* a) {}");
    EXPECT_TRUE(dev_.BuildProgram(p, std::span<const int>(&device, 1), "").ok());
    t->kernel = *dev_.CreateKernel(p, id);
    t->sched_kernel = *dev_.CreateKernel(p, id);
    dev_.Release(proto::ObjType::Program, p);  // the kernels keep it
    t->arg = *dev_.CreateBuffer(t->ctx, CL_MEM_READ_WRITE, 1 << 16, {});
    t->info = slicer::KernelInfo{id, 1, false};
    tenants_.push_back(std::move(t));
    return *tenants_.back();
  }

  // A launch's own times (LaunchResult::times) once it has ended: its pieces' span, or start 0
  // where none of its pieces left times (`measured` false).
  static void ExpectTimesWhenEnded(const LaunchResult& r, bool measured) {
    ASSERT_TRUE(r.times);
    ASSERT_TRUE(r.times->WaitReady(std::chrono::milliseconds(500)));
    if (measured) {
      EXPECT_GT(r.times->start, 0u);
      EXPECT_GE(r.times->end, r.times->start);
    } else {
      EXPECT_EQ(r.times->start, 0u);
      EXPECT_EQ(r.times->end, 0u);
    }
  }

  // A 1D launch of `groups` work-groups of 64 work-items; `sliceable`: its program was
  // rewritten for slicing (slicer.h).
  LaunchResult Launch(TenantSetup& t, size_t groups, bool sliceable = true, bool want_event = true,
                      std::vector<BkEvent*> waits = {}, LaunchPipe* pipe = nullptr,
                      std::shared_ptr<PipedEvent> made = nullptr, BkQueue* twin = nullptr) {
    LaunchRequest req;
    req.session_id = t.session;
    req.tenant = &t.tenant;
    req.context = t.ctx;
    req.queue = t.app;
    req.queue_serial = t.session;  // one application queue per tenant here
    req.queue_command = ++t.commands;
    req.before_known = t.queue_done_before;  // and complete: no event to ask
    req.may_block = t.may_block;
    req.exec_queue = t.exec;
    req.ctl_queue = t.ctl;
    req.kernel = t.kernel;
    req.sched_kernel = t.sched_kernel;
    KernelArgValue a;
    a.kind = KernelArgValue::Kind::Mem;
    a.mem = t.arg;
    req.args.push_back(a);
    req.slice_info = sliceable ? &t.info : nullptr;
    req.range.dims = 1;
    req.range.has_local = true;
    req.range.global[0] = groups * 64;
    req.range.local[0] = 64;
    req.want_event = want_event;
    req.waits = std::move(waits);
    req.pipe = pipe;
    req.piped_event = std::move(made);
    req.twin = twin;
    auto r = sched_->Submit(std::move(req));
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (r.ok() && r->event) events_.push_back(r->event);
    return r.ok() ? *r : LaunchResult{};
  }

  // A launch made on a thread of its own, as a session makes one that may wait in Submit (it
  // parks, or waits for its queue's work to end).
  struct Submitter {
    LaunchResult result;
    std::atomic<bool> returned{false};
    std::thread thread;
    ~Submitter() {
      if (thread.joinable()) thread.join();
    }
  };
  std::unique_ptr<Submitter> LaunchOnAThread(TenantSetup& t, size_t groups,
                                             std::vector<BkEvent*> waits = {}) {
    auto s = std::make_unique<Submitter>();
    s->thread = std::thread([this, &t, groups, waits, raw = s.get()] {
      raw->result = Launch(t, groups, true, true, waits);
      raw->returned = true;
    });
    return s;
  }
  // Runs the device (its clock moves) until that launch has returned, then what is left.
  void RunUntilReturned(Submitter& s) {
    for (int i = 0; i < 2000 && !s.returned; ++i) {
      dev_.RunUntilIdle();
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    s.thread.join();
    dev_.RunUntilIdle();
  }

  bool keep_turn_wait_ = false;   // Start: keep SchedulerOptions::turn_wait_us
  bool keep_park_first_ = false;  // Start: keep SchedulerOptions::park_first

  std::vector<LaunchRecord> LaunchesOf(const TenantSetup& t) {
    std::vector<LaunchRecord> out;
    for (auto& l : dev_.Launches())
      if (l.kernel == t.tenant.id) out.push_back(l);
    return out;
  }

  // A best-effort tenant "b" launches `groups` work-groups of `group_ns` each while a
  // latency-critical tenant is active (it launched just before), on a device of `units`
  // compute units running `wave_groups` work-groups at once: b's runs, in order.
  std::vector<LaunchRecord> RunsBesideLatencyCritical(SchedulerOptions o, uint64_t wave_groups,
                                                      uint32_t units, uint64_t group_ns,
                                                      uint64_t groups) {
    Start(o, wave_groups * 64, units);
    auto& b = AddTenant("b");
    auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
    dev_.SetGroupCost("b", group_ns);
    Launch(lc, 4);
    dev_.RunUntilIdle();
    Launch(b, groups);  // the LC tenant is active: held
    dev_.RunUntilIdle();
    return LaunchesOf(b);
  }

  SchedUsage UsageOf(const TenantSetup& t) {
    for (auto& u : sched_->Usage())
      if (u.tenant == t.tenant.id) return u;
    return {};
  }

  // Charges settle as direct launches are harvested (every 20 ms of the dispatcher, in real
  // time): waits until the tenant's charge is within 1% of `ran_ns` (0: any), or has not
  // changed for 300 ms, so that a loaded machine delays the answer instead of cutting it.
  uint64_t SettledCharge(const TenantSetup& t, uint64_t ran_ns = 0) {
    uint64_t last = UINT64_MAX;
    int same = 0;
    for (int i = 0; i < 500 && same < 30; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const uint64_t now = UsageOf(t).device_ns;
      if (ran_ns && now > ran_ns * 0.99 && now < ran_ns * 1.01) return now;
      same = now == last ? same + 1 : 0;
      last = now;
    }
    return last;
  }

  // Every work-group of a held launch of `groups` ran exactly once across its runs.
  // Launch records in the order they started on the device (LaunchesOf: as enqueued).
  static std::vector<LaunchRecord> ByStart(std::vector<LaunchRecord> all) {
    std::stable_sort(all.begin(), all.end(), [](const LaunchRecord& x, const LaunchRecord& y) {
      return x.start_ns < y.start_ns;
    });
    return all;
  }
  static void ExpectEveryGroupOnce(const std::vector<LaunchRecord>& runs, uint64_t groups) {
    std::vector<int> seen(groups, 0);
    for (auto& r : runs)
      for (uint64_t g = r.first_group; g < r.first_group + r.claimed; ++g) {
        ASSERT_LT(g, groups);
        seen[g]++;
      }
    for (uint64_t g = 0; g < groups; ++g) EXPECT_EQ(seen[g], 1) << "work-group " << g;
  }

  fake::FakeBackend dev_;  // first: outlives the scheduler
  std::unique_ptr<Scheduler> sched_;
  std::vector<std::unique_ptr<TenantSetup>> tenants_;
  std::vector<BkEvent*> events_;
};

uint64_t DeviceNs(const std::vector<LaunchRecord>& launches, uint64_t until = UINT64_MAX) {
  uint64_t ns = 0;
  for (auto& l : launches)
    if (l.start_ns < until) ns += std::min(l.end_ns, until) - l.start_ns;
  return ns;
}

TEST(PolicyNames, SplitIsTheNameAndSeed001ItsAlias) {
  EXPECT_EQ(*ParsePolicy("split"), Policy::Split);
  EXPECT_EQ(*ParsePolicy("seed001"), Policy::Split);
  EXPECT_STREQ(PolicyName(Policy::Split), "split");
  EXPECT_EQ(*ParsePolicy("fifo"), Policy::Fifo);
  EXPECT_EQ(*ParsePolicy("fair"), Policy::Fair);
  EXPECT_FALSE(ParsePolicy("seed002").ok());
}

TEST_F(SchedulerTest, FifoLaunchesEverythingDirectlyAndWhole) {
  SchedulerOptions o;
  o.policy = Policy::Fifo;
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  for (int i = 0; i < 3; ++i) {
    Launch(a, 16);
    Launch(b, 16);
  }
  ASSERT_EQ(dev_.Launches().size(), 6u);
  for (auto& l : dev_.Launches()) {
    EXPECT_TRUE(l.queue == a.app || l.queue == b.app) << "held: went to rgpud's own queue";
    EXPECT_FALSE(l.sliced);
    EXPECT_FALSE(l.run);
    EXPECT_EQ(l.groups, 16u);
  }
}

TEST_F(SchedulerTest, SplitCutsALaunchIntoAlphaSlicesPerActiveTenant) {
  SchedulerOptions o;
  o.policy = Policy::Split;
  o.alpha = 2.0;
  Start(o);
  auto& a = AddTenant("a");
  Launch(a, 16);  // alone: whole
  ASSERT_EQ(LaunchesOf(a).size(), 1u);
  EXPECT_FALSE(LaunchesOf(a)[0].sliced);

  auto& b = AddTenant("b");
  Launch(b, 16);  // two tenants active: 2 x alpha = 4 slices, back to back on its own queue
  auto sliced = LaunchesOf(b);
  ASSERT_EQ(sliced.size(), 4u);
  uint64_t groups = 0;
  for (auto& l : sliced) {
    EXPECT_TRUE(l.sliced);
    EXPECT_EQ(l.queue, b.app);
    groups += l.groups;
  }
  EXPECT_EQ(groups, 16u);
  EXPECT_EQ(UsageOf(b).slices, 0u) << "counted as they complete";

  // A program that was not rewritten runs whole, and is counted as such.
  Launch(b, 16, /*sliceable=*/false);
  EXPECT_EQ(LaunchesOf(b).size(), 5u);
  EXPECT_FALSE(LaunchesOf(b).back().sliced);
  EXPECT_EQ(UsageOf(b).unsliceable, 1u);
  dev_.RunUntilIdle();
  EXPECT_EQ(UsageOf(b).slices, 4u);
}

TEST_F(SchedulerTest, FairTenantAloneIsNeverHeld) {
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  for (int i = 0; i < 5; ++i) Launch(a, 32);
  auto launches = LaunchesOf(a);
  ASSERT_EQ(launches.size(), 5u) << "every launch reached the device at once";
  for (auto& l : launches) {
    EXPECT_EQ(l.queue, a.app);
    EXPECT_FALSE(l.sliced);
    EXPECT_FALSE(l.run);
  }
}

TEST_F(SchedulerTest, LaunchesThroughAPipeReachTheDeviceBeforeAHeldLaunchOfTheirTenant) {
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  LaunchPipe pipe(dev_);
  // The first launches of a kernel get events until its cost is measured, then one in
  // sample_every (ChooseEvent); nobody else asked for them, so they go through the pipe too,
  // and the scheduler keeps their events from there for the accounting.
  for (int i = 0; i < 20; ++i) Launch(a, 1, true, /*want_event=*/false, {}, &pipe);
  dev_.RunUntilIdle();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // the dispatcher's harvest
  constexpr size_t kBurst = 300;
  for (size_t i = 0; i < kBurst; ++i) Launch(a, 1, true, /*want_event=*/false, {}, &pipe);
  EXPECT_EQ(pipe.Pushed(), 20 + kBurst) << "every launch went through the pipe";
  pipe.Wait();
  dev_.RunUntilIdle();
  const double ran = static_cast<double>(DeviceNs(LaunchesOf(a)));
  EXPECT_NEAR(static_cast<double>(SettledCharge(a, ran)) / ran, 1.0, 0.05)
      << "the burst was charged what it ran";
  Launch(b, 8);                           // b is active now
  Launch(a, 100, true, true, {}, &pipe);  // so this one is held: after the pipe's
  auto la = LaunchesOf(a);
  ASSERT_GE(la.size(), 20 + kBurst);
  for (size_t i = 0; i < 20 + kBurst; ++i)
    ASSERT_EQ(la[i].queue, a.app) << "launch " << i << " came after the held launch's work";
  dev_.RunUntilIdle();
  la = LaunchesOf(a);
  ASSERT_GT(la.size(), 20 + kBurst);
  for (size_t i = 20 + kBurst; i < la.size(); ++i) EXPECT_EQ(la[i].queue, a.exec);
  EXPECT_TRUE(pipe.TakeFailure().ok());
}

// Launches whose events the application asked for (pyopencl's, CLBlast's) go through the
// pipe too: each event arrives in its PipedEvent once the pipe's thread has made it, it ends
// when the device has run the launch, and the burst is charged what it ran although the
// scheduler read only a sample of those events.
TEST_F(SchedulerTest, LaunchesWithTheApplicationsEventsGoThroughAPipe) {
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  LaunchPipe pipe(dev_);
  constexpr size_t kBurst = 300;
  std::vector<std::shared_ptr<PipedEvent>> made;
  for (size_t i = 0; i < kBurst; ++i) {
    made.push_back(std::make_shared<PipedEvent>());
    auto r = Launch(a, 1, true, /*want_event=*/true, {}, &pipe, made.back());
    ASSERT_TRUE(r.piped) << "launch " << i << " did not go through the pipe";
    EXPECT_EQ(r.event, nullptr) << "its event comes through the pipe";
  }
  EXPECT_EQ(pipe.Pushed(), kBurst);
  pipe.Wait();
  for (size_t i = 0; i < kBurst; ++i) {
    ASSERT_TRUE(made[i]->event.ok()) << made[i]->event.status().message();
    ASSERT_NE(*made[i]->event, nullptr) << "launch " << i << " made no event";
    events_.push_back(*made[i]->event);
  }
  dev_.RunUntilIdle();
  for (size_t i = 0; i < kBurst; ++i) EXPECT_EQ(dev_.EventStatus(*made[i]->event), CL_COMPLETE);
  auto la = LaunchesOf(a);
  ASSERT_EQ(la.size(), kBurst);
  for (const auto& l : la) EXPECT_EQ(l.queue, a.app);
  const double ran = static_cast<double>(DeviceNs(la));
  EXPECT_NEAR(static_cast<double>(SettledCharge(a, ran)) / ran, 1.0, 0.05)
      << "the burst was charged what it ran";
  EXPECT_TRUE(pipe.TakeFailure().ok());
}

// Launches whose events only the application reads go on the queue's twin without profiling
// (launch_pipe.h, "Twins") once kTwinAfter of them came in a row, the others on the queue
// itself, and still run one after another in the order pushed (the simulated device overlaps
// kernels of two queues that nothing orders); after the pipe's Wait, a launch on the queue runs
// after the twin's last.
TEST_F(SchedulerTest, LaunchesOnAnUnprofiledTwinKeepTheirQueuesOrder) {
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  BkQueue* twin = *dev_.CreateQueue(a.ctx, 0, 0);
  LaunchPipe pipe(dev_);
  // Unmeasured (sampled, to measure them): the three sizes of the burst.
  for (size_t groups = 1; groups <= 3; ++groups) Launch(a, groups, true, false, {}, &pipe);
  pipe.Wait();
  dev_.RunUntilIdle();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // the dispatcher's harvest
  constexpr size_t kBurst = 400;
  std::vector<std::shared_ptr<PipedEvent>> made;
  for (size_t i = 0; i < kBurst; ++i) {
    // Every 29th launch without an event (it goes back on the queue), sizes varied.
    const bool with_event = i % 29 != 3;
    if (with_event) made.push_back(std::make_shared<PipedEvent>());
    auto r = Launch(a, 1 + i % 3, true, with_event, {}, &pipe, with_event ? made.back() : nullptr,
                    with_event ? twin : nullptr);
    ASSERT_EQ(r.piped, with_event) << "launch " << i;
  }
  pipe.Wait();
  Launch(a, 2, true, /*want_event=*/false);  // on the queue, from this thread
  dev_.RunUntilIdle();
  auto la = LaunchesOf(a);
  ASSERT_EQ(la.size(), kBurst + 4);
  size_t on_twin = 0;
  for (size_t i = 0; i < la.size(); ++i) {
    on_twin += la[i].queue == twin;
    EXPECT_TRUE(la[i].queue == twin || la[i].queue == a.app) << "launch " << i;
    EXPECT_TRUE(la[i].complete) << "launch " << i;
    if (i > 0) EXPECT_GE(la[i].start_ns, la[i - 1].end_ns) << "launch " << i << " overlapped";
  }
  EXPECT_EQ(la[kBurst + 2].queue, twin) << "the burst's last launch went on the twin";
  EXPECT_EQ(la.back().queue, a.app);
  EXPECT_EQ(pipe.OnTwins(), on_twin);
  // Not the first kTwinAfter with an event after one without (the last of them leaves the
  // twin an event to wait for), nor the accounting's samples.
  EXPECT_GT(on_twin, kBurst / 2);
  for (size_t i = 0; i < kBurst; ++i)
    if (i % 29 == 3)
      for (size_t k = 0; k <= LaunchPipe::kTwinAfter && i + k < kBurst; ++k)
        EXPECT_EQ(la[3 + i + k].queue, a.app) << "launch " << i + k << " of a short run";
  for (auto& m : made) {
    ASSERT_TRUE(m->event.ok());
    EXPECT_EQ(dev_.EventStatus(*m->event), CL_COMPLETE);
    events_.push_back(*m->event);
  }
  EXPECT_TRUE(pipe.TakeFailure().ok());
  dev_.Release(proto::ObjType::Queue, twin);
}

// The fake, counting the flushes of each queue.
class FlushCountingBackend : public fake::FakeBackend {
 public:
  Status Flush(BkQueue* q) override {
    {
      std::lock_guard lk(mu_);
      ++flushes_[q];
    }
    return FakeBackend::Flush(q);
  }
  int FlushesOf(BkQueue* q) {
    std::lock_guard lk(mu_);
    return flushes_[q];
  }

 private:
  std::mutex mu_;
  std::map<BkQueue*, int> flushes_;
};

// A flush the session asks of the pipe (a closed loop's clFlush) flushes the queue's twin
// only when a launch went on it since its last such flush: an idle twin flushed after every
// launch cost a tenant alone in a loop 0.1-0.2 of its rate on the H200.
TEST(LaunchPipeTest, FlushesATwinOnlyAfterLaunchesOnIt) {
  FlushCountingBackend dev;
  const int device = 0;
  BkContext* ctx = *dev.CreateContext(std::span<const int>(&device, 1));
  BkQueue* q = *dev.CreateQueue(ctx, 0, CL_QUEUE_PROFILING_ENABLE);
  BkQueue* twin = *dev.CreateQueue(ctx, 0, 0);
  BkProgram* p = *dev.CreateProgramWithSource(ctx, "kernel void k(global float* a) {}");
  ASSERT_TRUE(dev.BuildProgram(p, std::span<const int>(&device, 1), "").ok());
  BkKernel* k = *dev.CreateKernel(p, "k");
  NDRange range;
  range.dims = 1;
  range.global[0] = 64;
  std::vector<BkEvent*> events;
  std::mutex events_mu;
  auto keep = [&](Result<BkEvent*> e) {
    ASSERT_TRUE(e.ok());
    std::lock_guard lk(events_mu);
    events.push_back(*e);
  };
  {
    LaunchPipe pipe(dev);
    // A loop on the queue alone: the twin is never flushed.
    for (int i = 0; i < 5; ++i) {
      pipe.Push(q, k, {}, range, keep, nullptr);
      pipe.Flush(q, twin);
    }
    pipe.Wait();
    EXPECT_GE(dev.FlushesOf(q), 1);
    EXPECT_EQ(dev.FlushesOf(twin), 0);
    // Enough launches with events in a row that the last go on the twin: it is flushed.
    for (uint32_t i = 0; i < LaunchPipe::kTwinAfter + 3; ++i)
      pipe.Push(q, k, {}, range, keep, twin);
    pipe.Flush(q, twin);
    while (pipe.Done() < pipe.Pushed()) std::this_thread::yield();
    ASSERT_GT(pipe.OnTwins(), 0u);
    for (int i = 0; i < 50 && dev.FlushesOf(twin) == 0; ++i)  // by the pipe's thread
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_GE(dev.FlushesOf(twin), 1);
    pipe.Wait();  // (orders the queue behind the twin, flushing it)
    const int after = dev.FlushesOf(twin);
    // Back on the queue alone: not again.
    for (int i = 0; i < 5; ++i) {
      pipe.Push(q, k, {}, range, keep, nullptr);
      pipe.Flush(q, twin);
    }
    pipe.Wait();
    EXPECT_EQ(dev.FlushesOf(twin), after);
    EXPECT_TRUE(pipe.TakeFailure().ok());
  }
  for (BkEvent* e : events) dev.Release(proto::ObjType::Event, e);
  dev.Release(proto::ObjType::Kernel, k);
  dev.Release(proto::ObjType::Program, p);
  dev.Release(proto::ObjType::Queue, twin);
  dev.Release(proto::ObjType::Queue, q);
  dev.Release(proto::ObjType::Context, ctx);
  EXPECT_EQ(dev.LiveObjects(), 0);
}

TEST_F(SchedulerTest, FairHoldsSharedWorkAndRunsItPreemptibly) {
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  Launch(a, 32);               // alone: direct
  auto held = Launch(b, 100);  // a is active: held
  ASSERT_NE(held.event, nullptr);
  EXPECT_GT(dev_.EventStatus(held.event), CL_COMPLETE)
      << "the application's event waits for the work";
  for (auto& l : LaunchesOf(b)) {
    EXPECT_EQ(l.queue, b.exec) << "held work runs on rgpud's own queue, never the application's";
    EXPECT_TRUE(l.run);
  }
  dev_.RunUntilIdle();
  EXPECT_EQ(dev_.EventStatus(held.event), CL_COMPLETE);
  ExpectEveryGroupOnce(LaunchesOf(b), 100);
  EXPECT_GE(UsageOf(b).runs, 1u);
  EXPECT_EQ(UsageOf(b).preempted, 0u);
}

TEST_F(SchedulerTest, LatencyCriticalLaunchRunsAtOnceAndStopsTheRunOnTheDevice) {
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  Launch(a, 8);
  Launch(b, 1000);  // held; its first run goes on the device
  ASSERT_TRUE(dev_.WaitFor([&](auto& ls) {
    return std::any_of(ls.begin(), ls.end(), [](auto& l) { return l.kernel == "b" && l.run; });
  }));
  const size_t writes_before = dev_.Writes().size();
  Launch(lc, 4);
  auto lc_launches = LaunchesOf(lc);
  ASSERT_EQ(lc_launches.size(), 1u) << "a latency-critical launch is never held";
  EXPECT_EQ(lc_launches[0].queue, lc.app);
  // The stop flag: word 0 of b's control buffer, written on b's control queue.
  auto writes = dev_.Writes();
  bool stop = false;
  for (size_t i = writes_before; i < writes.size(); ++i)
    if (writes[i].queue == b.ctl && writes[i].offset == 0 && writes[i].bytes.size() >= 4 &&
        writes[i].bytes[0] == 1)
      stop = true;
  EXPECT_TRUE(stop) << "no stop flag written for the run on the device";
  dev_.RunUntilIdle();
  EXPECT_GE(UsageOf(b).preempted, 1u);
  ExpectEveryGroupOnce(LaunchesOf(b), 1000);
}

// A latency-critical tenant alone gets an event for a launch nobody asked one for only every
// sample_every-th time (16 here) once its kernel is measured; beside another active tenant (and
// with the option off), every launch has one: the dispatcher holds best-effort work back until it
// ends.
class LcEventsTest : public SchedulerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(LcEventsTest, LatencyCriticalLaunchesAloneSampleTheirEvents) {
  const bool sampled = GetParam();
  SchedulerOptions o;
  o.lc_sampled_events = sampled;
  o.sample_every = 16;
  Start(o);
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  auto count_events = [&] {
    size_t n = 0;
    for (auto& l : LaunchesOf(lc)) n += l.event;
    return n;
  };
  Launch(lc, 4, false, false);  // unmeasured: an event, to measure it
  dev_.RunUntilIdle();
  for (int i = 0; i < 32; ++i) Launch(lc, 4, false, false);
  dev_.RunUntilIdle();
  if (sampled) {
    EXPECT_LE(count_events(), 4u) << "an event on most launches of a tenant alone";
    EXPECT_GE(count_events(), 2u) << "its cost is still sampled";
  } else {
    EXPECT_EQ(count_events(), 33u);
  }
  // Beside an active best-effort tenant every launch has its event.
  auto& b = AddTenant("b");
  Launch(b, 8);
  const size_t before = count_events();
  for (int i = 0; i < 4; ++i) Launch(lc, 4, false, false);
  dev_.RunUntilIdle();
  EXPECT_EQ(count_events(), before + 4);
}

INSTANTIATE_TEST_SUITE_P(OnAndOff, LcEventsTest, ::testing::Bool());

// sample_every sets how often a short launch nobody asked an event for gets one: the first
// launch (unmeasured), then one in every sample_every.
class SampleEveryTest : public SchedulerTest, public ::testing::WithParamInterface<uint32_t> {};

TEST_P(SampleEveryTest, ShortLaunchesGetAnEventOnceInSampleEvery) {
  SchedulerOptions o;
  o.policy = Policy::Fifo;
  o.sample_every = GetParam();
  Start(o);
  auto& t = AddTenant("t");
  Launch(t, 4, false, false);  // unmeasured: an event, to measure it
  dev_.RunUntilIdle();
  constexpr uint32_t kLaunches = 128;
  for (uint32_t i = 0; i < kLaunches; ++i) Launch(t, 4, false, false);
  dev_.RunUntilIdle();
  size_t events = 0;
  for (auto& l : LaunchesOf(t)) events += l.event;
  EXPECT_EQ(events, 1 + kLaunches / GetParam());
}

INSTANTIATE_TEST_SUITE_P(Intervals, SampleEveryTest, ::testing::Values(8u, 64u));

// A tenant with no other tenant active samples the events of launches up to 2 ms too (a
// request's kernel), not only short ones; longer launches, and any beside another active tenant
// (whose kernels the ledger shares the device time with), have an event each.
TEST_F(SchedulerTest, LaunchesOfATenantAloneSampleTheirEventsUpToTwoMilliseconds) {
  SchedulerOptions o;
  o.policy = Policy::Fifo;  // every launch direct, also beside another tenant
  o.sample_every = 16;
  Start(o);
  auto& t = AddTenant("t");
  auto events_of = [&](const TenantSetup& x) {
    size_t n = 0;
    for (auto& l : LaunchesOf(x)) n += l.event;
    return n;
  };
  dev_.SetGroupCost("t", 100'000);  // 4 work-groups: a 400 us kernel
  Launch(t, 4, false, false);       // unmeasured: an event, to measure it
  dev_.RunUntilIdle();
  for (int i = 0; i < 32; ++i) Launch(t, 4, false, false);
  dev_.RunUntilIdle();
  EXPECT_EQ(events_of(t), 1u + 32 / 16) << "400 us launches of a tenant alone";
  size_t before = events_of(t);
  for (int i = 0; i < 8; ++i) Launch(t, 50, false, false);  // 5 ms each
  dev_.RunUntilIdle();
  EXPECT_EQ(events_of(t), before + 8) << "5 ms launches: every one has its event";
  auto& u = AddTenant("u");
  Launch(u, 1, false, false);
  before = events_of(t);
  for (int i = 0; i < 4; ++i) Launch(t, 4, false, false);
  dev_.RunUntilIdle();
  EXPECT_EQ(events_of(t), before + 4) << "400 us launches beside another active tenant";
}

// lc_narrow_width fixes the width: every narrow run is that many work-groups per unit.
TEST_F(SchedulerTest, NarrowWidthCanBeFixed) {
  SchedulerOptions o;
  o.narrow_width = 4;
  constexpr uint32_t kUnits = 4;
  constexpr uint64_t kWaveGroups = 32;  // 8 per unit at most
  auto runs = RunsBesideLatencyCritical(o, kWaveGroups, kUnits, 100'000, 400);
  ExpectEveryGroupOnce(runs, 400);
  size_t fixed = 0;
  for (size_t i = 1; i + 1 < runs.size(); ++i) {
    if (runs[i].groups == 2 * kWaveGroups) continue;  // sized before the kernel was measured
    EXPECT_EQ(runs[i].groups, 4 * kUnits) << "run " << i;
    ++fixed;
  }
  EXPECT_GE(fixed, 4u);
}

// A launch run in pieces answers clGetEventProfilingInfo with its pieces' first start and last
// end (LaunchTimes). Where no piece left times (a failed read; here an execution queue without
// profiling), its times must still be ready once it has ended, with start 0 so that the session
// answers with the event's own: before, a held launch's stayed unready (the session waited
// 200 ms, then answered CL_PROFILING_INFO_NOT_AVAILABLE for a complete command), and a launch
// sliced in place published a start after its end.
TEST_F(SchedulerTest, ALaunchWhosePiecesLeftNoTimesHasItsTimesReadyWhenItEnds) {
  SchedulerOptions o;
  o.force_slices = 2;  // every launch in two slices
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.Release(proto::ObjType::Queue, a.exec);
  a.exec = *dev_.CreateQueue(a.ctx, 0, 0);  // a's slices: no profiling
  dev_.Advance(1000);  // a device's clock never reads 0, which says "no times" here
  std::vector<LaunchResult> of_a, of_b;
  of_a.push_back(Launch(a, 16));  // alone
  dev_.RunUntilIdle();
  for (int i = 0; i < 3; ++i) {
    of_a.push_back(Launch(a, 16));
    of_b.push_back(Launch(b, 16));
  }
  dev_.RunUntilIdle();
  int held = 0;
  for (const auto& r : of_a) {
    held += r.held;
    ExpectTimesWhenEnded(r, false);
  }
  EXPECT_GT(held, 0) << "no launch of a was held: the held path went untested";
  for (const auto& r : of_b) ExpectTimesWhenEnded(r, true);
}

// The same for a launch sliced in place (policy split): with no slice's times its times say
// start 0, where they said a start after their end.
TEST_F(SchedulerTest, ALaunchSlicedInPlaceWithoutSliceTimesSaysSo) {
  SchedulerOptions o;
  o.policy = Policy::Split;
  o.force_slices = 2;
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.Release(proto::ObjType::Queue, a.app);
  a.app = *dev_.CreateQueue(a.ctx, 0, 0);  // slices in place go on the application's queue
  dev_.Advance(1000);  // a device's clock never reads 0, which says "no times" here
  auto ra = Launch(a, 16);
  auto rb = Launch(b, 16);
  dev_.RunUntilIdle();
  ExpectTimesWhenEnded(ra, false);
  ExpectTimesWhenEnded(rb, true);
}

TEST_F(SchedulerTest, DispatcherFeedsLatencyCriticalWorkFirst) {
  SchedulerOptions o;
  o.force_slices = 2;  // every launch held, in two slices: the dispatcher's order shows
  Start(o);
  auto& a = AddTenant("a");
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  for (int i = 0; i < 3; ++i) Launch(a, 16);
  ASSERT_TRUE(dev_.WaitFor([](auto& ls) { return !ls.empty(); }));
  Launch(lc, 16);
  dev_.RunUntilIdle();
  auto all = dev_.Launches();
  ASSERT_EQ(all.size(), 8u);
  // Only the slices already on the device when it arrived (a launch's two, at most) go first.
  size_t last_lc = 0, best_effort_before = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].kernel == "lc") last_lc = i;
  for (size_t i = 0; i < last_lc; ++i) best_effort_before += all[i].kernel == "a";
  EXPECT_LE(best_effort_before, 2u);
}

TEST_F(SchedulerTest, WeightedFairOrderSharesDeviceTimeByWeight) {
  SchedulerOptions o;
  o.quantum_us = 100;
  Start(o);
  auto& a = AddTenant("a", 1.0);
  auto& b = AddTenant("b", 3.0);
  // a's first launch runs directly (it is alone) and is charged once harvested; from then on
  // both tenants are active, and their launches are held and charged as they complete.
  Launch(a, 1);
  Launch(b, 1);
  dev_.RunUntilIdle();
  SettledCharge(a);
  // Launches of many runs each (3.2 ms of work, runs of about a quantum): the next launch of
  // an in-order queue is ready only once the last one has finished, and meanwhile the other
  // tenant gets the device, so launches shorter than a quantum would alternate whatever the
  // weights.
  for (int i = 0; i < 2; ++i) {
    Launch(a, 3200);
    Launch(b, 3200);
  }
  const uint64_t horizon =
      dev_.NowNs() + 4'000'000;  // b has 3 ms of it, a 1 ms: both still have work
  dev_.RunUntilIdle(horizon);
  const uint64_t from = horizon - 4'000'000;
  const double a_ns = DeviceNs(LaunchesOf(a), horizon) - DeviceNs(LaunchesOf(a), from),
               b_ns = DeviceNs(LaunchesOf(b), horizon) - DeviceNs(LaunchesOf(b), from);
  ASSERT_GT(a_ns, 0);
  EXPECT_NEAR(b_ns / a_ns, 3.0, 0.6) << "a " << a_ns << " ns, b " << b_ns << " ns; charged a "
                                     << UsageOf(a).device_ns << " b " << UsageOf(b).device_ns;
  // Held work is one tenant's at a time, so each is charged what it ran.
  dev_.RunUntilIdle();
  for (auto* t : {&a, &b}) {
    const double ran = static_cast<double>(DeviceNs(LaunchesOf(*t)));
    EXPECT_NEAR(static_cast<double>(SettledCharge(*t, ran)) / ran, 1.0, 0.05) << t->tenant.id;
  }
}

// Best-effort tenants take turns of about a quantum of device time, also when their launches
// run in slices, which cannot be stopped and so hold at most 2 ms each: on a GPU every change
// of tenant is a change of device context and a pause (docs/scheduling.md, "Sharing wastes no
// device"). Turns of a slice or two, or of several quanta, fail.
TEST_F(SchedulerTest, BestEffortTenantsTakeTurnsOfAQuantumEvenInSlices) {
  SchedulerOptions o;
  o.quantum_us = 8000;
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 5);  // tiny work-groups: slices, once measured (RunsPay)
  dev_.SetGroupCost("b", 5);
  Launch(a, 8);  // alone: direct
  Launch(b, 4096);  // held: runs, which measure the cost of a work-group
  Launch(a, 4096);
  dev_.RunUntilIdle();
  const size_t measured = dev_.Launches().size();
  for (int i = 0; i < 2; ++i) {
    Launch(a, 8'000'000);  // 40 ms of work each
    Launch(b, 8'000'000);
  }
  dev_.RunUntilIdle();
  auto all = dev_.Launches();
  all.erase(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(measured));
  std::sort(all.begin(), all.end(), [](auto& x, auto& y) { return x.start_ns < y.start_ns; });
  // Device time of each stretch of one tenant's launches, in order.
  std::vector<std::pair<std::string, uint64_t>> turns;
  for (auto& l : all) {
    if (turns.empty() || turns.back().first != l.kernel) turns.push_back({l.kernel, 0});
    turns.back().second += l.end_ns - l.start_ns;
  }
  ASSERT_GE(turns.size(), 6u) << "the tenants did not share the device";
  std::string seen;
  for (auto& t : turns) seen += t.first + " " + std::to_string(t.second / 1000) + " us, ";
  SCOPED_TRACE("turns: " + seen);
  int sliced = 0;
  for (auto& l : all) sliced += l.sliced;
  EXPECT_GT(sliced, 20) << "the launches were meant to run in slices";
  // The first turn and the last ones run out of work, and so may a turn that ends a launch
  // (the next launch of an in-order queue is ready only after it). The others last about a
  // quantum, plus the charges still on their way when a turn ends.
  std::vector<uint64_t> middle;
  for (size_t i = 1; i + 2 < turns.size(); ++i) middle.push_back(turns[i].second);
  std::sort(middle.begin(), middle.end());
  EXPECT_GE(middle[middle.size() / 2], 6'000'000u) << "median turn";
  EXPECT_LE(middle.back(), 20'000'000u) << "longest turn";
}

// The same with launches far shorter than a quantum, each of one wave (a closed loop of 30 us
// kernels): a tenant keeps its turn from launch to launch, where picking the least-used tenant
// at every launch alternated them launch by launch, each change a change of context on a GPU
// (about 140 us on the H200: two such tenants ran at 0.51 of fifo).
TEST_F(SchedulerTest, BestEffortTenantsOfShortLaunchesKeepTheirTurns) {
  SchedulerOptions o;
  o.quantum_us = 8000;
  o.direct_in_turn = false;  // the turn's launches held, as with a latency-critical tenant active
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 30'000);  // a launch of one wave (4 groups) takes 30 us
  dev_.SetGroupCost("b", 30'000);
  Launch(a, 4);
  Launch(b, 4);  // both active from here: held
  dev_.RunUntilIdle();
  const size_t before = dev_.Launches().size();
  const uint64_t turns_before = UsageOf(a).turns + UsageOf(b).turns;
  constexpr int kEach = 300;  // some four quanta each, as the simulated device runs them
  for (int i = 0; i < kEach; ++i) {
    Launch(a, 4);
    Launch(b, 4);
  }
  dev_.RunUntilIdle();
  auto all = dev_.Launches();
  all.erase(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(before));
  ASSERT_EQ(all.size(), 2u * kEach);
  std::sort(all.begin(), all.end(), [](auto& x, auto& y) { return x.start_ns < y.start_ns; });
  struct Turn {
    std::string tenant;
    int launches = 0;
    uint64_t from = 0, to = 0;  // simulated device time of its first start and last end
  };
  std::vector<Turn> turns;
  for (auto& l : all) {
    if (turns.empty() || turns.back().tenant != l.kernel)
      turns.push_back({l.kernel, 0, l.start_ns, 0});
    turns.back().launches++;
    turns.back().to = std::max(turns.back().to, l.end_ns);
  }
  std::string seen;
  for (auto& t : turns)
    seen += t.tenant + " " + std::to_string(t.launches) + " (" +
            std::to_string((t.to - t.from) / 1000) + " us), ";
  SCOPED_TRACE("turns: " + seen);
  // Turns of about a quantum each (without turns: 241 stretches of 5 launches, 0.6 ms).
  ASSERT_GE(turns.size(), 4u) << "each tenant had a turn and then another";
  EXPECT_LE(turns.size(), 30u);
  std::vector<uint64_t> middle;
  for (size_t i = 1; i + 2 < turns.size(); ++i) middle.push_back(turns[i].to - turns[i].from);
  std::sort(middle.begin(), middle.end());
  EXPECT_GE(middle[middle.size() / 2], 6'000'000u) << "median turn";
  // rgpud counts the turns it began: every stretch of one tenant's launches began one (a
  // tenant still a whole turn behind may begin a second in a row), and none ran out idle
  // (each always had a launch queued) but the one whose tenant's launches ran out first.
  const uint64_t counted = UsageOf(a).turns + UsageOf(b).turns - turns_before;
  EXPECT_GE(counted + 1, turns.size());
  EXPECT_LE(counted, 2 * turns.size());
  EXPECT_LE(UsageOf(a).turns_idle + UsageOf(b).turns_idle, 1u);
}

// A session about to wait in the driver for a held launch (whose wait would spin a CPU until
// the launch's turn comes) first waits for the scheduler to dispatch it (AwaitDispatch):
// that returns at once for what is not held, blocks while the launch waits for its turn,
// and returns once the turn has come, or at its limit.
TEST_F(SchedulerTest, AWaitForAHeldLaunchBlocksUntilItsTurnComes) {
  SchedulerOptions o;
  o.quantum_us = 8000;
  o.direct_in_turn = false;
  o.gate_at_once = false;
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 30'000);
  dev_.SetGroupCost("b", 30'000);
  auto first = Launch(a, 4);  // a alone: direct
  dev_.RunUntilIdle();
  Launch(b, 4);
  dev_.RunUntilIdle();                         // both active from here: held
  for (int i = 0; i < 400; ++i) Launch(a, 4);  // 12 ms of a's work: a's turn outlasts b's wait
  // a's turn has begun once a slice of it is on the device (it started and has not ended). Its
  // slices are enqueued behind gates before that, so a count of them says nothing: on a busy
  // host b's launch came before the dispatcher had begun a's turn, and went first.
  ASSERT_TRUE(dev_.WaitFor([](const auto& all) {
    return std::any_of(all.begin(), all.end(),
                       [](auto& r) { return r.kernel == "a" && r.start_ns > 0 && !r.complete; });
  }));
  auto held = Launch(b, 4);  // waits for a's quantum: the simulated clock stands still
  ASSERT_NE(held.event, nullptr);
  using C = std::chrono::steady_clock;
  BkEvent* not_held[] = {first.event};
  auto t0 = C::now();
  sched_->AwaitDispatch(not_held, nullptr, std::chrono::seconds(10));
  sched_->AwaitDispatch({}, nullptr, std::chrono::seconds(10));
  EXPECT_LT(C::now() - t0, std::chrono::seconds(1)) << "nothing of these is held";
  BkEvent* waited[] = {held.event};
  t0 = C::now();
  sched_->AwaitDispatch(waited, nullptr, std::chrono::milliseconds(50));
  EXPECT_GE(C::now() - t0, std::chrono::milliseconds(50)) << "held: waits out its limit";
  EXPECT_EQ(LaunchesOf(b).size(), 1u) << "b's launch still waits for its turn";
  std::atomic<bool> by_event{false}, by_queue{false};
  std::thread w1([&] {
    sched_->AwaitDispatch(waited, nullptr, std::chrono::seconds(30));
    by_event = true;
  });
  std::thread w2([&] {
    sched_->AwaitDispatch({}, b.app, std::chrono::seconds(30));
    by_queue = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(by_event.load());
  EXPECT_FALSE(by_queue.load());
  dev_.RunUntilIdle();  // a's turn ends, b's begins
  t0 = C::now();
  w1.join();
  w2.join();
  EXPECT_LT(C::now() - t0, std::chrono::seconds(10)) << "woken by the dispatch, not the limit";
  EXPECT_TRUE(by_event.load() && by_queue.load());
  EXPECT_EQ(LaunchesOf(b).size(), 2u);
  EXPECT_EQ(dev_.EventStatus(held.event), CL_COMPLETE);
}

// When the work of the tenant whose turn it is ends before its next launch comes (a closed
// loop's round trip), the device waits up to turn_wait_us for that launch rather than change
// context, and no longer: then the waiting tenant's turn begins.
TEST_F(SchedulerTest, TheDeviceWaitsBrieflyForTheTurnsNextLaunch) {
  SchedulerOptions o;
  o.turn_wait_us = 100;
  keep_turn_wait_ = true;
  o.direct_in_turn = false;  // the turn's launches held, as with a latency-critical tenant active
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 30'000);
  dev_.SetGroupCost("b", 30'000);
  a.queue_done_before = b.queue_done_before = true;  // closed loops: nothing left before a launch
  // Launches that have run (a gated one is on its queue, waiting, from the start).
  auto ran = [&](const TenantSetup& t) {
    auto l = LaunchesOf(t);
    return std::count_if(l.begin(), l.end(), [](auto& r) { return r.end_ns > 0; });
  };
  Launch(a, 4);  // alone: direct
  Launch(b, 4);  // a is active: held, and b's turn begins
  dev_.RunUntilIdle();
  ASSERT_EQ(ran(b), 1);
  Launch(a, 4);  // b's work has ended, and its turn waits for its next launch
  dev_.RunUntilIdle();
  EXPECT_EQ(ran(a), 1) << "a went while b's turn waited for its next launch";
  Launch(b, 4);  // it comes: b keeps the device
  dev_.RunUntilIdle();
  EXPECT_EQ(ran(b), 2);
  EXPECT_EQ(ran(a), 1);
  EXPECT_EQ(UsageOf(b).turns_idle, 0u);
  dev_.Advance(150'000);  // b's next launch does not come within the wait: a's turn begins
  dev_.RunUntilIdle();
  EXPECT_EQ(ran(a), 2);
  EXPECT_EQ(UsageOf(b).turns_idle, 1u) << "b's turn ended idle, once";
  EXPECT_GE(UsageOf(a).turns, 1u);
}

// The same wait after a direct launch of the turn counts from when that launch is expected to
// end, not from when it was made: a turn of 0.74 ms direct launches otherwise ended 100 us into
// each one, and with a context per tenant the device changed context at every launch (a loop
// one deep at 0.92 of fifo's total, H200).
TEST_F(SchedulerTest, TheTurnsWaitCountsFromTheExpectedEndOfItsDirectLaunches) {
  SchedulerOptions o;
  o.turn_wait_us = 100;
  keep_turn_wait_ = true;
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 30'000);
  dev_.SetGroupCost("b", 10'000);  // 64 work-groups: 0.64 ms
  a.queue_done_before = b.queue_done_before = true;
  auto ran = [&](const TenantSetup& t) {
    auto l = LaunchesOf(t);
    return std::count_if(l.begin(), l.end(), [](auto& r) { return r.end_ns > 0; });
  };
  Launch(a, 4);   // alone: direct
  Launch(b, 64);  // a is active: held (in runs that measure it), and b's turn begins
  dev_.RunUntilIdle();
  const auto b_ran = ran(b);
  ASSERT_GE(b_ran, 1);
  const size_t held = UsageOf(b).held;
  Launch(b, 64);  // its turn: direct, 0.64 ms expected
  ASSERT_EQ(UsageOf(b).held, held);
  Launch(a, 4);         // held: not its turn
  dev_.RunUntilIdle();  // b's launch ends 0.64 ms after it was made, 0.54 ms past a wait from then
  EXPECT_EQ(ran(b), b_ran + 1);
  EXPECT_EQ(ran(a), 1) << "a went before b's turn had waited its 100 us after b's direct launch";
  dev_.Advance(150'000);  // no next launch of b's within the wait: a's turn begins
  dev_.RunUntilIdle();
  EXPECT_EQ(ran(a), 2);
}

// In its turn a tenant's short launch of one wave goes to the device directly, as a tenant's
// alone does, once its cost is known to be small; not while a latency-critical tenant is
// active (a direct launch cannot be stopped).
TEST_F(SchedulerTest, InItsTurnAShortLaunchGoesDirectWhileNoLatencyCriticalTenantIsActive) {
  SchedulerOptions o;
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 30'000);
  dev_.SetGroupCost("b", 30'000);
  a.queue_done_before = b.queue_done_before = true;
  Launch(a, 4);  // alone: direct
  Launch(b, 4);  // a is active: held (its cost measured), and b's turn begins
  dev_.RunUntilIdle();
  const uint64_t held = UsageOf(b).held;
  ASSERT_EQ(held, 1u);
  Launch(b, 4);  // a is still active, but it is b's turn and the launch is short
  dev_.RunUntilIdle();
  EXPECT_EQ(UsageOf(b).held, held) << "held in its own turn";
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  Launch(lc, 4);
  dev_.RunUntilIdle();
  Launch(b, 4);  // a latency-critical tenant is active: held, as ever
  dev_.RunUntilIdle();
  EXPECT_EQ(UsageOf(b).held, held + 1);
  EXPECT_EQ(LaunchesOf(b).size(), 3u);
}

// With direct_beside_lc, such a launch also goes direct beside an active latency-critical
// tenant, between its requests: when it is expected to take at most lc_slice_us, none of the
// LC tenant's requests is being served or in flight, its guard is over, and the turn's direct
// launches on the device end within lc_slice_depth x lc_slice_us. Off, it is held.
class DirectBesideLcTest : public SchedulerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(DirectBesideLcTest, ShortLaunchesGoDirectBetweenRequests) {
  const bool on = GetParam();
  SchedulerOptions o;
  o.direct_beside_lc = on;  // lc_slice_us 50, lc_slice_depth 2, lc_guard_us 50
  Start(o);
  auto& b = AddTenant("b");
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  dev_.SetGroupCost("b", 10'000);  // 4 work-groups (a wave): 40 us
  b.queue_done_before = true;
  Launch(lc, 4);
  dev_.RunUntilIdle();  // served: the LC tenant stays active
  Launch(b, 4);         // held (its cost measured), and b's turn begins
  dev_.RunUntilIdle();
  uint64_t held = UsageOf(b).held;
  ASSERT_EQ(held, 1u);
  Launch(b, 4);  // between requests
  EXPECT_EQ(UsageOf(b).held, on ? held : held + 1);
  dev_.RunUntilIdle();
  held = UsageOf(b).held;
  Launch(b, 8);  // 80 us expected: longer than lc_slice_us
  EXPECT_EQ(UsageOf(b).held, held + 1) << "a launch longer than an LC slice went direct";
  dev_.RunUntilIdle();
  held = UsageOf(b).held;
  sched_->LatencyCriticalRequest(true);  // a request being served
  Launch(b, 4);
  EXPECT_EQ(UsageOf(b).held, held + 1) << "went direct while a request was served";
  dev_.RunUntilIdle();
  sched_->LatencyCriticalRequest(false);  // served now: the guard runs from here
  held = UsageOf(b).held;
  Launch(b, 4);
  EXPECT_EQ(UsageOf(b).held, held + 1) << "went direct within the guard";
  dev_.Advance(60'000);  // past the guard: the held launch goes on the device, and ends
  dev_.RunUntilIdle();
  held = UsageOf(b).held;
  // Three at once while the clock stands still: two of 40 us are 80 us ahead, a third would
  // make it 120, beyond two LC slices.
  for (int i = 0; i < 3; ++i) Launch(b, 4);
  EXPECT_EQ(UsageOf(b).held, on ? held + 1 : held + 3);
  dev_.RunUntilIdle();
  for (const auto& r : LaunchesOf(b)) EXPECT_TRUE(r.complete);
}

INSTANTIATE_TEST_SUITE_P(Option, DirectBesideLcTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "On" : "Off"; });

// Not only launches of one wave: in its turn, any launch expected to take no longer than a slice
// (2 ms, from its held slices' cost per work-item) goes direct, while the turn's direct launches
// already on the device are expected to end within two slices (4 ms). A loop one deep of 0.74 ms
// launches of many waves, held, ran at 0.90 of fifo's total (H200, 2 and 4 tenants). A launch
// expected to take longer, or beyond those 4 ms, is held as before.
TEST_F(SchedulerTest, InItsTurnALaunchNoLongerThanASliceGoesDirectUpToTwoSlicesAhead) {
  SchedulerOptions o;
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("b", 10'000);  // 64 work-groups (16 waves): 0.64 ms
  a.queue_done_before = b.queue_done_before = true;
  Launch(a, 4);   // alone: direct
  Launch(b, 64);  // a is active: held (in slices that measure it), and b's turn begins
  dev_.RunUntilIdle();
  const uint64_t held = UsageOf(b).held;
  ASSERT_EQ(held, 1u);
  Launch(b, 64);  // its turn, 0.64 ms expected
  dev_.RunUntilIdle();
  EXPECT_EQ(UsageOf(b).held, held)
      << "a launch of many waves shorter than a slice held in its turn";
  Launch(b, 256);  // 2.56 ms expected: longer than a slice
  dev_.RunUntilIdle();
  EXPECT_EQ(UsageOf(b).held, held + 1) << "a launch longer than a slice went direct";
  // Eight at once while the device's clock stands still: six of 0.64 ms are 3.84 ms ahead; the
  // seventh would make it 4.48 ms, and the eighth follows a held launch of its queue.
  const size_t before = LaunchesOf(b).size();
  for (int i = 0; i < 8; ++i) Launch(b, 64);
  EXPECT_EQ(LaunchesOf(b).size(), before + 6) << "direct launches beyond two slices ahead";
  EXPECT_EQ(UsageOf(b).held, held + 3);
  dev_.RunUntilIdle();
}

// A best-effort work-group that ignores stop flags (a persistent kernel polling for a word its
// host writes, as the lab's does) or a launch that cannot be stopped must not keep the other
// best-effort tenants off the device until it ends: after a quantum plus overrun_us without
// progress, the waiting tenants' work goes on the device beside it, all of them at once (the GPU
// time-slices contexts; one at a time beside it would leave them one tenant's share among them).
TEST_F(SchedulerTest, WorkThatOverrunsItsTurnDoesNotHoldOtherTenantsBack) {
  SchedulerOptions o;
  o.quantum_us = 8000;
  o.overrun_us = 25000;
  // a's one work-group runs as a preemptible run that ignores its stop, as a persistent
  // kernel's would; a launch this small would otherwise go as a slice (WholeWaveTest).
  o.whole_wave = false;
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  auto& c = AddTenant("c");
  dev_.SetGroupCost("a", 10'000'000'000);  // one work-group of 10 s: a stop cannot shorten it
  dev_.SetGroupCost("b", 5'000'000);       // b and c: 20 ms launches, longer than a quantum
  dev_.SetGroupCost("c", 5'000'000);
  Launch(b, 1);  // alone: direct
  dev_.RunUntilIdle();
  Launch(a, 1);  // b is active: held, and its run goes on the device
  ASSERT_TRUE(dev_.WaitFor([](auto& ls) {
    return std::any_of(ls.begin(), ls.end(), [](auto& l) { return l.kernel == "a" && l.run; });
  }));
  const uint64_t a_start = LaunchesOf(a).front().start_ns;
  auto held_b = Launch(b, 4);  // held: a has the device
  auto held_c = Launch(c, 4);
  // Simulated time passes in steps of 1 ms; the dispatcher looks at least every 20 ms of
  // real time.
  auto both_on = [&] { return LaunchesOf(b).size() >= 2 && !LaunchesOf(c).empty(); };
  for (int i = 0; i < 400 && !both_on(); ++i) {
    dev_.Advance(1'000'000);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(both_on()) << "b's and c's held launches waited for a's work-group to end";
  const auto a_run = LaunchesOf(a).front();
  const auto b_run = LaunchesOf(b)[1], c_run = LaunchesOf(c)[0];
  EXPECT_FALSE(a_run.complete) << "a's work-group is still running";
  EXPECT_GE(std::min(b_run.start_ns, c_run.start_ns), a_start + 33'000'000)
      << "they went on the device before a's turn and the allowance ended";
  EXPECT_LT(c_run.start_ns, b_run.start_ns + 2'000'000) << "b and c went on together, not in turns";
  EXPECT_LT(b_run.start_ns, c_run.start_ns + 2'000'000) << "b and c went on together, not in turns";
  dev_.RunUntilIdle(std::max(b_run.start_ns, c_run.start_ns) + 50'000'000);
  EXPECT_EQ(dev_.EventStatus(held_b.event), CL_COMPLETE)
      << "b's launch ended while a's work-group ran";
  EXPECT_EQ(dev_.EventStatus(held_c.event), CL_COMPLETE)
      << "c's launch ended while a's work-group ran";
  EXPECT_EQ(UsageOf(a).overruns, 1u);
  dev_.RunUntilIdle();
  EXPECT_EQ(LaunchesOf(a).size(), 1u)
      << "nothing more of a ran while its work-group was on the device";
  ExpectEveryGroupOnce(LaunchesOf(a), 1);

  // The same kernel launched again (a persistent kernel's next round) goes on as overrunning
  // work from the start: the next tenant's launch does not wait a quantum and the allowance.
  Launch(b, 1);
  dev_.RunUntilIdle(dev_.NowNs() + 1'000'000);
  Launch(a, 1);  // b is active: held
  ASSERT_TRUE(dev_.WaitFor([](auto& ls) {
    return std::count_if(ls.begin(), ls.end(), [](auto& l) { return l.kernel == "a" && l.run; }) ==
           2;
  }));
  const size_t b_before = LaunchesOf(b).size();
  const uint64_t submitted = dev_.NowNs();
  Launch(b, 4);  // held: a's run is in flight
  for (int i = 0; i < 400 && LaunchesOf(b).size() == b_before; ++i) {
    dev_.Advance(100'000);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GT(LaunchesOf(b).size(), b_before) << "b's launch waited for a's second run";
  EXPECT_LT(LaunchesOf(b).back().start_ns, submitted + 5'000'000)
      << "b waited as if a's kernel had never overrun its turn";
  EXPECT_FALSE(LaunchesOf(a).back().complete);
}

TEST_F(SchedulerTest, EndingSessionStopsItsRunAndFailsItsHeldLaunches) {
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  Launch(a, 8);
  std::vector<BkEvent*> held;
  for (int i = 0; i < 3; ++i) held.push_back(Launch(b, 1000).event);
  ASSERT_TRUE(dev_.WaitFor([](auto& ls) {
    return std::any_of(ls.begin(), ls.end(), [](auto& l) { return l.kernel == "b" && l.run; });
  }));
  // CancelSession returns once nothing of the session is on the device: the test's thread
  // moves the simulated clock meanwhile.
  auto stop_written = [&] {
    for (auto& w : dev_.Writes())
      if (w.queue == b.ctl && w.bytes.size() >= 4 && w.bytes[0] == 1) return true;
    return false;
  };
  std::atomic<bool> cancelled{false};
  std::thread cancel([&] {
    sched_->CancelSession(b.session);
    cancelled = true;
  });
  // The clock stands still (the run stays on the device) until the stop is written, however
  // slowly the cancelling thread gets there on a loaded machine; then it moves so that the
  // run can end.
  for (int i = 0; i < 5000 && !stop_written() && !cancelled; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  while (!cancelled) dev_.RunUntilIdle(UINT64_MAX, 1);
  cancel.join();
  EXPECT_TRUE(stop_written()) << "the session's run on the device was not stopped";
  for (BkEvent* e : held) EXPECT_LT(dev_.EventStatus(e), 0) << "a dropped launch's event must fail";
  uint64_t ran = 0;
  for (auto& l : LaunchesOf(b)) ran += l.claimed;
  EXPECT_LT(ran, 3000u) << "the dropped launches still ran";
}

TEST_F(SchedulerTest, RunsPayOnlyForWorkGroupsWorthClaiming) {
  SchedulerOptions o;
  o.direct_in_turn = false;  // b's second launch, short, would go direct in b's turn
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("b", 5);  // below kRunGroupMinNs: claiming costs more than stopping saves
  Launch(a, 8);
  Launch(b, 4096);
  dev_.RunUntilIdle();
  auto first = LaunchesOf(b);
  ASSERT_FALSE(first.empty()) << dev_.Launches().size() << " launches";
  EXPECT_TRUE(first[0].run) << "an unmeasured kernel runs preemptibly first";
  Launch(a, 8);  // a still active
  Launch(b, 4096);
  dev_.RunUntilIdle();
  auto all = LaunchesOf(b);
  ASSERT_GT(all.size(), first.size());
  for (size_t i = first.size(); i < all.size(); ++i) {
    EXPECT_FALSE(all[i].run) << "measured at 5 ns a work-group, it runs in slices";
    EXPECT_TRUE(all[i].sliced);
  }
}

// Beside an active latency-critical tenant, a best-effort kernel whose work-groups each take
// longer than --lc-run-us runs in narrow runs: a few work-groups per compute unit, as few
// as keep its measured rate (in the simulated device every width has the same rate, so the
// narrowest, one per unit, once each width was tried). Without an LC tenant, or with narrow
// runs off, runs stay at least a wave.
class NarrowRunsTest : public SchedulerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(NarrowRunsTest, LongWorkGroupsBesideLatencyCriticalWorkRunAFewPerComputeUnit) {
  const bool narrow = GetParam();
  SchedulerOptions o;
  o.narrow_runs = narrow;
  constexpr uint32_t kUnits = 4;
  constexpr uint64_t kWaveGroups = 16;  // of 64 work-items: 4 per compute unit at most
  // 100 us a work-group: a wave is 1.6 ms, over the 150 us LC slice.
  auto runs = RunsBesideLatencyCritical(o, kWaveGroups, kUnits, 100'000, 400);
  ASSERT_GT(runs.size(), 6u);
  EXPECT_EQ(runs[0].groups, 2 * kWaveGroups) << "an unmeasured kernel's first run is two waves";
  ExpectEveryGroupOnce(runs, 400);
  // Runs sized before their kernel was measured (a chained run may queue behind the first)
  // are two waves; the last run takes what is left.
  std::vector<uint64_t> widths;
  for (size_t i = 1; i + 1 < runs.size(); ++i)
    if (runs[i].groups != 2 * kWaveGroups) widths.push_back(runs[i].groups);
  ASSERT_GE(widths.size(), 4u);
  if (!narrow) {
    for (uint64_t g : widths) EXPECT_GE(g, kWaveGroups);
    return;
  }
  // Each width is tried (2, 1 and 4 work-groups per unit), then the narrowest stays.
  for (uint64_t w : {2 * kUnits, 1 * kUnits, 4 * kUnits})
    EXPECT_NE(std::find(widths.begin(), widths.end(), w), widths.end()) << "width " << w << " never tried";
  const auto last_wide = std::find_if(widths.rbegin(), widths.rend(), [&](uint64_t g) { return g != kUnits; });
  const size_t settled = static_cast<size_t>(last_wide - widths.rbegin());
  EXPECT_GE(settled, widths.size() / 2) << "runs after every width was measured should be one per unit";
  for (uint64_t g : widths) EXPECT_LE(g, kWaveGroups) << "a narrow run is never wider than a wave";
}

INSTANTIATE_TEST_SUITE_P(OnAndOff, NarrowRunsTest, ::testing::Bool());

// Narrow runs that would last under kNarrowRunMinNs are not used: work-groups of 10 us make
// a wave of 160 us (over the 150 us LC slice) but narrow runs of 40-160 us, where the
// commands around each run would cost too much of it. After each width was tried once, runs
// are ordinary again (at least a wave).
TEST_F(SchedulerTest, NarrowRunsTooShortToPayAreNotUsed) {
  constexpr uint32_t kUnits = 4;
  constexpr uint64_t kWaveGroups = 16;
  auto runs = RunsBesideLatencyCritical(SchedulerOptions{}, kWaveGroups, kUnits, 10'000, 2000);
  ExpectEveryGroupOnce(runs, 2000);
  std::vector<uint64_t> sizes;
  for (size_t i = 1; i + 1 < runs.size(); ++i) sizes.push_back(runs[i].groups);
  // The widths tried (at most a chained pair each), then ordinary runs only.
  const auto last_narrow = std::find_if(sizes.rbegin(), sizes.rend(), [&](uint64_t g) { return g < kWaveGroups; });
  const size_t ordinary_after = static_cast<size_t>(last_narrow - sizes.rbegin());
  EXPECT_LE(sizes.size() - ordinary_after, 6u) << "narrow runs past their trial";
  EXPECT_GE(ordinary_after, 3u);
}

// Beside an active latency-critical tenant, a best-effort launch that runs in slices keeps
// --lc-slice-depth of them on the device, each of at most --lc-slice-us: with one at a time
// the device idled while rgpud learned that a slice ended (docs/scheduling.md, "Session
// 14"). A kernel whose smallest slice, a wave, is longer than that keeps one: two queued
// would double an arrival's wait. Before the clock moves the dispatcher has put exactly the
// expected number of slices on the device.
struct SliceDepthCase {
  uint32_t depth;        // --lc-slice-depth
  uint64_t wave_groups;  // work-groups of 64 the device runs at once
  size_t expected;       // slices on the device at once
};

std::ostream& operator<<(std::ostream& os, const SliceDepthCase& c) {
  return os << "depth " << c.depth << ", waves of " << c.wave_groups << " work-groups";
}

class SliceDepthTest : public SchedulerTest,
                       public ::testing::WithParamInterface<SliceDepthCase> {};

TEST_P(SliceDepthTest, SlicesBesideLatencyCriticalWorkKeepTheDeviceFed) {
  const SliceDepthCase c = GetParam();
  SchedulerOptions o;
  o.lc_slice_depth = c.depth;
  Start(o, c.wave_groups * 64);
  auto& b = AddTenant("b");
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  constexpr uint64_t kGroupNs = 5;  // tiny work-groups: slices, not runs, once measured
  dev_.SetGroupCost("b", kGroupNs);
  constexpr uint64_t kGroups = 1 << 19;  // 2.6 ms of device time
  Launch(lc, 4);
  dev_.RunUntilIdle();
  // The first launch runs preemptibly and measures the work-groups (too small for runs); the
  // second runs in slices, its first slice alone, and measures them.
  for (int i = 0; i < 2; ++i) {
    Launch(b, kGroups);
    dev_.RunUntilIdle();
  }
  const size_t before = LaunchesOf(b).size();
  Launch(lc, 4);
  dev_.RunUntilIdle();
  Launch(b, kGroups);
  auto slices_on_device = [&](const std::vector<LaunchRecord>& all) {
    size_t n = 0, seen = 0;
    for (auto& l : all)
      if (l.kernel == "b" && seen++ >= before) ++n;
    return n;
  };
  ASSERT_TRUE(dev_.WaitFor([&](const auto& all) { return slices_on_device(all) >= c.expected; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(slices_on_device(dev_.Launches()), c.expected)
      << "slices put on the device before any ended";
  dev_.RunUntilIdle();
  auto all = LaunchesOf(b);
  ASSERT_GT(all.size(), before + 10);
  // A slice is at most the slice length, or one wave where a wave is longer.
  const double longest =
      std::max(o.lc_slice_us * 1000, static_cast<double>(c.wave_groups * kGroupNs)) * 1.05;
  uint64_t groups = 0;
  for (size_t i = before; i < all.size(); ++i) {
    EXPECT_TRUE(all[i].sliced);
    EXPECT_LE(static_cast<double>(all[i].end_ns - all[i].start_ns), longest)
        << "slice " << i - before;
    groups += all[i].groups;
  }
  EXPECT_EQ(groups, kGroups) << "the slices cover the launch";
}

// Waves of 4 work-groups (20 ns); waves of 20,000 (100 us, over the 50 us slice).
INSTANTIATE_TEST_SUITE_P(Depths, SliceDepthTest,
                         ::testing::Values(SliceDepthCase{1, 4, 1}, SliceDepthCase{2, 4, 2},
                                           SliceDepthCase{2, 20'000, 1}));

// In a context group a latency-critical launch waits for the short best-effort slices of its
// context on the device to end, and only then goes to the device: launched beside them, its
// work-groups were dealt out unevenly around theirs and it ran 1.7x its time alone (H200,
// docs/scheduling.md "Session 21"). In a context of its own it goes at once (the device
// switches contexts anyway), and so does a kernel shorter than the slices (it would wait
// longer than it gains). No best-effort slice goes on the device while it waits.
struct DrainCase {
  bool group;            // the LC tenant shares the BE tenant's context
  uint64_t lc_group_ns;  // its kernel's 4 work-groups' cost each, against two slices of 50 us
  double ratio = 1.0;    // SchedulerOptions::drain_ratio
  bool waits = false;    // the LC launch waits for the slices
};

std::ostream& operator<<(std::ostream& os, const DrainCase& c) {
  return os << (c.group ? "one context" : "two contexts") << ", " << 4 * c.lc_group_ns / 1000
            << " us kernel, ratio " << c.ratio;
}

class DrainTest : public SchedulerTest, public ::testing::WithParamInterface<DrainCase> {};

TEST_P(DrainTest, LatencyCriticalLaunchWaitsForShortSlicesOfItsContext) {
  const DrainCase c = GetParam();
  const bool group = c.group, waits = c.waits;
  SchedulerOptions o;
  o.drain_slices_us = 10e6;  // the simulated clock decides, not the limit
  o.drain_ratio = c.ratio;
  Start(o, 4 * 64);
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  auto& b = AddTenant("b", 1.0, Priority::BestEffort, group ? lc.ctx : nullptr);
  dev_.SetGroupCost("lc", c.lc_group_ns);
  dev_.SetGroupCost("b", 5);                           // tiny work-groups: slices, once measured
  constexpr uint64_t kGroups = 1 << 19;  // 2.6 ms of device time
  Launch(lc, 4);
  dev_.RunUntilIdle();
  for (int i = 0; i < 3; ++i) {  // measures its work-groups, then its slices
    Launch(b, kGroups);
    dev_.RunUntilIdle();
  }
  const size_t b_before = LaunchesOf(b).size(), lc_before = LaunchesOf(lc).size();
  Launch(b, kGroups);
  ASSERT_TRUE(dev_.WaitFor([&](const auto& all) {
    return static_cast<size_t>(std::count_if(all.begin(), all.end(), [](auto& l) {
             return l.kernel == "b";
           })) >= b_before + 2;
  }));
  std::atomic<bool> launched{false};
  std::thread request([&] {
    Launch(lc, 4);
    launched = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(launched.load(), !waits)
      << (waits ? "went beside its context's slices" : "waited for slices");
  const size_t b_queued = LaunchesOf(b).size();
  dev_.RunUntilIdle();
  request.join();
  auto lcs = LaunchesOf(lc), bs = LaunchesOf(b);
  ASSERT_EQ(lcs.size(), lc_before + 1);
  const LaunchRecord& req = lcs.back();
  uint64_t last_end = 0;
  for (size_t i = b_before; i < b_queued; ++i) last_end = std::max(last_end, bs[i].end_ns);
  if (waits) {
    EXPECT_GE(req.start_ns, last_end) << "started before the slices of its context ended";
    for (size_t i = b_queued; i < bs.size(); ++i)
      EXPECT_GE(bs[i].start_ns, req.end_ns) << "a slice went on while it waited or ran";
  } else {
    EXPECT_LT(req.start_ns, last_end) << "waited for slices";
  }
  uint64_t groups = 0;
  for (size_t i = b_before; i < bs.size(); ++i) groups += bs[i].groups;
  EXPECT_EQ(groups, kGroups) << "the slices cover the launch";
}

INSTANTIATE_TEST_SUITE_P(Cases, DrainTest,
                         ::testing::Values(DrainCase{false, 250'000},
                                           DrainCase{true, 250'000, 1.0, true},
                                           DrainCase{true, 250},
                                           // 150 us against 100 us of slices: waits at
                                           // ratio 1 (the default), not at 2
                                           DrainCase{true, 37'500, 1.0, true},
                                           DrainCase{true, 37'500, 2.0, false},
                                           DrainCase{true, 250'000, 2.0, true}));

// After a latency-critical request was served, best-effort work that can be cut or stopped
// resumes after --lc-guard-us (50 us), and so does a launch that runs whole in a context of
// its own (the device time-slices contexts). One that runs whole in the LC tenant's context
// (a context group) goes only after --lc-whole-guard-us (1 ms): an LC tenant that fell
// behind sends its next request within tens of microseconds, and a whole launch put on the
// device in that gap would hold it for the launch's length.
TEST_F(SchedulerTest, WholeLaunchesBesideLatencyCriticalWorkInItsContextWaitLonger) {
  Start(SchedulerOptions{});
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  auto& b = AddTenant("b", 1.0, Priority::BestEffort, lc.ctx);  // same context as lc
  auto& c = AddTenant("c");
  auto& d = AddTenant("d");
  Launch(lc, 4);
  dev_.RunUntilIdle();
  sched_->LatencyCriticalRequest(true);
  sched_->LatencyCriticalRequest(false);  // served now
  Launch(b, 64, /*sliceable=*/false);     // runs whole, in lc's context
  Launch(c, 64);                          // runs preemptibly
  Launch(d, 64, /*sliceable=*/false);     // runs whole, in a context of its own
  auto in = [](const std::vector<LaunchRecord>& all, const TenantSetup& t) {
    return std::any_of(all.begin(), all.end(),
                       [&](const LaunchRecord& l) { return l.kernel == t.tenant.id; });
  };
  auto launched = [&](const TenantSetup& t) { return in(dev_.Launches(), t); };
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(launched(b));
  EXPECT_FALSE(launched(c)) << "within --lc-guard-us";
  EXPECT_FALSE(launched(d)) << "within --lc-guard-us";
  dev_.Advance(100'000);  // past the 50 us guard
  EXPECT_TRUE(dev_.WaitFor([&](const auto& all) { return in(all, c) || in(all, d); }));
  dev_.RunUntilIdle(dev_.NowNs() + 300'000);  // one tenant's work on the device at a time
  EXPECT_TRUE(launched(c)) << "cut-able work resumes";
  EXPECT_TRUE(launched(d)) << "whole work in a context of its own resumes";
  EXPECT_LT(dev_.NowNs(), 1'000'000u);
  EXPECT_FALSE(launched(b)) << "a whole launch in lc's context before --lc-whole-guard-us";
  dev_.Advance(1'000'000);
  EXPECT_TRUE(dev_.WaitFor([&](const auto& all) { return in(all, b); }))
      << "past --lc-whole-guard-us";
  dev_.RunUntilIdle();
  ASSERT_FALSE(LaunchesOf(b).empty());
  EXPECT_GE(LaunchesOf(b)[0].start_ns, 1'000'000u);
}

// A held launch directly behind another on an in-order queue (nothing enqueued between them,
// and it waits for nothing but that launch's event) goes on rgpud's queue behind that one's
// last piece at once, without waiting for the driver to report the first complete through the
// application's queue; its work still starts only after the first's has ended (rgpud's queue
// is in order). With a command between them, or another event to wait for, it waits, as every
// held launch did before.
enum class Between { kNothing, kWrite, kWaitOnFirst, kWaitOnUserEvent };
class ChainTest : public SchedulerTest, public ::testing::WithParamInterface<Between> {};

TEST_P(ChainTest, HeldLaunchFollowsTheOneBeforeItOnItsQueue) {
  const Between what = GetParam();
  const bool chains = what == Between::kNothing || what == Between::kWaitOnFirst;
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 50'000'000);
  Launch(a, 4);                                    // alone: direct, and it keeps a active
  auto first = Launch(b, 4, /*sliceable=*/false);  // held (a is active); runs whole
  std::vector<BkEvent*> waits;
  BkEvent* user = nullptr;
  if (what == Between::kWrite) {
    // The application writes a buffer between the two launches: the second one may read it.
    auto data = std::make_shared<fake::ByteVec>(16, uint8_t{1});
    auto w = dev_.Write(b.app, b.arg, 0, data, {});
    ASSERT_TRUE(w.ok());
    events_.push_back(*w);
    b.commands++;
  } else if (what == Between::kWaitOnFirst) {
    waits.push_back(first.event);
  } else if (what == Between::kWaitOnUserEvent) {
    user = *dev_.CreateUserEvent(b.ctx);
    events_.push_back(user);
    waits.push_back(user);
  }
  auto second = Launch(b, 4, /*sliceable=*/false, true, waits);
  auto both_on = [&](const std::vector<LaunchRecord>& all) {
    return std::count_if(all.begin(), all.end(),
                         [](const LaunchRecord& l) { return l.kernel == "b"; }) == 2;
  };
  // The simulated clock stands still: the first launch cannot end.
  if (chains) {
    EXPECT_TRUE(dev_.WaitFor(both_on)) << "the second launch waited for the first to end";
    EXPECT_EQ(UsageOf(b).chained, 1u);
  } else {
    EXPECT_FALSE(dev_.WaitFor(both_on, 300))
        << "the second launch went on before what it waits for";
    EXPECT_EQ(UsageOf(b).chained, 0u);
  }
  EXPECT_GT(dev_.EventStatus(first.event), CL_COMPLETE);
  if (user) {
    dev_.RunUntilIdle();
    EXPECT_EQ(LaunchesOf(b).size(), 1u) << "the second launch went on before its user event";
    ASSERT_TRUE(dev_.SetUserEventStatus(user, CL_COMPLETE).ok());
  }
  dev_.RunUntilIdle();
  auto runs = LaunchesOf(b);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].queue, b.exec);
  EXPECT_EQ(runs[1].queue, b.exec);
  EXPECT_GE(runs[1].start_ns, runs[0].end_ns) << "the second launch ran beside the first";
  EXPECT_EQ(dev_.EventStatus(first.event), CL_COMPLETE);
  EXPECT_EQ(dev_.EventStatus(second.event), CL_COMPLETE);
}

// Sliced launches: the next launch's first slice fills the place the last one's first slice
// left on the device, while its second is still running.
TEST_F(SchedulerTest, SlicesOfTheNextLaunchFollowTheLastSliceOfThePreviousOne) {
  SchedulerOptions o;
  o.force_slices = 2;  // every launch held, in two slices
  Start(o);
  auto& b = AddTenant("b");
  dev_.SetGroupCost("b", 1'000'000);
  auto first = Launch(b, 8);
  Launch(b, 8);
  ASSERT_TRUE(dev_.WaitFor([](const auto& all) { return all.size() == 2; }));
  dev_.Step();  // the first slice ends; the second of the first launch is still running
  ASSERT_TRUE(dev_.WaitFor([](const auto& all) { return all.size() == 3; }))
      << "the next launch's slice waited for the whole of the one before";
  auto runs = LaunchesOf(b);
  EXPECT_FALSE(runs[1].complete);
  EXPECT_TRUE(runs[2].sliced);
  EXPECT_GT(dev_.EventStatus(first.event), CL_COMPLETE);
  dev_.RunUntilIdle();
  runs = LaunchesOf(b);
  ASSERT_EQ(runs.size(), 4u);
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_GE(runs[i].start_ns, runs[i - 1].end_ns);
  EXPECT_EQ(UsageOf(b).chained, 1u);
}

// A held launch of one wave or less goes as one slice, not a run (a stop would cut none of its
// work-groups, all on the device from the start), and the next launch of its queue follows it
// on the device before it ends, as slices do; with whole_wave off it is a run, and the next
// waits for its end.
class WholeWaveTest : public SchedulerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(WholeWaveTest, OneWaveLaunchIsASliceTheNextFollows) {
  const bool whole = GetParam();
  SchedulerOptions o;
  o.whole_wave = whole;
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 50'000'000);
  dev_.SetGroupCost("b", 1'000'000);
  Launch(a, 4);               // alone: direct, and it keeps a active
  auto first = Launch(b, 4);  // held: one wave (4 groups of 64 work-items)
  auto second = Launch(b, 4);
  const bool followed = dev_.WaitFor(
      [](const auto& all) {
        return std::count_if(all.begin(), all.end(), [](auto& l) { return l.kernel == "b"; }) == 2;
      },
      300);
  auto runs = LaunchesOf(b);
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs[0].run, !whole);
  EXPECT_EQ(followed, whole) << "the second launch went on the device "
                             << (whole ? "only after the first ended" : "behind a run");
  if (whole) {
    EXPECT_FALSE(runs[0].complete) << "the second launch was not queued behind the first";
  }
  dev_.RunUntilIdle();
  runs = ByStart(LaunchesOf(b));  // a gated second launch was enqueued before the first went on
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_GE(runs[1].start_ns, runs[0].end_ns);
  EXPECT_EQ(UsageOf(b).chained, whole ? 1u : 0u);
  EXPECT_EQ(dev_.EventStatus(first.event), CL_COMPLETE);
  EXPECT_EQ(dev_.EventStatus(second.event), CL_COMPLETE);
}

INSTANTIATE_TEST_SUITE_P(Option, WholeWaveTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "On" : "Off"; });

// A held launch of one slice directly behind another goes onto the application's queue at
// once, its kernel waiting for a gate that the dispatcher opens in its turn (gate_chained):
// its event is the kernel's own, and the three launches still run one after another, each
// once. Off: every slice goes on rgpud's queue.
class GateChainedTest : public SchedulerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(GateChainedTest, ChainedOneSliceLaunchWaitsOnTheApplicationsQueue) {
  const bool gate = GetParam();
  SchedulerOptions o;
  o.gate_chained = gate;
  o.gate_at_once = false;  // the gate itself (AtOnceTest: without one)
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 50'000'000);
  dev_.SetGroupCost("b", 1'000'000);
  Launch(a, 4);  // alone: direct, and it keeps a active
  std::vector<LaunchResult> held;
  for (int i = 0; i < 3; ++i) held.push_back(Launch(b, 4));  // held: one wave each
  if (gate) {
    // The simulated clock stands still: the first cannot end, and the others wait for it.
    ASSERT_TRUE(dev_.WaitFor([](const auto& all) {
      return std::count_if(all.begin(), all.end(), [](auto& l) { return l.kernel == "b"; }) == 3;
    }));
    for (auto& l : LaunchesOf(b))
      EXPECT_FALSE(l.queue == b.app && l.complete) << "a gated launch ran before its turn";
  }
  dev_.RunUntilIdle();
  auto runs = ByStart(LaunchesOf(b));  // gated ones were enqueued before the first went on
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].queue, b.exec);
  for (size_t i = 1; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].queue, gate ? b.app : b.exec) << "launch " << i;
    EXPECT_GE(runs[i].start_ns, runs[i - 1].end_ns)
        << "launch " << i << " ran beside the one before";
  }
  for (auto& r : runs) EXPECT_TRUE(r.complete && r.groups == 4 && !r.run);
  // Gated launches count as chained. Off, a launch counts only when the dispatcher reached it
  // before its start marker completed, which depends on thread timing (the clock moves in
  // RunUntilIdle): not asserted.
  if (gate) {
    EXPECT_EQ(UsageOf(b).chained, 2u);
  }
  EXPECT_EQ(UsageOf(b).gated, gate ? 2u : 0u);
  EXPECT_EQ(UsageOf(b).slices, 3u);
  for (auto& l : held) EXPECT_EQ(dev_.EventStatus(l.event), CL_COMPLETE);
}

INSTANTIATE_TEST_SUITE_P(Option, GateChainedTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "On" : "Off"; });

// A closed loop, each held launch of one wave enqueued once the one before it has completed:
// with nothing unfinished before it on its queue (as the session says) it goes onto the
// application's queue at once behind a gate (gate_first), as a chained one does; not when the
// session cannot say, nor with the option off.
class GateFirstTest : public SchedulerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(GateFirstTest, ClosedLoopLaunchWaitsOnTheApplicationsQueue) {
  const bool gate = GetParam();
  SchedulerOptions o;
  o.gate_first = gate;
  o.gate_at_once = false;  // the gate itself (AtOnceTest: without one)
  Start(o);
  auto& b = AddTenant("b");
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  dev_.SetGroupCost("b", 20'000);  // waves of 20 us: one slice each beside the LC tenant
  Launch(lc, 4);  // active from now on (b's launches take a millisecond in all): b's are held
  dev_.RunUntilIdle();
  constexpr int kLoops = 4;
  for (int i = 0; i < kLoops; ++i) {
    b.queue_done_before = i != 2;  // the third: the session cannot tell
    auto l = Launch(b, 4);
    if (gate && i != 2) {
      // The simulated clock stands still: the gated kernel is enqueued but has not run.
      ASSERT_TRUE(dev_.WaitFor([&](const auto& all) {
        return std::count_if(all.begin(), all.end(), [](auto& r) { return r.kernel == "b"; }) ==
               i + 1;
      }));
      EXPECT_EQ(LaunchesOf(b).back().queue, b.app);
      EXPECT_TRUE(LaunchesOf(b).back().gated);
    }
    dev_.RunUntilIdle();
    EXPECT_EQ(dev_.EventStatus(l.event), CL_COMPLETE) << "launch " << i;
  }
  auto runs = ByStart(LaunchesOf(b));
  ASSERT_EQ(runs.size(), static_cast<size_t>(kLoops));
  for (int i = 0; i < kLoops; ++i) {
    EXPECT_EQ(runs[i].queue, gate && i != 2 ? b.app : b.exec) << "launch " << i;
    EXPECT_TRUE(runs[i].complete && runs[i].groups == 4 && !runs[i].run) << "launch " << i;
  }
  EXPECT_EQ(UsageOf(b).gated, gate ? 3u : 0u);
  EXPECT_EQ(UsageOf(b).gated_first, gate ? 3u : 0u);
  EXPECT_EQ(UsageOf(b).chained, 0u);
  EXPECT_EQ(UsageOf(b).slices, static_cast<uint64_t>(kLoops));
}

INSTANTIATE_TEST_SUITE_P(Option, GateFirstTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "On" : "Off"; });

// A launch that would be gated first on its queue but cannot go at once (the turn is another
// tenant's) waits in the submitting thread until the dispatcher gives its tenant the device,
// then goes onto the application's queue at once, without a gate: no user event is made for
// it (park_first; on NVIDIA's OpenCL a context's first user event leaves a driver thread
// spinning until the context is released). Off, or on where the session has a user event of
// its client unset (a launch of its tenant ahead of this one might wait for the client, who
// could not set it while the session's thread is parked), it waits on its queue behind a gate.
enum class Parking { kOff, kOn, kOnClientWaits };

class ParkFirstTest : public SchedulerTest, public ::testing::WithParamInterface<Parking> {};

TEST_P(ParkFirstTest, LaunchWaitsInItsThreadForItsTenantsTurn) {
  const bool park = GetParam() == Parking::kOn;
  SchedulerOptions o;
  o.park_first = GetParam() != Parking::kOff;
  o.turn_wait_us = 100;
  keep_turn_wait_ = keep_park_first_ = true;
  o.direct_in_turn = false;  // b's turn holds its launches, as with a latency-critical tenant
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 30'000);
  dev_.SetGroupCost("b", 30'000);
  a.queue_done_before = b.queue_done_before = true;  // closed loops: nothing left before a launch
  a.may_block = GetParam() != Parking::kOnClientWaits;
  Launch(a, 4);                                      // alone: direct
  Launch(b, 4);                                      // a is active: held, and b's turn begins
  dev_.RunUntilIdle();
  const long user_events = dev_.UserEventsMade();
  // b's work has ended and its turn waits for its next launch: a's cannot go yet.
  auto second = LaunchOnAThread(a, 4);
  if (park) {
    for (int i = 0; i < 2000 && UsageOf(a).parked == 0; ++i)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    EXPECT_EQ(UsageOf(a).parked, 1u);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(second->returned) << "the launch went before its tenant's turn";
    EXPECT_EQ(LaunchesOf(a).size(), 1u) << "nothing of it reached the driver while it waited";
  } else {
    // Gated: enqueued behind its gate before the clock moves.
    for (int i = 0; i < 2000 && !second->returned; ++i)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    EXPECT_TRUE(second->returned);
  }
  dev_.Advance(150'000);  // b's next launch does not come within the wait: a's turn begins
  second->thread.join();
  dev_.RunUntilIdle();
  EXPECT_EQ(dev_.EventStatus(second->result.event), CL_COMPLETE);
  auto runs = LaunchesOf(a);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].queue, a.app);
  EXPECT_EQ(runs[1].gated, !park);
  EXPECT_TRUE(runs[1].complete && runs[1].groups == 4 && !runs[1].run);
  EXPECT_GE(runs[1].start_ns, LaunchesOf(b).back().end_ns) << "it ran beside b's turn";
  EXPECT_EQ(dev_.UserEventsMade() - user_events, park ? 0 : 1);
  EXPECT_EQ(UsageOf(a).user_events, park ? 0u : 1u);
  EXPECT_EQ(UsageOf(a).parked, park ? 1u : 0u);
  EXPECT_EQ(UsageOf(a).park_timeouts, 0u);
  EXPECT_EQ(UsageOf(a).gated_first, 1u);
}

INSTANTIATE_TEST_SUITE_P(Option, ParkFirstTest,
                         ::testing::Values(Parking::kOff, Parking::kOn, Parking::kOnClientWaits),
                         [](const auto& info) {
                           return info.param == Parking::kOff  ? "Off"
                                  : info.param == Parking::kOn ? "On"
                                                               : "OnClientWaits";
                         });

// Two in flight: the second, chained behind the first while that is on the device, and not
// going at once, waits for the first to end and then parks as a first one does, where a gate
// would make a user event (park_first). So does one whose wait list names the first's event
// (libraries chain kernels by events).
class ChainedParkTest : public SchedulerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(ChainedParkTest, LaunchWaitsForTheOneBeforeItThenParks) {
  const bool by_event = GetParam();
  SchedulerOptions o;
  o.gate_at_once = false;  // nothing goes at once: every launch that would be gated parks
  o.park_first = true;
  keep_park_first_ = true;
  Start(o);
  auto& b = AddTenant("b");
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  dev_.SetGroupCost("b", 10'000);
  Launch(lc, 4);  // active from now on: b's launches are held
  dev_.RunUntilIdle();
  const long user_events = dev_.UserEventsMade();
  b.queue_done_before = true;
  auto first = Launch(b, 4);  // parks; the dispatcher lets it go at once
  ASSERT_EQ(LaunchesOf(b).size(), 1u);
  b.queue_done_before = false;
  auto second =
      LaunchOnAThread(b, 4,
                      by_event ? std::vector<BkEvent*>{first.event} : std::vector<BkEvent*>{});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(second->returned) << "it went before the launch before it ended";
  RunUntilReturned(*second);  // the first ends (the clock moves); then the second goes
  EXPECT_EQ(dev_.EventStatus(first.event), CL_COMPLETE);
  EXPECT_EQ(dev_.EventStatus(second->result.event), CL_COMPLETE);
  auto runs = ByStart(LaunchesOf(b));
  ASSERT_EQ(runs.size(), 2u);
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].queue, b.app) << "launch " << i;
    EXPECT_FALSE(runs[i].gated) << "launch " << i;
    EXPECT_TRUE(runs[i].complete && runs[i].groups == 4 && !runs[i].run) << "launch " << i;
  }
  EXPECT_GE(runs[1].start_ns, runs[0].end_ns);
  EXPECT_EQ(dev_.UserEventsMade(), user_events);
  EXPECT_EQ(UsageOf(b).parked, 2u);
  EXPECT_EQ(UsageOf(b).parked_chained, 1u);
  EXPECT_EQ(UsageOf(b).parked_settled, 0u);
  EXPECT_EQ(UsageOf(b).park_timeouts, 0u);
}

INSTANTIATE_TEST_SUITE_P(WaitList, ChainedParkTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "ByEvent" : "InOrder"; });

// A held launch behind a direct launch of its queue still in flight (its tenant's turn ended
// between them): with park_first, where its session may block on the device's work, it waits
// for its queue's work to end and then parks, where the markers' path would make a user event
// (one for its done marker); where the session may not block (a user event of the client is
// unset), it takes the markers' path.
class SettleThenParkTest : public SchedulerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(SettleThenParkTest, LaunchBehindADirectOneInFlight) {
  const bool may_block = GetParam();
  SchedulerOptions o;
  o.gate_at_once = false;  // nothing goes at once: a launch that would be gated parks
  o.park_first = true;
  keep_park_first_ = true;
  Start(o);
  auto& b = AddTenant("b");
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  dev_.SetGroupCost("b", 10'000);
  auto first = Launch(b, 4);  // alone: direct, and still on the device
  ASSERT_FALSE(first.held);
  Launch(lc, 4);  // active from now on: b's next launch is held
  const long user_events = dev_.UserEventsMade();
  b.may_block = may_block;  // the session cannot tell what is before it (before_known false)
  auto second = LaunchOnAThread(b, 4);
  if (may_block) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(second->returned) << "it went on before the direct launch ended";
    EXPECT_EQ(LaunchesOf(b).size(), 1u);
  }
  RunUntilReturned(*second);
  EXPECT_TRUE(second->result.held);
  EXPECT_EQ(dev_.EventStatus(first.event), CL_COMPLETE);
  EXPECT_EQ(dev_.EventStatus(second->result.event), CL_COMPLETE);
  auto runs = ByStart(LaunchesOf(b));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs[1].complete && runs[1].groups == 4 && !runs[1].run);
  EXPECT_GE(runs[1].start_ns, runs[0].end_ns);
  EXPECT_EQ(runs[1].queue, may_block ? b.app : b.exec) << "parked: on the application's queue";
  EXPECT_EQ(dev_.UserEventsMade() - user_events, may_block ? 0 : 1);
  EXPECT_EQ(UsageOf(b).user_events, may_block ? 0u : 1u);
  EXPECT_EQ(UsageOf(b).parked, may_block ? 1u : 0u);
  EXPECT_EQ(UsageOf(b).parked_settled, may_block ? 1u : 0u);
  EXPECT_EQ(UsageOf(b).park_timeouts, 0u);
}

INSTANTIATE_TEST_SUITE_P(MayBlock, SettleThenParkTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "On" : "Off"; });

// Such a launch (first on its queue, or chained behind the one before) that the dispatcher
// would put on the device the moment it is queued goes there from the submitting thread,
// without a gate (gate_at_once): a closed loop, then two launches in flight, the second
// following the first on the application's queue; nothing goes at once with the option off.
class AtOnceTest : public SchedulerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(AtOnceTest, LaunchTheDispatcherWouldTakeGoesWithoutAGate) {
  const bool at_once = GetParam();
  SchedulerOptions o;
  o.gate_at_once = at_once;
  o.direct_beside_lc = false;  // held: b's launches of 40 us would go direct between requests
  Start(o);
  auto& b = AddTenant("b");
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  dev_.SetGroupCost("b", 10'000);  // launches of 40 us: slices two deep beside the LC tenant
  Launch(lc, 4);
  dev_.RunUntilIdle();
  b.queue_done_before = true;
  for (int i = 0; i < 3; ++i) {  // a closed loop: each complete before the next
    auto l = Launch(b, 4);
    dev_.RunUntilIdle();
    EXPECT_EQ(dev_.EventStatus(l.event), CL_COMPLETE) << "launch " << i;
  }
  // Two in flight: the second directly behind the first, the clock standing still.
  auto first = Launch(b, 4);
  b.queue_done_before = false;
  auto second = Launch(b, 4);
  ASSERT_TRUE(dev_.WaitFor([](const auto& all) {
    return std::count_if(all.begin(), all.end(), [](auto& r) { return r.kernel == "b"; }) == 5;
  }));
  dev_.RunUntilIdle();
  EXPECT_EQ(dev_.EventStatus(first.event), CL_COMPLETE);
  EXPECT_EQ(dev_.EventStatus(second.event), CL_COMPLETE);
  auto runs = ByStart(LaunchesOf(b));
  ASSERT_EQ(runs.size(), 5u);
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].queue, b.app) << "launch " << i;
    EXPECT_EQ(runs[i].gated, !at_once) << "launch " << i;
    EXPECT_TRUE(runs[i].complete && runs[i].groups == 4 && !runs[i].run) << "launch " << i;
    if (i > 0) EXPECT_GE(runs[i].start_ns, runs[i - 1].end_ns) << "launch " << i;
  }
  EXPECT_EQ(UsageOf(b).at_once, at_once ? 5u : 0u);
  EXPECT_EQ(UsageOf(b).gated, 5u);
  EXPECT_EQ(UsageOf(b).chained, 1u);
  EXPECT_EQ(UsageOf(b).slices, 5u);
  // Charged what it ran, as any slice.
  const double simulated = static_cast<double>(DeviceNs(LaunchesOf(b)));
  EXPECT_NEAR(static_cast<double>(SettledCharge(b, simulated)) / simulated, 1.0, 0.01);
}

INSTANTIATE_TEST_SUITE_P(Option, AtOnceTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "On" : "Off"; });

// Beside an active latency-critical tenant, launches of one wave go as slices while the
// wave is short (the first measures it), but a wave of long work-groups goes in narrow runs,
// which end sooner than the wave would; short ones stay slices.
class OneWaveBesideLcTest : public SchedulerTest, public ::testing::WithParamInterface<uint64_t> {};

TEST_P(OneWaveBesideLcTest, LongWorkGroupsGoInNarrowRunsShortOnesInSlices) {
  constexpr uint32_t kUnits = 4;
  constexpr uint64_t kWaveGroups = 16;  // of 64 work-items
  const uint64_t group_ns = GetParam();
  const SchedulerOptions o;
  const bool long_groups = static_cast<double>(group_ns * kWaveGroups) > o.lc_run_us * 1000;
  Start(o, kWaveGroups * 64, kUnits);
  auto& b = AddTenant("b");
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  dev_.SetGroupCost("b", group_ns);
  Launch(lc, 4);
  dev_.RunUntilIdle();
  for (int i = 0; i < 8; ++i) {
    auto l = Launch(b, kWaveGroups);  // the LC tenant is active: held
    dev_.RunUntilIdle();
    EXPECT_EQ(dev_.EventStatus(l.event), CL_COMPLETE);
  }
  auto all = LaunchesOf(b);
  ASSERT_FALSE(all.empty());
  EXPECT_FALSE(all.front().run) << "the first launch, unmeasured, is a slice";
  size_t narrow = 0, runs = 0;
  for (auto& l : all) {
    runs += l.run;
    narrow += l.run && l.groups < kWaveGroups;
  }
  if (long_groups) {
    EXPECT_GE(narrow, 3u) << "no narrow runs for a wave of long work-groups";
  } else {
    EXPECT_EQ(runs, 0u) << "a short wave went as runs";
    EXPECT_EQ(all.size(), 8u);
  }
}

INSTANTIATE_TEST_SUITE_P(GroupNs, OneWaveBesideLcTest, ::testing::Values(100'000u, 5'000u));

// One slow wave (on a GPU: a launch that met a context switch) sends the kernel's next
// launches to runs beside an LC tenant; the runs measure the wave again, and once it is short
// it goes back to slices. Before, the runs never corrected it and it stayed in runs for good.
TEST_F(SchedulerTest, OneSlowWaveDoesNotKeepAKernelInRuns) {
  constexpr uint32_t kUnits = 4;
  constexpr uint64_t kWaveGroups = 16;  // of 64 work-items
  SchedulerOptions o;
  o.direct_beside_lc = false;  // waves of 32 us would go direct between the LC's requests
  Start(o, kWaveGroups * 64, kUnits);
  auto& b = AddTenant("b");
  auto& lc = AddTenant("lc", 1.0, Priority::LatencyCritical);
  Launch(lc, 4);  // active from now on (the simulated launches take milliseconds in all)
  dev_.RunUntilIdle();
  auto launch_b = [&](int n) {
    for (int i = 0; i < n; ++i) {
      auto l = Launch(b, kWaveGroups);
      dev_.RunUntilIdle();
      EXPECT_EQ(dev_.EventStatus(l.event), CL_COMPLETE);
    }
  };
  dev_.SetGroupCost("b", 2'000);  // waves of 32 us
  launch_b(2);
  dev_.SetGroupCost("b", 40'000);  // one wave of 640 us
  launch_b(1);
  dev_.SetGroupCost("b", 2'000);
  launch_b(1);
  EXPECT_TRUE(LaunchesOf(b).back().run) << "the slow wave did not send the kernel to runs";
  launch_b(6);
  auto all = LaunchesOf(b);
  ASSERT_EQ(all.size(), 10u);
  for (size_t i = all.size() - 3; i < all.size(); ++i)
    EXPECT_FALSE(all[i].run) << "launch " << i << " still went as a run after short waves";
}

// A tenant whose launches were held while another was active launches directly again once it
// is alone, though one of its held launches is still running: behind it on the application's
// queue, which keeps their order.
// A direct launch behind held work of its tenant's waits in the driver for that work, and
// NVIDIA's times of it do not measure the kernel (0.86 ms for a 15 ms one, H200): it is not
// taken as the kernel's cost, so the launch after it still has an event to measure it by.
// Were it taken, that launch and the next ones would be sampled (a 400 us kernel of a tenant
// alone) and charged what it read.
TEST_F(SchedulerTest, LaunchBehindItsTenantsHeldWorkDoesNotMeasureItsKernel) {
  SchedulerOptions o;
  o.sample_every = 16;
  Start(o);
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("b", 100'000);  // 4 work-groups: a 400 us kernel
  Launch(a, 4);
  dev_.RunUntilIdle(dev_.NowNs() + 1'000'000);
  auto held = Launch(b, 4000, true, false);  // a is active: held, 400 ms on the device
  ASSERT_TRUE(dev_.WaitFor([](const auto& all) {
    return std::any_of(all.begin(), all.end(), [](auto& l) { return l.kernel == "b"; });
  }));
  dev_.Advance(300'000'000);  // past a's active window; b's held work still runs
  EXPECT_EQ(UsageOf(b).held, 1u);
  for (int i = 0; i < 9; ++i) {
    Launch(b, 4, true, false);  // alone: direct, the first behind the held work
    dev_.RunUntilIdle();
  }
  std::vector<bool> evented;
  for (auto& l : LaunchesOf(b))
    if (l.queue == b.app) evented.push_back(l.event);
  ASSERT_EQ(evented.size(), 9u);
  EXPECT_TRUE(evented[0]) << "unmeasured: an event";
  EXPECT_TRUE(evented[1]) << "the launch behind the held work measured nothing: an event again";
  EXPECT_FALSE(evented[2]) << "measured by the second: sampled from there";
  EXPECT_EQ(UsageOf(b).held, 1u);
}

TEST_F(SchedulerTest, TenantAloneAgainLaunchesDirectlyBehindItsHeldWork) {
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("b", 400'000'000);  // 4 groups: 1.6 s on the device
  Launch(a, 4);                         // alone: direct
  dev_.RunUntilIdle(dev_.NowNs() + 1'000'000);
  auto held = Launch(b, 4);  // a is active: held
  ASSERT_TRUE(dev_.WaitFor([](const auto& all) {
    return std::any_of(all.begin(), all.end(), [](auto& l) { return l.kernel == "b"; });
  }));
  EXPECT_EQ(LaunchesOf(b).front().queue, b.exec);
  dev_.Advance(300'000'000);  // past the active window of a's last launch; b's still runs
  EXPECT_GT(dev_.EventStatus(held.event), CL_COMPLETE);
  Launch(b, 4);
  auto runs = LaunchesOf(b);
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.back().queue, b.app) << "held, though b is alone";
  dev_.RunUntilIdle();
  runs = LaunchesOf(b);
  ASSERT_GE(runs.size(), 2u);
  EXPECT_EQ(runs.back().queue, b.app);
  uint64_t held_end = 0;
  for (auto& r : runs)
    if (r.queue == b.exec) held_end = std::max(held_end, r.end_ns);
  EXPECT_GE(runs.back().start_ns, held_end) << "the direct launch overtook the held one";
}

// Behind a preemptible run nothing follows before the run has ended: a stop may still cut it
// short, and what is left of it must run before the launch behind it.
TEST_F(SchedulerTest, NothingFollowsARunBeforeItEnds) {
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  auto& b = AddTenant("b");
  dev_.SetGroupCost("a", 50'000'000);
  dev_.SetGroupCost("b", 1'000'000);
  Launch(a, 4);               // alone: direct, and it keeps a active
  auto first = Launch(b, 8);  // held: a preemptible run (two waves)
  auto second = Launch(b, 8);
  EXPECT_FALSE(dev_.WaitFor(
      [](const auto& all) {
        return std::count_if(all.begin(), all.end(), [](auto& l) { return l.kernel == "b"; }) == 2;
      },
      300))
      << "the second launch went on the device behind a run that could still be stopped";
  dev_.RunUntilIdle();
  auto runs = LaunchesOf(b);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs[0].run);
  EXPECT_GE(runs[1].start_ns, runs[0].end_ns);
  EXPECT_EQ(UsageOf(b).chained, 0u);
  EXPECT_EQ(dev_.EventStatus(first.event), CL_COMPLETE);
  EXPECT_EQ(dev_.EventStatus(second.event), CL_COMPLETE);
}

INSTANTIATE_TEST_SUITE_P(Cases, ChainTest,
                         ::testing::Values(Between::kNothing, Between::kWrite,
                                           Between::kWaitOnFirst, Between::kWaitOnUserEvent),
                         [](const auto& info) {
                           switch (info.param) {
                             case Between::kNothing: return "Adjacent";
                             case Between::kWrite: return "WriteBetween";
                             case Between::kWaitOnFirst: return "WaitsOnTheFirst";
                             default: return "WaitsOnAUserEvent";
                           }
                         });

// One tenant alone: charged within 5% of what the device ran, under every policy, with and
// without events (event-less launches are charged their kernel's measured cost).
class AccountingTest : public SchedulerTest, public ::testing::WithParamInterface<Policy> {};

TEST_F(SchedulerTest, DirectLaunchesAreHarvestedOffTheLaunchingThread) {
  // A closed loop that asks for an event on every launch, each complete before the next: the
  // launching thread (a session's reader) asks the driver about none of them. Harvesting 256
  // events there, each with a wake-up of the dispatcher, stalled every 256th launch for
  // about 2.4 ms on the H200 (docs/scheduling.md, "Session 26").
  Start(SchedulerOptions{});
  auto& a = AddTenant("a");
  dev_.CountProfilingOf(std::this_thread::get_id());
  for (int i = 0; i < 1000; ++i) {
    Launch(a, 4);
    dev_.Advance(100000);
  }
  EXPECT_EQ(dev_.ProfilingCounted(), 0) << "profiling queried on the launching thread";
  dev_.RunUntilIdle();
  const double simulated = static_cast<double>(DeviceNs(LaunchesOf(a)));
  const double charged = static_cast<double>(SettledCharge(a, simulated));
  ASSERT_EQ(LaunchesOf(a).size(), 1000u);
  EXPECT_NEAR(charged / simulated, 1.0, 0.01)
      << "the dispatcher harvested them: charged " << charged << " ns, ran " << simulated;
}

TEST_P(AccountingTest, TenantAloneIsChargedWhatItRan) {
  SchedulerOptions o;
  o.policy = GetParam();
  Start(o);
  auto& a = AddTenant("a");
  for (int i = 0; i < 40; ++i) Launch(a, 8 + (i % 4) * 8, true, /*want_event=*/i % 3 == 0);
  dev_.RunUntilIdle();
  const double simulated = static_cast<double>(DeviceNs(LaunchesOf(a)));
  const double charged = static_cast<double>(SettledCharge(a, simulated));
  ASSERT_GT(simulated, 0);
  EXPECT_NEAR(charged / simulated, 1.0, 0.05) << "charged " << charged << " ns, ran " << simulated;
}

INSTANTIATE_TEST_SUITE_P(Policies, AccountingTest,
                         ::testing::Values(Policy::Fifo, Policy::Split, Policy::Fair),
                         [](const auto& info) { return std::string(PolicyName(info.param)); });

}  // namespace
}  // namespace rgpu::server
