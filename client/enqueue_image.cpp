// The image commands. Host data crosses packed (rows of region[0] pixels, no padding): the
// client packs and unpacks with the application's pitches, so the wire and the server never
// see host layouts, and bulk data takes the buffers' path (PutData chunks, ReadData).
#include <algorithm>
#include <cstdlib>

#include "client/enqueue_common.h"
#include "proto/messages.h"

namespace rgpu::client {

using proto::Op;
using proto::Writer;

namespace {

// The extent of each dimension an image has: width, then height or array size, then depth
// or array size; 1 where the type has no such dimension.
void Extent(const ImageInfo& im, size_t e[3]) {
  const cl_image_desc& d = im.desc;
  e[0] = d.image_width;
  e[1] = 1;
  e[2] = 1;
  switch (d.image_type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: e[1] = d.image_array_size; break;
    case CL_MEM_OBJECT_IMAGE2D: e[1] = d.image_height; break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: e[1] = d.image_height; e[2] = d.image_array_size; break;
    case CL_MEM_OBJECT_IMAGE3D: e[1] = d.image_height; e[2] = d.image_depth; break;
    default: break;
  }
}

// CL_INVALID_VALUE if the region being read or written specified by origin and region is
// out of bounds or if ptr is a NULL value; values of origin and region that an image's type
// does not have must be 0 and 1. (An empty region is the device's to judge.)
bool RegionValid(cl_mem m, const size_t* origin, const size_t* region) {
  if (!origin || !region) return false;
  size_t e[3];
  Extent(*m->image, e);
  for (int i = 0; i < 3; ++i)
    if (origin[i] > e[i] || region[i] > e[i] - origin[i]) return false;
  return true;
}

cl_int CheckImage(cl_command_queue q, cl_mem m) {
  if (!ValidImage(m)) return CL_INVALID_MEM_OBJECT;
  // CL_INVALID_CONTEXT if the context of command_queue and image are not the same
  return m->context == q->context ? CL_SUCCESS : CL_INVALID_CONTEXT;
}

cl_int CheckBuffer(cl_command_queue q, cl_mem m) {
  if (cl_int rc = CheckMem(q, m); rc != CL_SUCCESS) return rc;
  return m->image ? CL_INVALID_MEM_OBJECT : CL_SUCCESS;
}

// Host strides for a transfer of `region`: y steps between rows (a 1D array's images), z
// between slices. CL_INVALID_VALUE when the pitches given are smaller than the data.
bool TransferStrides(cl_mem m, const size_t* region, size_t row_pitch, size_t slice_pitch,
                     size_t* y, size_t* z) {
  const size_t row = region[0] * m->image->element_size;
  const bool array1d = m->image->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  if (row_pitch == 0) row_pitch = row;
  if (slice_pitch == 0) slice_pitch = array1d ? row_pitch : row_pitch * region[1];
  if (row_pitch < row || slice_pitch < (array1d ? row_pitch : row_pitch * region[1])) return false;
  *y = array1d ? slice_pitch : row_pitch;
  *z = slice_pitch;
  return true;
}

size_t HostExtent(const size_t* region, size_t row_bytes, size_t y, size_t z) {
  if (region[0] == 0 || region[1] == 0 || region[2] == 0) return 0;
  return (region[2] - 1) * z + (region[1] - 1) * y + row_bytes;
}

proto::ImageTransferRequest ImageTransfer(cl_mem m, const size_t* origin, const size_t* region) {
  return {m->id, ToTriple(origin), ToTriple(region)};
}

// A read without the host-access rule (clEnqueueMapImage for CL_MAP_WRITE reads too).
cl_int ReadImageInto(cl_command_queue q, cl_mem m, cl_bool blocking, const size_t* origin,
                     const size_t* region, size_t y, size_t z, void* ptr, cl_uint n,
                     const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  ImageTransfer(m, origin, region).EncodeTo(c.w);
  const size_t row_bytes = region[0] * m->image->element_size;
  cl_event e = ReadEvent(c, CL_COMMAND_READ_IMAGE, event, RangeOf(ptr, HostExtent(region, row_bytes, y, z)));
  auto sink = std::make_shared<RectSink>();
  sink->size = row_bytes * region[1] * region[2];
  sink->packed.resize(sink->size);
  sink->host = static_cast<uint8_t*>(ptr);
  sink->host_origin[0] = sink->host_origin[1] = sink->host_origin[2] = 0;
  sink->region[0] = row_bytes;
  sink->region[1] = region[1];
  sink->region[2] = region[2];
  sink->row_pitch = y;
  sink->slice_pitch = z;
  sink->ev = e;
  sink->q = q;
  return StartRead(c, Op::ReadImage, sink, e, blocking, CL_COMMAND_READ_IMAGE, event);
}

cl_int WriteImageFrom(cl_command_queue q, cl_mem m, const size_t* origin, const size_t* region,
                      size_t y, size_t z, const void* ptr, cl_uint n, const cl_event* list,
                      cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  const size_t row_bytes = region[0] * m->image->element_size;
  // The data is taken now: reads still filling this memory land first.
  WaitHostReads(q, n, list, RangeOf(ptr, HostExtent(region, row_bytes, y, z)));
  std::vector<uint8_t> packed(row_bytes * region[1] * region[2]);
  const auto* host = static_cast<const uint8_t*>(ptr);
  for (size_t k = 0; k < region[2]; ++k)
    for (size_t j = 0; j < region[1]; ++j)
      std::memcpy(packed.data() + (k * region[1] + j) * row_bytes, host + k * z + j * y, row_bytes);
  proto::WriteImageRequest{ImageTransfer(m, origin, region), packed.size()}.EncodeTo(c.w);
  if (!q->conn().Send(Op::WriteImage, c.body, packed.data(), packed.size()).ok())
    return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_WRITE_IMAGE, event);
  return CL_SUCCESS;
}

// The checks every clEnqueue{Read,Write}Image makes before its data moves.
cl_int CheckTransfer(cl_command_queue q, cl_mem m, const size_t* origin, const size_t* region,
                     size_t row_pitch, size_t slice_pitch, const void* ptr, cl_uint n,
                     const cl_event* list, size_t* y, size_t* z) {
  if (!ValidQueue(q)) return CL_INVALID_COMMAND_QUEUE;
  if (cl_int rc = CheckImage(q, m); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckWaitList(q->context, n, list); rc != CL_SUCCESS) return rc;
  if (!ptr || !RegionValid(m, origin, region) ||
      !TransferStrides(m, region, row_pitch, slice_pitch, y, z))
    return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

}  // namespace

cl_int EnqueueReadImage(cl_command_queue q, cl_mem m, cl_bool blocking, const size_t* origin,
                        const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr,
                        cl_uint n, const cl_event* list, cl_event* event) {
  size_t y = 0, z = 0;
  if (cl_int rc = CheckTransfer(q, m, origin, region, row_pitch, slice_pitch, ptr, n, list, &y, &z);
      rc != CL_SUCCESS)
    return rc;
  // CL_INVALID_OPERATION if clEnqueueReadImage is called on image which has been created
  // with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS
  if (m->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)) return CL_INVALID_OPERATION;
  return ReadImageInto(q, m, blocking, origin, region, y, z, ptr, n, list, event);
}

