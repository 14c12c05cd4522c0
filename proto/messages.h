// Typed messages: one struct per message whose layout both ends (and the tools and tests)
// write, with the limits both ends must agree on named beside it. A message's Encode gives
// the frame body; Decode reads one from a body and fails on anything malformed.
//
// Typed: every request. Hello, AttachShared, the requests that create, query and release
// objects (one <Op>Request each, named as the op), SetKernelArg, every buffer, image and
// kernel command (clEnqueue*) as its command header and its own fields, and PutData's size
// before its bytes; every reply body: the status and message every reply starts with
// (ReplyStatus), the Hello and Stats replies, the kernel list of a build, info values, and
// those with a fixed layout (CreateProgramWithBinary, GetEventProfiling, WaitEvents,
// CreateImage, GetSupportedImageFormats); and every notification (ReadData's offset before
// its bytes, EventDone, AsyncError, Goodbye). Bulk data after a message's fields (PutData,
// ReadData, the blob of a write) is raw bytes, not typed; docs/protocol.md has every layout.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proto/info.h"
#include "proto/wire.h"

namespace rgpu::proto {

// Limits of the wire that clients, rgpud and the tools share.
inline constexpr uint32_t kMaxTokenBytes = 4096;       // Hello: the tenant's token
inline constexpr uint32_t kMaxClientNameBytes = 256;   // Hello: what the client calls itself
inline constexpr uint32_t kMaxArgBytes = 4096;         // SetKernelArg: a value argument
inline constexpr uint32_t kMaxKernelArgs = 1024;       // SetKernelArg: an argument's index
inline constexpr uint32_t kMaxNameBytes = 4096;        // a kernel's or an embedded header's name
inline constexpr uint32_t kMaxOptionBytes = 65536;     // build, compile and link options
inline constexpr uint32_t kMaxHeaders = 1024;          // CompileProgram: embedded headers
inline constexpr uint32_t kMaxLinkInputs = 1024;       // LinkProgram: input programs
inline constexpr uint32_t kMaxPatternBytes = 128;      // FillBuffer: the pattern (OpenCL's limit)
inline constexpr uint32_t kMaxMigrateObjects = 4096;   // MigrateMemObjects: memory objects
inline constexpr uint32_t kMaxDevices = 64;            // devices named in one request or listed
                                                       // in the Hello reply
inline constexpr uint32_t kMaxSamplerValues = 2 * kMaxSamplerProps;  // CreateSampler: names, values
// Limits of the replies (a client refuses a reply over them).
inline constexpr uint32_t kMaxServerNameBytes = 256;        // Hello: the server's name
inline constexpr uint32_t kMaxDeviceQueries = 4096;         // Hello: queries answered per device
inline constexpr uint32_t kMaxInfoNumbers = 1 << 17;        // an info value: kMaxInfoBytes of u64
inline constexpr uint32_t kMaxListedKernels = 1 << 16;      // a kernel list: kernels
inline constexpr uint32_t kMaxListedArgs = 1 << 16;         // a kernel list: one kernel's arguments
inline constexpr uint32_t kMaxStatsTenants = 1 << 16;       // Stats: tenants
inline constexpr uint32_t kMaxStatsSessions = 1 << 20;      // Stats: sessions
inline constexpr uint32_t kMaxReplyMessageBytes = 1 << 20;  // every reply: why it failed
// Limits of the notifications (a client takes a longer one as malformed).
inline constexpr uint32_t kMaxNoticeMessageBytes = 1
                                                   << 16;  // AsyncError's message, Goodbye's reason
static_assert(kMaxInfoNumbers * 8 == kMaxInfoBytes);

// The frame body of a message that nothing follows (no data tail).
template <typename M>
std::vector<uint8_t> EncodeBody(const M& m) {
  std::vector<uint8_t> body;
  Writer w(&body);
  m.EncodeTo(w);
  return body;
}

// What every reply body starts with: the OpenCL code the application should see and, on
// failure, why. The reply's own fields follow it.
//   i32 code (0: CL_SUCCESS) | str message (empty on success; at most kMaxReplyMessageBytes)
struct ReplyStatus {
  int32_t code = 0;
  std::string message;

  bool operator==(const ReplyStatus&) const = default;
  // The status a request ended with, as its reply says it: a protocol error is code -1.
  static ReplyStatus Of(const Status& s) {
    if (s.ok()) return {};
    return {s.code(), s.message()};
  }
  // Success, or the error the reply carries.
  Status ToStatus() const { return code == 0 ? Status::Ok() : Status::Error(code, message); }
  void EncodeTo(Writer& w) const {
    w.i32(code);
    w.str(message);
  }
  static bool Decode(Reader& r, ReplyStatus* out) {
    out->code = r.i32();
    out->message = r.str(kMaxReplyMessageBytes);
    return r.ok();
  }
};

// Hello: the first request of every connection.
//   u32 magic | u16 version | u16 features | str token | str client_name
struct HelloRequest {
  uint16_t version = kVersion;
  uint16_t features = 0;  // kFeature* bits the client speaks
  std::string token;
  std::string client_name;

  std::vector<uint8_t> Encode() const {
    std::vector<uint8_t> body;
    Writer w(&body);
    w.u32(kMagic);
    w.u16(version);
    w.u16(features);
    w.str(token);
    w.str(client_name);
    return body;
  }
  // False for a body that is not a Hello (wrong magic, fields cut short or over their
  // limits). The version is returned as sent: the server answers a mismatch itself.
  static bool Decode(Reader& r, HelloRequest* out) {
    const uint32_t magic = r.u32();
    out->version = r.u16();
    out->features = r.u16();
    out->token = r.str(kMaxTokenBytes);
    out->client_name = r.str(kMaxClientNameBytes);
    return r.ok() && magic == kMagic;
  }
};

// An info value: one clGet*Info answer (GetInfo's reply, and each device query in the Hello
// reply). Numbers travel as little-endian arrays, so that a client of the other byte order or
// another size_t width rebuilds the host's value; proto/info.cpp says which kind each
// parameter has (docs/protocol.md, "Info values").
//   u8 kind | kind Bytes: bytes value (at most kMaxBody) |
//   kind U32: u32 n (at most kMaxInfoNumbers) | n x u32 | kinds U64, Size: the same, n x u64
struct InfoValue {
  InfoKind kind = InfoKind::Bytes;  // never Local on the wire
  std::string bytes;                // kind Bytes
  std::vector<uint64_t> numbers;    // the numeric kinds (U32: each fits in 32 bits)

  // From the value as the server's OpenCL returned it; Local travels as Bytes (proto/info.cpp).
  static InfoValue FromHost(InfoKind kind, const void* raw, size_t raw_size);
  // The value as this host's clGet*Info gives it (proto/info.cpp).
  std::vector<uint8_t> ToHost() const;

