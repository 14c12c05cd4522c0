// Images and samplers: their creation, the image commands and the checks on kernel arguments
// that take objects. Kept apart from session.cpp's buffer path; the wire is docs/protocol.md.
#include <CL/cl.h>

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

void ReadTriple(Reader& r, size_t v[3]) {
  for (int i = 0; i < 3; ++i) v[i] = static_cast<size_t>(r.u64());
}

// The body of a successful reply without fields: status 0, empty message.
std::vector<uint8_t> OkReply() {
  std::vector<uint8_t> body;
  Writer w(&body);
  w.i32(CL_SUCCESS);
  w.str("");
  return body;
}

// Everything an image command names, decoded before any object is touched.
struct ImageCommand {
  uint64_t queue_id = 0, event_id = 0;
  std::vector<uint64_t> wait_ids;
  uint64_t a = 0, b = 0;  // the image (or source), the destination of copies
  ImageRegion ra;         // the image region read, written, filled, or copied from
  size_t dst_origin[3] = {0, 0, 0};
  size_t offset = 0;      // the buffer's offset in copies between images and buffers
  uint8_t color[16] = {};
  Bytes blob;
};

// Decodes everything but WriteImage's trailing blob.
Status DecodeImageCommand(Op op, Reader& r, ImageCommand& c) {
  c.queue_id = r.u64();
  c.event_id = r.u64();
  uint32_t nwait = r.count(proto::kMaxWaitList, 8);
  c.wait_ids.resize(nwait);
  for (auto& w : c.wait_ids) w = r.u64();
  c.a = r.u64();
  switch (op) {
    case Op::WriteImage:
    case Op::ReadImage:
      ReadTriple(r, c.ra.origin);
      ReadTriple(r, c.ra.region);
      break;
    case Op::CopyImage:
      c.b = r.u64();
      ReadTriple(r, c.ra.origin);
      ReadTriple(r, c.dst_origin);
      ReadTriple(r, c.ra.region);
      break;
    case Op::CopyImageToBuffer:
      c.b = r.u64();
      ReadTriple(r, c.ra.origin);
      ReadTriple(r, c.ra.region);
      c.offset = r.u64();
      break;
    case Op::CopyBufferToImage:
      c.b = r.u64();
      c.offset = r.u64();
      ReadTriple(r, c.ra.origin);
      ReadTriple(r, c.ra.region);
      break;
    case Op::FillImage: {
      auto color = r.bytes(16);
      if (color.size() != 16) r.fail();
      else std::memcpy(c.color, color.data(), 16);
      ReadTriple(r, c.ra.origin);
      ReadTriple(r, c.ra.region);
      break;
    }
    default:
      return Status::Protocol("not an image command");
  }
  return r.ok() ? Status::Ok() : Status::Protocol("malformed image command");
}

