// The OpenCL backend: rgpud's devices are those of one real OpenCL platform.
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <algorithm>
#include <sys/prctl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "proto/cpu_relax.h"
#include "proto/info.h"
#include "proto/messages.h"
#include "proto/thread_name.h"
#include "server/backend/backend.h"
#include "server/backend/image_args.h"

namespace rgpu::server {
namespace {

using proto::CpuRelax;

template <typename T, typename H>
T* Wrap(H h) {
  return reinterpret_cast<T*>(h);
}
inline cl_context C(BkContext* p) { return reinterpret_cast<cl_context>(p); }
inline cl_command_queue Q(BkQueue* p) { return reinterpret_cast<cl_command_queue>(p); }
inline cl_mem M(BkMem* p) { return reinterpret_cast<cl_mem>(p); }
inline cl_program P(BkProgram* p) { return reinterpret_cast<cl_program>(p); }
inline cl_kernel K(BkKernel* p) { return reinterpret_cast<cl_kernel>(p); }
inline cl_event E(BkEvent* p) { return reinterpret_cast<cl_event>(p); }
inline cl_sampler S(BkSampler* p) { return reinterpret_cast<cl_sampler>(p); }

// Bumped whenever a memory object that may be a kernel argument is destroyed (its
// destructor callback runs before its memory is freed, so before a new object can take its
// address): a kernel's argument memo (OpenCLBackend::Launch) holds memory objects only while
// this is unchanged. Process-wide, as a callback may come after its backend is gone.
std::atomic<uint64_t> g_mem_epoch{1};

void CL_CALLBACK MemDestroyed(cl_mem, void*) {
  g_mem_epoch.fetch_add(1, std::memory_order_acq_rel);
}

Status Fail(cl_int err, const char* what) {
  return Status::Error(err, std::string(what) + " failed with " + std::to_string(err));
}

std::string PlatformString(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  clGetPlatformInfo(p, what, 0, nullptr, &n);
  std::string s(n, '\0');
  clGetPlatformInfo(p, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

// Watches events and runs their completion functions.
//
// Not clSetEventCallback: NVIDIA's OpenCL delivers event callbacks on a tick of about 20 ms
// (measured: a 0.5 ms kernel's callback ran 19.4 ms after clWaitForEvents returned), which
// would add that to every clFinish, blocking read and scheduler slice. A thread that asks
// each watched event for its status while any is pending sees completions within tens of
// microseconds, on every implementation.
class CompletionWatcher {
 public:
  // Longest pause between sweeps while an urgent event (a held launch's run or slice, which
  // the device waits on before the dispatcher can feed it more) is watched.
  static constexpr int kUrgentPauseUs = 10;
  // Between sweeps while a spinning event (Urgency::kSpin) is watched.
  static constexpr int kSpinPauseUs = 2;
  CompletionWatcher() : thread_([this] { Loop(); }) {}
  ~CompletionWatcher() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Watch(cl_event e, CompletionFn fn, Urgency urgency) {
    clRetainEvent(e);
    {
      std::lock_guard lk(mu_);
      incoming_.push_back({e, std::move(fn), urgency});
    }
    cv_.notify_one();
  }

 private:
  struct Watched {
    cl_event event;
    CompletionFn fn;
    Urgency urgency = Urgency::kNormal;
  };
  void Loop() {
    proto::NameThread("rgpud-watcher");
    // Short sleeps between sweeps: ask for fine timer slack so they stay short.
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    std::vector<Watched> watching;
    // Sweeps come every few microseconds after something happened, backing off to 200 us
    // while nothing completes (a command waiting on a user event may wait for minutes).
    int pause_us = 5;
    // While a spinning event is watched, the sweeps between two of the usual cadence look at
    // the spinning events only: the others (a client's waits, possibly many) keep theirs.
    std::chrono::steady_clock::time_point next_full{};
    for (;;) {
      {
        std::unique_lock lk(mu_);
        if (watching.empty()) cv_.wait(lk, [&] { return stop_ || !incoming_.empty(); });
        if (stop_) break;
        if (!incoming_.empty()) pause_us = 5;
        for (auto& w : incoming_) watching.push_back(std::move(w));
        incoming_.clear();
      }
      bool any_done = false;
      Urgency most = Urgency::kNormal;
      for (const Watched& w : watching) most = std::max(most, w.urgency);
      const bool full = most != Urgency::kSpin || std::chrono::steady_clock::now() >= next_full;
      for (size_t i = 0; i < watching.size();) {
        if (!full && watching[i].urgency != Urgency::kSpin) {
          ++i;
          continue;
        }
        cl_int st = CL_OUT_OF_RESOURCES;
        if (clGetEventInfo(watching[i].event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st,
                           nullptr) != CL_SUCCESS)
          st = CL_OUT_OF_RESOURCES;
        if (st > CL_COMPLETE) {
          ++i;
          continue;
        }
        Watched w = std::move(watching[i]);
        watching[i] = std::move(watching.back());
        watching.pop_back();
        w.fn(st);
        clReleaseEvent(w.event);
        any_done = true;
      }
      if (any_done) pause_us = 5;
      else
        pause_us =
            std::min(most >= Urgency::kUrgent ? kUrgentPauseUs : 200, pause_us + pause_us / 8 + 1);
      if (full) next_full = std::chrono::steady_clock::now() + std::chrono::microseconds(pause_us);
      if (!watching.empty() && !any_done && most == Urgency::kSpin) {
        // A sleep of a few microseconds lasts tens in a VM: spin, briefly pausing between
        // sweeps so that status queries do not crowd the driver's locks.
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinPauseUs);
        while (std::chrono::steady_clock::now() < until) CpuRelax();
        continue;
      }
      if (!watching.empty() && !any_done) {
        std::unique_lock lk(mu_);
        cv_.wait_for(lk, std::chrono::microseconds(pause_us), [&] { return stop_ || !incoming_.empty(); });
      }
    }
    for (auto& w : watching) clReleaseEvent(w.event);
    for (auto& w : incoming_) clReleaseEvent(w.event);
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Watched> incoming_;  // GUARDED_BY(mu_)
  bool stop_ = false;              // GUARDED_BY(mu_)
  std::thread thread_;
};

class OpenCLBackend final : public Backend {
 public:
  OpenCLBackend(cl_platform_id platform, std::vector<cl_device_id> devices)
      : platform_(platform), devices_(std::move(devices)) {
    std::string pname = PlatformString(platform_, CL_PLATFORM_NAME);
    for (cl_device_id d : devices_) {
      DeviceDesc desc;
      desc.platform = pname;
      // Ask every standard device query (and NVIDIA's 0x4000 block); keep what answers.
      auto probe = [&](uint32_t param) {
        size_t n = 0;
        if (clGetDeviceInfo(d, param, 0, nullptr, &n) != CL_SUCCESS || n > proto::kMaxInfoBytes)
          return;
        std::vector<uint8_t> raw(n);
        if (clGetDeviceInfo(d, param, n, raw.data(), nullptr) != CL_SUCCESS) return;
        auto kind = proto::InfoKindOf(proto::InfoFamily::Device, param);
        if (kind == proto::InfoKind::Local) return;
        desc.queries.emplace_back(param, proto::InfoValue::FromHost(kind, raw.data(), raw.size()));
        if (param == CL_DEVICE_NAME) desc.name.assign(raw.begin(), std::find(raw.begin(), raw.end(), 0));
        if (param == CL_DEVICE_TYPE) std::memcpy(&desc.type, raw.data(), 8);
        if (param == CL_DEVICE_GLOBAL_MEM_SIZE) std::memcpy(&desc.global_mem, raw.data(), 8);
        if (param == CL_DEVICE_MAX_COMPUTE_UNITS) std::memcpy(&desc.compute_units, raw.data(), 4);
      };
      for (uint32_t p = 0x1000; p < 0x1080; ++p) probe(p);
      for (uint32_t p = 0x4000; p < 0x4010; ++p) probe(p);
      const uint32_t maps = MapsBeyondHostAccess(platform_, d);
      if (maps)
        spdlog::info("{}: allows maps its buffers' host-access flags forbid ({:#x})", desc.name,
                     maps);
      desc.queries.emplace_back(proto::kDeviceMapsBeyondHostAccess,
                                proto::InfoValue::FromHost(proto::InfoKind::U32, &maps,
                                                           sizeof(maps)));
      descs_.push_back(std::move(desc));
    }
    if (!devices_.empty()) destructor_callbacks_ = DestructorCallbacksRun(platform_, devices_[0]);
    if (!destructor_callbacks_)
      spdlog::info(
          "{}: no memory-object destructor callbacks; a kernel's arguments are all set "
          "again after any buffer is released",
          pname);
  }

  const std::vector<DeviceDesc>& Devices() const override { return descs_; }

  // Whether the platform calls a memory object's destructor callbacks when it is destroyed
  // (OpenCL 1.1; Launch's argument memo relies on them): tried once, on a context of its own.
  static bool DestructorCallbacksRun(cl_platform_id platform, cl_device_id d) {
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err;
    cl_context c = clCreateContext(props, 1, &d, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) return false;
    bool ran = false;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 64, nullptr, &err);
    if (err == CL_SUCCESS) {
      // The callback Launch relies on, so nothing here can outlive a late call.
      const uint64_t before = g_mem_epoch.load(std::memory_order_acquire);
      err = clSetMemObjectDestructorCallback(m, MemDestroyed, nullptr);
      clReleaseMemObject(m);
      // It may come from another thread, a little later.
      for (int i = 0; err == CL_SUCCESS && !ran && i < 200; ++i) {
        ran = g_mem_epoch.load(std::memory_order_acquire) != before;
        if (!ran) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    clReleaseContext(c);
    return err == CL_SUCCESS && ran;
  }

  // Which maps the device allows although a buffer's host-access flag forbids them
  // (proto::kDeviceMapsBeyondHostAccess): each is tried once, on a context of its own.
  static uint32_t MapsBeyondHostAccess(cl_platform_id platform, cl_device_id d) {
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err;
    cl_context c = clCreateContext(props, 1, &d, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) return 0;
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &err);
    uint32_t allowed = 0;
    for (int h = 0; h < 3 && err == CL_SUCCESS; ++h) {
      cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE | proto::kHostAccess[h], 64, nullptr, &err);
      if (err != CL_SUCCESS) break;
      for (int k = 0; k < 3; ++k) {
        if (!proto::SpecRefusesMap(h, k)) continue;
        cl_int rc;
        void* p =
            clEnqueueMapBuffer(q, m, CL_TRUE, proto::kMapKinds[k], 0, 64, 0, nullptr, nullptr, &rc);
        if (rc != CL_SUCCESS || !p) continue;
        allowed |= proto::MapBit(h, k);
        clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr);
        clFinish(q);
      }
      clReleaseMemObject(m);
    }
    if (q) clReleaseCommandQueue(q);
    clReleaseContext(c);
    return allowed;
  }

  Status DeviceInfo(int device, uint32_t param, std::vector<uint8_t>* raw) override {
    if (device < 0 || device >= static_cast<int>(devices_.size()))
      return Status::Error(CL_INVALID_DEVICE, "no such device");
    return Query(raw, [&](size_t n, void* v, size_t* r) {
      return clGetDeviceInfo(devices_[device], param, n, v, r);
    });
  }

  Result<BkContext*> CreateContext(std::span<const int> devices) override {
    auto ids = Ids(devices);
    if (ids.empty()) return Status::Error(CL_INVALID_DEVICE, "no valid device for the context");
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(platform_), 0};
    cl_int err;
    cl_context c = clCreateContext(props, ids.size(), ids.data(), nullptr, nullptr, &err);
    if (err != CL_SUCCESS) return Fail(err, "clCreateContext");
    return Wrap<BkContext>(c);
  }

