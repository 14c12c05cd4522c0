// The one interface through which rgpud reaches devices.
//
// A backend owns real devices and executes commands on them. Sessions (server/session.cpp)
// translate protocol requests into calls of this interface; they never call a device API
// directly. The OpenCL backend (opencl_backend.cpp) is the first implementation.
//
// Threading contract: every method may be called from any thread, concurrently, except that
// calls naming the same kernel object are serialised by the caller (one session owns each
// kernel). Completion callbacks run on a backend-owned thread; they must not block.
//
// Handles are opaque pointers owned by the backend; each Create* returns one reference,
// dropped with Release(). Commands return an event reference the caller must release.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proto/messages.h"
#include "proto/status.h"
#include "proto/wire.h"

namespace rgpu::server {

struct BkContext;
struct BkQueue;
struct BkMem;
struct BkProgram;
struct BkKernel;
struct BkEvent;
struct BkSampler;

// Device description sent to clients: every device query the backend could answer, as the
// Hello reply carries it (proto::InfoValue, proto/messages.h).
struct DeviceDesc {
  std::string name;
  std::string platform;
  uint64_t type = 0;
  uint64_t global_mem = 0;
  uint32_t compute_units = 0;
  std::vector<std::pair<uint32_t, proto::InfoValue>> queries;
};

// How the device's clSetKernelArg answers for one argument, learned once per build so the
// client can give the device's error codes without asking (clSetKernelArg stays async).
struct ArgShape {
  enum class Kind : uint8_t {
    Unchecked = 0,  // the device takes any size (or could not be probed): no check
    Value = 1,      // by value: `size` (or `also`) bytes, never NULL
    Mem = 2,        // a buffer: sizeof(cl_mem), the value may be NULL
    Local = 3,      // __local: a NULL value and a size of at least `size` (1, or 0 where the
                    // device takes 0)
    Image = 4,      // an image (cl_mem of an image); never raw bytes
    Sampler = 5,    // a sampler_t; never raw bytes
  } kind = Kind::Unchecked;
  uint32_t size = 0;
  uint32_t also = 0;  // a second size the device takes, 0 if none (PoCL takes 3/4 of a
                      // scalar's size too, the size of a 3-element vector's data)
};

struct KernelDesc {
  std::string name;
  uint32_t num_args = 0;
  std::vector<ArgShape> args;  // empty when unknown
};

// A kernel argument's value bytes, inline up to kInline (every OpenCL scalar and vector type,
// and the 128-byte hidden argument of a rewritten kernel), so that a launch's snapshot of its
// kernel's arguments, made on every launch, allocates nothing for them. Larger values (structs
// by value) go to the heap.
class ArgBytes {
 public:
  static constexpr size_t kInline = 128;
  ArgBytes() = default;
  ArgBytes(const ArgBytes& o) { assign(o.data(), o.size()); }
  ArgBytes& operator=(const ArgBytes& o) {
    if (this != &o) assign(o.data(), o.size());
    return *this;
  }
  ArgBytes(ArgBytes&& o) noexcept { *this = std::move(o); }
  ArgBytes& operator=(ArgBytes&& o) noexcept {
    if (this == &o) return *this;
    size_ = o.size_;
    heap_ = std::move(o.heap_);
    if (size_ <= kInline) std::memcpy(inline_, o.inline_, size_);
    o.size_ = 0;
    o.heap_.clear();
    return *this;
  }
  void assign(const void* p, size_t n) {
    resize(n);
    if (n) std::memcpy(data(), p, n);
  }
  // Keeps the first min(size(), n) bytes; new bytes are zero.
  void resize(size_t n) {
    if (n > kInline) {
      if (size_ <= kInline) heap_.assign(inline_, inline_ + size_);
      heap_.resize(n, 0);
    } else {
      if (size_ > kInline)
        std::memcpy(inline_, heap_.data(), n);
      else if (n > size_)
        std::memset(inline_ + size_, 0, n - size_);
      heap_.clear();
    }
    size_ = n;
  }
  uint8_t* data() { return size_ > kInline ? heap_.data() : inline_; }
  const uint8_t* data() const { return size_ > kInline ? heap_.data() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::span<const uint8_t> span() const { return {data(), size_}; }
  friend bool operator==(const ArgBytes& a, const ArgBytes& b) {
    return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data(), b.data(), a.size_) == 0);
  }

