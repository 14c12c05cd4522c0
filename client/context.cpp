// Contexts and command queues.
#include <algorithm>

#include "client/icd.h"
#include "proto/messages.h"
#include "proto/stamps.h"

namespace rgpu::client {

using proto::Op;

cl_context CreateContext(const cl_context_properties* props, cl_uint num_devices,
                         const cl_device_id* devices,
                         void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*),
                         void* user_data, cl_int* err) {
  // CL_INVALID_VALUE if devices is NULL, num_devices is 0, or pfn_notify is NULL but
  // user_data is not NULL
  if (!devices || num_devices == 0 || (!notify && user_data))
    return SetErr(err, CL_INVALID_VALUE), nullptr;
  std::vector<cl_context_properties> pv;
  if (props) {
    for (const cl_context_properties* p = props; *p; p += 2) {
      // CL_INVALID_PLATFORM if the platform in properties is not a valid platform
      // (OpenCL passes the platform as an integer property.)
      if (p[0] == CL_CONTEXT_PLATFORM &&
          reinterpret_cast<cl_platform_id>(p[1]) != ThePlatform())  // NOLINT(performance-no-int-to-ptr)
        return SetErr(err, CL_INVALID_PLATFORM), nullptr;
      if (p[0] != CL_CONTEXT_PLATFORM && p[0] != CL_CONTEXT_INTEROP_USER_SYNC)
        return SetErr(err, CL_INVALID_PROPERTY), nullptr;
      pv.push_back(p[0]);
      pv.push_back(p[1]);
    }
    pv.push_back(0);
  }
  std::shared_ptr<Connection> conn;
  for (cl_uint i = 0; i < num_devices; ++i) {
    // CL_INVALID_DEVICE if devices contains an invalid device
    if (!ValidDevice(devices[i])) return SetErr(err, CL_INVALID_DEVICE), nullptr;
    // One context spans one server: devices of different servers cannot share memory.
    if (conn && devices[i]->conn != conn) return SetErr(err, CL_INVALID_DEVICE), nullptr;
    conn = devices[i]->conn;
  }
  if (!conn->alive()) return SetErr(err, CL_DEVICE_NOT_AVAILABLE), nullptr;
  auto* c = new _cl_context();
  c->conn = conn;
  c->id = conn->NewId();
  c->devices.assign(devices, devices + num_devices);
  c->properties = std::move(pv);
  c->notify = notify;
  c->notify_data = user_data;
  proto::CreateContextRequest req{c->id, {}};
  for (cl_uint i = 0; i < num_devices; ++i) req.devices.push_back(devices[i]->index);
  if (Status s = conn->Send(Op::CreateContext, proto::EncodeBody(req)); !s.ok()) {
    delete c;
    return SetErr(err, CL_OUT_OF_RESOURCES), nullptr;
  }
  SetErr(err, CL_SUCCESS);
  return c;
}

cl_context CreateContextFromType(const cl_context_properties* props, cl_device_type type,
                                 void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*),
                                 void* user_data, cl_int* err) {
  extern cl_int GetDeviceIDs(cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*);
  cl_uint n = 0;
  cl_int rc = GetDeviceIDs(ThePlatform(), type, 0, nullptr, &n);
  if (rc != CL_SUCCESS) return SetErr(err, rc), nullptr;
  std::vector<cl_device_id> ds(n);
  GetDeviceIDs(ThePlatform(), type, n, ds.data(), nullptr);
  // A context spans one server: take the devices of the first one.
  std::vector<cl_device_id> same;
  for (auto* d : ds)
    if (d->conn == ds[0]->conn) same.push_back(d);
  return CreateContext(props, same.size(), same.data(), notify, user_data, err);
}



cl_int RetainContext(cl_context c) {
  if (!ValidContext(c)) return CL_INVALID_CONTEXT;
  c->app_refs++;
  Hold(c);
  return CL_SUCCESS;
}

void SendRelease(Connection& conn, proto::ObjType type, uint64_t id) {
  conn.Send(Op::Release, proto::EncodeBody(proto::ReleaseRequest{type, id}));
}

template <typename T>
cl_int ReleaseRemote(T* o, proto::ObjType type, Connection& conn, uint64_t id) {
  if (o->app_refs.fetch_sub(1) == 1) SendRelease(conn, type, id);
  Drop(o);
  return CL_SUCCESS;
}

cl_int ReleaseContext(cl_context c) {
  if (!ValidContext(c)) return CL_INVALID_CONTEXT;
  return ReleaseRemote(c, proto::ObjType::Context, *c->conn, c->id);
}

