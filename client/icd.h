// librgpu-icd: the OpenCL objects the application holds, and helpers shared by the files
// that implement the API (one file per object family).
//
// Every object starts with the ICD dispatch pointer (cl_khr_icd), then a type tag that
// each entry point checks before trusting the handle. An object lives while the
// application holds it (app_refs) or another object needs it (total): releasing a context
// whose buffers are still alive tells the server at once but keeps our bookkeeping.
#pragma once

#include <CL/cl.h>
#include <CL/cl_icd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/connection.h"
#include "proto/wire.h"

namespace rgpu::client {

extern cl_icd_dispatch g_dispatch;

// Host memory [begin, end) that a read fills or a write takes its data from.
struct HostRange {
  uintptr_t begin = 0, end = 0;
  bool Overlaps(const HostRange& o) const { return begin < o.end && o.begin < end; }
};
// How the device takes one kernel argument (server/backend/backend.h ArgShape, the kernel
// list in docs/protocol.md): clSetKernelArg checks against it without a round trip.
struct ArgShape {
  enum Kind : uint8_t { Unchecked = 0, Value = 1, Mem = 2, Local = 3, Image = 4, Sampler = 5 };
  uint8_t kind = Unchecked;
  uint32_t size = 0;
  uint32_t also = 0;  // a second size the device takes (0: none)
};

inline HostRange RangeOf(const void* p, size_t len) {
  auto b = reinterpret_cast<uintptr_t>(p);
  return {b, b + len};
}

enum class Tag : uint32_t {
  Platform = 0x52504c54,
  Device = 0x52444556,
  Context = 0x52435458,
  Queue = 0x52515545,
  Mem = 0x524d454d,
  Program = 0x52505247,
  Kernel = 0x524b524e,
  Event = 0x52455654,
  Sampler = 0x52534d50,
  Dead = 0xdeadbeef,
};

struct ObjectBase {
  cl_icd_dispatch* dispatch = &g_dispatch;
  Tag tag;
  std::atomic<int> app_refs{1};
  std::atomic<int> total{1};
  explicit ObjectBase(Tag t) : tag(t) {}
  // Not virtual: the dispatch pointer must be the first word of every object, so no vtable.
  ~ObjectBase() { tag = Tag::Dead; }
};

template <typename T>
void Hold(T* o) {
  if (o) o->total.fetch_add(1);
}
template <typename T>
void Drop(T* o) {
  if (o && o->total.fetch_sub(1) == 1) delete o;
}

}  // namespace rgpu::client

struct _cl_platform_id : rgpu::client::ObjectBase {
  _cl_platform_id() : ObjectBase(rgpu::client::Tag::Platform) {}
};

struct _cl_device_id : rgpu::client::ObjectBase {
  _cl_device_id() : ObjectBase(rgpu::client::Tag::Device) {}
  std::shared_ptr<rgpu::client::Connection> conn;
  uint32_t index = 0;  // the device's number on its server
  std::map<uint32_t, std::vector<uint8_t>> info;  // host-form answers, as we present them
  template <typename T>
  T Get(cl_uint param, T fallback = T{}) const {
    auto it = info.find(param);
    if (it == info.end() || it->second.size() < sizeof(T)) return fallback;
    T v;
    std::memcpy(&v, it->second.data(), sizeof(T));
    return v;
  }
};

struct _cl_context : rgpu::client::ObjectBase {
  _cl_context() : ObjectBase(rgpu::client::Tag::Context) {}
  ~_cl_context();
  std::shared_ptr<rgpu::client::Connection> conn;
  uint64_t id = 0;
  std::vector<cl_device_id> devices;
  std::vector<cl_context_properties> properties;
  void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*) = nullptr;
  void* notify_data = nullptr;
  // clSetContextDestructorCallback: run in reverse order once nothing holds the context.
  std::mutex mu;
  std::vector<std::pair<void(CL_CALLBACK*)(cl_context, void*), void*>> destructors;  // GUARDED_BY(mu)
  bool HasDevice(cl_device_id d) const;
};

