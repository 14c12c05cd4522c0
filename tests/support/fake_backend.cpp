#include "tests/support/fake_backend.h"

#include <CL/cl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "server/scheduler/slicer.h"

namespace rgpu::fake {

using proto::ObjType;
using namespace rgpu::server;

struct FakeBackend::Object {
  ObjType type = ObjType::None;
  std::atomic<int> refs{1};
  Object* parent = nullptr;  // retained: context of a queue/mem/program, program of a kernel
  size_t size = 0;           // buffers
  std::string source;        // programs
  bool built = false;
  std::vector<KernelDesc> kernels;    // programs, after a build
  uint32_t num_args = 0;              // kernels
  bool user = false;                  // events
  int32_t status = CL_COMPLETE;       // events; GUARDED_BY(FakeBackend::mu_) for user events
  std::vector<CompletionFn> waiting;  // GUARDED_BY(FakeBackend::mu_)
  // Simulation (GUARDED_BY(FakeBackend::mu_)):
  uint64_t queued_ns = 0, start_ns = 0, end_ns = 0;  // events
  std::vector<uint8_t> data;  // buffers of at most kStoredBytes: what writes put there
  bool in_order = true;       // queues
  bool profiled = true;       // queues, and the events of their commands
  Object* last = nullptr;     // queues: the event of the last command (one reference)
  std::string name;           // kernels
};

// One queued command of the simulation.
struct FakeBackend::Command {
  enum class Kind { Other, Kernel, Write, Read } kind = Kind::Other;
  Object* event = nullptr;    // one reference
  std::vector<Object*> deps;  // events it waits for, one reference each
  uint64_t issued_ns = 0;
  bool started = false, failed = false, stopped = false;
  uint64_t start_ns = 0, end_ns = 0;
  // Kernels: the work-groups and their cost; runs name their control buffer in `mem`.
  uint64_t groups = 0, group_ns = 0;
  size_t launch = 0;      // index in launches_
  Object* mem = nullptr;  // a write's or read's buffer, a run's control buffer (one reference)
  size_t offset = 0, size = 0;
  Bytes data;                  // a write's source, a read's destination
  std::vector<uint8_t> bytes;  // a write's bytes when it carries them by value
};

namespace {

// A server bug, not a client's: the fuzzer reports it as a crash.
[[noreturn]] void Broken(const char* what) {
  std::fprintf(stderr, "fake backend: %s\n", what);
  std::abort();
}

template <typename T>
FakeBackend::Object* O(T* handle, ObjType want) {
  auto* o = reinterpret_cast<FakeBackend::Object*>(handle);
  if (!o) Broken("null handle");
  if (o->type != want) Broken("handle of the wrong type");
  if (o->refs.load() <= 0) Broken("handle used after its last release");
  return o;
}
template <typename T>
T* H(FakeBackend::Object* o) {
  return reinterpret_cast<T*>(o);
}

Status Bad(int32_t code, const char* what) { return Status::Error(code, what); }

// "kernel void name(a, b)" or "__kernel void name(...)": names and argument counts.
std::vector<KernelDesc> ScanKernels(const std::string& src) {
  std::vector<KernelDesc> out;
  for (size_t at = src.find("kernel void "); at != std::string::npos;
       at = src.find("kernel void ", at + 1)) {
    size_t b = at + 12, e = b;
    while (e < src.size() && (std::isalnum(static_cast<unsigned char>(src[e])) || src[e] == '_'))
      ++e;
    if (e == b || e >= src.size() || src[e] != '(') continue;
    size_t close = src.find(')', e);
    if (close == std::string::npos) continue;
    KernelDesc k;
    k.name = src.substr(b, e - b);
    std::string params = src.substr(e + 1, close - e - 1);
    if (params.find_first_not_of(" \t\n") != std::string::npos && params != "void") {
      k.num_args = 1;
      for (char c : params) k.num_args += c == ',';
    }
    out.push_back(std::move(k));
  }
  return out;
}

bool InBounds(size_t off, size_t n, size_t size) { return off <= size && n <= size - off; }

// Buffers up to this size keep their bytes (control words, small results); larger ones are
// only sizes, so that a hostile size costs no host memory.
constexpr size_t kStoredBytes = 4096;
constexpr uint64_t kDefaultGroupNs = 1000;

bool Finished(const FakeBackend::Object* e) { return e->status <= CL_COMPLETE; }

// Work-groups of a launch; with no local size, 64 work-items make a group.
uint64_t GroupsOf(const NDRange& r) {
  uint64_t groups = 1;
  for (uint32_t d = 0; d < r.dims && d < 3; ++d) {
    const size_t local = r.has_local ? std::max<size_t>(r.local[d], 1) : (d == 0 ? 64 : 1);
    groups *= (r.global[d] + local - 1) / local;
  }
  return groups;
}

// s3 of a rewritten kernel's hidden argument (slicer.h): 1 a slice, 2 a preemptible run.
uint64_t HiddenKind(std::span<const KernelArgValue> args) {
  if (args.size() < slicer::kHiddenArgCount) return 0;
  const auto& hidden = args[args.size() - slicer::kHiddenArgCount];
  if (hidden.kind != KernelArgValue::Kind::Bytes || hidden.bytes.size() != sizeof(cl_ulong16))
    return 0;
  uint64_t s3;
  std::memcpy(&s3, hidden.bytes.data() + 3 * sizeof(uint64_t), sizeof s3);
  return s3;
}

}  // namespace

FakeBackend::FakeBackend() {
  DeviceDesc d;
  d.name = "fake device";
  d.platform = "fake";
  d.type = CL_DEVICE_TYPE_CPU;
  d.global_mem = uint64_t{64} << 20;  // bounds what a fuzz input can make rgpud allocate
  d.compute_units = 4;
  devices_.push_back(d);
}

FakeBackend::~FakeBackend() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  for (auto& c : pending_) {
    for (Object* d : c->deps) Drop(d);
    if (c->mem) Drop(c->mem);
    Drop(c->event);
  }
}