// The packed bytes of `region` of an image whose pixels take `element_size` bytes.
bool RegionBytes(const ImageRegion& r, uint64_t element_size, uint64_t* out) {
  return proto::CheckedProduct(r.region[0], r.region[1], r.region[2], element_size, out);
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

Result<Session::Entry*> Session::LookupMem(uint64_t id, bool image) {
  auto e = Lookup(id, ObjType::Mem);
  if (!e.ok()) return e.status();
  // CL_INVALID_MEM_OBJECT if image is not a valid image object (or buffer not a buffer)
  if (((*e)->image_type != 0) != image)
    return Status::Error(CL_INVALID_MEM_OBJECT, std::string("memory object ") + std::to_string(id) +
                                                    (image ? " is not an image" : " is not a buffer"));
  return *e;
}

Status Session::CreateImage(const FrameHeader& h, Reader& r) {
  const uint64_t id = r.u64(), ctx_id = r.u64(), flags = r.u64();
  ImageDesc d;
  d.channel_order = r.u32();
  d.channel_type = r.u32();
  d.image_type = r.u32();
  d.width = r.u64();
  d.height = r.u64();
  d.depth = r.u64();
  d.array_size = r.u64();
  d.row_pitch = r.u64();
  d.slice_pitch = r.u64();
  d.mip_levels = r.u32();
  d.samples = r.u32();
  const uint64_t buffer_id = r.u64();
  if (!r.ok() || h.tag == 0) return Status::Protocol("malformed CreateImage");
  auto blob = TakeBlob(r);
  if (!blob.ok()) return blob.status();
  auto ctx = Lookup(ctx_id, ObjType::Context);
  if (!ctx.ok()) return Reply(h, ctx.status()), Status::Ok();
  if (buffer_id != 0) {
    auto buf = LookupMem(buffer_id, /*image=*/false);
    if (!buf.ok()) return Reply(h, buf.status()), Status::Ok();
    d.buffer = static_cast<BkMem*>((*buf)->handle);
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
  auto facts = server_->backend().CreateImage(static_cast<BkContext*>((*ctx)->handle), flags, d,
                                              blob->get());
  if (!facts.ok()) {
    RefundMemory(charge);
    return Reply(h, facts.status()), Status::Ok();
  }
  Entry e;
  e.type = ObjType::Mem;
  e.handle = facts->mem;
  e.parent = ctx_id;
  e.size = facts->mem_size;
  e.charged = charge;
  e.image_type = d.image_type;
  e.element_size = facts->element_size;
  ImageExtent(d, e.image_extent);
  if (Status s = InsertOwned(id, std::move(e)); !s.ok()) {
    RefundMemory(charge);
    return s;
  }
  std::vector<uint8_t> f;
  Writer w(&f);
  w.u64(facts->element_size);
  w.u64(facts->row_pitch);
  w.u64(facts->slice_pitch);
  w.u64(facts->mem_size);
  Reply(h, Status::Ok(), f);
  return Status::Ok();
}

Status Session::GetSupportedImageFormats(const FrameHeader& h, Reader& r) {
  const uint64_t ctx_id = r.u64(), flags = r.u64();
  const uint32_t type = r.u32();
  if (!r.done() || h.tag == 0) return Status::Protocol("malformed GetSupportedImageFormats");
  auto ctx = Lookup(ctx_id, ObjType::Context);
  if (!ctx.ok()) return Reply(h, ctx.status()), Status::Ok();
  auto formats = server_->backend().SupportedImageFormats(static_cast<BkContext*>((*ctx)->handle),
                                                          flags, type);
  if (!formats.ok()) return Reply(h, formats.status()), Status::Ok();
  std::vector<uint8_t> f;
  Writer w(&f);
  const size_t n = std::min<size_t>(formats->size(), proto::kMaxImageFormats);
  w.u32(static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) {
    w.u32((*formats)[i].first);
    w.u32((*formats)[i].second);
  }
  Reply(h, Status::Ok(), f);
  return Status::Ok();
}

Status Session::CreateSampler(Reader& r) {
  const uint64_t id = r.u64(), ctx_id = r.u64();
  const uint32_t n = r.count(proto::kMaxSamplerProps * 2, 8);
  std::vector<uint64_t> props(n);
  for (auto& p : props) p = r.u64();
  if (!r.done()) return Status::Protocol("malformed CreateSampler");
  auto ctx = Lookup(ctx_id, ObjType::Context);
  if (!ctx.ok()) return AsyncFailure(Op::CreateSampler, id, ctx.status()), Status::Ok();
  auto smp = server_->backend().CreateSampler(static_cast<BkContext*>((*ctx)->handle), props);
  if (!smp.ok()) return AsyncFailure(Op::CreateSampler, id, smp.status()), Status::Ok();
  Entry e;
  e.type = ObjType::Sampler;
  e.handle = *smp;
  e.parent = ctx_id;
  return InsertOwned(id, std::move(e));
}

Status Session::CheckArgKind(const Entry& k, uint32_t index, KernelArgValue::Kind kind,
                             const std::vector<uint8_t>& bytes) {
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

Status Session::EnqueueImage(const FrameHeader& h, Reader& r) {
  const Op op = static_cast<Op>(h.op);
  ImageCommand c;
  if (Status ds = DecodeImageCommand(op, r, c); !ds.ok()) return ds;
  if (op == Op::WriteImage) {
    auto blob = TakeBlob(r);
    if (!blob.ok()) return blob.status();
    c.blob = *blob;
  }
  if (!r.done()) return Status::Protocol("malformed image command");
  if (op == Op::ReadImage && h.tag == 0) return Status::Protocol("ReadImage needs a tag");
  auto fail = [&](const Status& s) { return CommandFailed(h, c.queue_id, c.event_id, s); };
  auto q = Lookup(c.queue_id, ObjType::Queue);
  if (!q.ok()) return fail(q.status());
  auto* queue = static_cast<BkQueue*>((*q)->handle);
  auto resolved = ResolveWaits(c.wait_ids);
  if (!resolved.ok()) return fail(resolved.status());
  std::vector<BkEvent*> waits = std::move(*resolved);
  // The first object is an image except for CopyBufferToImage; the second, where there is one,
  // an image for CopyImage and CopyBufferToImage.
  auto a = LookupMem(c.a, op != Op::CopyBufferToImage);
  if (!a.ok()) return fail(a.status());
  Result<Entry*> b = Status::Ok();
  if (op == Op::CopyImage || op == Op::CopyImageToBuffer || op == Op::CopyBufferToImage) {
    b = LookupMem(c.b, op != Op::CopyImageToBuffer);
    if (!b.ok()) return fail(b.status());
  }
  auto* ma = static_cast<BkMem*>((*a)->handle);
  auto* mb = b.ok() && op != Op::WriteImage && op != Op::ReadImage && op != Op::FillImage
                 ? static_cast<BkMem*>((*b)->handle)
                 : nullptr;
  // Regions are checked against the image here, not left to the device: NVIDIA's driver
  // (580.x, H100) died of SIGFPE in clEnqueueReadImage on image_test's ErrorsAreTheDevices,
  // natively and inside rgpud (every tenant's session with it). An empty region is a command
  // that does nothing, as PoCL treats it: a marker stands in for it.
  const Entry* image = op == Op::CopyBufferToImage ? *b : *a;
  if (!InsideImage(image->image_extent, c.ra.origin, c.ra.region) ||
      (op == Op::CopyImage && !InsideImage((*b)->image_extent, c.dst_origin, c.ra.region)))
    return fail(Status::Error(CL_INVALID_VALUE, "image region out of range"));
  const bool empty = EmptyRegion(c.ra.region);
  // Payload sizes follow from the region and the device's pixel size; checked before any copy.
  uint64_t bytes = 0;
  if (!RegionBytes(c.ra, (*a)->element_size, &bytes) ||
      (op == Op::ReadImage && bytes > server_->options().max_staging_bytes))
    return fail(Status::Error(CL_INVALID_VALUE, "image region out of range"));
  if (op == Op::WriteImage && c.blob->size() != bytes)
    return Status::Protocol("image data does not match its region");
  Backend& bk = server_->backend();
  Bytes dst;
  Result<BkEvent*> ev = Status::Error(CL_INVALID_OPERATION, "unhandled");
  switch (empty ? Op::Marker : op) {
    case Op::Marker:
      if (op == Op::ReadImage) dst = server_->buffers().Acquire(0);
      ev = bk.Marker(queue, waits);
      break;
    case Op::WriteImage: ev = bk.WriteImage(queue, ma, c.ra, c.blob, waits); break;
    case Op::ReadImage:
      dst = server_->buffers().Acquire(bytes);
      dst->reserve(std::max<uint64_t>(bytes, 1));  // an empty region still names real memory
      dst->resize(bytes);
      ev = bk.ReadImage(queue, ma, c.ra, dst, waits);
      break;
    case Op::CopyImage: ev = bk.CopyImage(queue, ma, mb, c.ra, c.dst_origin, waits); break;
    case Op::CopyImageToBuffer: ev = bk.CopyImageToBuffer(queue, ma, mb, c.ra, c.offset, waits); break;
    case Op::CopyBufferToImage:
      // The buffer is first here: the image, and its region, are the destination.
      ev = bk.CopyBufferToImage(queue, ma, mb, c.offset, c.ra, waits);
      break;
    case Op::FillImage: ev = bk.FillImage(queue, ma, c.color, c.ra, waits); break;
    default: break;
  }
  if (!ev.ok()) return fail(ev.status());
  TrackUnfinished(*ev);
  if (dst) {
    // As for buffer reads: ReadData chunks behind the control frames, then the reply.
    outbox_->Reserve(dst->size());
    auto out = outbox_;
    const uint16_t rop = h.op;
    const uint64_t tag = h.tag;
    bk.OnComplete(*ev, [out, dst, rop, tag](int32_t st) {
      if (st == CL_COMPLETE) {
        for (size_t off = 0; off < dst->size(); off += proto::kDataChunk) {
          const size_t len = std::min<size_t>(proto::kDataChunk, dst->size() - off);
          std::vector<uint8_t> prefix;
          Writer w(&prefix);
          w.u64(off);
          out->PushBulk(FrameHeader{0, static_cast<uint16_t>(Op::ReadData), proto::kFlagNotify, tag},
                        std::move(prefix), dst, off, len);
        }
        out->PushBulk(FrameHeader{0, rop, proto::kFlagReply, tag}, OkReply(), nullptr, 0, 0);
      } else {
        std::vector<uint8_t> body;
        Writer w(&body);
        w.i32(st < 0 ? st : CL_OUT_OF_RESOURCES);
        w.str("image read failed");
        out->Push(FrameHeader{0, rop, proto::kFlagReply, tag}, std::move(body));
      }
      out->Unreserve(dst->size());
    });
  }
  if (c.event_id != 0) {
    Entry e;
    e.type = ObjType::Event;
    e.handle = *ev;
    e.parent = (*q)->parent;
    return InsertOwned(c.event_id, std::move(e));
  }
  bk.Release(ObjType::Event, *ev);
  return Status::Ok();
}

}  // namespace rgpu::server