  Result<BkQueue*> CreateQueue(BkContext* ctx, int device, uint64_t properties) override {
    if (device < 0 || device >= static_cast<int>(devices_.size()))
      return Status::Error(CL_INVALID_DEVICE, "no such device");
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(C(ctx), devices_[device], properties, &err);
    if (err != CL_SUCCESS) return Fail(err, "clCreateCommandQueue");
    return Wrap<BkQueue>(q);
  }

  Result<BkMem*> CreateBuffer(BkContext* ctx, uint64_t flags, size_t size,
                              std::span<const uint8_t> init) override {
    cl_int err;
    const bool copy = !init.empty();
    cl_mem m = clCreateBuffer(C(ctx), flags | (copy ? CL_MEM_COPY_HOST_PTR : 0), size,
                              copy ? const_cast<uint8_t*>(init.data()) : nullptr, &err);
    if (err != CL_SUCCESS) return Fail(err, "clCreateBuffer");
    return Wrap<BkMem>(Tracked(m));
  }

  Result<BkMem*> CreateSubBuffer(BkMem* parent, uint64_t flags, size_t origin,
                                 size_t size) override {
    cl_buffer_region region{origin, size};
    cl_int err;
    cl_mem m = clCreateSubBuffer(M(parent), flags, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err != CL_SUCCESS) return Fail(err, "clCreateSubBuffer");
    return Wrap<BkMem>(Tracked(m));
  }