cl_int EnqueueWriteImage(cl_command_queue q, cl_mem m, cl_bool blocking, const size_t* origin,
                         const size_t* region, size_t row_pitch, size_t slice_pitch,
                         const void* ptr, cl_uint n, const cl_event* list, cl_event* event) {
  size_t y = 0, z = 0;
  if (cl_int rc = CheckTransfer(q, m, origin, region, row_pitch, slice_pitch, ptr, n, list, &y, &z);
      rc != CL_SUCCESS)
    return rc;
  // CL_INVALID_OPERATION if clEnqueueWriteImage is called on image which has been created
  // with CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS
  if (m->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)) return CL_INVALID_OPERATION;
  (void)blocking;  // the data is copied before this returns
  return WriteImageFrom(q, m, origin, region, y, z, ptr, n, list, event);
}

cl_int EnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                        const size_t* dst_origin, const size_t* region, cl_uint n,
                        const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckImage(q, src); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckImage(q, dst); rc != CL_SUCCESS) return rc;
  // CL_IMAGE_FORMAT_MISMATCH if src_image and dst_image do not use the same image format
  const cl_image_format& a = src->image->format;
  const cl_image_format& b = dst->image->format;
  if (a.image_channel_order != b.image_channel_order ||
      a.image_channel_data_type != b.image_channel_data_type)
    return CL_IMAGE_FORMAT_MISMATCH;
  if (!RegionValid(src, src_origin, region) || !RegionValid(dst, dst_origin, region))
    return CL_INVALID_VALUE;
  proto::CopyImageRequest{src->id, dst->id, ToTriple(src_origin), ToTriple(dst_origin), ToTriple(region)}
      .EncodeTo(c.w);
  if (!q->conn().Send(Op::CopyImage, c.body).ok()) return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_COPY_IMAGE, event);
  return CL_SUCCESS;
}