struct _cl_command_queue : rgpu::client::ObjectBase {
  _cl_command_queue() : ObjectBase(rgpu::client::Tag::Queue) {}
  ~_cl_command_queue();
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  uint64_t id = 0;
  cl_command_queue_properties properties = 0;
  std::vector<cl_queue_properties> properties_array;  // as given to ...WithProperties
  // Reads whose data has not reached the application yet, by the host memory they fill
  // (see event.cpp).
  std::mutex mu;
  std::condition_variable cv;
  struct PendingRead {
    rgpu::client::HostRange into;
    uint64_t seq;  // the read's number in this queue (_cl_event::read_seq)
    // Its data has landed (the event, held); on an in-order queue it completes once the
    // reads before it have (ReadLanded).
    cl_event landed = nullptr;
    cl_int status = 0;
    bool releasing = false;  // a thread is completing its event (ReadLanded)
  };
  std::vector<PendingRead> pending_reads;  // GUARDED_BY(mu)
  uint64_t reads_started = 0;              // GUARDED_BY(mu)
  // Counts `e` (a read's event) among the queue's pending reads until ReadLanded. On an
  // in-order queue a read's event completes only after the reads enqueued before it.
  void AddPendingRead(cl_event e);
  void WaitReads();
  // Waits for the reads started before read number `seq`. rgpud may answer a blocking read
  // before an earlier non-blocking one (the former from its reader, the latter from the
  // completion thread), so on an in-order queue a blocking read waits for those too.
  void WaitReadsBefore(uint64_t seq);
  // Whether a read numbered below `seq` that fills memory overlapping `r` is still pending: its
  // data may not be in place yet (a read staged, scattered or copied from the shared region
  // puts it there only as its event lands).
  bool EarlierReadPendingInto(uint64_t seq, rgpu::client::HostRange r);
  // Whether a read numbered below `seq` has not landed yet.
  bool ReadsPendingBefore(uint64_t seq);
  // Waits only for the reads that fill memory overlapping [p, p + len).
  void WaitReadsInto(rgpu::client::HostRange r);
  rgpu::client::Connection& conn() const { return *context->conn; }
};

struct Mapping {
  void* ptr;
  size_t offset, size;
  cl_map_flags flags;
  bool owned;  // allocated by us (not the application's USE_HOST_PTR memory)
  // Images: the mapped region and the pitches the application was given.
  bool image = false;
  size_t origin[3] = {0, 0, 0}, region[3] = {0, 0, 0};
  size_t row_pitch = 0, slice_pitch = 0;
};

// What the client knows of an image: as created, and as the device reported it.
struct ImageInfo {
  cl_image_format format{};
  cl_image_desc desc{};            // as given (desc.buffer: the application's buffer)
  size_t element_size = 0;         // the device's answers, from the CreateImage reply
  size_t row_pitch = 0, slice_pitch = 0, mem_size = 0;
  size_t host_row_pitch = 0, host_slice_pitch = 0;  // USE_HOST_PTR memory's layout
};

struct _cl_mem : rgpu::client::ObjectBase {
  _cl_mem() : ObjectBase(rgpu::client::Tag::Mem) {}
  ~_cl_mem();
  cl_context context = nullptr;
  uint64_t id = 0;
  cl_mem_flags flags = 0;
  size_t size = 0;
  void* host_ptr = nullptr;
  cl_mem parent = nullptr;  // sub-buffers
  size_t origin = 0;
  std::vector<cl_mem_properties> properties;  // as given to clCreateBufferWithProperties
  std::unique_ptr<ImageInfo> image;           // images only
  std::mutex mu;
  std::vector<Mapping> maps;  // GUARDED_BY(mu)
  // The host memory of the last unmapped buffer mapping, kept for the next map: fresh pages
  // for every map cost a page fault each (a map of 256 MiB faulted 65,536 times and ran at
  // 1.7 GB/s on the H200). Freed with the buffer.
  void* spare_map = nullptr;  // GUARDED_BY(mu)
  size_t spare_bytes = 0;     // GUARDED_BY(mu)
  struct Destructor {
    void(CL_CALLBACK* fn)(cl_mem, void*);
    void* data;
  };
  std::vector<Destructor> destructors;  // GUARDED_BY(mu)
};