  bool operator==(const InfoValue&) const = default;
  void EncodeTo(Writer& w) const {
    w.u8(static_cast<uint8_t>(kind));
    if (kind == InfoKind::Bytes) {
      w.str(bytes);
      return;
    }
    w.u32(static_cast<uint32_t>(numbers.size()));
    for (uint64_t v : numbers) {
      if (kind == InfoKind::U32)
        w.u32(static_cast<uint32_t>(v));
      else
        w.u64(v);
    }
  }
  // False for a body cut short, a count over its limit, or a kind that is not on the wire.
  static bool Decode(Reader& r, InfoValue* out) {
    out->kind = static_cast<InfoKind>(r.u8());
    out->bytes.clear();
    out->numbers.clear();
    switch (out->kind) {
      case InfoKind::Bytes: out->bytes = r.str(kMaxBody); break;
      case InfoKind::U32:
        out->numbers.resize(r.count(kMaxInfoNumbers, 4));
        for (uint64_t& v : out->numbers) v = r.u32();
        break;
      case InfoKind::U64:
      case InfoKind::Size:
        out->numbers.resize(r.count(kMaxInfoNumbers, 8));
        for (uint64_t& v : out->numbers) v = r.u64();
        break;
      default: return false;
    }
    return r.ok();
  }
};

// Hello's answer: the session, every device the tenant may use with every device query the
// server's OpenCL answered (so the client answers clGetDeviceInfo itself) and its index on the
// server, and the device memory the tenant may still allocate. Fields at the end answer the
// features the client asked for.
//   u16 version | u64 session | str server_name (at most kMaxServerNameBytes) |
//   u32 n (at most kMaxDevices) | n x (u32 m (at most kMaxDeviceQueries) |
//   m x (u32 param | info value)) | u32 n (the same n) | n x u32 server device index |
//   u64 mem_left (UINT64_MAX: no quota) |
//   with kFeatureHeartbeat: u32 heartbeat_interval_ms | u32 peer_timeout_ms |
//   then with kFeatureShared: u64 shared_cap (the largest region AttachShared takes; 0: none)
struct HelloReply {
  struct Device {
    std::vector<std::pair<uint32_t, InfoValue>> queries;  // (param, value)
    uint32_t server_index = 0;                            // the number requests use for it
    bool operator==(const Device&) const = default;
  };
  uint16_t version = kVersion;
  uint64_t session = 0;
  std::string server_name;
  std::vector<Device> devices;
  uint64_t mem_left = UINT64_MAX;
  // Which of the fields below are on the wire (kFeatureHeartbeat, kFeatureShared): the
  // features of the Hello this answers, which the reply does not repeat. Set it before Decode
  // to the features asked for; Decode clears the bit of a field the server did not send (an
  // older server sends none of them).
  uint16_t features = 0;
  uint32_t heartbeat_interval_ms = 0, peer_timeout_ms = 0;  // kFeatureHeartbeat
  uint64_t shared_cap = 0;                                  // kFeatureShared

  bool operator==(const HelloReply&) const = default;
  void EncodeTo(Writer& w) const {
    w.u16(version);
    w.u64(session);
    w.str(server_name);
    w.u32(static_cast<uint32_t>(devices.size()));
    for (const Device& d : devices) {
      w.u32(static_cast<uint32_t>(d.queries.size()));
      for (const auto& [param, value] : d.queries) {
        w.u32(param);
        value.EncodeTo(w);
      }
    }
    w.u32(static_cast<uint32_t>(devices.size()));
    for (const Device& d : devices) w.u32(d.server_index);
    w.u64(mem_left);
    if (features & kFeatureHeartbeat) {
      w.u32(heartbeat_interval_ms);
      w.u32(peer_timeout_ms);
    }
    if (features & kFeatureShared) w.u64(shared_cap);
  }
  // False for a body cut short before mem_left, a count over its limit, a malformed info value
  // or two device counts that differ. Bytes after the fields are left unread.
  static bool Decode(Reader& r, HelloReply* out) {
    out->version = r.u16();
    out->session = r.u64();
    out->server_name = r.str(kMaxServerNameBytes);
    out->devices.resize(r.count(kMaxDevices, 4));
    for (Device& d : out->devices) {
      d.queries.resize(r.count(kMaxDeviceQueries, 5));
      for (auto& [param, value] : d.queries) {
        param = r.u32();
        if (!InfoValue::Decode(r, &value)) r.fail();
      }
    }
    if (r.count(kMaxDevices, 4) != out->devices.size()) r.fail();
    for (Device& d : out->devices) d.server_index = r.u32();
    out->mem_left = r.u64();
    if (!r.ok()) return false;
    if ((out->features & kFeatureHeartbeat) && r.remaining() >= 8) {
      out->heartbeat_interval_ms = r.u32();
      out->peer_timeout_ms = r.u32();
    } else {
      out->features = static_cast<uint16_t>(out->features & ~kFeatureHeartbeat);
    }
    if ((out->features & kFeatureShared) && r.remaining() >= 8)
      out->shared_cap = r.u64();
    else
      out->features = static_cast<uint16_t>(out->features & ~kFeatureShared);
    return r.ok();
  }
};

// The requests that create objects. The client chooses each new object's id; rgpud answers
// none of them (a failure is an AsyncError). Decode does not check that the body ends:
// CreateBuffer is followed by its data, and the handlers check the end of the others.

// CreateContext.   u64 context | u32 n (at most kMaxDevices) | n x u32 device index
struct CreateContextRequest {
  uint64_t context = 0;
  std::vector<uint32_t> devices;

  bool operator==(const CreateContextRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(context);
    w.u32(static_cast<uint32_t>(devices.size()));
    for (uint32_t d : devices) w.u32(d);
  }
  static bool Decode(Reader& r, CreateContextRequest* out) {
    out->context = r.u64();
    out->devices.resize(r.count(kMaxDevices, 4));
    for (auto& d : out->devices) d = r.u32();
    return r.ok();
  }
};

// CreateQueue.   u64 queue | u64 context | u32 device index | u64 properties
struct CreateQueueRequest {
  uint64_t queue = 0, context = 0;
  uint32_t device = 0;
  uint64_t properties = 0;

  bool operator==(const CreateQueueRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(queue);
    w.u64(context);
    w.u32(device);
    w.u64(properties);
  }
  static bool Decode(Reader& r, CreateQueueRequest* out) {
    out->queue = r.u64();
    out->context = r.u64();
    out->device = r.u32();
    out->properties = r.u64();
    return r.ok();
  }
};

// CreateBuffer: the initial contents, if any, follow as a blob (as WriteBuffer's data).
//   u64 mem | u64 context | u64 flags | u64 size | u64 data_size (0 or size) | data tail
struct CreateBufferRequest {
  uint64_t mem = 0, context = 0, flags = 0, size = 0;
  uint64_t data_size = 0;  // of the initial contents that follow: 0 (none) or size

  bool operator==(const CreateBufferRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(mem);
    w.u64(context);
    w.u64(flags);
    w.u64(size);
    w.u64(data_size);
  }
  static bool Decode(Reader& r, CreateBufferRequest* out) {
    out->mem = r.u64();
    out->context = r.u64();
    out->flags = r.u64();
    out->size = r.u64();
    out->data_size = r.u64();
    return r.ok();
  }
};

// CreateSubBuffer.   u64 mem | u64 parent | u64 flags | u64 origin | u64 size
struct CreateSubBufferRequest {
  uint64_t mem = 0, parent = 0, flags = 0, origin = 0, size = 0;