 private:
  size_t size_ = 0;
  uint8_t inline_[kInline];
  std::vector<uint8_t> heap_;  // only above kInline
};

struct KernelArgValue {
  enum class Kind : uint8_t { Bytes = 0, Mem = 1, Local = 2, Sampler = 3 } kind = Kind::Bytes;
  ArgBytes bytes;                // Kind::Bytes
  BkMem* mem = nullptr;          // Kind::Mem (nullptr = a NULL buffer argument)
  uint64_t local_size = 0;       // Kind::Local
  BkSampler* sampler = nullptr;  // Kind::Sampler
};

struct NDRange {
  uint32_t dims = 1;
  bool has_offset = false;
  bool has_local = false;
  size_t offset[3] = {0, 0, 0};
  size_t global[3] = {1, 1, 1};
  size_t local[3] = {1, 1, 1};
};

struct Rect {
  size_t buffer_origin[3] = {0, 0, 0};
  size_t host_origin[3] = {0, 0, 0};
  size_t region[3] = {1, 1, 1};
  size_t buffer_row_pitch = 0, buffer_slice_pitch = 0;
  size_t host_row_pitch = 0, host_slice_pitch = 0;
};

// clCreateImage's format and descriptor; `buffer` for images made from a buffer.
struct ImageDesc {
  uint32_t channel_order = 0, channel_type = 0, image_type = 0;
  size_t width = 0, height = 0, depth = 0, array_size = 0;
  size_t row_pitch = 0, slice_pitch = 0;  // images from a buffer only
  uint32_t mip_levels = 0, samples = 0;
  BkMem* buffer = nullptr;
};

// What the device says about an image it made (clGetImageInfo, clGetMemObjectInfo).
struct ImageFacts {
  BkMem* mem = nullptr;
  size_t element_size = 0, row_pitch = 0, slice_pitch = 0, mem_size = 0;
};

// The part of an image a command touches (clEnqueue*Image's origin and region).
struct ImageRegion {
  size_t origin[3] = {0, 0, 0};
  size_t region[3] = {1, 1, 1};
};

struct ProfilingTimes {
  uint64_t queued = 0, submit = 0, start = 0, end = 0;
};

// Bulk transfer buffers: growing one leaves the new bytes uninitialised (they are about to be
// overwritten by the network or the device), so no time goes to zeroing them.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using ByteVec = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;
using Bytes = std::shared_ptr<ByteVec>;
using WaitList = std::span<BkEvent* const>;
using CompletionFn = std::function<void(int32_t exec_status)>;

// How soon a completion must be seen (Backend::OnComplete).
enum class Urgency : uint8_t {
  kNormal,  // looks back off to every 200 us while nothing completes
  kUrgent,  // the scheduler's own commands, whose end the device idles waiting for: every
            // few microseconds
  kSpin,    // the same beside an active latency-critical tenant (SchedulerOptions::spin_feed):
            // looked at without pausing while it is watched
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const std::vector<DeviceDesc>& Devices() const = 0;
  // Answers a device query that was not cached in DeviceDesc (raw host bytes).
  virtual Status DeviceInfo(int device, uint32_t param, std::vector<uint8_t>* raw) = 0;

  virtual Result<BkContext*> CreateContext(std::span<const int> devices) = 0;
  virtual Result<BkQueue*> CreateQueue(BkContext* ctx, int device, uint64_t properties) = 0;
  // `init` (empty, or `size` bytes) is copied into the new buffer before the call returns.
  virtual Result<BkMem*> CreateBuffer(BkContext* ctx, uint64_t flags, size_t size,
                                      std::span<const uint8_t> init) = 0;
  virtual Result<BkMem*> CreateSubBuffer(BkMem* parent, uint64_t flags, size_t origin,
                                         size_t size) = 0;
  // Host memory rgpud itself copies to and from (a client's shared region) made known to the
  // device context: a buffer over it (CL_MEM_USE_HOST_PTR) that nothing runs on, released
  // before the memory goes. NVIDIA's driver then pins the memory and copies between it and
  // the device at pinned speed. Unsupported by default (the copies are right either way).
  virtual Result<BkMem*> RegisterHostMemory(BkContext* ctx, void* p, size_t size) {
    (void)ctx, (void)p, (void)size;
    return Status::Error(-6 /* CL_OUT_OF_HOST_MEMORY */, "this backend registers no host memory");
  }