  Result<BkProgram*> CreateProgramWithSource(BkContext* ctx, std::string_view src) override {
    const char* s = src.data();
    size_t len = src.size();
    cl_int err;
    cl_program p = clCreateProgramWithSource(C(ctx), 1, &s, &len, &err);
    if (err != CL_SUCCESS) return Fail(err, "clCreateProgramWithSource");
    return Wrap<BkProgram>(p);
  }

  Result<BkProgram*> CreateProgramWithBinary(BkContext* ctx, std::span<const int> devices,
                                             const std::vector<std::string>& binaries,
                                             std::vector<int32_t>* binary_status) override {
    auto ids = Ids(devices);
    if (ids.size() != binaries.size() || ids.empty())
      return Status::Error(CL_INVALID_DEVICE, "binary count does not match devices");
    std::vector<size_t> lens;
    std::vector<const unsigned char*> ptrs;
    for (const auto& b : binaries) {
      lens.push_back(b.size());
      ptrs.push_back(reinterpret_cast<const unsigned char*>(b.data()));
    }
    std::vector<cl_int> st(ids.size(), CL_SUCCESS);
    cl_int err;
    cl_program p = clCreateProgramWithBinary(C(ctx), ids.size(), ids.data(), lens.data(),
                                             ptrs.data(), st.data(), &err);
    binary_status->assign(st.begin(), st.end());
    if (err != CL_SUCCESS) return Fail(err, "clCreateProgramWithBinary");
    return Wrap<BkProgram>(p);
  }

  Status BuildProgram(BkProgram* p, std::span<const int> devices,
                      const std::string& options) override {
    auto ids = Ids(devices);
    cl_int err = clBuildProgram(P(p), ids.size(), ids.empty() ? nullptr : ids.data(),
                                options.c_str(), nullptr, nullptr);
    return err == CL_SUCCESS ? Status::Ok() : Fail(err, "clBuildProgram");
  }

  Status CompileProgram(BkProgram* p, std::span<const int> devices, const std::string& options,
                        std::span<BkProgram* const> headers,
                        const std::vector<std::string>& header_names) override {
    auto ids = Ids(devices);
    std::vector<cl_program> hs;
    std::vector<const char*> names;
    for (size_t i = 0; i < headers.size(); ++i) {
      hs.push_back(P(headers[i]));
      names.push_back(header_names[i].c_str());
    }
    cl_int err = clCompileProgram(P(p), ids.size(), ids.empty() ? nullptr : ids.data(),
                                  options.c_str(), hs.size(), hs.empty() ? nullptr : hs.data(),
                                  names.empty() ? nullptr : names.data(), nullptr, nullptr);
    return err == CL_SUCCESS ? Status::Ok() : Fail(err, "clCompileProgram");
  }

  Result<BkProgram*> LinkProgram(BkContext* ctx, std::span<const int> devices,
                                 const std::string& options,
                                 std::span<BkProgram* const> inputs) override {
    auto ids = Ids(devices);
    std::vector<cl_program> in;
    for (auto* i : inputs) in.push_back(P(i));
    cl_int err;
    cl_program p = clLinkProgram(C(ctx), ids.size(), ids.empty() ? nullptr : ids.data(),
                                 options.c_str(), in.size(), in.data(), nullptr, nullptr, &err);
    if (p == nullptr) return Fail(err, "clLinkProgram");
    // A program object may come back with a failed link; the caller reads the log.
    if (err != CL_SUCCESS) {
      clReleaseProgram(p);
      return Fail(err, "clLinkProgram");
    }
    return Wrap<BkProgram>(p);
  }

  Result<std::vector<KernelDesc>> KernelsOf(BkProgram* p) override {
    std::vector<KernelDesc> out;
    size_t n = 0;
    if (clGetProgramInfo(P(p), CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &n) != CL_SUCCESS)
      return out;  // not executable for any device: no kernels
    std::string names(n, '\0');
    clGetProgramInfo(P(p), CL_PROGRAM_KERNEL_NAMES, n, names.data(), nullptr);
    while (!names.empty() && names.back() == '\0') names.pop_back();
    size_t start = 0;
    while (start < names.size()) {
      size_t end = names.find(';', start);
      if (end == std::string::npos) end = names.size();
      KernelDesc kd;
      kd.name = names.substr(start, end - start);
      cl_int err;
      cl_kernel k = clCreateKernel(P(p), kd.name.c_str(), &err);
      if (err == CL_SUCCESS) {
        clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(cl_uint), &kd.num_args, nullptr);
        for (cl_uint i = 0; i < kd.num_args; ++i) kd.args.push_back(ProbeArg(k, i));
        MarkObjectArgs(P(p), k, kd);
        clReleaseKernel(k);
        if (!kd.name.empty()) out.push_back(kd);
      }
      start = end + 1;
    }
    return out;
  }