  bool operator==(const CreateSubBufferRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(mem);
    w.u64(parent);
    w.u64(flags);
    w.u64(origin);
    w.u64(size);
  }
  static bool Decode(Reader& r, CreateSubBufferRequest* out) {
    out->mem = r.u64();
    out->parent = r.u64();
    out->flags = r.u64();
    out->origin = r.u64();
    out->size = r.u64();
    return r.ok();
  }
};

// CreateSampler: the property list without its terminating 0 (names and values).
//   u64 sampler | u64 context | u32 n (at most kMaxSamplerValues) | n x u64 property
struct CreateSamplerRequest {
  uint64_t sampler = 0, context = 0;
  std::vector<uint64_t> properties;

  bool operator==(const CreateSamplerRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(sampler);
    w.u64(context);
    w.u32(static_cast<uint32_t>(properties.size()));
    for (uint64_t p : properties) w.u64(p);
  }
  static bool Decode(Reader& r, CreateSamplerRequest* out) {
    out->sampler = r.u64();
    out->context = r.u64();
    out->properties.resize(r.count(kMaxSamplerValues, 8));
    for (auto& p : out->properties) p = r.u64();
    return r.ok();
  }
};

// CreateUserEvent.   u64 event | u64 context
struct CreateUserEventRequest {
  uint64_t event = 0, context = 0;

  bool operator==(const CreateUserEventRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(event);
    w.u64(context);
  }
  static bool Decode(Reader& r, CreateUserEventRequest* out) {
    out->event = r.u64();
    out->context = r.u64();
    return r.ok();
  }
};

// The requests that make programs and kernels. Device lists hold rgpud's device indices (an
// empty list: all of the context's devices); options are at most kMaxOptionBytes.

// CreateProgramWithSource.   u64 program | u64 context | str source
struct CreateProgramWithSourceRequest {
  uint64_t program = 0, context = 0;
  std::string source;

  bool operator==(const CreateProgramWithSourceRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(program);
    w.u64(context);
    w.str(source);
  }
  static bool Decode(Reader& r, CreateProgramWithSourceRequest* out) {
    out->program = r.u64();
    out->context = r.u64();
    out->source = r.str(kMaxBody);
    return r.ok();
  }
};

// CreateProgramWithBinary [tag].   u64 program | u64 context | u32 n (at most kMaxDevices) |
//   n x (u32 device | bytes binary)
// Answered by a CreateProgramWithBinaryReply, also on failure.
struct CreateProgramWithBinaryRequest {
  struct Binary {
    uint32_t device = 0;
    std::string bytes;
    bool operator==(const Binary&) const = default;
  };
  uint64_t program = 0, context = 0;
  std::vector<Binary> binaries;

  bool operator==(const CreateProgramWithBinaryRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(program);
    w.u64(context);
    w.u32(static_cast<uint32_t>(binaries.size()));
    for (const Binary& b : binaries) {
      w.u32(b.device);
      w.str(b.bytes);
    }
  }
  static bool Decode(Reader& r, CreateProgramWithBinaryRequest* out) {
    out->program = r.u64();
    out->context = r.u64();
    out->binaries.resize(r.count(kMaxDevices, 8));
    for (Binary& b : out->binaries) {
      b.device = r.u32();
      b.bytes = r.str(kMaxBody);
    }
    return r.ok();
  }
};
//   u32 n (at most kMaxDevices) | n x i32 binary status, one per binary sent
struct CreateProgramWithBinaryReply {
  std::vector<int32_t> status;

  bool operator==(const CreateProgramWithBinaryReply&) const = default;
  void EncodeTo(Writer& w) const {
    w.u32(static_cast<uint32_t>(status.size()));
    for (int32_t s : status) w.i32(s);
  }
  static bool Decode(Reader& r, CreateProgramWithBinaryReply* out) {
    out->status.resize(r.count(kMaxDevices, 4));
    for (int32_t& s : out->status) s = r.i32();
    return r.ok();
  }
};

// The device list and options that BuildProgram, CompileProgram and LinkProgram share.
//   u32 n (at most kMaxDevices) | n x u32 device | str options (at most kMaxOptionBytes)
struct BuildTarget {
  std::vector<uint32_t> devices;
  std::string options;

  bool operator==(const BuildTarget&) const = default;
  void EncodeTo(Writer& w) const {
    w.u32(static_cast<uint32_t>(devices.size()));
    for (uint32_t d : devices) w.u32(d);
    w.str(options);
  }
  static bool Decode(Reader& r, BuildTarget* out) {
    out->devices.resize(r.count(kMaxDevices, 4));
    for (auto& d : out->devices) d = r.u32();
    out->options = r.str(kMaxOptionBytes);
    return r.ok();
  }
};

// BuildProgram [tag]: answered by its KernelList, also on failure.
//   u64 program | build target
struct BuildProgramRequest {
  uint64_t program = 0;
  BuildTarget target;

  bool operator==(const BuildProgramRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(program);
    target.EncodeTo(w);
  }
  static bool Decode(Reader& r, BuildProgramRequest* out) {
    out->program = r.u64();
    BuildTarget::Decode(r, &out->target);
    return r.ok();
  }
};

// CompileProgram [tag]: the embedded headers are programs of the session and the names the
// source includes them by.
//   u64 program | build target | u32 n (at most kMaxHeaders) |
//   n x (u64 header program | str include name (at most kMaxNameBytes))
struct CompileProgramRequest {
  struct Header {
    uint64_t program = 0;
    std::string name;
    bool operator==(const Header&) const = default;
  };
  uint64_t program = 0;
  BuildTarget target;
  std::vector<Header> headers;

  bool operator==(const CompileProgramRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(program);
    target.EncodeTo(w);
    w.u32(static_cast<uint32_t>(headers.size()));
    for (const Header& h : headers) {
      w.u64(h.program);
      w.str(h.name);
    }
  }
  static bool Decode(Reader& r, CompileProgramRequest* out) {
    out->program = r.u64();
    BuildTarget::Decode(r, &out->target);
    out->headers.resize(r.count(kMaxHeaders, 12));
    for (Header& h : out->headers) {
      h.program = r.u64();
      h.name = r.str(kMaxNameBytes);
    }
    return r.ok();
  }
};

// LinkProgram [tag]: makes a new program of the inputs; answered by its KernelList.
//   u64 program | u64 context | build target | u32 n (at most kMaxLinkInputs) | n x u64 input
struct LinkProgramRequest {
  uint64_t program = 0, context = 0;
  BuildTarget target;
  std::vector<uint64_t> inputs;

