// Buffers and sub-buffers, and what every memory object answers (images: client/image.cpp).
#include <unordered_set>

#include "client/enqueue_shared.h"
#include "client/icd.h"
#include "proto/messages.h"

namespace rgpu::client {

using proto::Op;

namespace {
std::mutex g_mems_mu;
std::unordered_set<const void*> g_mems;  // GUARDED_BY(g_mems_mu)
}  // namespace

bool IsOurMem(const void* p) {
  std::lock_guard lk(g_mems_mu);
  return g_mems.count(p) != 0;
}
void TrackMem(cl_mem m, bool add) {
  std::lock_guard lk(g_mems_mu);
  if (add) g_mems.insert(m);
  else g_mems.erase(m);
}

cl_mem CreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size, void* host_ptr, cl_int* err) {
  if (!ValidContext(ctx)) return SetErr(err, CL_INVALID_CONTEXT), nullptr;
  if (flags == 0) flags = CL_MEM_READ_WRITE;
  // CL_INVALID_VALUE if values specified in flags are not valid
  if (!MemFlagsValid(flags)) return SetErr(err, CL_INVALID_VALUE), nullptr;
  // CL_INVALID_BUFFER_SIZE if size is 0 or greater than CL_DEVICE_MAX_MEM_ALLOC_SIZE for
  // all devices in context
  size_t max_alloc = 0;
  for (auto* d : ctx->devices)
    max_alloc = std::max<size_t>(max_alloc, d->Get<cl_ulong>(CL_DEVICE_MAX_MEM_ALLOC_SIZE));
  if (size == 0 || size > max_alloc) return SetErr(err, CL_INVALID_BUFFER_SIZE), nullptr;
  // CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR
  // are set in flags or if host_ptr is not NULL but they are not set
  bool wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  if (wants_ptr != (host_ptr != nullptr)) return SetErr(err, CL_INVALID_HOST_PTR), nullptr;
  // CL_MEM_OBJECT_ALLOCATION_FAILURE if there is a failure to allocate memory for buffer
  // object: the tenant's quota on the server (also enforced there) would be exceeded.
  if (!ctx->conn->ChargeQuota(size)) return SetErr(err, CL_MEM_OBJECT_ALLOCATION_FAILURE), nullptr;

  auto* m = new _cl_mem();
  m->context = ctx;
  Hold(ctx);
  m->flags = flags;
  m->size = size;
  m->host_ptr = (flags & CL_MEM_USE_HOST_PTR) ? host_ptr : nullptr;
  m->id = ctx->conn->NewId();
  // Host-pointer flags describe client memory; the server allocates device memory only.
  // Host-access flags are rules for the application's commands, checked here; the device
  // must not know them, since mapping a CL_MEM_HOST_WRITE_ONLY buffer for CL_MAP_WRITE
  // reads its contents (a host read the device would refuse).
  const proto::CreateBufferRequest req{m->id, ctx->id, flags & ~(kHostPtrFlags | kHostAccessFlags),
                                       size, wants_ptr ? size : 0};
  // The initial contents go through the shared region where the connection has one.
  cl_int rc = CL_SUCCESS;
  if (!wants_ptr || !CreateShared(*ctx->conn, req, host_ptr, &rc))
    rc = ctx->conn
                 ->Send(Op::CreateBuffer, proto::EncodeBody(req), wants_ptr ? host_ptr : nullptr,
                        req.data_size)
                 .ok()
             ? CL_SUCCESS
             : CL_OUT_OF_RESOURCES;
  if (rc != CL_SUCCESS) {
    ctx->conn->RefundQuota(size);
    Drop(m);
    return SetErr(err, CL_OUT_OF_RESOURCES), nullptr;
  }
  TrackMem(m, true);
  SetErr(err, CL_SUCCESS);
  return m;
}

cl_mem CreateBufferWithProperties(cl_context ctx, const cl_mem_properties* props,
                                  cl_mem_flags flags, size_t size, void* host_ptr, cl_int* err) {
  if (props && *props != 0) return SetErr(err, CL_INVALID_PROPERTY), nullptr;
  cl_mem m = CreateBuffer(ctx, flags, size, host_ptr, err);
  // CL_MEM_PROPERTIES: "an empty list" if properties was NULL, else the list as given.
  if (m && props) m->properties = {0};
  return m;
}