  // Asks the device which argument sizes it takes, on a kernel object of our own: the sizes
  // it accepts up to about twice the smallest (more than two: it checks nothing), and whether a
  // NULL value passes (buffers and __local). A first answer other than CL_INVALID_ARG_SIZE
  // ends the search, so a scalar costs about twice its size in calls and others one or two.
  // A __local argument: `size` is the smallest size the device takes (the spec refuses 0;
  // NVIDIA takes it).
  static ArgShape LocalShape(cl_kernel k, cl_uint i) {
    return ArgShape{ArgShape::Kind::Local, clSetKernelArg(k, i, 0, nullptr) == CL_SUCCESS ? 0u : 1u,
                    0};
  }

  static ArgShape ProbeArg(cl_kernel k, cl_uint i) {
    constexpr size_t kMaxProbe = proto::kMaxArgBytes;  // the wire's limit for a value argument
    static const std::vector<uint8_t> zeros(2 * kMaxProbe + 1, 0);
    ArgShape shape;
    const bool null_ok = clSetKernelArg(k, i, sizeof(cl_mem), nullptr) == CL_SUCCESS;
    size_t first = 0;
    for (size_t size = 1; size <= kMaxProbe && first == 0; ++size) {
      cl_int rc = clSetKernelArg(k, i, size, zeros.data());
      if (rc == CL_SUCCESS) first = size;
      else if (rc != CL_INVALID_ARG_SIZE) {
        return null_ok ? LocalShape(k, i) : shape;
      }
    }
    if (first == 0) return shape;
    std::vector<size_t> taken{first};
    for (size_t size = first + 1; size <= 2 * first + 2 && taken.size() <= 2; ++size)
      if (clSetKernelArg(k, i, size, zeros.data()) == CL_SUCCESS) taken.push_back(size);
    if (taken.size() > 2) return shape;
    shape.size = static_cast<uint32_t>(taken.back());
    if (taken.size() == 2) shape.also = static_cast<uint32_t>(taken.front());
    const bool mem = null_ok && taken.size() == 1 && first == sizeof(cl_mem);
    shape.kind = mem ? ArgShape::Kind::Mem : ArgShape::Kind::Value;
    return shape;
  }