  bool operator==(const LinkProgramRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(program);
    w.u64(context);
    target.EncodeTo(w);
    w.u32(static_cast<uint32_t>(inputs.size()));
    for (uint64_t p : inputs) w.u64(p);
  }
  static bool Decode(Reader& r, LinkProgramRequest* out) {
    out->program = r.u64();
    out->context = r.u64();
    BuildTarget::Decode(r, &out->target);
    out->inputs.resize(r.count(kMaxLinkInputs, 8));
    for (auto& p : out->inputs) p = r.u64();
    return r.ok();
  }
};

// The kernel list: BuildProgram's answer (also on failure) and LinkProgram's. Each kernel's
// name and the argument count the application sees, then, in the same kernel order, the
// shape of each argument as the device checks it (docs/protocol.md, "kernel list", has the
// kinds); rgpud leaves the shapes out when it could not list the kernels, and older servers
// never sent them.
//   u32 n (at most kMaxListedKernels) | n x (str name (at most kMaxNameBytes) | u32 num_args) |
//   optional: u32 m (at most kMaxListedKernels) |
//   m x (u32 k (at most kMaxListedArgs) | k x (u8 kind | u32 size | u32 also))
struct KernelList {
  struct Kernel {
    std::string name;
    uint32_t num_args = 0;
    bool operator==(const Kernel&) const = default;
  };
  struct Arg {
    uint8_t kind = 0;  // 0 unchecked ... 5 sampler (server/backend/backend.h ArgShape::Kind)
    uint32_t size = 0;
    uint32_t also = 0;  // a second size the device takes (0: none)
    bool operator==(const Arg&) const = default;
  };
  std::vector<Kernel> kernels;
  std::optional<std::vector<std::vector<Arg>>> shapes;  // one list of arguments per kernel

  bool operator==(const KernelList&) const = default;
  void EncodeTo(Writer& w) const {
    w.u32(static_cast<uint32_t>(kernels.size()));
    for (const Kernel& k : kernels) {
      w.str(k.name);
      w.u32(k.num_args);
    }
    if (!shapes) return;
    w.u32(static_cast<uint32_t>(shapes->size()));
    for (const auto& args : *shapes) {
      w.u32(static_cast<uint32_t>(args.size()));
      for (const Arg& a : args) {
        w.u8(a.kind);
        w.u32(a.size);
        w.u32(a.also);
      }
    }
  }
  // False for a list of kernels cut short or over its limits. The shapes are only a check
  // the client makes early (the device makes it again): when they are cut short or malformed
  // they are dropped, as if the server had not sent them.
  static bool Decode(Reader& r, KernelList* out) {
    out->kernels.resize(r.count(kMaxListedKernels, 8));
    for (Kernel& k : out->kernels) {
      k.name = r.str(kMaxNameBytes);
      k.num_args = r.u32();
    }
    out->shapes.reset();
    if (!r.ok()) return false;
    if (r.remaining() == 0) return true;
    std::vector<std::vector<Arg>> shapes(r.count(kMaxListedKernels, 4));
    for (auto& args : shapes) {
      args.resize(r.count(kMaxListedArgs, 9));
      for (Arg& a : args) {
        a.kind = r.u8();
        a.size = r.u32();
        a.also = r.u32();
      }
    }
    if (r.ok()) out->shapes = std::move(shapes);
    return true;
  }
};
using BuildProgramReply = KernelList;
using LinkProgramReply = KernelList;

// CreateKernel.   u64 kernel | u64 program | str name (at most kMaxNameBytes)
struct CreateKernelRequest {
  uint64_t kernel = 0, program = 0;
  std::string name;

  bool operator==(const CreateKernelRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(kernel);
    w.u64(program);
    w.str(name);
  }
  static bool Decode(Reader& r, CreateKernelRequest* out) {
    out->kernel = r.u64();
    out->program = r.u64();
    out->name = r.str(kMaxNameBytes);
    return r.ok();
  }
};

// CloneKernel: a new kernel of the source's program and name, with its arguments.
//   u64 kernel | u64 source kernel
struct CloneKernelRequest {
  uint64_t kernel = 0, source = 0;

  bool operator==(const CloneKernelRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(kernel);
    w.u64(source);
  }
  static bool Decode(Reader& r, CloneKernelRequest* out) {
    out->kernel = r.u64();
    out->source = r.u64();
    return r.ok();
  }
};

// Release: the session forgets the object (OpenCL's last clRelease* of the application).
//   u8 object type (ObjType) | u64 id
struct ReleaseRequest {
  ObjType type = ObjType::None;
  uint64_t id = 0;

  bool operator==(const ReleaseRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u8(static_cast<uint8_t>(type));
    w.u64(id);
  }
  // Any type byte decodes: one that names no type names no object of the session either.
  static bool Decode(Reader& r, ReleaseRequest* out) {
    out->type = static_cast<ObjType>(r.u8());
    out->id = r.u64();
    return r.ok();
  }
};

// Flush, and Finish [tag] (answered when everything queued before it is done).
//   u64 queue
struct QueueRequest {
  uint64_t queue = 0;

  bool operator==(const QueueRequest&) const = default;
  void EncodeTo(Writer& w) const { w.u64(queue); }
  static bool Decode(Reader& r, QueueRequest* out) {
    out->queue = r.u64();
    return r.ok();
  }
};
using FlushRequest = QueueRequest;
using FinishRequest = QueueRequest;

// WatchEvent (EventDone is sent when the event completes), and GetEventProfiling [tag]
// (answered by a GetEventProfilingReply).
//   u64 event
struct EventRequest {
  uint64_t event = 0;

  bool operator==(const EventRequest&) const = default;
  void EncodeTo(Writer& w) const { w.u64(event); }
  static bool Decode(Reader& r, EventRequest* out) {
    out->event = r.u64();
    return r.ok();
  }
};
using WatchEventRequest = EventRequest;
using GetEventProfilingRequest = EventRequest;

//   u64 queued | u64 submit | u64 start | u64 end   (device nanoseconds)
struct GetEventProfilingReply {
  uint64_t queued = 0, submit = 0, start = 0, end = 0;

  bool operator==(const GetEventProfilingReply&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(queued);
    w.u64(submit);
    w.u64(start);
    w.u64(end);
  }
  static bool Decode(Reader& r, GetEventProfilingReply* out) {
    out->queued = r.u64();
    out->submit = r.u64();
    out->start = r.u64();
    out->end = r.u64();
    return r.ok();
  }
};

// WaitEvents [tag]: answered when every event has completed or failed.
//   u32 n (at most kMaxWaitList) | n x u64 event
struct WaitEventsRequest {
  std::vector<uint64_t> events;

  bool operator==(const WaitEventsRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u32(static_cast<uint32_t>(events.size()));
    for (uint64_t e : events) w.u64(e);
  }
  static bool Decode(Reader& r, WaitEventsRequest* out) {
    out->events.resize(r.count(kMaxWaitList, 8));
    for (auto& e : out->events) e = r.u64();
    return r.ok();
  }
};
//   u32 n (at most kMaxWaitList) | n x i32 status (CL_COMPLETE or negative), in request order
struct WaitEventsReply {
  std::vector<int32_t> status;

  bool operator==(const WaitEventsReply&) const = default;
  void EncodeTo(Writer& w) const {
    w.u32(static_cast<uint32_t>(status.size()));
    for (int32_t s : status) w.i32(s);
  }
  static bool Decode(Reader& r, WaitEventsReply* out) {
    out->status.resize(r.count(kMaxWaitList, 4));
    for (auto& s : out->status) s = r.i32();
    return r.ok();
  }
};

// SetUserEventStatus.   u64 event | i32 status (CL_COMPLETE or negative)
struct SetUserEventStatusRequest {
  uint64_t event = 0;
  int32_t status = 0;