struct _cl_sampler : rgpu::client::ObjectBase {
  _cl_sampler() : ObjectBase(rgpu::client::Tag::Sampler) {}
  ~_cl_sampler();
  cl_context context = nullptr;
  uint64_t id = 0;
  cl_bool normalized = CL_TRUE;
  cl_addressing_mode addressing = CL_ADDRESS_CLAMP;
  cl_filter_mode filter = CL_FILTER_NEAREST;
  std::vector<cl_sampler_properties> properties;  // as given to ...WithProperties
};

struct _cl_program : rgpu::client::ObjectBase {
  _cl_program() : ObjectBase(rgpu::client::Tag::Program) {}
  ~_cl_program();
  cl_context context = nullptr;
  uint64_t id = 0;
  std::string source;
  bool from_binary = false;
  std::mutex mu;
  std::map<std::string, cl_uint> kernels;  // GUARDED_BY(mu): name -> argument count
  std::map<std::string, std::vector<rgpu::client::ArgShape>> arg_shapes;  // GUARDED_BY(mu)
  bool built = false;                      // GUARDED_BY(mu)
  // Built as OpenCL C 2.0 or newer without -cl-uniform-work-group-size: launches may have
  // non-uniform work-groups where the device supports them.
  std::atomic<bool> non_uniform_ok{false};
  std::atomic<int> kernel_count{0};        // live kernels (CL_INVALID_OPERATION on rebuild)
};

struct _cl_kernel : rgpu::client::ObjectBase {
  _cl_kernel() : ObjectBase(rgpu::client::Tag::Kernel) {}
  ~_cl_kernel();
  cl_program program = nullptr;
  uint64_t id = 0;
  std::string name;
  cl_uint num_args = 0;
  std::vector<rgpu::client::ArgShape> arg_shapes;  // as the device checks them; may be short
  std::mutex mu;
  std::vector<bool> arg_set;  // GUARDED_BY(mu)
};

struct _cl_event : rgpu::client::ObjectBase {
  _cl_event() : ObjectBase(rgpu::client::Tag::Event) {}
  ~_cl_event();
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // null for user events
  uint64_t id = 0;
  cl_command_type type = 0;
  bool profiling = false;
  // Local knowledge: a read's event completes here only once its data has landed.
  std::mutex mu;
  std::condition_variable cv;
  bool is_read = false;           // set before the event is shared
  rgpu::client::HostRange read_into;  // a read's host memory; set before the event is shared
  uint64_t read_seq = 0;              // the read's number in its queue; set with read_into
  // Set before the read's request is sent; run (and cleared) by the thread that lands the
  // event, just before it does (MarkLanded), so in the order of the queue's reads.
  std::function<void(cl_int)> on_landing;
  // In-order queues: how many reads the queue had started when this command was enqueued.
  // Its completion implies theirs, so it is not reported complete before their data landed.
  uint64_t reads_before = 0;
  bool landed = false;            // GUARDED_BY(mu)
  std::atomic<bool> landed_hint{false};  // set with `landed`: lets a blocked reader spin first
  cl_int local_status = 1;        // GUARDED_BY(mu); >0 = unknown, else CL_COMPLETE or error
  bool watching = false;          // GUARDED_BY(mu): server will send EventDone
  struct Callback {
    void(CL_CALLBACK* fn)(cl_event, cl_int, void*);
    void* data;
  };
  std::vector<Callback> callbacks;  // GUARDED_BY(mu)
  bool has_times = false;           // GUARDED_BY(mu)
  cl_ulong times[4] = {0, 0, 0, 0}; // GUARDED_BY(mu)
  // A launch's event: where its request was gathered (Connection::Gathered; gathering 0:
  // written at once) and the request's body size. Set before the event is shared.
  uint64_t launch_gathering = 0;
  size_t launch_end = 0, launch_body = 0;
  rgpu::client::Connection& conn() const { return *context->conn; }
};

