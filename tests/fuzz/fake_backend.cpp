#include "tests/fuzz/fake_backend.h"

#include <CL/cl.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rgpu::fuzz {

using proto::ObjType;
using namespace rgpu::server;

struct FakeBackend::Object {
  ObjType type;
  std::atomic<int> refs{1};
  Object* parent = nullptr;  // retained: context of a queue/mem/program, program of a kernel
  size_t size = 0;           // buffers
  std::string source;        // programs
  bool built = false;
  std::vector<KernelDesc> kernels;  // programs, after a build
  uint32_t num_args = 0;            // kernels
  bool user = false;                // events
  int32_t status = CL_COMPLETE;     // events; GUARDED_BY(FakeBackend::mu_) for user events
  std::vector<CompletionFn> waiting;  // GUARDED_BY(FakeBackend::mu_)
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
T* H(FakeBackend::Object* o) { return reinterpret_cast<T*>(o); }

Status Bad(int32_t code, const char* what) { return Status::Error(code, what); }

// "kernel void name(a, b)" or "__kernel void name(...)": names and argument counts.
std::vector<KernelDesc> ScanKernels(const std::string& src) {
  std::vector<KernelDesc> out;
  for (size_t at = src.find("kernel void "); at != std::string::npos;
       at = src.find("kernel void ", at + 1)) {
    size_t b = at + 12, e = b;
    while (e < src.size() && (std::isalnum(static_cast<unsigned char>(src[e])) || src[e] == '_')) ++e;
    if (e == b || e >= src.size() || src[e] != '(') continue;
    size_t close = src.find(')', e);
    if (close == std::string::npos) continue;
    KernelDesc k{src.substr(b, e - b), 0};
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

FakeBackend::~FakeBackend() = default;

FakeBackend::Object* FakeBackend::New(ObjType type, Object* parent) {
  auto* o = new Object{type};
  if (parent) {
    parent->refs.fetch_add(1);
    o->parent = parent;
  }
  live_.fetch_add(1);
  return o;
}

Status FakeBackend::DeviceInfo(int device, uint32_t param, std::vector<uint8_t>* raw) {
  if (device < 0 || device >= static_cast<int>(devices_.size())) Broken("device index out of range");
  raw->assign(8, 0);
  return Status::Ok();
}

Result<BkContext*> FakeBackend::CreateContext(std::span<const int> devices) {
  if (devices.empty()) return Bad(CL_INVALID_VALUE, "no devices");
  for (int d : devices)
    if (d < 0 || d >= static_cast<int>(devices_.size())) Broken("device index out of range");
  return H<BkContext>(New(ObjType::Context, nullptr));
}

Result<BkQueue*> FakeBackend::CreateQueue(BkContext* ctx, int device, uint64_t properties) {
  if (device < 0 || device >= static_cast<int>(devices_.size())) Broken("device index out of range");
  return H<BkQueue>(New(ObjType::Queue, O(ctx, ObjType::Context)));
}

Result<BkMem*> FakeBackend::CreateBuffer(BkContext* ctx, uint64_t flags, size_t size,
                                         const ByteVec* init) {
  // CL_INVALID_BUFFER_SIZE if size is 0 or larger than the device allows
  if (size == 0 || size > devices_[0].global_mem) return Bad(CL_INVALID_BUFFER_SIZE, "size");
  if (init && !init->empty() && init->size() != size) return Bad(CL_INVALID_VALUE, "init size");
  Object* o = New(ObjType::Mem, O(ctx, ObjType::Context));
  o->size = size;
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

Result<ProfilingTimes> FakeBackend::Profiling(BkEvent* e) {
  O(e, ObjType::Event);
  return ProfilingTimes{1, 2, 3, 4};
}

Result<BkEvent*> FakeBackend::Done(BkQueue* q, WaitList waits, int32_t status) {
  Object* queue = O(q, ObjType::Queue);
  for (auto* w : waits) O(w, ObjType::Event);
  Object* e = New(ObjType::Event, queue->parent);
  e->status = status;
  return H<BkEvent>(e);
}

Result<BkEvent*> FakeBackend::Write(BkQueue* q, BkMem* m, size_t offset, Bytes data,
                                    WaitList waits) {
  if (!data) Broken("Write without data");
  if (!InBounds(offset, data->size(), O(m, ObjType::Mem)->size))
    return Bad(CL_INVALID_VALUE, "out of bounds");
  return Done(q, waits);
}

Result<BkEvent*> FakeBackend::Read(BkQueue* q, BkMem* m, size_t offset, size_t size, Bytes dst,
                                   WaitList waits, bool blocking) {
  (void)blocking;  // every fake command completes at once
  if (!dst || dst->size() < size) Broken("Read into a destination smaller than the read");
  if (!InBounds(offset, size, O(m, ObjType::Mem)->size))
    return Bad(CL_INVALID_VALUE, "out of bounds");
  std::memset(dst->data(), 0x5a, size);
  return Done(q, waits);
}

// Shared-region transfers: the fake touches every byte the session handed it, so that an
// out-of-range pointer shows under ASan.
Result<BkEvent*> FakeBackend::WriteFrom(BkQueue* q, BkMem* m, size_t offset, size_t size,
                                        const void* src, std::shared_ptr<void> keep, WaitList waits) {
  if (!src || !keep) Broken("WriteFrom without memory");
  if (!InBounds(offset, size, O(m, ObjType::Mem)->size))
    return Bad(CL_INVALID_VALUE, "out of bounds");
  volatile uint8_t sum = 0;
  for (size_t i = 0; i < size; ++i) sum = sum + static_cast<const uint8_t*>(src)[i];
  return Done(q, waits);
}

Result<BkEvent*> FakeBackend::ReadInto(BkQueue* q, BkMem* m, size_t offset, size_t size, void* dst,
                                       std::shared_ptr<void> keep, WaitList waits, bool blocking) {
  (void)blocking;
  if (!dst || !keep) Broken("ReadInto without memory");
  if (!InBounds(offset, size, O(m, ObjType::Mem)->size))
    return Bad(CL_INVALID_VALUE, "out of bounds");
  std::memset(dst, 0x5a, size);
  return Done(q, waits);
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
  if (!want_event) {
    O(q, ObjType::Queue);
    for (auto* w : waits) O(w, ObjType::Event);
    return static_cast<BkEvent*>(nullptr);
  }
  return Done(q, waits);
}

Result<BkEvent*> FakeBackend::Marker(BkQueue* q, WaitList waits) { return Done(q, waits); }
Result<BkEvent*> FakeBackend::Barrier(BkQueue* q, WaitList waits) { return Done(q, waits); }

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
  O(q, ObjType::Queue);
  return Status::Ok();
}

Status FakeBackend::Wait(std::span<BkEvent* const> events) {
  for (BkEvent* ev : events) {
    Object* e = O(ev, ObjType::Event);
    std::lock_guard lk(mu_);
    // A real device would block here forever: the session waited on its own thread for a
    // command that needs the client (an unset user event). That is a server bug.
    if (e->status > CL_COMPLETE) Broken("Wait on a command that waits for the client");
  }
  return Status::Ok();
}

Result<BkEvent*> FakeBackend::CreateUserEvent(BkContext* ctx) {
  Object* e = New(ObjType::Event, O(ctx, ObjType::Context));
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
    if (e->status <= CL_COMPLETE) return Bad(CL_INVALID_OPERATION, "already set");
    e->status = status;
    fire.swap(e->waiting);
  }
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

void FakeBackend::OnComplete(BkEvent* ev, CompletionFn fn, bool /*urgent*/) {
  Object* e = O(ev, ObjType::Event);
  int32_t status;
  {
    std::lock_guard lk(mu_);
    status = e->status;
    if (status > CL_COMPLETE) {
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
  Object* o = O(static_cast<Object*>(handle), type);
  while (o && o->refs.fetch_sub(1) == 1) {
    Object* parent = o->parent;
    delete o;
    live_.fetch_sub(1);
    o = parent;
  }
}

}  // namespace rgpu::fuzz
