// A device-less implementation of server/backend/backend.h, for the fuzz target and the unit
// tests of the scheduler and the session handlers (library rgpu_fake_backend).
//
// Why not PoCL: under libFuzzer every input runs a whole session, and PoCL would compile
// random OpenCL C with its in-process clang (hundreds of milliseconds, and LLVM's own
// caches and fatal errors would drown the findings about rgpud); a unit test of a scheduling
// decision wants device time it can choose and repeat, which a real device does not give.
// The fake keeps what the server relies on: reference counts, sizes and bounds of buffers,
// events that complete, programs whose kernels are named in their source. It allocates no
// device memory for large buffers, so a hostile size cannot exhaust the host. Its oracle:
// every object a session created is released once the session has ended (LiveObjects() == 0).
//
// Two ways to run:
//   - Immediate (the default; the fuzz target): every command is complete when it returns.
//   - Simulated device time (Simulate()): a virtual clock in nanoseconds. A kernel takes
//     work-groups x its cost per work-group (SetGroupCost), and completes only when the test
//     moves the clock (Step, RunUntilIdle). Every other command takes no time: a watcher
//     thread completes it as soon as what it waits for has (as a real backend's completion
//     watcher does, on a thread of its own). Commands of an in-order queue run one after
//     another; kernels of different queues may overlap. Preemptible runs (slicer.h, "Preemptible
//     runs") are simulated: work-groups claim ids from the control buffer's counter one after
//     another, and a stop flag written while a run is on the device ends it after the groups
//     already started.
//
// Threading: every method may be called from any thread. Completion callbacks run on the
// watcher thread or on the thread that calls Step/RunUntilIdle, never inside another backend
// call (the scheduler calls some under its own lock).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "server/backend/backend.h"

namespace rgpu::fake {

// The byte vector behind server::Bytes (the buffer-creation payload has the same type).
using ByteVec = std::remove_cvref_t<decltype(*std::declval<server::Bytes>())>;

// One kernel launch as the device saw it (simulated mode only).
struct LaunchRecord {
  std::string kernel;  // the kernel's name
  server::BkQueue* queue = nullptr;
  server::NDRange range;
  uint64_t groups = 0;       // work-groups enqueued
  bool sliced = false;       // a slice: its hidden argument says so (slicer.h)
  bool run = false;          // a preemptible run (a control buffer was passed)
  uint64_t first_group = 0;  // runs: the first group id claimed
  uint64_t claimed = 0;      // runs: groups that did work; otherwise `groups`
  uint64_t start_ns = 0, end_ns = 0;
  bool complete = false;
  bool event = false;  // the launch was asked for an event
  bool gated = false;  // its wait list named a user event (the scheduler's gates are those)
};

// One buffer write (simulated mode only): the scheduler's control words and stop flags.
struct WriteRecord {
  server::BkQueue* queue = nullptr;
  server::BkMem* mem = nullptr;
  size_t offset = 0;
  std::vector<uint8_t> bytes;
  uint64_t issued_ns = 0;
};

class FakeBackend : public server::Backend {
 public:
  FakeBackend();
  ~FakeBackend() override;
  long LiveObjects() const { return live_.load(); }
  // User events made so far (each starts a spinning driver thread on NVIDIA's OpenCL).
  long UserEventsMade() const { return user_events_.load(); }

  // --- simulated device time (call Simulate before any command) ---
  void Simulate();
  // Device ns one work-group of the kernel named `kernel` takes (default 1000).
  void SetGroupCost(const std::string& kernel, uint64_t ns);
  uint64_t NowNs();
  // Completes the kernel that ends first (moving the clock to its end) and everything that
  // becomes complete with it; false when no kernel can run (nothing queued, or only
  // commands waiting for something that is not complete).
  bool Step();
  // Steps until no kernel is left, or until the clock reaches `until_ns`. Between steps it
  // lets the other threads react (the scheduler's dispatcher puts the next slice on the
  // device after a completion): it returns only after `quiet_ms` with no new command.
  void RunUntilIdle(uint64_t until_ns = UINT64_MAX, int quiet_ms = 10);
  // Moves the clock forward by `ns` and completes what ends by then, as time passing on the
  // device does (a kernel still running stays running).
  void Advance(uint64_t ns);
  // Waits (real time, up to `timeout_ms`) until `pred(launches)` holds.
  bool WaitFor(const std::function<bool(const std::vector<LaunchRecord>&)>& pred,
               int timeout_ms = 2000);
  std::vector<LaunchRecord> Launches();
  std::vector<WriteRecord> Writes();
  // The name of the kernel behind a handle made by CreateKernel.
  std::string KernelName(server::BkKernel* k);
  // Counts the profiling queries (Profiling) made by thread `id` from now on.
  void CountProfilingOf(std::thread::id id);
  int ProfilingCounted();