cl_mem CreateSubBuffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type,
                       const void* info, cl_int* err) {
  // CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object or is a sub-buffer
  if (!ValidMem(parent) || parent->parent) return SetErr(err, CL_INVALID_MEM_OBJECT), nullptr;
  if (type != CL_BUFFER_CREATE_TYPE_REGION || !info) return SetErr(err, CL_INVALID_VALUE), nullptr;
  if ((flags & (kHostPtrFlags | ~(kAccessFlags | kHostAccessFlags))) ||
      !OneOrNone(flags & kAccessFlags) || !OneOrNone(flags & kHostAccessFlags))
    return SetErr(err, CL_INVALID_VALUE), nullptr;
  // Access flags the parent forbids are invalid (a write-only sub-buffer of a read-only one).
  if (((parent->flags & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) ||
      ((parent->flags & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))))
    return SetErr(err, CL_INVALID_VALUE), nullptr;
  // CL_INVALID_VALUE if the buffer was created with CL_MEM_HOST_WRITE_ONLY and flags specify
  // CL_MEM_HOST_READ_ONLY, or if buffer was created with CL_MEM_HOST_READ_ONLY and flags
  // specify CL_MEM_HOST_WRITE_ONLY, or if buffer was created with CL_MEM_HOST_NO_ACCESS and
  // flags specify CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_WRITE_ONLY
  if (((parent->flags & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY)) ||
      ((parent->flags & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY)) ||
      ((parent->flags & CL_MEM_HOST_NO_ACCESS) &&
       (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY))))
    return SetErr(err, CL_INVALID_VALUE), nullptr;
  const auto* region = static_cast<const cl_buffer_region*>(info);
  // CL_INVALID_BUFFER_SIZE if the size field of the cl_buffer_region structure is 0
  if (region->size == 0) return SetErr(err, CL_INVALID_BUFFER_SIZE), nullptr;
  // CL_INVALID_VALUE if the region is out of bounds of buffer
  if (region->origin > parent->size || region->size > parent->size - region->origin)
    return SetErr(err, CL_INVALID_VALUE), nullptr;
  // CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context associated with
  // buffer for which the origin value is aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN
  bool aligned = false;
  for (auto* d : parent->context->devices) {
    cl_uint bits = d->Get<cl_uint>(CL_DEVICE_MEM_BASE_ADDR_ALIGN, 8);
    if (region->origin % std::max<cl_uint>(bits / 8, 1) == 0) aligned = true;
  }
  if (!aligned) return SetErr(err, CL_MISALIGNED_SUB_BUFFER_OFFSET), nullptr;
  if ((flags & kAccessFlags) == 0) flags |= parent->flags & kAccessFlags;
  if ((flags & kHostAccessFlags) == 0) flags |= parent->flags & kHostAccessFlags;
  auto* m = new _cl_mem();
  m->context = parent->context;
  Hold(m->context);
  m->parent = parent;
  Hold(parent);
  m->flags = flags | (parent->flags & kHostPtrFlags);
  m->size = region->size;
  m->origin = region->origin;
  if (parent->host_ptr) m->host_ptr = static_cast<char*>(parent->host_ptr) + region->origin;
  m->id = m->context->conn->NewId();
  // Host-access flags are checked here, as for buffers.
  const proto::CreateSubBufferRequest req{m->id, parent->id, flags & ~kHostAccessFlags,
                                          region->origin, region->size};
  m->context->conn->Send(Op::CreateSubBuffer, proto::EncodeBody(req));
  TrackMem(m, true);
  SetErr(err, CL_SUCCESS);
  return m;
}


cl_int RetainMemObject(cl_mem m) {
  if (!ValidMem(m)) return CL_INVALID_MEM_OBJECT;
  m->app_refs++;
  Hold(m);
  return CL_SUCCESS;
}

cl_int ReleaseMemObject(cl_mem m) {
  if (!ValidMem(m)) return CL_INVALID_MEM_OBJECT;
  if (m->app_refs.fetch_sub(1) == 1) {
    SendRelease(*m->context->conn, proto::ObjType::Mem, m->id);
    if (!m->parent) m->context->conn->RefundQuota(m->size);
    TrackMem(m, false);
    // Destructor callbacks run in reverse order of registration, once the memory is gone
    // from the application's point of view.
    std::vector<_cl_mem::Destructor> ds;
    {
      std::lock_guard lk(m->mu);
      ds.swap(m->destructors);
      for (auto& map : m->maps)
        if (map.owned) std::free(map.ptr);
      m->maps.clear();
      std::free(m->spare_map);
      m->spare_map = nullptr;
      m->spare_bytes = 0;
    }
    for (auto it = ds.rbegin(); it != ds.rend(); ++it) it->fn(m, it->data);
  }
  Drop(m);
  return CL_SUCCESS;
}

cl_int SetMemObjectDestructorCallback(cl_mem m, void(CL_CALLBACK* fn)(cl_mem, void*), void* data) {
  if (!ValidMem(m)) return CL_INVALID_MEM_OBJECT;
  if (!fn) return CL_INVALID_VALUE;
  std::lock_guard lk(m->mu);
  m->destructors.push_back({fn, data});
  return CL_SUCCESS;
}

cl_int GetMemObjectInfo(cl_mem m, cl_mem_info param, size_t size, void* value, size_t* size_ret) {
  if (!ValidMem(m)) return CL_INVALID_MEM_OBJECT;
  switch (param) {
    case CL_MEM_TYPE:
      return ReturnValue<cl_mem_object_type>(m->image ? m->image->desc.image_type : CL_MEM_OBJECT_BUFFER,
                                             size, value, size_ret);
    case CL_MEM_FLAGS: return ReturnValue(m->flags, size, value, size_ret);
    case CL_MEM_SIZE: return ReturnValue(m->image ? m->image->mem_size : m->size, size, value, size_ret);
    case CL_MEM_HOST_PTR: return ReturnValue(m->host_ptr, size, value, size_ret);
    case CL_MEM_MAP_COUNT: {
      std::lock_guard lk(m->mu);
      return ReturnValue<cl_uint>(m->maps.size(), size, value, size_ret);
    }
    case CL_MEM_REFERENCE_COUNT: return ReturnValue<cl_uint>(m->app_refs.load(), size, value, size_ret);
    case CL_MEM_CONTEXT: return ReturnValue(m->context, size, value, size_ret);
    case CL_MEM_ASSOCIATED_MEMOBJECT: return ReturnValue(m->parent, size, value, size_ret);
    case CL_MEM_OFFSET: return ReturnValue(m->origin, size, value, size_ret);
    case CL_MEM_USES_SVM_POINTER: return ReturnValue<cl_bool>(CL_FALSE, size, value, size_ret);
    case CL_MEM_PROPERTIES:
      return ReturnInfo(m->properties.data(), m->properties.size() * sizeof(cl_mem_properties),
                        size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

}  // namespace rgpu::client

_cl_mem::~_cl_mem() {
  rgpu::client::Drop(parent);
  rgpu::client::Drop(context);
}