  bool operator==(const SetUserEventStatusRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(event);
    w.i32(status);
  }
  static bool Decode(Reader& r, SetUserEventStatusRequest* out) {
    out->event = r.u64();
    out->status = r.i32();
    return r.ok();
  }
};

// Stats [tag]: an empty body; answered by a StatsReply.
struct StatsRequest {
  bool operator==(const StatsRequest&) const = default;
  void EncodeTo(Writer&) const {}
  static bool Decode(Reader& r, StatsRequest*) { return r.ok(); }
};

// Stats' answer: what `rgpu status` shows. The tenants and sessions are those the asker may
// see (all for an admin, or with no config; else its own).
//   u64 objects | u64 total_objects | u64 session_count |
//   u32 n (at most kMaxStatsTenants) | n x (str id | str priority | u64 milli_weight |
//   u32 sessions | u64 mem_bytes | u64 mem_quota (0: none) | u64 device_ns | u64 commands) |
//   u32 m (at most kMaxStatsSessions) | m x (u64 id | str tenant | str peer | u64 objects |
//   u64 commands | u64 in_flight)
struct StatsReply {
  struct Tenant {
    std::string id, priority;
    uint64_t milli_weight = 0;  // the scheduling weight x 1000
    uint32_t sessions = 0;
    uint64_t mem_bytes = 0, mem_quota = 0, device_ns = 0, commands = 0;
    bool operator==(const Tenant&) const = default;
  };
  struct Session {
    uint64_t id = 0;
    std::string tenant, peer;
    uint64_t objects = 0, commands = 0, in_flight = 0;
    bool operator==(const Session&) const = default;
  };
  uint64_t objects = 0;        // of the asking session
  uint64_t total_objects = 0;  // of every session
  uint64_t session_count = 0;  // active sessions, the asker's included
  std::vector<Tenant> tenants;
  std::vector<Session> sessions;

  bool operator==(const StatsReply&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(objects);
    w.u64(total_objects);
    w.u64(session_count);
    w.u32(static_cast<uint32_t>(tenants.size()));
    for (const Tenant& t : tenants) {
      w.str(t.id);
      w.str(t.priority);
      w.u64(t.milli_weight);
      w.u32(t.sessions);
      w.u64(t.mem_bytes);
      w.u64(t.mem_quota);
      w.u64(t.device_ns);
      w.u64(t.commands);
    }
    w.u32(static_cast<uint32_t>(sessions.size()));
    for (const Session& s : sessions) {
      w.u64(s.id);
      w.str(s.tenant);
      w.str(s.peer);
      w.u64(s.objects);
      w.u64(s.commands);
      w.u64(s.in_flight);
    }
  }
  static bool Decode(Reader& r, StatsReply* out) {
    out->objects = r.u64();
    out->total_objects = r.u64();
    out->session_count = r.u64();
    out->tenants.resize(r.count(kMaxStatsTenants, 52));
    for (Tenant& t : out->tenants) {
      t.id = r.str();
      t.priority = r.str();
      t.milli_weight = r.u64();
      t.sessions = r.u32();
      t.mem_bytes = r.u64();
      t.mem_quota = r.u64();
      t.device_ns = r.u64();
      t.commands = r.u64();
    }
    out->sessions.resize(r.count(kMaxStatsSessions, 40));
    for (Session& s : out->sessions) {
      s.id = r.u64();
      s.tenant = r.str();
      s.peer = r.str();
      s.objects = r.u64();
      s.commands = r.u64();
      s.in_flight = r.u64();
    }
    return r.ok();
  }
};

// GetInfo [tag]: a clGet*Info the client cannot answer from its own records; answered by the
// info value (InfoValue).
//   u8 family (InfoFamily) | u64 id (a device index for devices) | u32 param |
//   i32 device index (-1: none) | u32 aux (an argument's index)
struct GetInfoRequest {
  InfoFamily family = InfoFamily::Device;
  uint64_t id = 0;
  uint32_t param = 0;
  int32_t device = -1;
  uint32_t aux = 0;

  bool operator==(const GetInfoRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u8(static_cast<uint8_t>(family));
    w.u64(id);
    w.u32(param);
    w.i32(device);
    w.u32(aux);
  }
  // Any family byte decodes: rgpud answers one it does not know with an error.
  static bool Decode(Reader& r, GetInfoRequest* out) {
    out->family = static_cast<InfoFamily>(r.u8());
    out->id = r.u64();
    out->param = r.u32();
    out->device = r.i32();
    out->aux = r.u32();
    return r.ok();
  }
};
using GetInfoReply = InfoValue;

// CreateImage [tag]: the initial contents, if any, follow as a blob, packed (rows of width x
// pixel size; the pitches are then 0). `buffer` is the buffer an image is made from (0: none).
//   u64 mem | u64 context | u64 flags | u32 channel_order | u32 channel_type | u32 image_type |
//   u64 width | u64 height | u64 depth | u64 array_size | u64 row_pitch | u64 slice_pitch |
//   u32 mip_levels | u32 samples | u64 buffer | u64 data_size (0 or the packed size) | data tail
struct CreateImageRequest {
  uint64_t mem = 0, context = 0, flags = 0;
  uint32_t channel_order = 0, channel_type = 0, image_type = 0;
  uint64_t width = 0, height = 0, depth = 0, array_size = 0, row_pitch = 0, slice_pitch = 0;
  uint32_t mip_levels = 0, samples = 0;
  uint64_t buffer = 0;
  uint64_t data_size = 0;  // of the initial contents that follow

  bool operator==(const CreateImageRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(mem);
    w.u64(context);
    w.u64(flags);
    w.u32(channel_order);
    w.u32(channel_type);
    w.u32(image_type);
    w.u64(width);
    w.u64(height);
    w.u64(depth);
    w.u64(array_size);
    w.u64(row_pitch);
    w.u64(slice_pitch);
    w.u32(mip_levels);
    w.u32(samples);
    w.u64(buffer);
    w.u64(data_size);
  }
  static bool Decode(Reader& r, CreateImageRequest* out) {
    out->mem = r.u64();
    out->context = r.u64();
    out->flags = r.u64();
    out->channel_order = r.u32();
    out->channel_type = r.u32();
    out->image_type = r.u32();
    out->width = r.u64();
    out->height = r.u64();
    out->depth = r.u64();
    out->array_size = r.u64();
    out->row_pitch = r.u64();
    out->slice_pitch = r.u64();
    out->mip_levels = r.u32();
    out->samples = r.u32();
    out->buffer = r.u64();
    out->data_size = r.u64();
    return r.ok();
  }
};
// The device's answers about the image it made.
//   u64 pixel_size | u64 row_pitch | u64 slice_pitch | u64 mem_size
struct CreateImageReply {
  uint64_t pixel_size = 0, row_pitch = 0, slice_pitch = 0, mem_size = 0;