  // --- server::Backend ---
  const std::vector<server::DeviceDesc>& Devices() const override { return devices_; }
  Status DeviceInfo(int device, uint32_t param, std::vector<uint8_t>* raw) override;
  Result<server::BkContext*> CreateContext(std::span<const int> devices) override;
  Result<server::BkQueue*> CreateQueue(server::BkContext* ctx, int device,
                                       uint64_t properties) override;
  Result<server::BkMem*> CreateBuffer(server::BkContext* ctx, uint64_t flags, size_t size,
                                      std::span<const uint8_t> init) override;
  Result<server::BkMem*> CreateSubBuffer(server::BkMem* parent, uint64_t flags, size_t origin,
                                         size_t size) override;
  Result<server::ImageFacts> CreateImage(server::BkContext* ctx, uint64_t flags,
                                         const server::ImageDesc& desc,
                                         const ByteVec* init) override;
  Result<std::vector<std::pair<uint32_t, uint32_t>>> SupportedImageFormats(
      server::BkContext* ctx, uint64_t flags, uint32_t image_type) override;
  Result<server::BkSampler*> CreateSampler(server::BkContext* ctx,
                                           std::span<const uint64_t> props) override;
  Result<server::BkProgram*> CreateProgramWithSource(server::BkContext* ctx,
                                                     std::string_view src) override;
  Result<server::BkProgram*> CreateProgramWithBinary(server::BkContext* ctx,
                                                     std::span<const int> devices,
                                                     const std::vector<std::string>& binaries,
                                                     std::vector<int32_t>* binary_status) override;
  Status BuildProgram(server::BkProgram* p, std::span<const int> devices,
                      const std::string& options) override;
  Status CompileProgram(server::BkProgram* p, std::span<const int> devices,
                        const std::string& options, std::span<server::BkProgram* const> headers,
                        const std::vector<std::string>& header_names) override;
  Result<server::BkProgram*> LinkProgram(server::BkContext* ctx, std::span<const int> devices,
                                         const std::string& options,
                                         std::span<server::BkProgram* const> inputs) override;
  Result<std::vector<server::KernelDesc>> KernelsOf(server::BkProgram* p) override;
  Result<server::BkKernel*> CreateKernel(server::BkProgram* p, const std::string& name) override;
  Status GetInfo(proto::InfoFamily family, void* object, int device, uint32_t aux, uint32_t param,
                 std::vector<uint8_t>* raw) override;
  Result<server::ProfilingTimes> Profiling(server::BkEvent* e) override;