cl_int EnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                                const size_t* region, size_t dst_offset, cl_uint n,
                                const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckImage(q, src); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckBuffer(q, dst); rc != CL_SUCCESS) return rc;
  // CL_INVALID_VALUE if the 1D, 2D or 3D rectangular region specified by src_origin and
  // src_origin + region refers to a region outside src_image, or if the region specified by
  // dst_offset and dst_offset + dst_cb refers to a region outside dst_buffer
  if (!RegionValid(src, src_origin, region)) return CL_INVALID_VALUE;
  const size_t bytes = region[0] * region[1] * region[2] * src->image->element_size;
  if (dst_offset > dst->size || bytes > dst->size - dst_offset) return CL_INVALID_VALUE;
  proto::CopyImageToBufferRequest{src->id, dst->id, ToTriple(src_origin), ToTriple(region), dst_offset}
      .EncodeTo(c.w);
  if (!q->conn().Send(Op::CopyImageToBuffer, c.body).ok()) return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_COPY_IMAGE_TO_BUFFER, event);
  return CL_SUCCESS;
}

cl_int EnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                const size_t* dst_origin, const size_t* region, cl_uint n,
                                const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckBuffer(q, src); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckImage(q, dst); rc != CL_SUCCESS) return rc;
  if (!RegionValid(dst, dst_origin, region)) return CL_INVALID_VALUE;
  const size_t bytes = region[0] * region[1] * region[2] * dst->image->element_size;
  if (src_offset > src->size || bytes > src->size - src_offset) return CL_INVALID_VALUE;
  proto::CopyBufferToImageRequest{src->id, dst->id, src_offset, ToTriple(dst_origin), ToTriple(region)}
      .EncodeTo(c.w);
  if (!q->conn().Send(Op::CopyBufferToImage, c.body).ok()) return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_COPY_BUFFER_TO_IMAGE, event);
  return CL_SUCCESS;
}

cl_int EnqueueFillImage(cl_command_queue q, cl_mem m, const void* color, const size_t* origin,
                        const size_t* region, cl_uint n, const cl_event* list, cl_event* event) {
  Command c;
  if (cl_int rc = Begin(c, q, n, list, event); rc != CL_SUCCESS) return rc;
  if (cl_int rc = CheckImage(q, m); rc != CL_SUCCESS) return rc;
  // CL_INVALID_VALUE if fill_color is NULL, or the region is out of bounds
  if (!color || !RegionValid(m, origin, region)) return CL_INVALID_VALUE;
  proto::FillImageRequest fill{m->id, {}, ToTriple(origin), ToTriple(region)};
  std::memcpy(fill.color.data(), color, 16);  // a float4, int4 or uint4, whichever the image takes
  fill.EncodeTo(c.w);
  if (!q->conn().Send(Op::FillImage, c.body).ok()) return CL_OUT_OF_RESOURCES;
  Finish(c, CL_COMMAND_FILL_IMAGE, event);
  return CL_SUCCESS;
}