  bool operator==(const CreateImageReply&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(pixel_size);
    w.u64(row_pitch);
    w.u64(slice_pitch);
    w.u64(mem_size);
  }
  static bool Decode(Reader& r, CreateImageReply* out) {
    out->pixel_size = r.u64();
    out->row_pitch = r.u64();
    out->slice_pitch = r.u64();
    out->mem_size = r.u64();
    return r.ok();
  }
};

// GetSupportedImageFormats [tag].   u64 context | u64 flags | u32 image_type
struct GetSupportedImageFormatsRequest {
  uint64_t context = 0, flags = 0;
  uint32_t image_type = 0;

  bool operator==(const GetSupportedImageFormatsRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(context);
    w.u64(flags);
    w.u32(image_type);
  }
  static bool Decode(Reader& r, GetSupportedImageFormatsRequest* out) {
    out->context = r.u64();
    out->flags = r.u64();
    out->image_type = r.u32();
    return r.ok();
  }
};
//   u32 n (at most kMaxImageFormats) | n x (u32 channel_order | u32 channel_type)
struct GetSupportedImageFormatsReply {
  struct Format {
    uint32_t channel_order = 0, channel_type = 0;
    bool operator==(const Format&) const = default;
  };
  std::vector<Format> formats;

  bool operator==(const GetSupportedImageFormatsReply&) const = default;
  void EncodeTo(Writer& w) const {
    w.u32(static_cast<uint32_t>(formats.size()));
    for (const Format& f : formats) {
      w.u32(f.channel_order);
      w.u32(f.channel_type);
    }
  }
  static bool Decode(Reader& r, GetSupportedImageFormatsReply* out) {
    out->formats.resize(r.count(kMaxImageFormats, 8));
    for (Format& f : out->formats) {
      f.channel_order = r.u32();
      f.channel_type = r.u32();
    }
    return r.ok();
  }
};

// AttachShared [tag]: the region's memfd travels with the frame's bytes (SCM_RIGHTS);
// docs/protocol.md, "Shared memory".   u64 size
struct AttachSharedRequest {
  uint64_t size = 0;

  bool operator==(const AttachSharedRequest&) const = default;
  void EncodeTo(Writer& w) const { w.u64(size); }
  static bool Decode(Reader& r, AttachSharedRequest* out) {
    out->size = r.u64();
    return r.ok();
  }
};

// AttachRing [tag]: the control rings' memfd travels with the frame's bytes (SCM_RIGHTS);
// docs/protocol.md, "Control rings". Its body is AttachShared's: u64 size (kRingFileBytes).
// Accepted, the answer already comes through the ring; refused, through the socket.
using AttachRingRequest = AttachSharedRequest;

using Triple = std::array<uint64_t, 3>;

inline void PutTriple(Writer& w, const Triple& v) {
  for (uint64_t x : v) w.u64(x);
}
inline Triple GetTriple(Reader& r) { return {r.u64(), r.u64(), r.u64()}; }

// Every command (clEnqueue*) starts with this: the queue, the id the client chose for the
// command's event (0: the application asked for none), and the events it waits for.
//   u64 queue | u64 event | u32 n | n x u64 wait event
struct CommandHeader {
  uint64_t queue = 0;
  uint64_t event = 0;
  std::vector<uint64_t> waits;

  bool operator==(const CommandHeader&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(queue);
    w.u64(event);
    w.u32(static_cast<uint32_t>(waits.size()));
    for (uint64_t e : waits) w.u64(e);
  }
  static bool Decode(Reader& r, CommandHeader* out) {
    out->queue = r.u64();
    out->event = r.u64();
    out->waits.resize(r.count(kMaxWaitList, 8));
    for (auto& e : out->waits) e = r.u64();
    return r.ok();
  }
};

// The fields after the command header, one struct per operation. EncodeTo appends them to a
// body that holds the header; Decode reads them from the rest of the body. Decode does not
// check that the body ends: WriteBuffer and WriteBufferRect are followed by their data.

// WriteBuffer and ReadBuffer: `size` bytes at `offset` of a buffer.
//   u64 mem | u64 offset | u64 size
// WriteBuffer's data follows the fields; any part of it that does not fit in the frame
// arrived before it, as PutData frames (the tail is the rest). ReadBuffer is answered by
// ReadData frames, then the reply.
struct BufferRangeRequest {
  uint64_t mem = 0, offset = 0, size = 0;

  bool operator==(const BufferRangeRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(mem);
    w.u64(offset);
    w.u64(size);
  }
  static bool Decode(Reader& r, BufferRangeRequest* out) {
    out->mem = r.u64();
    out->offset = r.u64();
    out->size = r.u64();
    return r.ok();
  }
};
using WriteBufferRequest = BufferRangeRequest;
using ReadBufferRequest = BufferRangeRequest;

// CopyBuffer.   u64 src | u64 dst | u64 src_offset | u64 dst_offset | u64 size
struct CopyBufferRequest {
  uint64_t src = 0, dst = 0, src_offset = 0, dst_offset = 0, size = 0;

  bool operator==(const CopyBufferRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(src);
    w.u64(dst);
    w.u64(src_offset);
    w.u64(dst_offset);
    w.u64(size);
  }
  static bool Decode(Reader& r, CopyBufferRequest* out) {
    out->src = r.u64();
    out->dst = r.u64();
    out->src_offset = r.u64();
    out->dst_offset = r.u64();
    out->size = r.u64();
    return r.ok();
  }
};

// ReadBufferRect and WriteBufferRect: the buffer's side of the rectangle. The host's side is
// packed tightly (pitches follow from the region): the client packs and unpacks it.
//   u64 mem | 3 x u64 origin | 3 x u64 region | u64 row_pitch | u64 slice_pitch
//   WriteBufferRect adds: u64 size (region[0] * region[1] * region[2]) | data tail
struct BufferRectRequest {
  uint64_t mem = 0;
  Triple origin{}, region{1, 1, 1};
  uint64_t row_pitch = 0, slice_pitch = 0;

  uint64_t PackedSize() const { return region[0] * region[1] * region[2]; }
  bool operator==(const BufferRectRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(mem);
    PutTriple(w, origin);
    PutTriple(w, region);
    w.u64(row_pitch);
    w.u64(slice_pitch);
  }
  static bool Decode(Reader& r, BufferRectRequest* out) {
    out->mem = r.u64();
    out->origin = GetTriple(r);
    out->region = GetTriple(r);
    out->row_pitch = r.u64();
    out->slice_pitch = r.u64();
    return r.ok();
  }
};
struct WriteBufferRectRequest {
  BufferRectRequest rect;
  uint64_t size = 0;  // of the data that follows; must be rect.PackedSize()

  bool operator==(const WriteBufferRectRequest&) const = default;
  void EncodeTo(Writer& w) const {
    rect.EncodeTo(w);
    w.u64(size);
  }
  static bool Decode(Reader& r, WriteBufferRectRequest* out) {
    BufferRectRequest::Decode(r, &out->rect);
    out->size = r.u64();
    return r.ok();
  }
};

// CopyBufferRect.
//   u64 src | u64 dst | 3 x u64 src_origin | 3 x u64 dst_origin | 3 x u64 region |
//   u64 src_row_pitch | u64 src_slice_pitch | u64 dst_row_pitch | u64 dst_slice_pitch
struct CopyBufferRectRequest {
  uint64_t src = 0, dst = 0;
  Triple src_origin{}, dst_origin{}, region{1, 1, 1};
  uint64_t src_row_pitch = 0, src_slice_pitch = 0, dst_row_pitch = 0, dst_slice_pitch = 0;

