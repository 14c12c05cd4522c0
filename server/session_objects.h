// The records of a session's object table (Session::objects_): one struct per kind of
// object, each holding the backend handle, the object it was made from, and only the facts
// of its own kind. A handler finds an id as one kind (Session::Lookup<R>) and so cannot read
// or write another kind's fields.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "proto/wire.h"
#include "server/backend/backend.h"
#include "server/scheduler/scheduler.h"
#include "server/scheduler/slicer.h"

namespace rgpu::server {

// What every record starts with. `handle` is one backend reference, the session's.
template <proto::ObjType kKind, typename Handle>
struct RecordOf {
  static constexpr proto::ObjType kType = kKind;
  Handle* handle = nullptr;
  uint64_t parent = 0;  // the context of a queue, memory object, program, event or sampler;
                        // a kernel's program; none for a context
};

struct ContextRecord : RecordOf<proto::ObjType::Context, BkContext> {};

struct QueueRecord : RecordOf<proto::ObjType::Queue, BkQueue> {
  int device = -1;
  bool in_order = true;
  // Unique in rgpud (never reused), and the number of commands enqueued on it so far: the
  // scheduler tells from them that one held launch directly follows another
  // (LaunchRequest::queue_serial).
  uint64_t serial = 0;
  uint64_t commands = 0;
  // The last command on it whose completion the session can tell (its number; 0: none), and
  // its checkpoint's place among the commands issued (0: it was complete when answered, as a
  // read waited for in rgpud, or every command so far was, after a clFinish waited for in
  // rgpud). See Session::FillFairLaunch.
  uint64_t judged_command = 0;
  uint64_t judged_seq = 0;
  // rgpud's own queues of its context and device (Session::ExecQueue), once asked for: they
  // live as long as the session, and this saves two lookups on every launch under `fair`.
  BkQueue* exec_queue = nullptr;
  BkQueue* ctl_queue = nullptr;
  // Its twin without profiling (LaunchPipe, "Twins"), made by Session::TwinOf at the first
  // launch that could go there, released with the queue. `may_twin`: one is yet to be tried
  // (set at creation for a queue made without properties, with --twin-queues on).
  BkQueue* twin = nullptr;
  bool may_twin = false;
};

// Buffers, sub-buffers and images.
struct MemRecord : RecordOf<proto::ObjType::Mem, BkMem> {
  uint64_t size = 0;
  uint64_t charged = 0;  // bytes charged to the tenant's quota, refunded at release
  // Images (image_type not 0): a pixel's size, as the device says, and the extent that
  // origins and regions are checked against.
  uint32_t image_type = 0;
  uint64_t element_size = 0;
  uint64_t image_extent[3] = {0, 0, 0};  // width, height or layers, depth or layers
};

struct ProgramRecord : RecordOf<proto::ObjType::Program, BkProgram> {
  // The source (rewritten for slicing at build time when the policy slices) and the rewrite
  // that was built, if any.
  std::string source;
  std::shared_ptr<const slicer::RewrittenProgram> rewrite;
  // A rewritten program's binaries must not carry the hidden argument: they come from the
  // original source, built on demand with the same options (one more backend reference).
  std::string build_options;
  std::vector<int> build_devices;
  BkProgram* original = nullptr;
  // Each kernel's argument shapes, from the build, handed to the kernels made from it.
  std::map<std::string, std::vector<ArgShape>> kernel_shapes;
};

struct KernelRecord : RecordOf<proto::ObjType::Kernel, BkKernel> {
  std::string kernel_name;
  std::vector<KernelArgValue> args;   // the arguments set so far
  std::vector<uint64_t> arg_mem_ids;  // the buffer, image or sampler each names (0 = none)
  // The shapes of its arguments: those that take objects (buffers, images, samplers) never
  // take raw bytes from the client.
  std::vector<ArgShape> arg_shapes;
  // Its slicing facts, and the second instance (one more backend reference) the
  // scheduler's dispatcher uses.
  std::shared_ptr<const slicer::RewrittenProgram> kernel_rewrite;  // keeps slice_info alive
  const slicer::KernelInfo* slice_info = nullptr;
  BkKernel* sched_kernel = nullptr;
};

struct EventRecord : RecordOf<proto::ObjType::Event, BkEvent> {
  bool is_user_event = false;
  bool user_event_set = false;  // user events: the client set its status
  // Events of launches that ran in slices: their profiling times.
  std::shared_ptr<LaunchTimes> times;
};

struct SamplerRecord : RecordOf<proto::ObjType::Sampler, BkSampler> {};

using ObjectRecord = std::variant<ContextRecord, QueueRecord, MemRecord, ProgramRecord,
                                  KernelRecord, EventRecord, SamplerRecord>;

inline proto::ObjType TypeOf(const ObjectRecord& o) {
  return std::visit([](const auto& r) { return std::decay_t<decltype(r)>::kType; }, o);
}

inline void* HandleOf(const ObjectRecord& o) {
  return std::visit([](const auto& r) -> void* { return r.handle; }, o);
}

}  // namespace rgpu::server