  // `init` (may be empty) is the image's packed contents, copied before the call returns.
  virtual Result<ImageFacts> CreateImage(BkContext* ctx, uint64_t flags, const ImageDesc& desc,
                                         const ByteVec* init) = 0;
  // clGetSupportedImageFormats: (channel order, channel data type) pairs.
  virtual Result<std::vector<std::pair<uint32_t, uint32_t>>> SupportedImageFormats(
      BkContext* ctx, uint64_t flags, uint32_t image_type) = 0;
  // `props`: a sampler property list without its terminating 0.
  virtual Result<BkSampler*> CreateSampler(BkContext* ctx, std::span<const uint64_t> props) = 0;

  virtual Result<BkProgram*> CreateProgramWithSource(BkContext* ctx, std::string_view src) = 0;
  virtual Result<BkProgram*> CreateProgramWithBinary(BkContext* ctx, std::span<const int> devices,
                                                     const std::vector<std::string>& binaries,
                                                     std::vector<int32_t>* binary_status) = 0;
  virtual Status BuildProgram(BkProgram* p, std::span<const int> devices,
                              const std::string& options) = 0;
  virtual Status CompileProgram(BkProgram* p, std::span<const int> devices,
                                const std::string& options, std::span<BkProgram* const> headers,
                                const std::vector<std::string>& header_names) = 0;
  virtual Result<BkProgram*> LinkProgram(BkContext* ctx, std::span<const int> devices,
                                         const std::string& options,
                                         std::span<BkProgram* const> inputs) = 0;
  virtual Result<std::vector<KernelDesc>> KernelsOf(BkProgram* p) = 0;
  virtual Result<BkKernel*> CreateKernel(BkProgram* p, const std::string& name) = 0;

  // Generic clGet*Info on an object of `family` (device index in `device`, arg index in
  // `aux` where the family needs them). Returns raw host bytes.
  virtual Status GetInfo(proto::InfoFamily family, void* object, int device, uint32_t aux,
                         uint32_t param, std::vector<uint8_t>* raw) = 0;
  virtual Result<ProfilingTimes> Profiling(BkEvent* e) = 0;