  Result<server::BkEvent*> Write(server::BkQueue* q, server::BkMem* m, size_t offset,
                                 server::Bytes data, server::WaitList waits) override;
  Result<server::BkEvent*> Read(server::BkQueue* q, server::BkMem* m, size_t offset, size_t size,
                                server::Bytes dst, server::WaitList waits, bool blocking = false,
                                bool want_event = true) override;
  Result<server::BkEvent*> WriteFrom(server::BkQueue* q, server::BkMem* m, size_t offset,
                                     size_t size, const void* src, std::shared_ptr<void> keep,
                                     server::WaitList waits) override;
  Result<server::BkEvent*> ReadInto(server::BkQueue* q, server::BkMem* m, size_t offset,
                                    size_t size, void* dst, std::shared_ptr<void> keep,
                                    server::WaitList waits, bool blocking = false,
                                    bool want_event = true) override;
  Result<server::BkEvent*> Copy(server::BkQueue* q, server::BkMem* src, server::BkMem* dst,
                                size_t src_off, size_t dst_off, size_t size,
                                server::WaitList waits) override;
  Result<server::BkEvent*> WriteRect(server::BkQueue* q, server::BkMem* m, const server::Rect& r,
                                     server::Bytes data, server::WaitList waits) override;
  Result<server::BkEvent*> ReadRect(server::BkQueue* q, server::BkMem* m, const server::Rect& r,
                                    server::Bytes dst, server::WaitList waits) override;
  Result<server::BkEvent*> CopyRect(server::BkQueue* q, server::BkMem* src, server::BkMem* dst,
                                    const server::Rect& src_r, const server::Rect& dst_r,
                                    server::WaitList waits) override;
  Result<server::BkEvent*> Fill(server::BkQueue* q, server::BkMem* m,
                                const std::vector<uint8_t>& pattern, size_t offset, size_t size,
                                server::WaitList waits) override;
  Result<server::BkEvent*> WriteImage(server::BkQueue* q, server::BkMem* m,
                                      const server::ImageRegion& r, server::Bytes data,
                                      server::WaitList waits) override;
  Result<server::BkEvent*> ReadImage(server::BkQueue* q, server::BkMem* m,
                                     const server::ImageRegion& r, server::Bytes dst,
                                     server::WaitList waits) override;
  Result<server::BkEvent*> CopyImage(server::BkQueue* q, server::BkMem* src, server::BkMem* dst,
                                     const server::ImageRegion& s, const size_t dst_origin[3],
                                     server::WaitList waits) override;
  Result<server::BkEvent*> CopyImageToBuffer(server::BkQueue* q, server::BkMem* src,
                                             server::BkMem* dst, const server::ImageRegion& s,
                                             size_t dst_offset, server::WaitList waits) override;
  Result<server::BkEvent*> CopyBufferToImage(server::BkQueue* q, server::BkMem* src,
                                             server::BkMem* dst, size_t src_offset,
                                             const server::ImageRegion& d,
                                             server::WaitList waits) override;
  Result<server::BkEvent*> FillImage(server::BkQueue* q, server::BkMem* m, const uint8_t color[16],
                                     const server::ImageRegion& r, server::WaitList waits) override;
  Result<server::BkEvent*> Launch(server::BkQueue* q, server::BkKernel* k,
                                  std::span<const server::KernelArgValue> args,
                                  const server::NDRange& range, server::WaitList waits,
                                  bool want_event = true) override;
  Result<server::BkEvent*> Marker(server::BkQueue* q, server::WaitList waits) override;
  Result<server::BkEvent*> Barrier(server::BkQueue* q, server::WaitList waits,
                                   bool want_event = true) override;
  Result<server::BkEvent*> Migrate(server::BkQueue* q, std::span<server::BkMem* const> mems,
                                   uint64_t flags, server::WaitList waits) override;
  Status Flush(server::BkQueue* q) override;
  Status Finish(server::BkQueue* q) override;
  Status Wait(std::span<server::BkEvent* const> events) override;
  Result<server::BkEvent*> CreateUserEvent(server::BkContext* ctx) override;
  Status SetUserEventStatus(server::BkEvent* e, int32_t status) override;
  Result<server::BkEvent*> FailedEvent(server::BkContext* ctx, int32_t code) override;
  int32_t EventStatus(server::BkEvent* e) override;
  void OnComplete(server::BkEvent* e, server::CompletionFn fn,
                  server::Urgency urgency = server::Urgency::kNormal) override;
  void Retain(proto::ObjType type, void* handle) override;
  void Release(proto::ObjType type, void* handle) override;

  struct Object;
  struct Command;
  // Blocking reads made without an event (the session asked for none), so far.
  long blocking_reads_without_event() const { return blocking_reads_without_event_.load(); }

 private:
  // A blocking read's answer: its event, or none when `want_event` is false.
  Result<server::BkEvent*> Blocking(Result<server::BkEvent*> ev, bool blocking, bool want_event);
  Object* New(proto::ObjType type, Object* parent);
  bool ValidDevice(int device) const;
  void Drop(Object* o);  // Release without the checks (internal references)
  // A command's event: complete at once (immediate mode), or queued for the simulation.
  Result<server::BkEvent*> Enqueue(server::BkQueue* q, server::WaitList waits, Command cmd);
  Result<server::BkEvent*> Done(server::BkQueue* q, server::WaitList waits);
  // Simulation (requires mu_): starts what can start, completes what has ended by now_;
  // the callbacks to run (outside mu_) are appended to `fire`. True if any completed.
  bool Settle(std::vector<std::pair<server::CompletionFn, int32_t>>& fire);
  bool TryStart(Command& c);
  void Complete(Command& c, std::vector<std::pair<server::CompletionFn, int32_t>>& fire);
  void ApplyStop(Object* mem, uint64_t at);
  void Watch();

  std::vector<server::DeviceDesc> devices_;
  std::atomic<long> live_{0};
  std::atomic<long> user_events_{0};
  std::atomic<long> blocking_reads_without_event_{0};
  std::mutex mu_;  // events' status and callbacks; everything of the simulation
  std::thread::id profiling_thread_;  // GUARDED_BY(mu_): CountProfilingOf
  int profiling_counted_ = 0;         // GUARDED_BY(mu_)
  std::condition_variable cv_;
  bool simulate_ = false;
  bool stop_ = false;
  uint64_t now_ns_ = 0;
  uint64_t enqueued_ = 0;  // commands ever queued: RunUntilIdle's sign of activity
  std::deque<std::unique_ptr<Command>> pending_;
  std::map<std::string, uint64_t> group_cost_;
  std::vector<LaunchRecord> launches_;
  std::vector<WriteRecord> writes_;
  std::thread watcher_;
};

}  // namespace rgpu::fake