void FakeBackend::Simulate() {
  std::lock_guard lk(mu_);
  if (simulate_) return;
  simulate_ = true;
  watcher_ = std::thread([this] { Watch(); });
}

void FakeBackend::SetGroupCost(const std::string& kernel, uint64_t ns) {
  std::lock_guard lk(mu_);
  group_cost_[kernel] = ns;
}

uint64_t FakeBackend::NowNs() {
  std::lock_guard lk(mu_);
  return now_ns_;
}

void FakeBackend::Advance(uint64_t ns) {
  std::vector<std::pair<CompletionFn, int32_t>> fire;
  {
    std::lock_guard lk(mu_);
    now_ns_ += ns;
    Settle(fire);
  }
  cv_.notify_all();
  for (auto& [fn, status] : fire) fn(status);
}

std::vector<LaunchRecord> FakeBackend::Launches() {
  std::lock_guard lk(mu_);
  return launches_;
}

std::vector<WriteRecord> FakeBackend::Writes() {
  std::lock_guard lk(mu_);
  return writes_;
}

std::string FakeBackend::KernelName(BkKernel* k) { return O(k, ObjType::Kernel)->name; }

void FakeBackend::Drop(Object* o) {
  while (o && o->refs.fetch_sub(1) == 1) {
    Object* parent = o->parent;
    Object* last = o->last;
    delete o;
    live_.fetch_sub(1);
    Drop(last);
    o = parent;
  }
}

FakeBackend::Object* FakeBackend::New(ObjType type, Object* parent) {
  auto* o = new Object;
  o->type = type;
  if (parent) {
    parent->refs.fetch_add(1);
    o->parent = parent;
  }
  live_.fetch_add(1);
  return o;
}

// Device indexes come from clients (checked only against the tenant's list): the OpenCL
// backend answers CL_INVALID_DEVICE for one out of range, and so does the fake.
bool FakeBackend::ValidDevice(int device) const {
  return device >= 0 && device < static_cast<int>(devices_.size());
}

Status FakeBackend::DeviceInfo(int device, uint32_t param, std::vector<uint8_t>* raw) {
  if (!ValidDevice(device)) return Bad(CL_INVALID_DEVICE, "no such device");
  raw->assign(8, 0);
  return Status::Ok();
}

Result<BkContext*> FakeBackend::CreateContext(std::span<const int> devices) {
  // As the OpenCL backend: devices out of range are left out; none left is an error.
  if (std::none_of(devices.begin(), devices.end(), [&](int d) { return ValidDevice(d); }))
    return Bad(CL_INVALID_DEVICE, "no valid device for the context");
  return H<BkContext>(New(ObjType::Context, nullptr));
}