  // Image and sampler arguments, which the probe cannot tell from 8-byte values: from the
  // device's argument info when the program has it, else from the program's source.
  static void MarkObjectArgs(cl_program p, cl_kernel k, KernelDesc& kd) {
    std::vector<ArgShape::Kind> kinds;
    for (cl_uint i = 0; i < kd.num_args; ++i) {
      char type[128] = {0};
      if (clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof(type) - 1, type, nullptr) !=
          CL_SUCCESS) {
        kinds.clear();
        break;
      }
      kinds.push_back(ObjectArgFromTypeName(type));
    }
    if (kinds.empty()) {
      size_t n = 0;
      if (clGetProgramInfo(p, CL_PROGRAM_SOURCE, 0, nullptr, &n) == CL_SUCCESS && n > 1) {
        std::string src(n, '\0');
        clGetProgramInfo(p, CL_PROGRAM_SOURCE, n, src.data(), nullptr);
        kinds = ObjectArgsFromSource(src, kd.name);
      }
    }
    for (size_t i = 0; i < kinds.size() && i < kd.args.size(); ++i)
      if (kinds[i] != ArgShape::Kind::Unchecked) kd.args[i] = ArgShape{kinds[i], sizeof(void*), 0};
    // __local arguments the probe could not tell (NVIDIA takes a non-NULL value for them, so
    // they probe as taking any size), from the device's argument info where it has it.
    for (cl_uint i = 0; i < kd.num_args && i < kd.args.size(); ++i) {
      cl_kernel_arg_address_qualifier q = 0;
      if (kd.args[i].kind == ArgShape::Kind::Local ||
          clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(q), &q, nullptr) !=
              CL_SUCCESS ||
          q != CL_KERNEL_ARG_ADDRESS_LOCAL)
        continue;
      kd.args[i] = LocalShape(k, i);
    }
  }

  Result<ImageFacts> CreateImage(BkContext* ctx, uint64_t flags, const ImageDesc& d,
                                 const ByteVec* init) override {
    cl_image_format format{d.channel_order, d.channel_type};
    cl_image_desc desc{};
    desc.image_type = d.image_type;
    desc.image_width = d.width;
    desc.image_height = d.height;
    desc.image_depth = d.depth;
    desc.image_array_size = d.array_size;
    desc.image_row_pitch = d.row_pitch;
    desc.image_slice_pitch = d.slice_pitch;
    desc.num_mip_levels = d.mip_levels;
    desc.num_samples = d.samples;
    desc.buffer = M(d.buffer);
    const bool copy = init && !init->empty();
    cl_int err;
    cl_mem m = clCreateImage(C(ctx), flags | (copy ? CL_MEM_COPY_HOST_PTR : 0), &format, &desc,
                             copy ? const_cast<uint8_t*>(init->data()) : nullptr, &err);
    if (err != CL_SUCCESS) return Fail(err, "clCreateImage");
    ImageFacts f;
    f.mem = Wrap<BkMem>(Tracked(m));
    clGetImageInfo(m, CL_IMAGE_ELEMENT_SIZE, sizeof(size_t), &f.element_size, nullptr);
    clGetImageInfo(m, CL_IMAGE_ROW_PITCH, sizeof(size_t), &f.row_pitch, nullptr);
    clGetImageInfo(m, CL_IMAGE_SLICE_PITCH, sizeof(size_t), &f.slice_pitch, nullptr);
    clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof(size_t), &f.mem_size, nullptr);
    return f;
  }

  Result<std::vector<std::pair<uint32_t, uint32_t>>> SupportedImageFormats(
      BkContext* ctx, uint64_t flags, uint32_t image_type) override {
    cl_uint n = 0;
    cl_int err = clGetSupportedImageFormats(C(ctx), flags, image_type, 0, nullptr, &n);
    if (err != CL_SUCCESS) return Fail(err, "clGetSupportedImageFormats");
    std::vector<cl_image_format> fs(n);
    if (n) err = clGetSupportedImageFormats(C(ctx), flags, image_type, n, fs.data(), nullptr);
    if (err != CL_SUCCESS) return Fail(err, "clGetSupportedImageFormats");
    std::vector<std::pair<uint32_t, uint32_t>> out;
    out.reserve(fs.size());
    for (const auto& f : fs) out.emplace_back(f.image_channel_order, f.image_channel_data_type);
    return out;
  }

  Result<BkSampler*> CreateSampler(BkContext* ctx, std::span<const uint64_t> props) override {
    std::vector<cl_sampler_properties> list(props.begin(), props.end());
    list.push_back(0);
    cl_int err;
    cl_sampler smp = clCreateSamplerWithProperties(C(ctx), list.data(), &err);
    if (err != CL_SUCCESS) return Fail(err, "clCreateSamplerWithProperties");
    return Wrap<BkSampler>(smp);
  }

  Result<BkEvent*> WriteImage(BkQueue* q, BkMem* m, const ImageRegion& r, Bytes data,
                              WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    // Pitches 0: the data is packed, so the device computes them from the region.
    cl_int err = clEnqueueWriteImage(Q(q), M(m), CL_FALSE, r.origin, r.region, 0, 0, data->data(),
                                     w.size(), w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueWriteImage");
    KeepAlive(ev, std::move(data));
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> ReadImage(BkQueue* q, BkMem* m, const ImageRegion& r, Bytes dst,
                             WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueReadImage(Q(q), M(m), CL_FALSE, r.origin, r.region, 0, 0, dst->data(),
                                    w.size(), w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueReadImage");
    KeepAlive(ev, std::move(dst));
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> CopyImage(BkQueue* q, BkMem* src, BkMem* dst, const ImageRegion& s,
                             const size_t dst_origin[3], WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueCopyImage(Q(q), M(src), M(dst), s.origin, dst_origin, s.region, w.size(),
                                    w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueCopyImage");
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> CopyImageToBuffer(BkQueue* q, BkMem* src, BkMem* dst, const ImageRegion& s,
                                     size_t dst_offset, WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueCopyImageToBuffer(Q(q), M(src), M(dst), s.origin, s.region, dst_offset,
                                            w.size(), w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueCopyImageToBuffer");
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> CopyBufferToImage(BkQueue* q, BkMem* src, BkMem* dst, size_t src_offset,
                                     const ImageRegion& d, WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueCopyBufferToImage(Q(q), M(src), M(dst), src_offset, d.origin, d.region,
                                            w.size(), w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueCopyBufferToImage");
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> FillImage(BkQueue* q, BkMem* m, const uint8_t color[16], const ImageRegion& r,
                             WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueFillImage(Q(q), M(m), color, r.origin, r.region, w.size(),
                                    w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueFillImage");
    return Wrap<BkEvent>(ev);
  }

  Result<BkKernel*> CreateKernel(BkProgram* p, const std::string& name) override {
    cl_int err;
    cl_kernel k = clCreateKernel(P(p), name.c_str(), &err);
    if (err != CL_SUCCESS) return Fail(err, "clCreateKernel");
    std::lock_guard lk(memo_mu_);
    memos_[k] = KernelMemo{std::make_shared<ArgMemo>(), 1};
    return Wrap<BkKernel>(k);
  }

  Status GetInfo(proto::InfoFamily family, void* obj, int device, uint32_t aux, uint32_t param,
                 std::vector<uint8_t>* raw) override {
    cl_device_id dev = (device >= 0 && device < static_cast<int>(devices_.size()))
                           ? devices_[device]
                           : nullptr;
    using F = proto::InfoFamily;
    switch (family) {
      case F::Program:
        if (param == CL_PROGRAM_BINARIES) return Binaries(static_cast<cl_program>(obj), raw);
        return Query(raw, [&](size_t n, void* v, size_t* r) {
          return clGetProgramInfo(static_cast<cl_program>(obj), param, n, v, r);
        });
      case F::ProgramBuild:
        return Query(raw, [&](size_t n, void* v, size_t* r) {
          return clGetProgramBuildInfo(static_cast<cl_program>(obj), dev, param, n, v, r);
        });
      case F::Kernel:
        return Query(raw, [&](size_t n, void* v, size_t* r) {
          return clGetKernelInfo(static_cast<cl_kernel>(obj), param, n, v, r);
        });
      case F::KernelWorkGroup:
        return Query(raw, [&](size_t n, void* v, size_t* r) {
          return clGetKernelWorkGroupInfo(static_cast<cl_kernel>(obj), dev, param, n, v, r);
        });
      case F::KernelArg:
        return Query(raw, [&](size_t n, void* v, size_t* r) {
          return clGetKernelArgInfo(static_cast<cl_kernel>(obj), aux, param, n, v, r);
        });
      case F::Event:
        return Query(raw, [&](size_t n, void* v, size_t* r) {
          return clGetEventInfo(static_cast<cl_event>(obj), param, n, v, r);
        });
      default:
        return Status::Error(CL_INVALID_VALUE, "query family not served remotely");
    }
  }

  Result<ProfilingTimes> Profiling(BkEvent* e) override {
    ProfilingTimes t;
    cl_int err = clGetEventProfilingInfo(E(e), CL_PROFILING_COMMAND_QUEUED, 8, &t.queued, nullptr);
    if (err != CL_SUCCESS) return Fail(err, "clGetEventProfilingInfo");
    clGetEventProfilingInfo(E(e), CL_PROFILING_COMMAND_SUBMIT, 8, &t.submit, nullptr);
    clGetEventProfilingInfo(E(e), CL_PROFILING_COMMAND_START, 8, &t.start, nullptr);
    clGetEventProfilingInfo(E(e), CL_PROFILING_COMMAND_END, 8, &t.end, nullptr);
    return t;
  }

  Result<BkEvent*> Write(BkQueue* q, BkMem* m, size_t offset, Bytes data,
                         WaitList waits) override {
    const void* src = data->data();
    const size_t size = data->size();
    return WriteFrom(q, m, offset, size, src, std::move(data), waits);
  }

  Result<BkEvent*> Read(BkQueue* q, BkMem* m, size_t offset, size_t size, Bytes dst, WaitList waits,
                        bool blocking, bool want_event) override {
    void* into = dst->data();
    return ReadInto(q, m, offset, size, into, std::move(dst), waits, blocking, want_event);
  }

  Result<BkEvent*> WriteFrom(BkQueue* q, BkMem* m, size_t offset, size_t size, const void* src,
                             std::shared_ptr<void> keep, WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueWriteBuffer(Q(q), M(m), CL_FALSE, offset, size, src, w.size(),
                                      w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueWriteBuffer");
    KeepAlive(ev, std::move(keep));
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> ReadInto(BkQueue* q, BkMem* m, size_t offset, size_t size, void* dst,
                            std::shared_ptr<void> keep, WaitList waits, bool blocking,
                            bool want_event) override {
    cl_event ev = nullptr;
    const bool no_event = blocking && !want_event;
    auto w = Waits(waits);
    cl_int err =
        clEnqueueReadBuffer(Q(q), M(m), blocking ? CL_TRUE : CL_FALSE, offset, size, dst, w.size(),
                            w.empty() ? nullptr : w.data(), no_event ? nullptr : &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueReadBuffer");
    if (no_event) return nullptr;
    if (!blocking) KeepAlive(ev, std::move(keep));
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> Copy(BkQueue* q, BkMem* src, BkMem* dst, size_t src_off, size_t dst_off,
                        size_t size, WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueCopyBuffer(Q(q), M(src), M(dst), src_off, dst_off, size, w.size(),
                                     w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueCopyBuffer");
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> WriteRect(BkQueue* q, BkMem* m, const Rect& r, Bytes data,
                             WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueWriteBufferRect(
        Q(q), M(m), CL_FALSE, r.buffer_origin, r.host_origin, r.region, r.buffer_row_pitch,
        r.buffer_slice_pitch, r.host_row_pitch, r.host_slice_pitch, data->data(), w.size(),
        w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueWriteBufferRect");
    KeepAlive(ev, std::move(data));
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> ReadRect(BkQueue* q, BkMem* m, const Rect& r, Bytes dst,
                            WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueReadBufferRect(
        Q(q), M(m), CL_FALSE, r.buffer_origin, r.host_origin, r.region, r.buffer_row_pitch,
        r.buffer_slice_pitch, r.host_row_pitch, r.host_slice_pitch, dst->data(), w.size(),
        w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueReadBufferRect");
    KeepAlive(ev, std::move(dst));
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> CopyRect(BkQueue* q, BkMem* src, BkMem* dst, const Rect& s, const Rect& d,
                            WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueCopyBufferRect(Q(q), M(src), M(dst), s.buffer_origin, d.buffer_origin,
                                         s.region, s.buffer_row_pitch, s.buffer_slice_pitch,
                                         d.buffer_row_pitch, d.buffer_slice_pitch, w.size(),
                                         w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueCopyBufferRect");
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> Fill(BkQueue* q, BkMem* m, const std::vector<uint8_t>& pattern, size_t offset,
                        size_t size, WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueFillBuffer(Q(q), M(m), pattern.data(), pattern.size(), offset, size,
                                     w.size(), w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueFillBuffer");
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> Launch(BkQueue* q, BkKernel* k, std::span<const KernelArgValue> args,
                          const NDRange& range, WaitList waits, bool want_event) override {
    // Arguments the kernel already holds from its last launch are not set again: a
    // clSetKernelArg costs NVIDIA's driver about 0.3 us, and kernels of real programs take
    // ten or more arguments. A kernel is launched by one thread at a time (OpenCL's own rule
    // for clSetKernelArg), so its memo needs no lock once found; it is held here, as the
    // kernel's last release drops it from the map.
    std::shared_ptr<ArgMemo> held = MemoFor(K(k));
    ArgMemo& memo = *held;
    const uint64_t epoch =
        g_mem_epoch.load(std::memory_order_acquire) + object_epoch_.load(std::memory_order_acquire);
    if (memo.epoch != epoch) {  // values and local sizes still hold; objects may not
      memo.epoch = epoch;
      for (auto& held_arg : memo.args)
        if (held_arg && (held_arg->kind == KernelArgValue::Kind::Mem ||
                         held_arg->kind == KernelArgValue::Kind::Sampler))
          held_arg.reset();
    }
    memo.args.resize(std::max(memo.args.size(), args.size()));
    for (size_t i = 0; i < args.size(); ++i) {
      const auto& a = args[i];
      if (memo.args[i] && SameArg(*memo.args[i], a)) continue;
      memo.args[i].reset();  // unknown until the call below succeeds
      cl_int err = CL_SUCCESS;
      switch (a.kind) {
        case KernelArgValue::Kind::Bytes:
          err = clSetKernelArg(K(k), i, a.bytes.size(), a.bytes.data());
          break;
        case KernelArgValue::Kind::Mem: {
          cl_mem m = M(a.mem);
          err = clSetKernelArg(K(k), i, sizeof(cl_mem), &m);
          break;
        }
        case KernelArgValue::Kind::Local:
          err = clSetKernelArg(K(k), i, a.local_size, nullptr);
          break;
        case KernelArgValue::Kind::Sampler: {
          cl_sampler smp = S(a.sampler);
          err = clSetKernelArg(K(k), i, sizeof(cl_sampler), &smp);
          break;
        }
      }
      args_set_.fetch_add(1, std::memory_order_relaxed);
      if (err != CL_SUCCESS)
        return Status::Error(err, "clSetKernelArg(" + std::to_string(i) + ") failed with " +
                                      std::to_string(err));
      memo.args[i] = a;
    }
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueNDRangeKernel(Q(q), K(k), range.dims,
                                        range.has_offset ? range.offset : nullptr, range.global,
                                        range.has_local ? range.local : nullptr, w.size(),
                                        w.empty() ? nullptr : w.data(), want_event ? &ev : nullptr);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueNDRangeKernel");
    return want_event ? Wrap<BkEvent>(ev) : nullptr;
  }

  uint64_t KernelArgsSet() const override { return args_set_.load(std::memory_order_relaxed); }

  // What a kernel object was last given for each argument (Launch). Its memory objects and
  // samplers count only while no memory object has been destroyed (g_mem_epoch) and no
  // sampler released (object_epoch_) since, as a new one may take a gone one's address.
  // (object_epoch_ also counts every release of a memory object where the platform calls no
  // destructor callbacks.) The sum of the two changes whenever either does.
  struct ArgMemo {
    uint64_t epoch = 0;
    std::vector<std::optional<KernelArgValue>> args;
  };
  static bool SameArg(const KernelArgValue& a, const KernelArgValue& b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
      case KernelArgValue::Kind::Bytes: return a.bytes == b.bytes;
      case KernelArgValue::Kind::Mem: return a.mem == b.mem;
      case KernelArgValue::Kind::Local: return a.local_size == b.local_size;
      case KernelArgValue::Kind::Sampler: return a.sampler == b.sampler;
    }
    return false;
  }
  // A kernel's memo and the references rgpud holds to the kernel (its creation, then
  // Retain and Release): the last release forgets the memo, so a kernel made later at the
  // same address never inherits it, while the scheduler's own references to a held launch's
  // kernel come and go without costing the next launch its arguments. refs 0: not counted
  // (no such kernel was created here), forgotten at any release.
  struct KernelMemo {
    std::shared_ptr<ArgMemo> memo;
    int64_t refs = 0;
  };
  std::shared_ptr<ArgMemo> MemoFor(cl_kernel k) {
    std::lock_guard lk(memo_mu_);
    auto& m = memos_[k];
    if (!m.memo) m.memo = std::make_shared<ArgMemo>();
    return m.memo;
  }
  // A memory object a kernel may be given: its destruction is counted in g_mem_epoch.
  cl_mem Tracked(cl_mem m) {
    if (destructor_callbacks_ &&
        clSetMemObjectDestructorCallback(m, MemDestroyed, nullptr) != CL_SUCCESS)
      destructor_callbacks_ = false;  // from now on every release counts (Release)
    return m;
  }
  std::mutex memo_mu_;
  std::unordered_map<cl_kernel, KernelMemo> memos_;  // GUARDED_BY(memo_mu_)
  std::atomic<uint64_t> object_epoch_{1};
  std::atomic<bool> destructor_callbacks_{false};
  std::atomic<uint64_t> args_set_{0};

 public:
  Result<BkMem*> RegisterHostMemory(BkContext* ctx, void* p, size_t size) override {
    cl_int err;
    cl_mem m = clCreateBuffer(C(ctx), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, size, p, &err);
    if (err != CL_SUCCESS) return Fail(err, "clCreateBuffer(CL_MEM_USE_HOST_PTR)");
    return Wrap<BkMem>(m);
  }

  Result<BkEvent*> Marker(BkQueue* q, WaitList waits) override {
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueMarkerWithWaitList(Q(q), w.size(), w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueMarkerWithWaitList");
    return Wrap<BkEvent>(ev);
  }

  Result<BkEvent*> Barrier(BkQueue* q, WaitList waits, bool want_event) override {
    cl_event ev = nullptr;
    auto w = Waits(waits);
    cl_int err = clEnqueueBarrierWithWaitList(Q(q), w.size(), w.empty() ? nullptr : w.data(),
                                              want_event ? &ev : nullptr);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueBarrierWithWaitList");
    return want_event ? Wrap<BkEvent>(ev) : nullptr;
  }

  Result<BkEvent*> Migrate(BkQueue* q, std::span<BkMem* const> mems, uint64_t flags,
                           WaitList waits) override {
    std::vector<cl_mem> ms;
    for (auto* m : mems) ms.push_back(M(m));
    cl_event ev;
    auto w = Waits(waits);
    cl_int err = clEnqueueMigrateMemObjects(Q(q), ms.size(), ms.data(), flags, w.size(),
                                            w.empty() ? nullptr : w.data(), &ev);
    if (err != CL_SUCCESS) return Fail(err, "clEnqueueMigrateMemObjects");
    return Wrap<BkEvent>(ev);
  }

  Status Wait(std::span<BkEvent* const> events) override {
    std::vector<cl_event> evs;
    for (BkEvent* e : events) evs.push_back(E(e));
    cl_int err = clWaitForEvents(evs.size(), evs.data());
    // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: some event failed; the caller reads
    // each one's status.
    if (err == CL_SUCCESS || err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) return Status::Ok();
    return Fail(err, "clWaitForEvents");
  }

  Status Flush(BkQueue* q) override {
    cl_int err = clFlush(Q(q));
    return err == CL_SUCCESS ? Status::Ok() : Fail(err, "clFlush");
  }
  Status Finish(BkQueue* q) override {
    cl_int err = clFinish(Q(q));
    return err == CL_SUCCESS ? Status::Ok() : Fail(err, "clFinish");
  }

  Result<BkEvent*> CreateUserEvent(BkContext* ctx) override {
    cl_int err;
    cl_event e = clCreateUserEvent(C(ctx), &err);
    if (err != CL_SUCCESS) return Fail(err, "clCreateUserEvent");
    return Wrap<BkEvent>(e);
  }
  Status SetUserEventStatus(BkEvent* e, int32_t status) override {
    cl_int err = clSetUserEventStatus(E(e), status);
    return err == CL_SUCCESS ? Status::Ok() : Fail(err, "clSetUserEventStatus");
  }
  Result<BkEvent*> FailedEvent(BkContext* ctx, int32_t code) override {
    auto e = CreateUserEvent(ctx);
    if (!e.ok()) return e;
    clSetUserEventStatus(E(*e), code < 0 ? code : CL_OUT_OF_RESOURCES);
    return e;
  }

  int32_t EventStatus(BkEvent* e) override {
    cl_int st = CL_OUT_OF_RESOURCES;
    clGetEventInfo(E(e), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, nullptr);
    return st;
  }

  void OnComplete(BkEvent* e, CompletionFn fn, Urgency urgency = Urgency::kNormal) override {
    watcher_.Watch(E(e), std::move(fn), urgency);
  }

  void Retain(proto::ObjType type, void* h) override {
    using T = proto::ObjType;
    switch (type) {
      case T::Context: clRetainContext(static_cast<cl_context>(h)); break;
      case T::Queue: clRetainCommandQueue(static_cast<cl_command_queue>(h)); break;
      case T::Mem: clRetainMemObject(static_cast<cl_mem>(h)); break;
      case T::Program: clRetainProgram(static_cast<cl_program>(h)); break;
      case T::Kernel: {
        std::lock_guard lk(memo_mu_);
        auto it = memos_.find(static_cast<cl_kernel>(h));
        if (it != memos_.end() && it->second.refs > 0) ++it->second.refs;
        clRetainKernel(static_cast<cl_kernel>(h));
        break;
      }
      case T::Event: clRetainEvent(static_cast<cl_event>(h)); break;
      case T::Sampler: clRetainSampler(static_cast<cl_sampler>(h)); break;
      default: break;
    }
  }

  void Release(proto::ObjType type, void* h) override {
    using T = proto::ObjType;
    switch (type) {
      case T::Context: clReleaseContext(static_cast<cl_context>(h)); break;
      case T::Queue: clReleaseCommandQueue(static_cast<cl_command_queue>(h)); break;
      case T::Mem:
        // A later object at the same address must not pass for this one in a kernel's memo:
        // its destructor callback says when it is gone (Tracked), or, on a platform that
        // calls none, every release counts.
        if (!destructor_callbacks_.load(std::memory_order_acquire))
          object_epoch_.fetch_add(1, std::memory_order_acq_rel);
        clReleaseMemObject(static_cast<cl_mem>(h));
        break;
      case T::Program: clReleaseProgram(static_cast<cl_program>(h)); break;
      case T::Kernel: {
        std::lock_guard lk(memo_mu_);
        auto it = memos_.find(static_cast<cl_kernel>(h));
        if (it != memos_.end() && --it->second.refs <= 0) memos_.erase(it);
        clReleaseKernel(static_cast<cl_kernel>(h));
        break;
      }
      case T::Event: clReleaseEvent(static_cast<cl_event>(h)); break;
      case T::Sampler:
        object_epoch_.fetch_add(1, std::memory_order_acq_rel);
        clReleaseSampler(static_cast<cl_sampler>(h));
        break;
      default: break;
    }
  }

 private:
  // CL_PROGRAM_BINARIES answers pointers into the caller's memory; on the wire it becomes
  // each device's binary as a length-prefixed byte string, in device order.
  static Status Binaries(cl_program p, std::vector<uint8_t>* raw) {
    size_t n = 0;
    cl_int err = clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, 0, nullptr, &n);
    if (err != CL_SUCCESS) return Fail(err, "clGetProgramInfo");
    std::vector<size_t> sizes(n / sizeof(size_t));
    clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, n, sizes.data(), nullptr);
    std::vector<std::vector<unsigned char>> bins(sizes.size());
    std::vector<unsigned char*> ptrs;
    for (size_t i = 0; i < sizes.size(); ++i) {
      bins[i].resize(sizes[i]);
      ptrs.push_back(bins[i].data());
    }
    err = clGetProgramInfo(p, CL_PROGRAM_BINARIES, ptrs.size() * sizeof(void*), ptrs.data(), nullptr);
    if (err != CL_SUCCESS) return Fail(err, "clGetProgramInfo");
    raw->clear();
    proto::Writer w(raw);
    for (auto& b : bins) w.bytes(b.data(), b.size());
    return Status::Ok();
  }

  template <typename Fn>
  static Status Query(std::vector<uint8_t>* raw, Fn fn) {
    size_t n = 0;
    cl_int err = fn(0, nullptr, &n);
    if (err != CL_SUCCESS) return Status::Error(err, "query failed with " + std::to_string(err));
    if (n > proto::kMaxBody - 64) return Status::Error(CL_OUT_OF_RESOURCES, "answer too large");
    raw->resize(n);
    err = fn(n, raw->data(), nullptr);
    if (err != CL_SUCCESS) return Status::Error(err, "query failed with " + std::to_string(err));
    return Status::Ok();
  }

  std::vector<cl_device_id> Ids(std::span<const int> devices) const {
    std::vector<cl_device_id> ids;
    for (int d : devices)
      if (d >= 0 && d < static_cast<int>(devices_.size())) ids.push_back(devices_[d]);
    return ids;
  }

  static std::vector<cl_event> Waits(WaitList waits) {
    std::vector<cl_event> w;
    w.reserve(waits.size());
    for (auto* e : waits) w.push_back(E(e));
    return w;
  }

  // Host memory of a non-blocking transfer must live until the command completes.
  // Holds `memory` (the host side of a transfer) until the command completes.
  void KeepAlive(cl_event ev, std::shared_ptr<void> memory) {
    OnComplete(Wrap<BkEvent>(ev), [memory = std::move(memory)](int32_t) {});
  }

  cl_platform_id platform_;
  std::vector<cl_device_id> devices_;
  CompletionWatcher watcher_;
  std::vector<DeviceDesc> descs_;
};

}  // namespace

Result<std::unique_ptr<Backend>> OpenOpenCLBackend(const std::string& filter) {
  cl_uint n = 0;
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0)
    return Status::Error(CL_DEVICE_NOT_FOUND, "no OpenCL platform found");
  std::vector<cl_platform_id> ps(n);
  clGetPlatformIDs(n, ps.data(), nullptr);
  cl_platform_id best = nullptr;
  std::vector<cl_device_id> best_devs;
  int best_rank = -1;
  std::string seen;
  for (cl_platform_id p : ps) {
    std::string name = PlatformString(p, CL_PLATFORM_NAME);
    seen += (seen.empty() ? "" : ", ") + name;
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    if (name == "rgpu") continue;  // never serve our own ICD back to ourselves
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> ds(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr);
    cl_uint ngpu = 0;
    clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR, 0, nullptr, &ngpu);
    int rank = ngpu > 0 ? 2 : 1;  // a GPU platform before a CPU-only one (PoCL)
    if (rank > best_rank) {
      best_rank = rank;
      best = p;
      best_devs = ds;
    }
  }
  if (!best)
    return Status::Error(CL_DEVICE_NOT_FOUND, "no OpenCL platform with devices matches '" +
                                                  filter + "' (platforms: " + seen + ")");
  return std::unique_ptr<Backend>(new OpenCLBackend(best, std::move(best_devs)));
}

}  // namespace rgpu::server
