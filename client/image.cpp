// Images and samplers. An image is a cl_mem with ImageInfo; its creation waits for the
// device's answer (errors, pixel size and pitches come from the device itself). Samplers are
// created without a round trip, like buffers. The image commands are in enqueue_image.cpp.
#include <map>
#include <tuple>
#include <unordered_set>

#include "client/icd.h"
#include "proto/image.h"
#include "proto/messages.h"

namespace rgpu::client {

using proto::Op;

namespace {
std::mutex g_samplers_mu;
std::unordered_set<const void*> g_samplers;  // GUARDED_BY(g_samplers_mu)

bool FlagsValid(cl_mem_flags flags) { return MemFlagsValid(flags, CL_MEM_KERNEL_READ_AND_WRITE); }

bool IsImageType(cl_mem_object_type t) {
  return t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
         t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D ||
         t == CL_MEM_OBJECT_IMAGE2D_ARRAY || t == CL_MEM_OBJECT_IMAGE3D;
}

// CL_INVALID_IMAGE_SIZE if image dimensions exceed the maximum image dimensions of every
// device in the context (checked before anything is packed, so that the sizes are bounded).
bool SizeWithinLimits(cl_context ctx, const cl_image_desc& d) {
  for (auto* dev : ctx->devices) {
    auto lim = [&](cl_uint p) { return dev->Get<size_t>(p); };
    bool ok = true;
    const size_t arrays = lim(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
    switch (d.image_type) {
      case CL_MEM_OBJECT_IMAGE1D: ok = d.image_width <= lim(CL_DEVICE_IMAGE2D_MAX_WIDTH); break;
      case CL_MEM_OBJECT_IMAGE1D_BUFFER: ok = d.image_width <= lim(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE); break;
      case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        ok = d.image_width <= lim(CL_DEVICE_IMAGE2D_MAX_WIDTH) && d.image_array_size <= arrays;
        break;
      case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        ok = d.image_array_size <= arrays;
        [[fallthrough]];
      case CL_MEM_OBJECT_IMAGE2D:
        ok = ok && d.image_width <= lim(CL_DEVICE_IMAGE2D_MAX_WIDTH) &&
             d.image_height <= lim(CL_DEVICE_IMAGE2D_MAX_HEIGHT);
        break;
      case CL_MEM_OBJECT_IMAGE3D:
        ok = d.image_width <= lim(CL_DEVICE_IMAGE3D_MAX_WIDTH) &&
             d.image_height <= lim(CL_DEVICE_IMAGE3D_MAX_HEIGHT) &&
             d.image_depth <= lim(CL_DEVICE_IMAGE3D_MAX_DEPTH);
        break;
      default: ok = false;
    }
    if (ok) return true;
  }
  return false;
}

// The layout of the application's host memory for an image: the step between rows (y) and
// between slices (z). A 1D array's images are its rows, `slice_pitch` apart.
bool HostStrides(const cl_image_desc& d, size_t row_bytes, size_t rows, size_t* y, size_t* z) {
  const bool array1d = d.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  size_t row = d.image_row_pitch ? d.image_row_pitch : row_bytes;
  size_t slice = d.image_slice_pitch ? d.image_slice_pitch : (array1d ? row : row * rows);
  // CL_INVALID_IMAGE_DESCRIPTOR if the pitches are smaller than the data they step over
  if (row < row_bytes || (d.image_slice_pitch && slice < (array1d ? row : row * rows))) return false;
  *y = array1d ? slice : row;
  *z = slice;
  return true;
}

// The image's pixels packed tightly, from host memory laid out with strides y and z.
std::vector<uint8_t> Pack(const void* host, size_t row_bytes, size_t rows, size_t slices, size_t y,
                          size_t z) {
  std::vector<uint8_t> out(row_bytes * rows * slices);
  const auto* src = static_cast<const uint8_t*>(host);
  for (size_t k = 0; k < slices; ++k)
    for (size_t j = 0; j < rows; ++j)
      std::memcpy(out.data() + (k * rows + j) * row_bytes, src + k * z + j * y, row_bytes);
  return out;
}

// Rows and slices of the whole image as packed data counts them.
void RowsAndSlices(const cl_image_desc& d, size_t* rows, size_t* slices) {
  *rows = 1;
  *slices = 1;
  switch (d.image_type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: *rows = d.image_array_size; break;
    case CL_MEM_OBJECT_IMAGE2D: *rows = d.image_height; break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: *rows = d.image_height; *slices = d.image_array_size; break;
    case CL_MEM_OBJECT_IMAGE3D: *rows = d.image_height; *slices = d.image_depth; break;
    default: break;
  }
}

proto::CreateImageRequest ImageRequestOf(cl_mem m, cl_context ctx, cl_mem_flags flags,
                                         const cl_image_format& f, const cl_image_desc& d,
                                         const void* host_ptr, size_t data_size) {
  proto::CreateImageRequest req;
  req.mem = m->id;
  req.context = ctx->id;
  // As for buffers: host-pointer flags describe client memory, host-access flags are checked here.
  req.flags = flags & ~(kHostPtrFlags | kHostAccessFlags);
  req.channel_order = f.image_channel_order;
  req.channel_type = f.image_channel_data_type;
  req.image_type = d.image_type;
  req.width = d.image_width;
  req.height = d.image_height;
  req.depth = d.image_depth;
  req.array_size = d.image_array_size;
  // Host data travels packed, so its pitches stay here; without host data the device judges
  // the pitches given (and uses them for an image made from a buffer).
  req.row_pitch = host_ptr ? 0 : d.image_row_pitch;
  req.slice_pitch = host_ptr ? 0 : d.image_slice_pitch;
  req.mip_levels = d.num_mip_levels;
  req.samples = d.num_samples;
  req.buffer = d.mem_object ? d.mem_object->id : 0;
  req.data_size = data_size;
  return req;
}

cl_int CheckImageArgs(cl_context ctx, cl_mem_flags flags, const cl_image_format* f,
                      const cl_image_desc* d, void* host_ptr) {
  if (!ValidContext(ctx)) return CL_INVALID_CONTEXT;
  // CL_INVALID_VALUE if values specified in flags are not valid
  if (!FlagsValid(flags)) return CL_INVALID_VALUE;
  // CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if values specified in image_format are not valid or
  // if image_format is NULL
  // Formats and descriptors are the device's to judge, except where host data must be packed
  // here first: that needs a pixel size rgpu knows and a type with known dimensions.
  if (!f || (host_ptr && proto::ImageElementSize(f->image_channel_order, f->image_channel_data_type) == 0))
    return CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
  // CL_INVALID_IMAGE_DESCRIPTOR if values specified in image_desc are not valid or if
  // image_desc is NULL
  if (!d || (host_ptr && (!IsImageType(d->image_type) || d->image_width == 0)))
    return CL_INVALID_IMAGE_DESCRIPTOR;
  if (d->mem_object && (!ValidMem(d->mem_object) || d->mem_object->image ||
                        d->mem_object->context != ctx))
    return CL_INVALID_IMAGE_DESCRIPTOR;
  // CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR
  // are set in flags or if host_ptr is not NULL but they are not set
  const bool wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  if (wants_ptr != (host_ptr != nullptr)) return CL_INVALID_HOST_PTR;
  // CL_INVALID_OPERATION if there are no devices in context that support images
  bool any = false;
  for (auto* dev : ctx->devices) any |= dev->Get<cl_bool>(CL_DEVICE_IMAGE_SUPPORT) != CL_FALSE;
  if (!any) return CL_INVALID_OPERATION;
  // The device judges the sizes, except where host data must be packed first: that needs them
  // bounded.
  if (host_ptr && !SizeWithinLimits(ctx, *d)) return CL_INVALID_IMAGE_SIZE;
  return CL_SUCCESS;
}

}  // namespace

bool IsOurSampler(const void* p) {
  std::lock_guard lk(g_samplers_mu);
  return g_samplers.count(p) != 0;
}

cl_mem CreateImage(cl_context ctx, cl_mem_flags flags, const cl_image_format* f,
                   const cl_image_desc* d, void* host_ptr, cl_int* err) {
  if (flags == 0) flags = CL_MEM_READ_WRITE;
  if (cl_int rc = CheckImageArgs(ctx, flags, f, d, host_ptr); rc != CL_SUCCESS)
    return SetErr(err, rc), nullptr;
  const size_t elem = proto::ImageElementSize(f->image_channel_order, f->image_channel_data_type);
  size_t rows, slices, y = 0, z = 0;
  RowsAndSlices(*d, &rows, &slices);
  const size_t row_bytes = d->image_width * elem;
  if (host_ptr && !HostStrides(*d, row_bytes, rows, &y, &z))
    return SetErr(err, CL_INVALID_IMAGE_DESCRIPTOR), nullptr;
  const size_t packed = row_bytes * rows * slices;
  const size_t charge = d->mem_object ? 0 : packed;
  if (!ctx->conn->ChargeQuota(charge)) return SetErr(err, CL_MEM_OBJECT_ALLOCATION_FAILURE), nullptr;
  std::vector<uint8_t> data;
  if (host_ptr) data = Pack(host_ptr, row_bytes, rows, slices, y, z);
  auto* m = new _cl_mem();
  m->context = ctx;
  Hold(ctx);
  m->flags = flags;
  m->host_ptr = (flags & CL_MEM_USE_HOST_PTR) ? host_ptr : nullptr;
  m->id = ctx->conn->NewId();
  const auto req = ImageRequestOf(m, ctx, flags, *f, *d, host_ptr, data.size());
  Reply rep = ctx->conn->Call(Op::CreateImage, proto::EncodeBody(req), data.data(), data.size());
  proto::Reader r = rep.reader();
  proto::CreateImageReply answer;
  const bool answered = proto::CreateImageReply::Decode(r, &answer);
  auto info = std::make_unique<ImageInfo>();
  info->element_size = answer.pixel_size;
  info->row_pitch = answer.row_pitch;
  info->slice_pitch = answer.slice_pitch;
  const size_t mem_size = answer.mem_size;
  if (!rep.status.ok() || !answered) {
    ctx->conn->RefundQuota(charge);
    Drop(m);
    return SetErr(err, rep.status.ok() || rep.status.is_protocol() ? CL_OUT_OF_RESOURCES
                                                                   : rep.status.code()),
           nullptr;
  }
  info->mem_size = mem_size;
  info->format = *f;
  info->desc = *d;
  info->host_row_pitch = y;
  info->host_slice_pitch = z;
  m->image = std::move(info);
  m->size = d->mem_object ? mem_size : charge;
  if (d->mem_object) {
    m->parent = d->mem_object;  // CL_MEM_ASSOCIATED_MEMOBJECT; it keeps the buffer alive
    Hold(m->parent);
  }
  TrackMem(m, true);
  SetErr(err, CL_SUCCESS);
  return m;
}

cl_mem CreateImageWithProperties(cl_context ctx, const cl_mem_properties* props, cl_mem_flags flags,
                                 const cl_image_format* f, const cl_image_desc* d, void* host_ptr,
                                 cl_int* err) {
  if (props && *props != 0) return SetErr(err, CL_INVALID_PROPERTY), nullptr;
  cl_mem m = CreateImage(ctx, flags, f, d, host_ptr, err);
  if (m && props) m->properties = {0};
  return m;
}

cl_mem CreateImage2D(cl_context ctx, cl_mem_flags flags, const cl_image_format* f, size_t w,
                     size_t h, size_t row_pitch, void* host_ptr, cl_int* err) {
  cl_image_desc d{};
  d.image_type = CL_MEM_OBJECT_IMAGE2D;
  d.image_width = w;
  d.image_height = h;
  d.image_row_pitch = row_pitch;
  return CreateImage(ctx, flags, f, &d, host_ptr, err);
}

cl_mem CreateImage3D(cl_context ctx, cl_mem_flags flags, const cl_image_format* f, size_t w,
                     size_t h, size_t depth, size_t row_pitch, size_t slice_pitch, void* host_ptr,
                     cl_int* err) {
  cl_image_desc d{};
  d.image_type = CL_MEM_OBJECT_IMAGE3D;
  d.image_width = w;
  d.image_height = h;
  d.image_depth = depth;
  d.image_row_pitch = row_pitch;
  d.image_slice_pitch = slice_pitch;
  return CreateImage(ctx, flags, f, &d, host_ptr, err);
}

cl_int GetSupportedImageFormats(cl_context ctx, cl_mem_flags flags, cl_mem_object_type type,
                                cl_uint n, cl_image_format* formats, cl_uint* n_ret) {
  if (!ValidContext(ctx)) return CL_INVALID_CONTEXT;
  // CL_INVALID_VALUE if flags or image_type are not valid, or if num_entries is 0 and
  // image_formats is not NULL
  if (flags == 0) flags = CL_MEM_READ_WRITE;
  if (!FlagsValid(flags) || !IsImageType(type) || (n == 0 && formats)) return CL_INVALID_VALUE;
  // The device's list, asked once per context, flags and type.
  static std::mutex mu;
  static std::map<std::tuple<const Connection*, uint64_t, cl_mem_flags, cl_mem_object_type>,
                  std::vector<cl_image_format>> cache;  // GUARDED_BY(mu)
  const auto key = std::make_tuple(ctx->conn.get(), ctx->id, flags, type);
  std::vector<cl_image_format> list;
  {
    std::lock_guard lk(mu);
    auto it = cache.find(key);
    if (it != cache.end()) list = it->second;
  }
  if (list.empty()) {
    const proto::GetSupportedImageFormatsRequest req{ctx->id,
                                                     flags & ~(kHostPtrFlags | kHostAccessFlags),
                                                     type};
    Reply rep = ctx->conn->Call(Op::GetSupportedImageFormats, proto::EncodeBody(req));
    if (!rep.status.ok()) return rep.status.is_protocol() ? CL_OUT_OF_RESOURCES : rep.status.code();
    proto::Reader r = rep.reader();
    proto::GetSupportedImageFormatsReply answer;
    if (!proto::GetSupportedImageFormatsReply::Decode(r, &answer)) return CL_OUT_OF_RESOURCES;
    for (const auto& format : answer.formats)
      list.push_back(cl_image_format{format.channel_order, format.channel_type});
    std::lock_guard lk(mu);
    cache[key] = list;
  }
  if (formats)
    for (size_t i = 0; i < list.size() && i < n; ++i) formats[i] = list[i];
  if (n_ret) *n_ret = static_cast<cl_uint>(list.size());
  return CL_SUCCESS;
}

cl_int GetImageInfo(cl_mem m, cl_image_info param, size_t size, void* value, size_t* size_ret) {
  // CL_INVALID_MEM_OBJECT if image is not a valid image object
  if (!ValidImage(m)) return CL_INVALID_MEM_OBJECT;
  const ImageInfo& im = *m->image;
  const cl_image_desc& d = im.desc;
  const bool array = d.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
                     d.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
  const bool one_d = d.image_type == CL_MEM_OBJECT_IMAGE1D || d.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
                     d.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  // USE_HOST_PTR images report the application's layout, as the device would have kept it.
  const bool host = m->host_ptr != nullptr;
  switch (param) {
    case CL_IMAGE_FORMAT: return ReturnValue(im.format, size, value, size_ret);
    case CL_IMAGE_ELEMENT_SIZE: return ReturnValue(im.element_size, size, value, size_ret);
    case CL_IMAGE_ROW_PITCH:
      return ReturnValue(host && d.image_type != CL_MEM_OBJECT_IMAGE1D_ARRAY ? im.host_row_pitch
                                                                              : im.row_pitch,
                         size, value, size_ret);
    case CL_IMAGE_SLICE_PITCH:
      return ReturnValue(host && im.slice_pitch ? im.host_slice_pitch : im.slice_pitch, size, value,
                         size_ret);
    case CL_IMAGE_WIDTH: return ReturnValue(d.image_width, size, value, size_ret);
    case CL_IMAGE_HEIGHT: return ReturnValue<size_t>(one_d ? 0 : d.image_height, size, value, size_ret);
    case CL_IMAGE_DEPTH:
      return ReturnValue<size_t>(d.image_type == CL_MEM_OBJECT_IMAGE3D ? d.image_depth : 0, size,
                                 value, size_ret);
    case CL_IMAGE_ARRAY_SIZE: return ReturnValue<size_t>(array ? d.image_array_size : 0, size, value, size_ret);
    case CL_IMAGE_BUFFER: return ReturnValue(d.mem_object, size, value, size_ret);
    case CL_IMAGE_NUM_MIP_LEVELS: return ReturnValue(d.num_mip_levels, size, value, size_ret);
    case CL_IMAGE_NUM_SAMPLES: return ReturnValue(d.num_samples, size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

// ------------------------------------------------------------------ samplers

cl_sampler CreateSamplerWithProperties(cl_context ctx, const cl_sampler_properties* props,
                                       cl_int* err) {
  if (!ValidContext(ctx)) return SetErr(err, CL_INVALID_CONTEXT), nullptr;
  auto* s = new _cl_sampler();
  // CL_INVALID_VALUE if the property name in sampler_properties is not a supported property
  // name, if the value specified for a supported property name is not valid, or if the same
  // property name is specified more than once
  bool seen[3] = {false, false, false};
  cl_int rc = CL_SUCCESS;
  for (const cl_sampler_properties* p = props; p && *p && rc == CL_SUCCESS; p += 2) {
    const cl_sampler_properties v = p[1];
    int which = p[0] == CL_SAMPLER_NORMALIZED_COORDS ? 0 : p[0] == CL_SAMPLER_ADDRESSING_MODE ? 1
              : p[0] == CL_SAMPLER_FILTER_MODE ? 2 : -1;
    const bool bad = which < 0 || seen[which] || (which == 0 && v != CL_TRUE && v != CL_FALSE) ||
                     (which == 1 && (v < CL_ADDRESS_NONE || v > CL_ADDRESS_MIRRORED_REPEAT)) ||
                     (which == 2 && v != CL_FILTER_NEAREST && v != CL_FILTER_LINEAR);
    if (bad) rc = CL_INVALID_VALUE;
    if (rc != CL_SUCCESS) break;
    seen[which] = true;
    if (which == 0) s->normalized = static_cast<cl_bool>(v);
    if (which == 1) s->addressing = static_cast<cl_addressing_mode>(v);
    if (which == 2) s->filter = static_cast<cl_filter_mode>(v);
    s->properties.insert(s->properties.end(), p, p + 2);
  }
  // CL_INVALID_OPERATION if images are not supported by any device associated with context
  bool any = false;
  for (auto* dev : ctx->devices) any |= dev->Get<cl_bool>(CL_DEVICE_IMAGE_SUPPORT) != CL_FALSE;
  if (rc == CL_SUCCESS && !any) rc = CL_INVALID_OPERATION;
  if (rc != CL_SUCCESS) {
    delete s;
    return SetErr(err, rc), nullptr;
  }
  if (props) s->properties.push_back(0);
  s->context = ctx;
  Hold(ctx);
  s->id = ctx->conn->NewId();
  // Every property, defaults included.
  const proto::CreateSamplerRequest req{s->id,
                                        ctx->id,
                                        {CL_SAMPLER_NORMALIZED_COORDS, s->normalized,
                                         CL_SAMPLER_ADDRESSING_MODE, s->addressing,
                                         CL_SAMPLER_FILTER_MODE, s->filter}};
  ctx->conn->Send(Op::CreateSampler, proto::EncodeBody(req));
  {
    std::lock_guard lk(g_samplers_mu);
    g_samplers.insert(s);
  }
  SetErr(err, CL_SUCCESS);
  return s;
}

cl_sampler CreateSampler(cl_context ctx, cl_bool normalized, cl_addressing_mode addressing,
                         cl_filter_mode filter, cl_int* err) {
  const cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS, normalized,
                                         CL_SAMPLER_ADDRESSING_MODE, addressing,
                                         CL_SAMPLER_FILTER_MODE, filter, 0};
  cl_sampler s = CreateSamplerWithProperties(ctx, props, err);
  if (s) s->properties.clear();  // CL_SAMPLER_PROPERTIES: none were given
  return s;
}

cl_int RetainSampler(cl_sampler s) {
  if (!ValidSampler(s)) return CL_INVALID_SAMPLER;
  s->app_refs++;
  Hold(s);
  return CL_SUCCESS;
}

cl_int ReleaseSampler(cl_sampler s) {
  if (!ValidSampler(s)) return CL_INVALID_SAMPLER;
  if (s->app_refs.fetch_sub(1) == 1) {
    SendRelease(*s->context->conn, proto::ObjType::Sampler, s->id);
    std::lock_guard lk(g_samplers_mu);
    g_samplers.erase(s);
  }
  Drop(s);
  return CL_SUCCESS;
}

cl_int GetSamplerInfo(cl_sampler s, cl_sampler_info param, size_t size, void* value, size_t* size_ret) {
  if (!ValidSampler(s)) return CL_INVALID_SAMPLER;
  switch (param) {
    case CL_SAMPLER_REFERENCE_COUNT: return ReturnValue<cl_uint>(s->app_refs.load(), size, value, size_ret);
    case CL_SAMPLER_CONTEXT: return ReturnValue(s->context, size, value, size_ret);
    case CL_SAMPLER_NORMALIZED_COORDS: return ReturnValue(s->normalized, size, value, size_ret);
    case CL_SAMPLER_ADDRESSING_MODE: return ReturnValue(s->addressing, size, value, size_ret);
    case CL_SAMPLER_FILTER_MODE: return ReturnValue(s->filter, size, value, size_ret);
    case CL_SAMPLER_PROPERTIES:
      return ReturnInfo(s->properties.data(), s->properties.size() * sizeof(cl_sampler_properties),
                        size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

}  // namespace rgpu::client

_cl_sampler::~_cl_sampler() { rgpu::client::Drop(context); }