void* EnqueueMapImage(cl_command_queue q, cl_mem m, cl_bool blocking, cl_map_flags flags,
                      const size_t* origin, const size_t* region, size_t* row_pitch,
                      size_t* slice_pitch, cl_uint n, const cl_event* list, cl_event* event,
                      cl_int* err) {
  if (!ValidQueue(q)) return SetErr(err, CL_INVALID_COMMAND_QUEUE), nullptr;
  if (cl_int rc = CheckImage(q, m); rc != CL_SUCCESS) return SetErr(err, rc), nullptr;
  if (cl_int rc = CheckWaitList(q->context, n, list); rc != CL_SUCCESS) return SetErr(err, rc), nullptr;
  const cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
  // CL_INVALID_VALUE if region is out of bounds, image_row_pitch is NULL, or values in
  // map_flags are not valid
  if (!RegionValid(m, origin, region) || !row_pitch || (flags & ~known) ||
      ((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE))))
    return SetErr(err, CL_INVALID_VALUE), nullptr;
  const cl_mem_object_type type = m->image->desc.image_type;
  // CL_INVALID_VALUE if the image is a 3D image or a 1D or 2D image array and
  // image_slice_pitch is NULL
  if (!slice_pitch && (type == CL_MEM_OBJECT_IMAGE3D || type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
                       type == CL_MEM_OBJECT_IMAGE2D_ARRAY))
    return SetErr(err, CL_INVALID_VALUE), nullptr;
  // The host-access rules of clEnqueueMapBuffer hold for images too.
  if (((m->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)) && (flags & CL_MAP_READ)) ||
      ((m->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)) &&
       (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))))
    return SetErr(err, CL_INVALID_OPERATION), nullptr;
  const ImageInfo& im = *m->image;
  const size_t row = region[0] * im.element_size;
  // USE_HOST_PTR images map to the application's memory, in its layout; others to memory of
  // ours laid out with the device's own pitches (what a device mapping in place would give).
  const bool owned = m->host_ptr == nullptr;
  const bool array1d = type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  size_t y = owned ? (array1d ? im.slice_pitch : im.row_pitch) : im.host_row_pitch;
  size_t z = owned ? (im.slice_pitch ? im.slice_pitch : y * region[1]) : im.host_slice_pitch;
  y = std::max(y, row);
  z = std::max(z, array1d ? y : y * region[1]);
  void* ptr = owned ? std::aligned_alloc(4096, (HostExtent(region, row, y, z) + 4095) / 4096 * 4096)
                    : static_cast<char*>(m->host_ptr) + origin[0] * im.element_size +
                          origin[1] * y + origin[2] * z;
  if (!ptr) return SetErr(err, CL_OUT_OF_HOST_MEMORY), nullptr;
  cl_int rc;
  if (flags & CL_MAP_WRITE_INVALIDATE_REGION) {
    rc = EnqueueMarkerWithWaitList(q, n, list, event);
    if (blocking && rc == CL_SUCCESS && WaitEvents(n, list) != CL_SUCCESS)
      rc = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  } else {
    rc = ReadImageInto(q, m, blocking, origin, region, y, z, ptr, n, list, event);
  }
  if (rc == CL_SUCCESS && event) (*event)->type = CL_COMMAND_MAP_IMAGE;
  if (rc != CL_SUCCESS) {
    if (owned) std::free(ptr);
    return SetErr(err, rc), nullptr;
  }
  Mapping map{ptr, 0, 0, flags, owned};
  map.image = true;
  std::memcpy(map.origin, origin, sizeof(map.origin));
  std::memcpy(map.region, region, sizeof(map.region));
  map.row_pitch = y;
  map.slice_pitch = z;
  {
    std::lock_guard lk(m->mu);
    m->maps.push_back(map);
  }
  *row_pitch = array1d ? (owned ? im.row_pitch : y) : y;
  if (slice_pitch)
    *slice_pitch = type == CL_MEM_OBJECT_IMAGE3D || type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                           type == CL_MEM_OBJECT_IMAGE1D_ARRAY
                       ? z
                       : 0;
  SetErr(err, CL_SUCCESS);
  return ptr;
}

cl_int WriteMappedImage(cl_command_queue q, cl_mem m, const Mapping& map, cl_uint n,
                        const cl_event* list, cl_event* event) {
  return WriteImageFrom(q, m, map.origin, map.region, map.row_pitch, map.slice_pitch, map.ptr, n,
                        list, event);
}

}  // namespace rgpu::client
