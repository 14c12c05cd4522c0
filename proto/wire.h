// The rgpu wire format: frame header, op numbers, limits, and a little-endian codec.
// docs/protocol.md is the byte-level specification; change both in the same commit.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "proto/status.h"

namespace rgpu::proto {

inline constexpr uint32_t kMagic = 0x55504752;  // "RGPU" read as a little-endian u32
inline constexpr uint16_t kVersion = 1;

// Every frame: a 16-byte header, then `body_len` bytes of body.
//   u32 body_len | u16 op | u16 flags | u64 tag
// tag != 0 asks for a reply carrying the same tag; tag == 0 means "no reply wanted".
inline constexpr size_t kHeaderSize = 16;
inline constexpr uint32_t kMaxBody = 8u << 20;     // larger payloads travel as PutData chunks
inline constexpr uint32_t kDataChunk = 1u << 20;   // bulk data is cut into chunks of this size
inline constexpr uint32_t kMaxWaitList = 4096;     // events in one wait list
inline constexpr uint32_t kMaxInfoBytes = 1u << 20;
inline constexpr uint32_t kMaxImageFormats = 4096;  // formats in one GetSupportedImageFormats answer
inline constexpr uint32_t kMaxSamplerProps = 16;    // property names in one CreateSampler

enum FrameFlags : uint16_t {
  kFlagReply = 1,   // server -> client: the answer to the request with the same tag
  kFlagNotify = 2,  // server -> client: unsolicited (event callback, goodbye)
  // client -> server, on a read: the application thread blocks until the answer comes, so
  // the server may wait for the device on the connection's own thread (a hint; ignoring it
  // is correct).
  kFlagWaiting = 4,
  // client -> server, on WriteBuffer and ReadBuffer after AttachShared succeeded: the data is
  // in the client's shared region (proto/shared_region.h) instead of the frame.
  kFlagShared = 8,
};

// Hello's `features` bits (the u16 after the version): what the client can do beyond
// version 1 as first published. A server ignores bits it does not know, so a new client
// still talks to an old server; the server uses a feature only when the client set its bit.
enum HelloFeatures : uint16_t {
  // Both sides send Heartbeat when they have sent nothing for the interval the server
  // names in its Hello reply, and take a peer silent for its timeout as dead.
  kFeatureHeartbeat = 1,
  // The client can move bulk data through a shared memory region it passes with
  // AttachShared (Unix sockets only); the server's Hello reply then says the largest region
  // it takes (0: none on this connection).
  kFeatureShared = 2,
  // The client can move every frame through control rings in shared memory (proto/ring.h)
  // that it passes with AttachRing (Unix sockets only, where the server takes shared regions).
  kFeatureRing = 4,
};

// One list of ops; the numbers are part of the protocol and never reused.
#define RGPU_OPS(X)               \
  X(Hello, 1)                     \
  X(Goodbye, 2)                   \
  X(Heartbeat, 3)                 \
  X(AttachShared, 4)              \
  X(AttachRing, 5)                \
  X(CreateContext, 10)            \
  X(CreateQueue, 11)              \
  X(CreateBuffer, 12)             \
  X(CreateSubBuffer, 13)          \
  X(CreateProgramWithSource, 14)  \
  X(CreateProgramWithBinary, 15)  \
  X(BuildProgram, 16)             \
  X(CompileProgram, 17)           \
  X(LinkProgram, 18)              \
  X(CreateKernel, 19)             \
  X(SetKernelArg, 20)             \
  X(CreateUserEvent, 21)          \
  X(SetUserEventStatus, 22)       \
  X(Release, 23)                  \
  X(CloneKernel, 24)              \
  X(GetInfo, 30)                  \
  X(GetEventProfiling, 31)        \
  X(PutData, 40)                  \
  X(WriteBuffer, 41)              \
  X(ReadBuffer, 42)               \
  X(CopyBuffer, 43)               \
  X(WriteBufferRect, 44)          \
  X(ReadBufferRect, 45)           \
  X(CopyBufferRect, 46)           \
  X(FillBuffer, 47)               \
  X(NDRangeKernel, 48)            \
  X(Marker, 49)                   \
  X(Barrier, 50)                  \
  X(MigrateMemObjects, 51)        \
  X(Flush, 52)                    \
  X(Finish, 53)                   \
  X(WaitEvents, 54)               \
  X(WatchEvent, 55)               \
  X(ReadData, 60)                 \
  X(EventDone, 61)                \
  X(AsyncError, 62)               \
  X(Stats, 70)                    \
  X(CreateImage, 80)              \
  X(GetSupportedImageFormats, 81) \
  X(WriteImage, 82)               \
  X(ReadImage, 83)                \
  X(CopyImage, 84)                \
  X(CopyImageToBuffer, 85)        \
  X(CopyBufferToImage, 86)        \
  X(FillImage, 87)                \
  X(CreateSampler, 88)

enum class Op : uint16_t {
#define RGPU_OP_ENUM(name, num) name = (num),
  RGPU_OPS(RGPU_OP_ENUM)
#undef RGPU_OP_ENUM
};

const char* OpName(uint16_t op);

// Object kinds as they appear on the wire (GetInfo, Release).
enum class ObjType : uint8_t {
  None = 0,
  Device = 1,
  Context = 2,
  Queue = 3,
  Mem = 4,
  Program = 5,
  Kernel = 6,
  Event = 7,
  Sampler = 8,
};
const char* ObjTypeName(ObjType t);

// Which clGet*Info a GetInfo request means.
enum class InfoFamily : uint8_t {
  Device = 1,
  Context = 2,
  Queue = 3,
  Mem = 4,
  Program = 5,
  ProgramBuild = 6,
  Kernel = 7,
  KernelWorkGroup = 8,
  KernelArg = 9,
  Event = 10,
};

struct FrameHeader {
  uint32_t body_len = 0;
  uint16_t op = 0;
  uint16_t flags = 0;
  uint64_t tag = 0;
};
static_assert(kHeaderSize == 4 + 2 + 2 + 8);

// --- little-endian primitives, independent of the host's byte order ---
// On a little-endian host one copy (a single load or store once inlined: every launch
// decodes a dozen fields); elsewhere byte by byte.
inline void PutLE(uint8_t* p, uint64_t v, int n) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, static_cast<size_t>(n));
  } else {
    for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
  }
}
inline uint64_t GetLE(const uint8_t* p, int n) {
  uint64_t v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, static_cast<size_t>(n));
  } else {
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  }
  return v;
}