  bool operator==(const CopyBufferRectRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(src);
    w.u64(dst);
    PutTriple(w, src_origin);
    PutTriple(w, dst_origin);
    PutTriple(w, region);
    w.u64(src_row_pitch);
    w.u64(src_slice_pitch);
    w.u64(dst_row_pitch);
    w.u64(dst_slice_pitch);
  }
  static bool Decode(Reader& r, CopyBufferRectRequest* out) {
    out->src = r.u64();
    out->dst = r.u64();
    out->src_origin = GetTriple(r);
    out->dst_origin = GetTriple(r);
    out->region = GetTriple(r);
    out->src_row_pitch = r.u64();
    out->src_slice_pitch = r.u64();
    out->dst_row_pitch = r.u64();
    out->dst_slice_pitch = r.u64();
    return r.ok();
  }
};

// FillBuffer.   u64 mem | bytes pattern (at most kMaxPatternBytes) | u64 offset | u64 size
struct FillBufferRequest {
  uint64_t mem = 0;
  std::vector<uint8_t> pattern;
  uint64_t offset = 0, size = 0;

  bool operator==(const FillBufferRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(mem);
    w.bytes(pattern.data(), pattern.size());
    w.u64(offset);
    w.u64(size);
  }
  static bool Decode(Reader& r, FillBufferRequest* out) {
    out->mem = r.u64();
    const std::string_view p = r.bytes(kMaxPatternBytes);
    out->pattern.assign(p.begin(), p.end());
    out->offset = r.u64();
    out->size = r.u64();
    return r.ok();
  }
};

// NDRangeKernel: the kernel runs with the arguments set on it so far (SetKernelArg). Unused
// dimensions are sent as offset 0, global 1, local 1; offset and local as zeros / ones when
// the application gave none (has_offset, has_local say whether it did).
//   u64 kernel | u32 dims | u8 has_offset | u8 has_local | 3 x u64 offset |
//   3 x u64 global | 3 x u64 local
struct NDRangeKernelRequest {
  uint64_t kernel = 0;
  uint32_t dims = 1;
  bool has_offset = false, has_local = false;
  Triple offset{}, global{1, 1, 1}, local{1, 1, 1};

  bool operator==(const NDRangeKernelRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(kernel);
    w.u32(dims);
    w.u8(has_offset ? 1 : 0);
    w.u8(has_local ? 1 : 0);
    PutTriple(w, offset);
    PutTriple(w, global);
    PutTriple(w, local);
  }
  static bool Decode(Reader& r, NDRangeKernelRequest* out) {
    out->kernel = r.u64();
    out->dims = r.u32();
    out->has_offset = r.u8() != 0;
    out->has_local = r.u8() != 0;
    out->offset = GetTriple(r);
    out->global = GetTriple(r);
    out->local = GetTriple(r);
    return r.ok();
  }
};

// MigrateMemObjects.   u64 flags | u32 n | n x u64 mem
struct MigrateMemObjectsRequest {
  uint64_t flags = 0;
  std::vector<uint64_t> mems;

  bool operator==(const MigrateMemObjectsRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(flags);
    w.u32(static_cast<uint32_t>(mems.size()));
    for (uint64_t m : mems) w.u64(m);
  }
  static bool Decode(Reader& r, MigrateMemObjectsRequest* out) {
    out->flags = r.u64();
    out->mems.resize(r.count(kMaxMigrateObjects, 8));
    for (auto& m : out->mems) m = r.u64();
    return r.ok();
  }
};

// CreateBuffer with kFlagShared: the initial contents, all `size` bytes of them, are at
// `region_offset` of the shared region (AttachShared), not in PutData chunks.
//   CreateBufferRequest (data_size = size) | u64 region_offset
struct SharedInitRequest {
  uint64_t region_offset = 0;

  bool operator==(const SharedInitRequest&) const = default;
  void EncodeTo(Writer& w) const { w.u64(region_offset); }
  static bool Decode(Reader& r, SharedInitRequest* out) {
    out->region_offset = r.u64();
    return r.ok();
  }
};

// WriteBuffer and ReadBuffer with kFlagShared: the data is at `region_offset` of the shared
// region (AttachShared), not in the frame.
//   u64 mem | u64 offset | u64 size | u64 region_offset
struct SharedTransferRequest {
  uint64_t mem = 0, offset = 0, size = 0, region_offset = 0;

  bool operator==(const SharedTransferRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(mem);
    w.u64(offset);
    w.u64(size);
    w.u64(region_offset);
  }
  static bool Decode(Reader& r, SharedTransferRequest* out) {
    out->mem = r.u64();
    out->offset = r.u64();
    out->size = r.u64();
    out->region_offset = r.u64();
    return r.ok();
  }
};

// Image commands. An image region is an origin and a region in pixels (rows, then slices
// or layers); the host's side of ReadImage and WriteImage is packed (the client packs and
// unpacks it), so its size is region[0] * region[1] * region[2] * the image's pixel size.
//   ReadImage:  u64 image | 3 x u64 origin | 3 x u64 region
//   WriteImage: the same, then u64 size | data tail (as WriteBuffer)
struct ImageTransferRequest {
  uint64_t image = 0;
  Triple origin{}, region{1, 1, 1};

  bool operator==(const ImageTransferRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(image);
    PutTriple(w, origin);
    PutTriple(w, region);
  }
  static bool Decode(Reader& r, ImageTransferRequest* out) {
    out->image = r.u64();
    out->origin = GetTriple(r);
    out->region = GetTriple(r);
    return r.ok();
  }
};
struct WriteImageRequest {
  ImageTransferRequest to;
  uint64_t size = 0;  // of the data that follows

  bool operator==(const WriteImageRequest&) const = default;
  void EncodeTo(Writer& w) const {
    to.EncodeTo(w);
    w.u64(size);
  }
  static bool Decode(Reader& r, WriteImageRequest* out) {
    ImageTransferRequest::Decode(r, &out->to);
    out->size = r.u64();
    return r.ok();
  }
};

// CopyImage.   u64 src | u64 dst | 3 x u64 src_origin | 3 x u64 dst_origin | 3 x u64 region
struct CopyImageRequest {
  uint64_t src = 0, dst = 0;
  Triple src_origin{}, dst_origin{}, region{1, 1, 1};

  bool operator==(const CopyImageRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(src);
    w.u64(dst);
    PutTriple(w, src_origin);
    PutTriple(w, dst_origin);
    PutTriple(w, region);
  }
  static bool Decode(Reader& r, CopyImageRequest* out) {
    out->src = r.u64();
    out->dst = r.u64();
    out->src_origin = GetTriple(r);
    out->dst_origin = GetTriple(r);
    out->region = GetTriple(r);
    return r.ok();
  }
};

// CopyImageToBuffer.   u64 image | u64 buffer | 3 x u64 origin | 3 x u64 region | u64 offset
struct CopyImageToBufferRequest {
  uint64_t image = 0, buffer = 0;
  Triple origin{}, region{1, 1, 1};
  uint64_t offset = 0;