Result<BkQueue*> FakeBackend::CreateQueue(BkContext* ctx, int device, uint64_t properties) {
  if (!ValidDevice(device)) return Bad(CL_INVALID_DEVICE, "no such device");
  Object* q = New(ObjType::Queue, O(ctx, ObjType::Context));
  q->in_order = (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0;
  q->profiled = (properties & CL_QUEUE_PROFILING_ENABLE) != 0;
  return H<BkQueue>(q);
}

Result<BkMem*> FakeBackend::CreateBuffer(BkContext* ctx, uint64_t flags, size_t size,
                                         std::span<const uint8_t> init) {
  // CL_INVALID_BUFFER_SIZE if size is 0 or larger than the device allows
  if (size == 0 || size > devices_[0].global_mem) return Bad(CL_INVALID_BUFFER_SIZE, "size");
  if (!init.empty() && init.size() != size) return Bad(CL_INVALID_VALUE, "init size");
  Object* o = New(ObjType::Mem, O(ctx, ObjType::Context));
  o->size = size;
  if (size <= kStoredBytes) {
    o->data.assign(size, 0);
    std::copy(init.begin(), init.end(), o->data.begin());
  }
  return H<BkMem>(o);
}

// Images are memory objects of their packed size; commands on them only check the objects.
Result<ImageFacts> FakeBackend::CreateImage(BkContext* ctx, uint64_t, const ImageDesc& d,
                                            const ByteVec*) {
  if (d.width == 0 || d.width > (1u << 16) || d.height > (1u << 16) || d.depth > (1u << 11))
    return Bad(CL_INVALID_IMAGE_SIZE, "size");
  Object* o = New(ObjType::Mem, O(ctx, ObjType::Context));
  o->size = 4 * d.width * std::max<size_t>(d.height, 1) * std::max<size_t>(d.depth, 1);
  return ImageFacts{H<BkMem>(o), 4, 4 * d.width, 0, o->size};
}

Result<std::vector<std::pair<uint32_t, uint32_t>>> FakeBackend::SupportedImageFormats(
    BkContext* ctx, uint64_t, uint32_t) {
  O(ctx, ObjType::Context);
  return std::vector<std::pair<uint32_t, uint32_t>>{{CL_RGBA, CL_UNORM_INT8}};
}

Result<BkSampler*> FakeBackend::CreateSampler(BkContext* ctx, std::span<const uint64_t>) {
  return H<BkSampler>(New(ObjType::Sampler, O(ctx, ObjType::Context)));
}

Result<BkEvent*> FakeBackend::WriteImage(BkQueue* q, BkMem* m, const ImageRegion&, Bytes,
                                         WaitList waits) {
  O(m, ObjType::Mem);
  return Done(q, waits);
}
Result<BkEvent*> FakeBackend::ReadImage(BkQueue* q, BkMem* m, const ImageRegion&, Bytes,
                                        WaitList waits) {
  O(m, ObjType::Mem);
  return Done(q, waits);
}
Result<BkEvent*> FakeBackend::CopyImage(BkQueue* q, BkMem* src, BkMem* dst, const ImageRegion&,
                                        const size_t*, WaitList waits) {
  O(src, ObjType::Mem);
  O(dst, ObjType::Mem);
  return Done(q, waits);
}
Result<BkEvent*> FakeBackend::CopyImageToBuffer(BkQueue* q, BkMem* src, BkMem* dst,
                                                const ImageRegion&, size_t, WaitList waits) {
  O(src, ObjType::Mem);
  O(dst, ObjType::Mem);
  return Done(q, waits);
}
Result<BkEvent*> FakeBackend::CopyBufferToImage(BkQueue* q, BkMem* src, BkMem* dst, size_t,
                                                const ImageRegion&, WaitList waits) {
  O(src, ObjType::Mem);
  O(dst, ObjType::Mem);
  return Done(q, waits);
}
Result<BkEvent*> FakeBackend::FillImage(BkQueue* q, BkMem* m, const uint8_t*, const ImageRegion&,
                                        WaitList waits) {
  O(m, ObjType::Mem);
  return Done(q, waits);
}

Result<BkMem*> FakeBackend::CreateSubBuffer(BkMem* parent, uint64_t flags, size_t origin,
                                            size_t size) {
  Object* p = O(parent, ObjType::Mem);
  if (size == 0 || !InBounds(origin, size, p->size)) return Bad(CL_INVALID_VALUE, "region");
  Object* o = New(ObjType::Mem, p);
  o->size = size;
  return H<BkMem>(o);
}

Result<BkProgram*> FakeBackend::CreateProgramWithSource(BkContext* ctx, std::string_view src) {
  Object* o = New(ObjType::Program, O(ctx, ObjType::Context));
  o->source = src;
  return H<BkProgram>(o);
}

Result<BkProgram*> FakeBackend::CreateProgramWithBinary(BkContext* ctx,
                                                        std::span<const int> devices,
                                                        const std::vector<std::string>& binaries,
                                                        std::vector<int32_t>* binary_status) {
  if (binaries.size() != devices.size()) Broken("one binary per device expected");
  binary_status->assign(devices.size(), CL_SUCCESS);
  Object* o = New(ObjType::Program, O(ctx, ObjType::Context));
  for (const auto& b : binaries) o->source += b;
  return H<BkProgram>(o);
}

Status FakeBackend::BuildProgram(BkProgram* p, std::span<const int> devices,
                                 const std::string& options) {
  Object* o = O(p, ObjType::Program);
  o->kernels = ScanKernels(o->source);
  o->built = !o->kernels.empty();
  return o->built ? Status::Ok() : Bad(CL_BUILD_PROGRAM_FAILURE, "no kernel in the source");
}

Status FakeBackend::CompileProgram(BkProgram* p, std::span<const int> devices,
                                   const std::string& options, std::span<BkProgram* const> headers,
                                   const std::vector<std::string>& header_names) {
  for (auto* h : headers) O(h, ObjType::Program);
  O(p, ObjType::Program);
  return Status::Ok();
}

Result<BkProgram*> FakeBackend::LinkProgram(BkContext* ctx, std::span<const int> devices,
                                            const std::string& options,
                                            std::span<BkProgram* const> inputs) {
  Object* o = New(ObjType::Program, O(ctx, ObjType::Context));
  for (auto* in : inputs) o->source += O(in, ObjType::Program)->source;
  o->kernels = ScanKernels(o->source);
  o->built = true;
  return H<BkProgram>(o);
}

Result<std::vector<KernelDesc>> FakeBackend::KernelsOf(BkProgram* p) {
  Object* o = O(p, ObjType::Program);
  if (!o->built) return Bad(CL_INVALID_PROGRAM_EXECUTABLE, "not built");
  return o->kernels;
}

Result<BkKernel*> FakeBackend::CreateKernel(BkProgram* p, const std::string& name) {
  Object* prog = O(p, ObjType::Program);
  if (!prog->built) return Bad(CL_INVALID_PROGRAM_EXECUTABLE, "not built");
  for (const auto& k : prog->kernels)
    if (k.name == name) {
      Object* o = New(ObjType::Kernel, prog);
      o->num_args = k.num_args;
      o->name = k.name;
      return H<BkKernel>(o);
    }
  return Bad(CL_INVALID_KERNEL_NAME, "no such kernel");
}

Status FakeBackend::GetInfo(proto::InfoFamily family, void* object, int device, uint32_t aux,
                            uint32_t param, std::vector<uint8_t>* raw) {
  if (!object) Broken("GetInfo on a null handle");
  auto* o = static_cast<Object*>(object);
  if (o->refs.load() <= 0) Broken("GetInfo on a released handle");
  // Some answers are sizes, some strings, some handles: eight zero bytes decode as each.
  raw->assign(8, 0);
  return Status::Ok();
}

void FakeBackend::CountProfilingOf(std::thread::id id) {
  std::lock_guard lk(mu_);
  profiling_thread_ = id;
  profiling_counted_ = 0;
}

int FakeBackend::ProfilingCounted() {
  std::lock_guard lk(mu_);
  return profiling_counted_;
}

Result<ProfilingTimes> FakeBackend::Profiling(BkEvent* ev) {
  Object* e = O(ev, ObjType::Event);
  std::lock_guard lk(mu_);
  if (std::this_thread::get_id() == profiling_thread_) ++profiling_counted_;
  if (!simulate_) return ProfilingTimes{1, 2, 3, 4};
  // CL_PROFILING_INFO_NOT_AVAILABLE if the command has not completed, or its queue was made
  // without CL_QUEUE_PROFILING_ENABLE
  if (e->status != CL_COMPLETE) return Bad(CL_PROFILING_INFO_NOT_AVAILABLE, "not complete");
  if (!e->profiled) return Bad(CL_PROFILING_INFO_NOT_AVAILABLE, "queue without profiling");
  return ProfilingTimes{e->queued_ns, e->queued_ns, e->start_ns, e->end_ns};
}

Result<BkEvent*> FakeBackend::Done(BkQueue* q, WaitList waits) {
  return Enqueue(q, waits, Command{});
}

Result<BkEvent*> FakeBackend::Write(BkQueue* q, BkMem* m, size_t offset, Bytes data,
                                    WaitList waits) {
  if (!data) Broken("Write without data");
  Object* mem = O(m, ObjType::Mem);
  if (!InBounds(offset, data->size(), mem->size)) return Bad(CL_INVALID_VALUE, "out of bounds");
  Command c;
  c.kind = Command::Kind::Write;
  c.mem = mem;
  c.offset = offset;
  c.size = data->size();
  c.data = std::move(data);
  return Enqueue(q, waits, std::move(c));
}

Result<BkEvent*> FakeBackend::Read(BkQueue* q, BkMem* m, size_t offset, size_t size, Bytes dst,
                                   WaitList waits, bool blocking, bool want_event) {
  if (!dst || dst->size() < size) Broken("Read into a destination smaller than the read");
  Object* mem = O(m, ObjType::Mem);
  if (!InBounds(offset, size, mem->size)) return Bad(CL_INVALID_VALUE, "out of bounds");
  Command c;
  c.kind = Command::Kind::Read;
  c.mem = mem;
  c.offset = offset;
  c.size = size;
  c.data = std::move(dst);
  return Blocking(Enqueue(q, waits, std::move(c)), blocking, want_event);
}

Result<BkEvent*> FakeBackend::Blocking(Result<BkEvent*> ev, bool blocking, bool want_event) {
  // Every fake command completes at once (unless simulated, where no test reads blocking):
  // a blocking read that wants no event drops it, as the OpenCL backend makes none.
  if (!ev.ok() || !blocking || want_event) return ev;
  ++blocking_reads_without_event_;
  Release(ObjType::Event, *ev);
  return static_cast<BkEvent*>(nullptr);
}

// Shared-region transfers: the fake touches every byte the session handed it, so that an
// out-of-range pointer shows under ASan.
Result<BkEvent*> FakeBackend::WriteFrom(BkQueue* q, BkMem* m, size_t offset, size_t size,
                                        const void* src, std::shared_ptr<void> keep,
                                        WaitList waits) {
  if (!src || !keep) Broken("WriteFrom without memory");
  if (!InBounds(offset, size, O(m, ObjType::Mem)->size))
    return Bad(CL_INVALID_VALUE, "out of bounds");
  volatile uint8_t sum = 0;
  for (size_t i = 0; i < size; ++i) sum = sum + static_cast<const uint8_t*>(src)[i];
  return Done(q, waits);
}

Result<BkEvent*> FakeBackend::ReadInto(BkQueue* q, BkMem* m, size_t offset, size_t size, void* dst,
                                       std::shared_ptr<void> keep, WaitList waits, bool blocking,
                                       bool want_event) {
  if (!dst || !keep) Broken("ReadInto without memory");
  if (!InBounds(offset, size, O(m, ObjType::Mem)->size))
    return Bad(CL_INVALID_VALUE, "out of bounds");
  std::memset(dst, 0x5a, size);
  return Blocking(Done(q, waits), blocking, want_event);
}

Result<BkEvent*> FakeBackend::Copy(BkQueue* q, BkMem* src, BkMem* dst, size_t src_off,
                                   size_t dst_off, size_t size, WaitList waits) {
  if (!InBounds(src_off, size, O(src, ObjType::Mem)->size) ||
      !InBounds(dst_off, size, O(dst, ObjType::Mem)->size))
    return Bad(CL_INVALID_VALUE, "out of bounds");
  return Done(q, waits);
}

Result<BkEvent*> FakeBackend::WriteRect(BkQueue* q, BkMem* m, const Rect& r, Bytes data,
                                        WaitList waits) {
  if (!data) Broken("WriteRect without data");
  O(m, ObjType::Mem);
  return Done(q, waits);
}

Result<BkEvent*> FakeBackend::ReadRect(BkQueue* q, BkMem* m, const Rect& r, Bytes dst,
                                       WaitList waits) {
  if (!dst) Broken("ReadRect without a destination");
  O(m, ObjType::Mem);
  return Done(q, waits);
}

Result<BkEvent*> FakeBackend::CopyRect(BkQueue* q, BkMem* src, BkMem* dst, const Rect& src_r,
                                       const Rect& dst_r, WaitList waits) {
  O(src, ObjType::Mem);
  O(dst, ObjType::Mem);
  return Done(q, waits);
}

Result<BkEvent*> FakeBackend::Fill(BkQueue* q, BkMem* m, const std::vector<uint8_t>& pattern,
                                   size_t offset, size_t size, WaitList waits) {
  if (pattern.empty()) return Bad(CL_INVALID_VALUE, "empty pattern");
  if (!InBounds(offset, size, O(m, ObjType::Mem)->size))
    return Bad(CL_INVALID_VALUE, "out of bounds");
  return Done(q, waits);
}

Result<BkEvent*> FakeBackend::Launch(BkQueue* q, BkKernel* k, std::span<const KernelArgValue> args,
                                     const NDRange& range, WaitList waits, bool want_event) {
  O(k, ObjType::Kernel);
  for (const auto& a : args)
    if (a.kind == KernelArgValue::Kind::Mem && a.mem) O(a.mem, ObjType::Mem);
  if (range.dims < 1 || range.dims > 3) return Bad(CL_INVALID_WORK_DIMENSION, "dims");
  Command c;
  c.kind = Command::Kind::Kernel;
  c.groups = GroupsOf(range);
  const uint64_t hidden = HiddenKind(args);
  LaunchRecord rec;
  rec.kernel = O(k, ObjType::Kernel)->name;
  rec.queue = q;
  rec.range = range;
  rec.groups = c.groups;
  rec.claimed = c.groups;
  rec.sliced = hidden == 1;
  rec.event = want_event;
  for (BkEvent* w : waits)
    if (O(w, ObjType::Event)->user) rec.gated = true;
  if (hidden == 2 && args.back().kind == KernelArgValue::Kind::Mem && args.back().mem) {
    rec.run = true;
    c.mem = O(args.back().mem, ObjType::Mem);
    if (c.mem->data.size() < slicer::kControlBytes) Broken("a run's control buffer is too small");
  }
  {
    std::lock_guard lk(mu_);
    auto cost = group_cost_.find(rec.kernel);
    c.group_ns = cost != group_cost_.end() ? cost->second : kDefaultGroupNs;
    if (simulate_) {
      c.launch = launches_.size();
      launches_.push_back(std::move(rec));
    }
  }
  auto ev = Enqueue(q, waits, std::move(c));
  if (!ev.ok() || want_event) return ev;
  Release(ObjType::Event, *ev);
  return static_cast<BkEvent*>(nullptr);
}

Result<BkEvent*> FakeBackend::Marker(BkQueue* q, WaitList waits) { return Done(q, waits); }
Result<BkEvent*> FakeBackend::Barrier(BkQueue* q, WaitList waits, bool want_event) {
  auto e = Done(q, waits);
  if (want_event || !e.ok() || !*e) return e;
  Release(proto::ObjType::Event, *e);  // the queue still holds it back until it completes
  return nullptr;
}

Result<BkEvent*> FakeBackend::Migrate(BkQueue* q, std::span<BkMem* const> mems, uint64_t flags,
                                      WaitList waits) {
  for (auto* m : mems) O(m, ObjType::Mem);
  return Done(q, waits);
}

Status FakeBackend::Flush(BkQueue* q) {
  O(q, ObjType::Queue);
  return Status::Ok();
}

Status FakeBackend::Finish(BkQueue* q) {
  Object* queue = O(q, ObjType::Queue);
  std::unique_lock lk(mu_);
  Object* last = queue->last;
  if (!last) return Status::Ok();
  last->refs.fetch_add(1);
  lk.unlock();
  BkEvent* events[1] = {H<BkEvent>(last)};
  Status s = Wait(events);
  Drop(last);
  return s;
}

Status FakeBackend::Wait(std::span<BkEvent* const> events) {
  std::unique_lock lk(mu_);
  for (BkEvent* ev : events) {
    Object* e = O(ev, ObjType::Event);
    if (!simulate_) {
      // A real device would block here forever: the session waited on its own thread for a
      // command that needs the client (an unset user event). That is a server bug.
      if (!Finished(e)) Broken("Wait on a command that waits for the client");
      continue;
    }
    // Simulated: the test's thread moves the clock; a wait that outlasts a generous bound is
    // a test (or server) bug, reported as a failure rather than a hang.
    if (!cv_.wait_for(lk, std::chrono::seconds(10), [&] { return Finished(e); }))
      return Bad(CL_OUT_OF_RESOURCES, "fake backend: Wait did not end within 10 s");
  }
  return Status::Ok();
}

Result<BkEvent*> FakeBackend::CreateUserEvent(BkContext* ctx) {
  Object* e = New(ObjType::Event, O(ctx, ObjType::Context));
  user_events_++;
  e->user = true;
  e->status = CL_SUBMITTED;
  return H<BkEvent>(e);
}

Status FakeBackend::SetUserEventStatus(BkEvent* ev, int32_t status) {
  Object* e = O(ev, ObjType::Event);
  if (!e->user) return Bad(CL_INVALID_EVENT, "not a user event");
  // CL_INVALID_VALUE if execution_status is not CL_COMPLETE or a negative integer value
  if (status > 0) return Bad(CL_INVALID_VALUE, "status");
  std::vector<CompletionFn> fire;
  {
    std::lock_guard lk(mu_);
    // CL_INVALID_OPERATION if the execution status has already been set
    if (Finished(e)) return Bad(CL_INVALID_OPERATION, "already set");
    e->status = status;
    e->start_ns = e->end_ns = now_ns_;
    fire.swap(e->waiting);
  }
  cv_.notify_all();  // commands waiting for it may start
  for (auto& fn : fire) {
    fn(status);
    Release(ObjType::Event, ev);  // the reference OnComplete took
  }
  return Status::Ok();
}

Result<BkEvent*> FakeBackend::FailedEvent(BkContext* ctx, int32_t code) {
  Object* e = New(ObjType::Event, O(ctx, ObjType::Context));
  e->status = code < 0 ? code : CL_OUT_OF_RESOURCES;
  return H<BkEvent>(e);
}

int32_t FakeBackend::EventStatus(BkEvent* ev) {
  Object* e = O(ev, ObjType::Event);
  std::lock_guard lk(mu_);
  return e->status;
}

void FakeBackend::OnComplete(BkEvent* ev, CompletionFn fn, server::Urgency /*urgency*/) {
  Object* e = O(ev, ObjType::Event);
  int32_t status;
  {
    std::lock_guard lk(mu_);
    status = e->status;
    if (!Finished(e)) {
      e->refs.fetch_add(1);  // like a device runtime, the pending callback keeps it alive
      e->waiting.push_back(std::move(fn));
      return;
    }
  }
  fn(status);
}

void FakeBackend::Retain(ObjType type, void* handle) {
  O(static_cast<Object*>(handle), type)->refs.fetch_add(1);
}

void FakeBackend::Release(ObjType type, void* handle) {
  Drop(O(static_cast<Object*>(handle), type));
}

// --- the simulation ---

Result<BkEvent*> FakeBackend::Enqueue(BkQueue* q, WaitList waits, Command cmd) {
  Object* queue = O(q, ObjType::Queue);
  for (auto* w : waits) O(w, ObjType::Event);
  Object* e = New(ObjType::Event, queue->parent);
  e->profiled = queue->profiled;
  std::unique_lock lk(mu_);
  if (!simulate_) {
    // Immediate: the command's effect now, and a complete event.
    if (cmd.kind == Command::Kind::Write && !cmd.mem->data.empty())
      std::copy(cmd.data->begin(), cmd.data->end(), cmd.mem->data.begin() + cmd.offset);
    if (cmd.kind == Command::Kind::Read) {
      if (cmd.mem->data.empty())
        std::memset(cmd.data->data(), 0x5a, cmd.size);
      else
        std::memcpy(cmd.data->data(), cmd.mem->data.data() + cmd.offset, cmd.size);
    }
    return H<BkEvent>(e);
  }
  e->status = CL_QUEUED;
  e->queued_ns = now_ns_;
  e->refs.fetch_add(1);  // the command's reference
  cmd.event = e;
  cmd.issued_ns = now_ns_;
  for (auto* w : waits) {
    Object* d = reinterpret_cast<Object*>(w);
    d->refs.fetch_add(1);
    cmd.deps.push_back(d);
  }
  if (queue->in_order && queue->last)
    cmd.deps.push_back(queue->last);  // takes its reference
  else if (queue->last)
    Drop(queue->last);
  e->refs.fetch_add(1);
  queue->last = e;
  if (cmd.mem) cmd.mem->refs.fetch_add(1);
  if (cmd.kind == Command::Kind::Write) {
    writes_.push_back(
        {q, H<BkMem>(cmd.mem), cmd.offset, {cmd.data->begin(), cmd.data->end()}, now_ns_});
  }
  pending_.push_back(std::make_unique<Command>(std::move(cmd)));
  ++enqueued_;
  lk.unlock();
  cv_.notify_all();
  return H<BkEvent>(e);
}

bool FakeBackend::TryStart(Command& c) {
  if (c.started) return true;
  uint64_t start = c.issued_ns;
  for (Object* d : c.deps) {
    if (!Finished(d)) return false;
    start = std::max(start, d->end_ns);
    if (d->status < 0) c.failed = true;
  }
  c.started = true;
  c.start_ns = start;
  c.end_ns = start;
  if (c.kind != Command::Kind::Kernel || c.failed) return true;
  LaunchRecord& rec = launches_[c.launch];
  uint64_t work = c.groups;
  if (rec.run) {
    // Every work-group claims the next id from the counter, unless the stop flag is set or
    // the run's limit is reached (slicer.cpp, __rgpu_claim).
    uint32_t w[4];
    std::memcpy(w, c.mem->data.data(), sizeof w);
    rec.first_group = w[1];
    c.stopped = w[0] != 0;  // then no group claims, and the counter stays
    work = c.stopped || w[1] >= w[2] ? 0 : std::min<uint64_t>(c.groups, w[2] - w[1]);
    rec.claimed = work;
  }
  c.end_ns = start + work * c.group_ns;
  rec.start_ns = c.start_ns;
  rec.end_ns = c.end_ns;
  return true;
}

// A stop flag set at `at`: a run on the device ends after the work-groups started before it.
void FakeBackend::ApplyStop(Object* mem, uint64_t at) {
  for (auto& c : pending_) {
    if (c->kind != Command::Kind::Kernel || c->mem != mem || !c->started || c->failed) continue;
    LaunchRecord& rec = launches_[c->launch];
    if (at >= c->end_ns) continue;
    const uint64_t started =
        at <= c->start_ns
            ? 0
            : (c->group_ns == 0 ? rec.claimed : (at - c->start_ns + c->group_ns - 1) / c->group_ns);
    if (started < rec.claimed) c->stopped = true;
    rec.claimed = std::min(rec.claimed, started);
    c->end_ns = rec.end_ns = c->start_ns + rec.claimed * c->group_ns;
  }
}

void FakeBackend::Complete(Command& c, std::vector<std::pair<CompletionFn, int32_t>>& fire) {
  Object* e = c.event;
  now_ns_ = std::max(now_ns_, c.end_ns);
  e->start_ns = c.start_ns;
  e->end_ns = c.end_ns;
  e->status = c.failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_COMPLETE;
  if (!c.failed && c.kind == Command::Kind::Write && !c.mem->data.empty()) {
    std::copy(c.data->begin(), c.data->end(), c.mem->data.begin() + c.offset);
    uint32_t stop = 0;
    if (c.offset == 0 && c.size >= 4) std::memcpy(&stop, c.mem->data.data(), 4);
    if (stop != 0) ApplyStop(c.mem, c.end_ns);
  }
  if (!c.failed && c.kind == Command::Kind::Read) {
    if (c.mem->data.empty())
      std::memset(c.data->data(), 0x5a, c.size);
    else
      std::memcpy(c.data->data(), c.mem->data.data() + c.offset, c.size);
  }
  if (!c.failed && c.kind == Command::Kind::Kernel) {
    LaunchRecord& rec = launches_[c.launch];
    rec.complete = true;
    if (rec.run) {
      // The counter moved by every group that claimed (past the limit too, as atomic_inc does).
      uint32_t counter;
      std::memcpy(&counter, c.mem->data.data() + 4, 4);
      counter += static_cast<uint32_t>(c.stopped ? rec.claimed : c.groups);
      std::memcpy(c.mem->data.data() + 4, &counter, 4);
    }
  }
  for (auto& fn : e->waiting) {
    fire.emplace_back(std::move(fn), e->status);
  }
  for (size_t i = 0; i < e->waiting.size(); ++i) e->refs.fetch_sub(1);  // OnComplete's references
  e->waiting.clear();
}

bool FakeBackend::Settle(std::vector<std::pair<CompletionFn, int32_t>>& fire) {
  bool any = false;
  for (bool changed = true; changed; any = any || changed) {
    changed = false;
    for (auto it = pending_.begin(); it != pending_.end();) {
      Command& c = **it;
      if (!TryStart(c) || c.end_ns > now_ns_) {
        ++it;
        continue;
      }
      Complete(c, fire);
      for (Object* d : c.deps) Drop(d);
      if (c.mem) Drop(c.mem);
      Drop(c.event);
      it = pending_.erase(it);
      changed = true;
    }
  }
  return any;
}

bool FakeBackend::Step() {
  std::vector<std::pair<CompletionFn, int32_t>> fire;
  {
    std::lock_guard lk(mu_);
    const bool settled = Settle(fire);
    const Command* next = nullptr;
    for (auto& c : pending_)
      if (TryStart(*c) && (!next || c->end_ns < next->end_ns)) next = c.get();
    if (!next && !settled) return false;
    if (next) {
      now_ns_ = std::max(now_ns_, next->end_ns);
      Settle(fire);
    }
  }
  cv_.notify_all();
  for (auto& [fn, status] : fire) fn(status);
  return true;
}

void FakeBackend::Watch() {
  std::unique_lock lk(mu_);
  while (!stop_) {
    std::vector<std::pair<CompletionFn, int32_t>> fire;
    if (!Settle(fire)) {
      cv_.wait_for(lk, std::chrono::milliseconds(5));
      continue;
    }
    lk.unlock();
    cv_.notify_all();
    for (auto& [fn, status] : fire) fn(status);
    lk.lock();
  }
}

void FakeBackend::RunUntilIdle(uint64_t until_ns, int quiet_ms) {
  for (;;) {
    // Quiet: no command queued for quiet_ms (the other threads have reacted).
    {
      std::unique_lock lk(mu_);
      uint64_t seen = enqueued_;
      auto quiet_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(quiet_ms);
      while (std::chrono::steady_clock::now() < quiet_until) {
        cv_.wait_until(lk, quiet_until);
        if (enqueued_ != seen) {
          seen = enqueued_;
          quiet_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(quiet_ms);
        }
      }
      if (now_ns_ >= until_ns) return;
    }
    if (Step()) continue;
    // Nothing to complete: done, unless another thread is about to queue more (a held
    // launch's next run follows the completion of its last one).
    std::unique_lock lk(mu_);
    const uint64_t seen = enqueued_;
    if (!cv_.wait_for(lk, std::chrono::milliseconds(400), [&] { return enqueued_ != seen; })) return;
  }
}

bool FakeBackend::WaitFor(const std::function<bool(const std::vector<LaunchRecord>&)>& pred,
                          int timeout_ms) {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] { return pred(launches_); });
}

}  // namespace rgpu::fake