namespace rgpu::client {

// --- handle checks, as the spec words them per entry point ---
template <typename T>
inline bool Valid(T* o, Tag t) {
  return o != nullptr && o->tag == t;
}
inline bool ValidContext(cl_context c) { return Valid(c, Tag::Context); }
inline bool ValidQueue(cl_command_queue q) { return Valid(q, Tag::Queue); }
inline bool ValidMem(cl_mem m) { return Valid(m, Tag::Mem); }
inline bool ValidProgram(cl_program p) { return Valid(p, Tag::Program); }
inline bool ValidKernel(cl_kernel k) { return Valid(k, Tag::Kernel); }
inline bool ValidEvent(cl_event e) { return Valid(e, Tag::Event); }
inline bool ValidDevice(cl_device_id d) { return Valid(d, Tag::Device); }
inline bool ValidSampler(cl_sampler s) { return Valid(s, Tag::Sampler); }
inline bool ValidImage(cl_mem m) { return ValidMem(m) && m->image != nullptr; }

// --- memory flags (buffers and images) ---
inline constexpr cl_mem_flags kAccessFlags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
inline constexpr cl_mem_flags kHostAccessFlags =
    CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
inline constexpr cl_mem_flags kHostPtrFlags =
    CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
inline bool OneOrNone(cl_mem_flags f) { return (f & (f - 1)) == 0; }
// CL_INVALID_VALUE unless: only known flags (those above and `also_known`), at most one
// access and one host-access flag, and USE_HOST_PTR without ALLOC or COPY_HOST_PTR.
inline bool MemFlagsValid(cl_mem_flags flags, cl_mem_flags also_known = 0) {
  const cl_mem_flags known = kAccessFlags | kHostAccessFlags | kHostPtrFlags | also_known;
  return !(flags & ~known) && OneOrNone(flags & kAccessFlags) && OneOrNone(flags & kHostAccessFlags) &&
         !((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)));
}

cl_platform_id ThePlatform();
// Connects to the configured servers (once; again after a while if none answered).
std::vector<cl_device_id> AllDevices();

// Copies an info answer out the way every clGet*Info does.
cl_int ReturnInfo(const void* value, size_t value_size, size_t param_value_size,
                  void* param_value, size_t* param_value_size_ret);
// T may be a handle (a pointer to an opaque struct): the pointer's value is the answer.
template <typename T>
cl_int ReturnValue(const T& v, size_t size, void* out, size_t* size_ret) {
  return ReturnInfo(&v, sizeof(T), size, out, size_ret);  // NOLINT(bugprone-sizeof-expression)
}
inline cl_int ReturnString(const std::string& s, size_t size, void* out, size_t* size_ret) {
  return ReturnInfo(s.c_str(), s.size() + 1, size, out, size_ret);
}
// Asks the server for an info value and hands it back in host form.
cl_int RemoteInfo(Connection& c, proto::InfoFamily family, uint64_t id, cl_uint param,
                  int32_t device, uint32_t aux, size_t size, void* out, size_t* size_ret);

inline cl_int SetErr(cl_int* errcode_ret, cl_int code) {
  if (errcode_ret) *errcode_ret = code;
  return code;
}

// Wait-list rules shared by every clEnqueue*: returns CL_SUCCESS or the error to return.
cl_int CheckWaitList(cl_context ctx, cl_uint n, const cl_event* list);
// Writes the common enqueue prefix (queue, new event id, wait list).
void PutCommandHeader(proto::Writer& w, cl_command_queue q, uint64_t event_id, cl_uint n,
                      const cl_event* list);
// Makes the event object an enqueue returns (when the application asked for one).
cl_event NewEvent(cl_command_queue q, cl_command_type type, uint64_t id);
// Waits until every read this command could overlap has landed in host memory.
// (A write takes its data at enqueue; a read filling that memory natively lands first.)
void WaitHostReads(cl_command_queue q, cl_uint n, const cl_event* list, HostRange data);
// Waits for an event locally (data landed) and remotely (device finished).
cl_int WaitEvents(cl_uint n, const cl_event* list);
// Marks a read's data as landed (or failed) and runs what waited for it; drops it from the
// pending reads of `q` (null for a read that never was one: it ran in the call).
void ReadLanded(cl_event e, cl_command_queue q, cl_int status);
void ContextNotify(cl_context c, const std::string& msg);
// Tells the server the application let go of an object (its last application reference).
void SendRelease(Connection& conn, proto::ObjType type, uint64_t id);
void RegisterConnectionCallbacks(const std::shared_ptr<Connection>& conn);

// Tracks which cl_mem values are ours, so clSetKernelArg can tell a buffer from bytes.
bool IsOurMem(const void* p);
void TrackMem(cl_mem m, bool add);
// The same for samplers (client/image.cpp).
bool IsOurSampler(const void* p);

}  // namespace rgpu::client