  bool operator==(const CopyImageToBufferRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(image);
    w.u64(buffer);
    PutTriple(w, origin);
    PutTriple(w, region);
    w.u64(offset);
  }
  static bool Decode(Reader& r, CopyImageToBufferRequest* out) {
    out->image = r.u64();
    out->buffer = r.u64();
    out->origin = GetTriple(r);
    out->region = GetTriple(r);
    out->offset = r.u64();
    return r.ok();
  }
};

// CopyBufferToImage.   u64 buffer | u64 image | u64 offset | 3 x u64 origin | 3 x u64 region
struct CopyBufferToImageRequest {
  uint64_t buffer = 0, image = 0, offset = 0;
  Triple origin{}, region{1, 1, 1};

  bool operator==(const CopyBufferToImageRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(buffer);
    w.u64(image);
    w.u64(offset);
    PutTriple(w, origin);
    PutTriple(w, region);
  }
  static bool Decode(Reader& r, CopyBufferToImageRequest* out) {
    out->buffer = r.u64();
    out->image = r.u64();
    out->offset = r.u64();
    out->origin = GetTriple(r);
    out->region = GetTriple(r);
    return r.ok();
  }
};

// FillImage: the color as the image's type takes it (a float4, int4 or uint4: 16 bytes).
//   u64 image | bytes color (exactly 16) | 3 x u64 origin | 3 x u64 region
struct FillImageRequest {
  uint64_t image = 0;
  std::array<uint8_t, 16> color{};
  Triple origin{}, region{1, 1, 1};

  bool operator==(const FillImageRequest&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(image);
    w.bytes(color.data(), color.size());
    PutTriple(w, origin);
    PutTriple(w, region);
  }
  static bool Decode(Reader& r, FillImageRequest* out) {
    out->image = r.u64();
    const std::string_view c = r.bytes(16);
    if (c.size() != 16) r.fail();
    else std::memcpy(out->color.data(), c.data(), 16);
    out->origin = GetTriple(r);
    out->region = GetTriple(r);
    return r.ok();
  }
};

// PutData: the next chunk of a blob whose last part a later request carries (the client sends
// kDataChunk bytes a frame). The chunk's bytes follow the fields.
//   u64 total (the whole blob's size) | chunk
struct PutDataRequest {
  static constexpr size_t kBytes = 8;  // the fields before the chunk
  uint64_t total = 0;

  bool operator==(const PutDataRequest&) const = default;
  void EncodeTo(Writer& w) const { w.u64(total); }
  static bool Decode(Reader& r, PutDataRequest* out) {
    out->total = r.u64();
    return r.ok();
  }
};

// The notifications (flags kFlagNotify): unsolicited, nothing answers them.

// ReadData (tag: the read's): bytes of a read, at `offset` of what was asked, before the
// reply; at most kDataChunk of them per frame from rgpud. The bytes follow.
//   u64 offset | data
struct ReadDataNotice {
  static constexpr size_t kBytes = 8;  // the fields before the data
  uint64_t offset = 0;

  bool operator==(const ReadDataNotice&) const = default;
  void EncodeTo(Writer& w) const { w.u64(offset); }
  static bool Decode(Reader& r, ReadDataNotice* out) {
    out->offset = r.u64();
    return r.ok();
  }
};

// EventDone: an event named by WatchEvent completed (CL_COMPLETE) or failed (negative).
//   u64 event | i32 status
struct EventDoneNotice {
  uint64_t event = 0;
  int32_t status = 0;

  bool operator==(const EventDoneNotice&) const = default;
  void EncodeTo(Writer& w) const {
    w.u64(event);
    w.i32(status);
  }
  static bool Decode(Reader& r, EventDoneNotice* out) {
    out->event = r.u64();
    out->status = r.i32();
    return r.ok();
  }
};

// AsyncError: a request without a reply failed; `object` is the id it created or named (the
// event of a command).
//   u16 op | u64 object | i32 code | str message (at most kMaxNoticeMessageBytes)
struct AsyncErrorNotice {
  uint16_t op = 0;
  uint64_t object = 0;
  int32_t code = 0;
  std::string message;

  bool operator==(const AsyncErrorNotice&) const = default;
  void EncodeTo(Writer& w) const {
    w.u16(op);
    w.u64(object);
    w.i32(code);
    w.str(message);
  }
  static bool Decode(Reader& r, AsyncErrorNotice* out) {
    out->op = r.u16();
    out->object = r.u64();
    out->code = r.i32();
    out->message = r.str(kMaxNoticeMessageBytes);
    return r.ok();
  }
};

// Goodbye from rgpud: it is ending the session, and says why. (A client's Goodbye, leaving,
// has an empty body.)
//   str reason (at most kMaxNoticeMessageBytes)
struct GoodbyeNotice {
  std::string reason;

  bool operator==(const GoodbyeNotice&) const = default;
  void EncodeTo(Writer& w) const { w.str(reason); }
  static bool Decode(Reader& r, GoodbyeNotice* out) {
    out->reason = r.str(kMaxNoticeMessageBytes);
    return r.ok();
  }
};

// SetKernelArg: argument `index` of a kernel takes bytes (a value, or the 8 zero bytes of a
// NULL buffer), a memory object, a __local size, or a sampler. Objects go by id: rgpud
// resolves them at launch.
//   u64 kernel | u32 index | u8 kind | kind 0: bytes value (at most kMaxArgBytes);
//   1 and 3: u64 object id; 2: u64 local size
struct SetKernelArgRequest {
  enum class Kind : uint8_t { Bytes = 0, Mem = 1, Local = 2, Sampler = 3 };
  uint64_t kernel = 0;
  uint32_t index = 0;
  Kind kind = Kind::Bytes;
  std::vector<uint8_t> bytes;  // Kind::Bytes
  uint64_t object = 0;         // Kind::Mem, Kind::Sampler
  uint64_t local_size = 0;     // Kind::Local

  bool operator==(const SetKernelArgRequest&) const = default;
  std::vector<uint8_t> Encode() const {
    std::vector<uint8_t> body;
    Writer w(&body);
    w.u64(kernel);
    w.u32(index);
    w.u8(static_cast<uint8_t>(kind));
    if (kind == Kind::Bytes) w.bytes(bytes.data(), bytes.size());
    else if (kind == Kind::Local) w.u64(local_size);
    else w.u64(object);
    return body;
  }
  // False for a body cut short, an unknown kind, a value over kMaxArgBytes, an index at or
  // past kMaxKernelArgs, or bytes left over.
  static bool Decode(Reader& r, SetKernelArgRequest* out) {
    out->kernel = r.u64();
    out->index = r.u32();
    const uint8_t kind = r.u8();
    out->kind = static_cast<Kind>(kind);
    switch (out->kind) {
      case Kind::Bytes: {
        const std::string_view b = r.bytes(kMaxArgBytes);
        out->bytes.assign(b.begin(), b.end());
        break;
      }
      case Kind::Mem:
      case Kind::Sampler: out->object = r.u64(); break;
      case Kind::Local: out->local_size = r.u64(); break;
      default: return false;
    }
    return r.done() && out->index < kMaxKernelArgs;
  }
};

}  // namespace rgpu::proto