  // --- commands: each returns the command's event (one reference for the caller) ---
  virtual Result<BkEvent*> Write(BkQueue* q, BkMem* m, size_t offset, Bytes data,
                                 WaitList waits) = 0;
  // `blocking`: returns once the data is in `dst` (NVIDIA's blocking read of a few bytes takes
  // 7 us where a non-blocking one and a wait take several times that). A blocking read
  // without `want_event` returns no event (null): the driver makes none, which spares it
  // making and later freeing one (several microseconds each on NVIDIA).
  virtual Result<BkEvent*> Read(BkQueue* q, BkMem* m, size_t offset, size_t size, Bytes dst,
                                WaitList waits, bool blocking = false, bool want_event = true) = 0;
  // Write and Read with host memory the caller owns (a client's shared region): `keep` is
  // held until the command completes, so the memory outlives the copy.
  virtual Result<BkEvent*> WriteFrom(BkQueue* q, BkMem* m, size_t offset, size_t size,
                                     const void* src, std::shared_ptr<void> keep, WaitList waits) = 0;
  virtual Result<BkEvent*> ReadInto(BkQueue* q, BkMem* m, size_t offset, size_t size, void* dst,
                                    std::shared_ptr<void> keep, WaitList waits,
                                    bool blocking = false, bool want_event = true) = 0;
  virtual Result<BkEvent*> Copy(BkQueue* q, BkMem* src, BkMem* dst, size_t src_off,
                                size_t dst_off, size_t size, WaitList waits) = 0;
  virtual Result<BkEvent*> WriteRect(BkQueue* q, BkMem* m, const Rect& r, Bytes data,
                                     WaitList waits) = 0;
  virtual Result<BkEvent*> ReadRect(BkQueue* q, BkMem* m, const Rect& r, Bytes dst,
                                    WaitList waits) = 0;
  virtual Result<BkEvent*> CopyRect(BkQueue* q, BkMem* src, BkMem* dst, const Rect& src_r,
                                    const Rect& dst_r, WaitList waits) = 0;
  virtual Result<BkEvent*> Fill(BkQueue* q, BkMem* m, const std::vector<uint8_t>& pattern,
                                size_t offset, size_t size, WaitList waits) = 0;
  // Image transfers: host data is packed (rows of region[0] pixels, no padding).
  virtual Result<BkEvent*> WriteImage(BkQueue* q, BkMem* m, const ImageRegion& r, Bytes data,
                                      WaitList waits) = 0;
  virtual Result<BkEvent*> ReadImage(BkQueue* q, BkMem* m, const ImageRegion& r, Bytes dst,
                                     WaitList waits) = 0;
  virtual Result<BkEvent*> CopyImage(BkQueue* q, BkMem* src, BkMem* dst, const ImageRegion& s,
                                     const size_t dst_origin[3], WaitList waits) = 0;
  virtual Result<BkEvent*> CopyImageToBuffer(BkQueue* q, BkMem* src, BkMem* dst,
                                             const ImageRegion& s, size_t dst_offset,
                                             WaitList waits) = 0;
  virtual Result<BkEvent*> CopyBufferToImage(BkQueue* q, BkMem* src, BkMem* dst,
                                             size_t src_offset, const ImageRegion& d,
                                             WaitList waits) = 0;
  // `color`: 16 bytes, a float4, int4 or uint4 as the image's type needs.
  virtual Result<BkEvent*> FillImage(BkQueue* q, BkMem* m, const uint8_t color[16],
                                     const ImageRegion& r, WaitList waits) = 0;
  // Sets every argument, then launches. Arguments are applied at launch time so that a
  // scheduler may hold a launch back without later SetKernelArg calls changing it.
  // `want_event` false: no event is made and the result is nullptr (an event costs NVIDIA's
  // driver about as much as the launch itself: rgpu-probe-driver).
  virtual Result<BkEvent*> Launch(BkQueue* q, BkKernel* k,
                                  std::span<const KernelArgValue> args, const NDRange& range,
                                  WaitList waits, bool want_event = true) = 0;
  // clSetKernelArg calls Launch has made so far (it skips arguments the kernel already
  // holds from its last launch); 0 where the backend keeps no count.
  virtual uint64_t KernelArgsSet() const { return 0; }
  virtual Result<BkEvent*> Marker(BkQueue* q, WaitList waits) = 0;
  // `want_event` false: no event (nullptr), which spares the driver making one.
  virtual Result<BkEvent*> Barrier(BkQueue* q, WaitList waits, bool want_event = true) = 0;
  virtual Result<BkEvent*> Migrate(BkQueue* q, std::span<BkMem* const> mems, uint64_t flags,
                                   WaitList waits) = 0;
  virtual Status Flush(BkQueue* q) = 0;
  // Blocks until everything queued on `q` is done (a session ending, or a clFinish the
  // session knows cannot depend on its client).
  virtual Status Finish(BkQueue* q) = 0;
  // Blocks until every event has completed or failed. The caller guarantees that none can
  // be waiting for something only it could provide (a user event it has yet to set).
  virtual Status Wait(std::span<BkEvent* const> events) = 0;

  virtual Result<BkEvent*> CreateUserEvent(BkContext* ctx) = 0;
  virtual Status SetUserEventStatus(BkEvent* e, int32_t status) = 0;
  // A user event already failed with `code`: stands in for a command that could not start.
  virtual Result<BkEvent*> FailedEvent(BkContext* ctx, int32_t code) = 0;
  // The command's execution status now (CL_QUEUED..CL_COMPLETE, or negative), without waiting.
  virtual int32_t EventStatus(BkEvent* e) = 0;
  // Calls `fn` once when `e` completes or fails (possibly at once, on this thread), as soon
  // as `urgency` asks (Urgency).
  virtual void OnComplete(BkEvent* e, CompletionFn fn, Urgency urgency = Urgency::kNormal) = 0;

  virtual void Retain(proto::ObjType type, void* handle) = 0;
  virtual void Release(proto::ObjType type, void* handle) = 0;
};

// Opens the OpenCL backend: the best platform (a GPU platform before a CPU-only one), or
// the first whose name contains `platform_filter` when it is not empty.
Result<std::unique_ptr<Backend>> OpenOpenCLBackend(const std::string& platform_filter);

}  // namespace rgpu::server
