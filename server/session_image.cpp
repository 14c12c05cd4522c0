// Images and samplers: their creation, the image commands (one handler per operation, as
// for buffers in server/session_enqueue.cpp) and the checks on kernel arguments that take
// objects. The messages are proto/messages.h's; the wire is docs/protocol.md.
#include <CL/cl.h>

#include <algorithm>
#include <cstring>

#include "proto/image.h"
#include "server/server.h"
#include "server/session.h"

namespace rgpu::server {

using proto::FrameHeader;
using proto::ObjType;
using proto::Op;
using proto::Reader;
using proto::Writer;

namespace {

// The packed bytes of `region` of an image whose pixels take `element_size` bytes.
bool RegionBytes(const ImageRegion& r, uint64_t element_size, uint64_t* out) {
  return proto::CheckedProduct(r.region[0], r.region[1], r.region[2], element_size, out);
}

// The `bytes` at `offset` of a buffer lie inside it (the client checks too; a hostile one may
// not, and the device need not).
bool BufferHolds(const MemRecord& buffer, uint64_t offset, uint64_t bytes) {
  return offset <= buffer.size && bytes <= buffer.size - offset;
}

// An image's extent as origins and regions address it: (width, height or layers, depth or
// layers), 1 where the type has no such dimension.
void ImageExtent(const ImageDesc& d, uint64_t out[3]) {
  out[0] = d.width;
  out[1] = 1;
  out[2] = 1;
  switch (d.image_type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: out[1] = d.array_size; break;
    case CL_MEM_OBJECT_IMAGE2D: out[1] = d.height; break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: out[1] = d.height; out[2] = d.array_size; break;
    case CL_MEM_OBJECT_IMAGE3D: out[1] = d.height; out[2] = d.depth; break;
    default: break;
  }
}

// Whether origin + region lies inside the image (no overflow).
bool InsideImage(const uint64_t extent[3], const size_t origin[3], const size_t region[3]) {
  for (int i = 0; i < 3; ++i)
    if (origin[i] > extent[i] || region[i] > extent[i] - origin[i]) return false;
  return true;
}

bool EmptyRegion(const size_t region[3]) { return region[0] == 0 || region[1] == 0 || region[2] == 0; }

}  // namespace

Result<MemRecord*> Session::LookupMem(uint64_t id, bool image) {
  auto e = Lookup<MemRecord>(id);
  if (!e.ok()) return e.status();
  // CL_INVALID_MEM_OBJECT if image is not a valid image object (or buffer not a buffer)
  if (((*e)->image_type != 0) != image)
    return Status::Error(CL_INVALID_MEM_OBJECT, std::string("memory object ") + std::to_string(id) +
                                                    (image ? " is not an image" : " is not a buffer"));
  return *e;
}

Status Session::CreateImage(const FrameHeader& h, Reader& r) {
  proto::CreateImageRequest req;
  if (!proto::CreateImageRequest::Decode(r, &req) || h.tag == 0)
    return Status::Protocol("malformed CreateImage");
  const uint64_t id = req.mem, ctx_id = req.context, flags = req.flags, buffer_id = req.buffer;
  ImageDesc d;
  d.channel_order = req.channel_order;
  d.channel_type = req.channel_type;
  d.image_type = req.image_type;
  d.width = req.width;
  d.height = req.height;
  d.depth = req.depth;
  d.array_size = req.array_size;
  d.row_pitch = req.row_pitch;
  d.slice_pitch = req.slice_pitch;
  d.mip_levels = req.mip_levels;
  d.samples = req.samples;
  auto blob = TakeBlob(req.data_size, r);
  if (!blob.ok()) return blob.status();
  auto ctx = Lookup<ContextRecord>(ctx_id);
  if (!ctx.ok()) return Reply(h, ctx.status()), Status::Ok();
  if (buffer_id != 0) {
    auto buf = LookupMem(buffer_id, /*image=*/false);
    if (!buf.ok()) return Reply(h, buf.status()), Status::Ok();
    d.buffer = (*buf)->handle;
  }
  // The quota counts the image's pixels (an image made from a buffer uses the buffer's
  // memory).
  const uint64_t element = proto::ImageElementSize(d.channel_order, d.channel_type);
  // Formats and types rgpu does not know are refused here, not passed on: NVIDIA's driver
  // (580.x, H100) died of a division by zero (SIGFPE) on the malformed images of
  // image_test's ErrorsAreTheDevices, natively and inside rgpud, which ended every tenant's
  // session.
  if (element == 0)
    return Reply(h, Status::Error(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "image format unknown to rgpu")),
           Status::Ok();
  if (!proto::IsImageType(d.image_type))
    return Reply(h, Status::Error(CL_INVALID_IMAGE_DESCRIPTOR, "not an image type")), Status::Ok();
  uint64_t packed = 0;
  // An unknown image type is the device's to refuse (nothing is charged for it); sizes whose
  // product overflows are refused here.
  if (!proto::PackedImageBytes(d.image_type, d.width, d.height, d.depth, d.array_size,
                               element, &packed) &&
      proto::PackedImageBytes(d.image_type, 1, 1, 1, 1, 1, &packed))
    return Reply(h, Status::Error(CL_INVALID_IMAGE_SIZE, "image size out of range")), Status::Ok();
  if (!(*blob)->empty() && (element == 0 || (*blob)->size() != packed || d.row_pitch || d.slice_pitch))
    return Status::Protocol("initial data does not match the image size");
  const uint64_t charge = buffer_id ? 0 : packed;
  if (!ChargeMemory(charge))
    return Reply(h, Status::Error(CL_MEM_OBJECT_ALLOCATION_FAILURE,
                                  "tenant '" + tenant()->id + "' is over its memory quota")),
           Status::Ok();
  auto facts = server_->backend().CreateImage((*ctx)->handle, flags, d, blob->get());
  if (!facts.ok()) {
    RefundMemory(charge);
    return Reply(h, facts.status()), Status::Ok();
  }
  MemRecord e;
  e.handle = facts->mem;
  e.parent = ctx_id;
  e.size = facts->mem_size;
  e.charged = charge;
  e.image_type = d.image_type;
  e.element_size = facts->element_size;
  ImageExtent(d, e.image_extent);
  if (Status s = InsertOwned(id, e); !s.ok()) {
    RefundMemory(charge);
    return s;
  }
  const proto::CreateImageReply answer{facts->element_size, facts->row_pitch, facts->slice_pitch,
                                       facts->mem_size};
  Reply(h, Status::Ok(), proto::EncodeBody(answer));
  return Status::Ok();
}

Status Session::GetSupportedImageFormats(const FrameHeader& h, Reader& r) {
  proto::GetSupportedImageFormatsRequest req;
  if (!proto::GetSupportedImageFormatsRequest::Decode(r, &req) || !r.done() || h.tag == 0)
    return Status::Protocol("malformed GetSupportedImageFormats");
  auto ctx = Lookup<ContextRecord>(req.context);
  if (!ctx.ok()) return Reply(h, ctx.status()), Status::Ok();
  auto formats =
      server_->backend().SupportedImageFormats((*ctx)->handle, req.flags, req.image_type);
  if (!formats.ok()) return Reply(h, formats.status()), Status::Ok();
  proto::GetSupportedImageFormatsReply answer;
  const size_t n = std::min<size_t>(formats->size(), proto::kMaxImageFormats);
  for (size_t i = 0; i < n; ++i)
    answer.formats.push_back({(*formats)[i].first, (*formats)[i].second});
  Reply(h, Status::Ok(), proto::EncodeBody(answer));
  return Status::Ok();
}

Status Session::CreateSampler(Reader& r) {
  proto::CreateSamplerRequest req;
  if (!proto::CreateSamplerRequest::Decode(r, &req) || !r.done())
    return Status::Protocol("malformed CreateSampler");
  const uint64_t id = req.sampler, ctx_id = req.context;
  const std::vector<uint64_t>& props = req.properties;
  auto ctx = Lookup<ContextRecord>(ctx_id);
  if (!ctx.ok()) return AsyncFailure(Op::CreateSampler, id, ctx.status()), Status::Ok();
  auto smp = server_->backend().CreateSampler((*ctx)->handle, props);
  if (!smp.ok()) return AsyncFailure(Op::CreateSampler, id, smp.status()), Status::Ok();
  SamplerRecord e;
  e.handle = *smp;
  e.parent = ctx_id;
  return InsertOwned(id, e);
}

Status Session::CheckArgKind(const KernelRecord& k, uint32_t index, KernelArgValue::Kind kind,
                             std::span<const uint8_t> bytes) {
  if (index >= k.arg_shapes.size()) return Status::Ok();  // not probed: the device checks
  using S = ArgShape::Kind;
  using V = KernelArgValue::Kind;
  const S shape = k.arg_shapes[index].kind;
  // A NULL buffer travels as zero bytes; any other bytes would be taken as an object's address.
  const bool null_bytes = kind == V::Bytes && std::all_of(bytes.begin(), bytes.end(),
                                                          [](uint8_t b) { return b == 0; });
  bool ok = true;
  if (shape == S::Mem) ok = kind == V::Mem || null_bytes;
  else if (shape == S::Image) ok = kind == V::Mem;
  else if (shape == S::Sampler) ok = kind == V::Sampler;
  // Unchecked, or a value the size of a pointer: what a device without argument info shows
  // for an image or a sampler (programs from binaries); the client sends ours as objects.
  else if (kind == V::Sampler) ok = shape == S::Unchecked || k.arg_shapes[index].size == sizeof(void*);
  if (ok) return Status::Ok();
  // CL_INVALID_ARG_VALUE if arg_value is not a valid value for the argument
  return Status::Error(CL_INVALID_ARG_VALUE,
                       "argument " + std::to_string(index) + " takes an object of another kind");
}

// ---------------------------------------------------------------- image commands
//
// Regions are checked against the image here, not left to the device: NVIDIA's driver (580.x,
// H100) died of SIGFPE in clEnqueueReadImage on image_test's ErrorsAreTheDevices, natively
// and inside rgpud (every tenant's session with it). An empty region is a command that does
// nothing, as PoCL treats it: a marker stands in for it.

Result<MemRecord*> Session::ImageIn(uint64_t id, const ImageRegion& at) {
  auto e = LookupMem(id, /*image=*/true);
  if (!e.ok()) return e.status();
  if (!InsideImage((*e)->image_extent, at.origin, at.region))
    return Status::Error(CL_INVALID_VALUE, "image region out of range");
  return *e;
}

namespace {
ImageRegion RegionOf(const proto::Triple& origin, const proto::Triple& region) {
  ImageRegion r;
  for (int i = 0; i < 3; ++i) {
    r.origin[i] = static_cast<size_t>(origin[i]);
    r.region[i] = static_cast<size_t>(region[i]);
  }
  return r;
}
}  // namespace

Status Session::EnqueueReadImage(Command& c, Reader& r) {
  proto::ImageTransferRequest m;
  if (!proto::ImageTransferRequest::Decode(r, &m) || !r.done()) return Status::Protocol("malformed image command");
  if (c.frame->tag == 0) return Status::Protocol("ReadImage needs a tag");
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  const ImageRegion at = RegionOf(m.origin, m.region);
  auto image = ImageIn(m.image, at);
  if (!image.ok()) return Fail(c, image.status());
  // The answer's size follows from the region and the device's pixel size: checked first.
  uint64_t bytes = 0;
  if (!RegionBytes(at, (*image)->element_size, &bytes) || bytes > server_->options().max_staging_bytes)
    return Fail(c, Status::Error(CL_INVALID_VALUE, "image region out of range"));
  Backend& bk = server_->backend();
  Bytes dst = server_->buffers().Acquire(bytes);
  dst->reserve(std::max<uint64_t>(bytes, 1));  // an empty region still names real memory
  dst->resize(bytes);
  auto ev = EmptyRegion(at.region) ? bk.Marker(c.queue, c.waits)
                                   : bk.ReadImage(c.queue, (*image)->handle, at, dst, c.waits);
  if (!ev.ok()) return Fail(c, ev.status());
  AnswerRead(c, *ev, dst, /*inline_read=*/false);
  return EndCommand(c, ev);
}

Status Session::EnqueueWriteImage(Command& c, Reader& r) {
  proto::WriteImageRequest m;
  if (!proto::WriteImageRequest::Decode(r, &m)) return Status::Protocol("malformed image command");
  auto blob = TakeBlob(m.size, r);
  if (!blob.ok()) return blob.status();
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  const ImageRegion at = RegionOf(m.to.origin, m.to.region);
  auto image = ImageIn(m.to.image, at);
  if (!image.ok()) return Fail(c, image.status());
  uint64_t bytes = 0;
  if (!RegionBytes(at, (*image)->element_size, &bytes))
    return Fail(c, Status::Error(CL_INVALID_VALUE, "image region out of range"));
  if ((*blob)->size() != bytes) return Status::Protocol("image data does not match its region");
  Backend& bk = server_->backend();
  return EndCommand(c, EmptyRegion(at.region)
                           ? bk.Marker(c.queue, c.waits)
                           : bk.WriteImage(c.queue, (*image)->handle, at, *blob, c.waits));
}

Status Session::EnqueueCopyImage(Command& c, Reader& r) {
  proto::CopyImageRequest m;
  if (!proto::CopyImageRequest::Decode(r, &m) || !r.done()) return Status::Protocol("malformed image command");
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  const ImageRegion from = RegionOf(m.src_origin, m.region), to = RegionOf(m.dst_origin, m.region);
  auto src = ImageIn(m.src, from);
  if (!src.ok()) return Fail(c, src.status());
  auto dst = ImageIn(m.dst, to);
  if (!dst.ok()) return Fail(c, dst.status());
  uint64_t bytes = 0;
  if (!RegionBytes(from, (*src)->element_size, &bytes))
    return Fail(c, Status::Error(CL_INVALID_VALUE, "image region out of range"));
  Backend& bk = server_->backend();
  if (EmptyRegion(from.region)) return EndCommand(c, bk.Marker(c.queue, c.waits));
  return EndCommand(c, bk.CopyImage(c.queue, (*src)->handle, (*dst)->handle, from, to.origin,
                                    c.waits));
}

Status Session::EnqueueCopyImageToBuffer(Command& c, Reader& r) {
  proto::CopyImageToBufferRequest m;
  if (!proto::CopyImageToBufferRequest::Decode(r, &m) || !r.done())
    return Status::Protocol("malformed image command");
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  const ImageRegion from = RegionOf(m.origin, m.region);
  auto image = ImageIn(m.image, from);
  if (!image.ok()) return Fail(c, image.status());
  auto buffer = LookupMem(m.buffer, /*image=*/false);
  if (!buffer.ok()) return Fail(c, buffer.status());
  uint64_t bytes = 0;
  if (!RegionBytes(from, (*image)->element_size, &bytes) || !BufferHolds(**buffer, m.offset, bytes))
    return Fail(c, Status::Error(CL_INVALID_VALUE, "region out of range of the image or the buffer"));
  Backend& bk = server_->backend();
  if (EmptyRegion(from.region)) return EndCommand(c, bk.Marker(c.queue, c.waits));
  return EndCommand(c, bk.CopyImageToBuffer(c.queue, (*image)->handle, (*buffer)->handle, from,
                                            m.offset, c.waits));
}

Status Session::EnqueueCopyBufferToImage(Command& c, Reader& r) {
  proto::CopyBufferToImageRequest m;
  if (!proto::CopyBufferToImageRequest::Decode(r, &m) || !r.done())
    return Status::Protocol("malformed image command");
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  auto buffer = LookupMem(m.buffer, /*image=*/false);
  if (!buffer.ok()) return Fail(c, buffer.status());
  // The image, and its region, are the destination.
  const ImageRegion to = RegionOf(m.origin, m.region);
  auto image = ImageIn(m.image, to);
  if (!image.ok()) return Fail(c, image.status());
  uint64_t bytes = 0;
  if (!RegionBytes(to, (*image)->element_size, &bytes) || !BufferHolds(**buffer, m.offset, bytes))
    return Fail(c, Status::Error(CL_INVALID_VALUE, "region out of range of the image or the buffer"));
  Backend& bk = server_->backend();
  if (EmptyRegion(to.region)) return EndCommand(c, bk.Marker(c.queue, c.waits));
  return EndCommand(c, bk.CopyBufferToImage(c.queue, (*buffer)->handle, (*image)->handle, m.offset,
                                            to, c.waits));
}

Status Session::EnqueueFillImage(Command& c, Reader& r) {
  proto::FillImageRequest m;
  if (!proto::FillImageRequest::Decode(r, &m) || !r.done()) return Status::Protocol("malformed image command");
  if (Status s = ResolveCommand(c); !s.ok()) return Fail(c, s);
  const ImageRegion at = RegionOf(m.origin, m.region);
  auto image = ImageIn(m.image, at);
  if (!image.ok()) return Fail(c, image.status());
  uint64_t bytes = 0;
  if (!RegionBytes(at, (*image)->element_size, &bytes))
    return Fail(c, Status::Error(CL_INVALID_VALUE, "image region out of range"));
  Backend& bk = server_->backend();
  if (EmptyRegion(at.region)) return EndCommand(c, bk.Marker(c.queue, c.waits));
  return EndCommand(c, bk.FillImage(c.queue, (*image)->handle, m.color.data(), at, c.waits));
}

}  // namespace rgpu::server