cl_int GetContextInfo(cl_context c, cl_context_info param, size_t size, void* value,
                      size_t* size_ret) {
  if (!ValidContext(c)) return CL_INVALID_CONTEXT;
  switch (param) {
    case CL_CONTEXT_REFERENCE_COUNT:
      return ReturnValue<cl_uint>(c->app_refs.load(), size, value, size_ret);
    case CL_CONTEXT_NUM_DEVICES:
      return ReturnValue<cl_uint>(c->devices.size(), size, value, size_ret);
    case CL_CONTEXT_DEVICES:
      return ReturnInfo(c->devices.data(), c->devices.size() * sizeof(cl_device_id), size, value,
                        size_ret);
    case CL_CONTEXT_PROPERTIES:
      return ReturnInfo(c->properties.data(), c->properties.size() * sizeof(cl_context_properties),
                        size, value, size_ret);
    default:
      return CL_INVALID_VALUE;
  }
}

cl_int SetContextDestructorCallback(cl_context c, void(CL_CALLBACK* fn)(cl_context, void*),
                                    void* data) {
  if (!ValidContext(c)) return CL_INVALID_CONTEXT;
  // CL_INVALID_VALUE if pfn_notify is NULL
  if (!fn) return CL_INVALID_VALUE;
  std::lock_guard lk(c->mu);
  c->destructors.emplace_back(fn, data);
  return CL_SUCCESS;
}

void ContextNotify(cl_context c, const std::string& msg) {
  if (c && c->notify) c->notify(msg.c_str(), nullptr, 0, c->notify_data);
}

// ------------------------------------------------------------------ queues

cl_command_queue CreateQueueImpl(cl_context ctx, cl_device_id dev,
                                 cl_command_queue_properties props, cl_int* err) {
  if (!ValidContext(ctx)) return SetErr(err, CL_INVALID_CONTEXT), nullptr;
  // CL_INVALID_DEVICE if device is not a valid device or is not associated with context
  if (!ValidDevice(dev) || !ctx->HasDevice(dev)) return SetErr(err, CL_INVALID_DEVICE), nullptr;
  const cl_command_queue_properties known =
      CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
  // CL_INVALID_VALUE if values specified in properties are not valid
  if (props & ~known) return SetErr(err, CL_INVALID_VALUE), nullptr;
  // CL_INVALID_QUEUE_PROPERTIES if values specified in properties are valid but are not
  // supported by the device
  auto supported = dev->Get<cl_command_queue_properties>(CL_DEVICE_QUEUE_PROPERTIES);
  if (props & ~supported) return SetErr(err, CL_INVALID_QUEUE_PROPERTIES), nullptr;
  auto* q = new _cl_command_queue();
  q->context = ctx;
  Hold(ctx);
  q->device = dev;
  q->properties = props;
  q->id = ctx->conn->NewId();
  ctx->conn->Send(Op::CreateQueue,
                  proto::EncodeBody(proto::CreateQueueRequest{q->id, ctx->id, dev->index, props}));
  SetErr(err, CL_SUCCESS);
  return q;
}

cl_command_queue CreateCommandQueue(cl_context ctx, cl_device_id dev,
                                    cl_command_queue_properties props, cl_int* err) {
  return CreateQueueImpl(ctx, dev, props, err);
}

cl_command_queue CreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
                                                  const cl_queue_properties* props, cl_int* err) {
  cl_command_queue_properties p = 0;
  std::vector<cl_queue_properties> array;
  if (props) {
    for (const cl_queue_properties* x = props; *x; x += 2) {
      if (x[0] == CL_QUEUE_PROPERTIES) p = x[1];
      else return SetErr(err, CL_INVALID_VALUE), nullptr;
      array.insert(array.end(), {x[0], x[1]});
    }
    array.push_back(0);
  }
  cl_command_queue q = CreateQueueImpl(ctx, dev, p, err);
  if (q) q->properties_array = std::move(array);
  return q;
}



cl_int RetainCommandQueue(cl_command_queue q) {
  if (!ValidQueue(q)) return CL_INVALID_COMMAND_QUEUE;
  q->app_refs++;
  Hold(q);
  return CL_SUCCESS;
}

cl_int Finish(cl_command_queue q);

cl_int ReleaseCommandQueue(cl_command_queue q) {
  if (!ValidQueue(q)) return CL_INVALID_COMMAND_QUEUE;
  // clReleaseCommandQueue performs an implicit flush.
  if (q->app_refs.load() == 1) q->conn().Flush();
  return ReleaseRemote(q, proto::ObjType::Queue, q->conn(), q->id);
}