void EncodeHeader(const FrameHeader& h, uint8_t out[kHeaderSize]);
FrameHeader DecodeHeader(const uint8_t in[kHeaderSize]);

// Appends little-endian values to a growing byte vector.
class Writer {
 public:
  Writer() = default;
  explicit Writer(std::vector<uint8_t>* out) : out_(out) {}
  void u8(uint8_t v) { out_->push_back(v); }
  void u16(uint16_t v) { Put(v, 2); }
  void u32(uint32_t v) { Put(v, 4); }
  void i32(int32_t v) { Put(static_cast<uint32_t>(v), 4); }
  void u64(uint64_t v) { Put(v, 8); }
  void bytes(const void* p, size_t n) {
    u32(static_cast<uint32_t>(n));
    raw(p, n);
  }
  void str(std::string_view s) { bytes(s.data(), s.size()); }
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_->insert(out_->end(), b, b + n);
  }
  std::vector<uint8_t>& buffer() { return *out_; }

 private:
  void Put(uint64_t v, int n) {
    // Appended from a local array rather than by resize-then-write: GCC 12 warns (wrongly)
    // about the zero-fill of a resize it inlines from a small vector.
    uint8_t b[8];
    PutLE(b, v, n);
    out_->insert(out_->end(), b, b + n);
  }
  std::vector<uint8_t>* out_ = nullptr;
};

// Reads little-endian values from a byte span. Every read checks bounds; after the first
// failure the reader stays failed and returns zeros, so a handler decodes all fields and
// checks ok() once.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  uint8_t u8() { return static_cast<uint8_t>(Get(1)); }
  uint16_t u16() { return static_cast<uint16_t>(Get(2)); }
  uint32_t u32() { return static_cast<uint32_t>(Get(4)); }
  int32_t i32() { return static_cast<int32_t>(static_cast<uint32_t>(Get(4))); }
  uint64_t u64() { return Get(8); }
  // A length-prefixed byte string; the view stays valid while the frame does.
  std::string_view bytes(uint32_t max_len = kMaxBody) {
    uint32_t n = u32();
    if (!ok_ || n > max_len || n > n_ - at_) {
      ok_ = false;
      return {};
    }
    std::string_view v(reinterpret_cast<const char*>(p_ + at_), n);
    at_ += n;
    return v;
  }
  std::string str(uint32_t max_len = kMaxBody) { return std::string(bytes(max_len)); }
  // A count that the caller will allocate for: rejects counts that cannot fit in what is
  // left of the frame (each element takes at least `min_elem_bytes`).
  uint32_t count(uint32_t max, size_t min_elem_bytes) {
    uint32_t n = u32();
    if (!ok_ || n > max || n * min_elem_bytes > n_ - at_) {
      ok_ = false;
      return 0;
    }
    return n;
  }
  // Everything left in the frame; the reader is then done.
  const uint8_t* rest(size_t* len) {
    *len = ok_ ? n_ - at_ : 0;
    const uint8_t* p = p_ + at_;
    at_ = n_;
    return p;
  }
  size_t remaining() const { return n_ - at_; }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && at_ == n_; }
  void fail() { ok_ = false; }

 private:
  uint64_t Get(int n) {
    if (!ok_ || n_ - at_ < static_cast<size_t>(n)) {
      ok_ = false;
      return 0;
    }
    uint64_t v = GetLE(p_ + at_, n);
    at_ += n;
    return v;
  }
  const uint8_t* p_;
  size_t n_;
  size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace rgpu::proto

namespace rgpu::proto {
static_assert(static_cast<uint16_t>(Op::Stats) == 70 && static_cast<uint16_t>(Op::CreateImage) == 80 &&
              static_cast<uint16_t>(Op::CreateSampler) == 88);
}  // namespace rgpu::proto