cl_int GetCommandQueueInfo(cl_command_queue q, cl_command_queue_info param, size_t size,
                           void* value, size_t* size_ret) {
  if (!ValidQueue(q)) return CL_INVALID_COMMAND_QUEUE;
  switch (param) {
    case CL_QUEUE_CONTEXT: return ReturnValue(q->context, size, value, size_ret);
    case CL_QUEUE_DEVICE: return ReturnValue(q->device, size, value, size_ret);
    case CL_QUEUE_REFERENCE_COUNT:
      return ReturnValue<cl_uint>(q->app_refs.load(), size, value, size_ret);
    case CL_QUEUE_PROPERTIES: return ReturnValue(q->properties, size, value, size_ret);
    case CL_QUEUE_PROPERTIES_ARRAY:
      return ReturnInfo(q->properties_array.data(),
                        q->properties_array.size() * sizeof(cl_queue_properties), size, value,
                        size_ret);
    // Host queues only (no device-side enqueue): no default device queue.
    case CL_QUEUE_DEVICE_DEFAULT:
      return ReturnValue<cl_command_queue>(nullptr, size, value, size_ret);
    // CL_INVALID_COMMAND_QUEUE if command_queue is not a valid command-queue for param_name
    // (CL_QUEUE_SIZE is defined for device queues only)
    case CL_QUEUE_SIZE: return CL_INVALID_COMMAND_QUEUE;
    default: return CL_INVALID_VALUE;
  }
}

cl_int SetCommandQueueProperty(cl_command_queue, cl_command_queue_properties, cl_bool,
                               cl_command_queue_properties*) {
  return CL_INVALID_OPERATION;  // deprecated in 1.1; not offered
}

cl_int Flush(cl_command_queue q) {
  if (!ValidQueue(q)) return CL_INVALID_COMMAND_QUEUE;
  q->conn().Send(Op::Flush, proto::EncodeBody(proto::FlushRequest{q->id}));
  return q->conn().Flush().ok() ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
}

cl_int Finish(cl_command_queue q) {
  if (!ValidQueue(q)) return CL_INVALID_COMMAND_QUEUE;
  stamps::Mark(stamps::Point::kFinishCall);
  Reply rep = q->conn().Call(Op::Finish, proto::EncodeBody(proto::FinishRequest{q->id}));
  if (!rep.status.ok()) return rep.status.code() == CL_INVALID_COMMAND_QUEUE ? CL_INVALID_COMMAND_QUEUE
                                                                              : CL_OUT_OF_RESOURCES;
  // The device is done; the data of reads may still be on its way into host memory.
  q->WaitReads();
  stamps::Mark(stamps::Point::kFinishReturns);
  return CL_SUCCESS;
}

}  // namespace rgpu::client

_cl_context::~_cl_context() {
  // The error callback is not called once a destructor callback has been (the spec's words);
  // the context is gone for the application when the last of its objects is.
  notify = nullptr;
  for (auto it = destructors.rbegin(); it != destructors.rend(); ++it) it->first(this, it->second);
}

bool _cl_context::HasDevice(cl_device_id d) const {
  for (auto* x : devices)
    if (x == d) return true;
  return false;
}

_cl_command_queue::~_cl_command_queue() { rgpu::client::Drop(context); }

void _cl_command_queue::WaitReads() {
  std::unique_lock lk(mu);
  cv.wait(lk, [&] { return pending_reads.empty(); });
}

void _cl_command_queue::WaitReadsInto(rgpu::client::HostRange r) {
  std::unique_lock lk(mu);
  cv.wait(lk, [&] {
    for (const auto& p : pending_reads)
      if (p.into.Overlaps(r)) return false;
    return true;
  });
}

void _cl_command_queue::AddPendingRead(cl_event e) {
  std::lock_guard lk(mu);
  e->read_seq = ++reads_started;
  pending_reads.push_back({e->read_into, e->read_seq});
}

bool _cl_command_queue::EarlierReadPendingInto(uint64_t seq, rgpu::client::HostRange r) {
  std::lock_guard lk(mu);
  return std::any_of(pending_reads.begin(), pending_reads.end(),
                     [&](const auto& p) { return p.seq < seq && p.into.Overlaps(r); });
}

bool _cl_command_queue::ReadsPendingBefore(uint64_t seq) {
  std::lock_guard lk(mu);
  return !pending_reads.empty() && pending_reads.front().seq < seq;  // in seq order
}

void _cl_command_queue::WaitReadsBefore(uint64_t seq) {
  std::unique_lock lk(mu);
  cv.wait(lk, [&] {
    for (const auto& p : pending_reads)
      if (p.seq < seq) return false;
    return true;
  });
}
