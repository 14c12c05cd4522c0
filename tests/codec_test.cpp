// The wire codec: exact little-endian bytes, round trips, and what malformed input does.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CL/cl.h>

#include <thread>
#include <type_traits>

#include "proto/info.h"
#include "proto/liveness.h"
#include "proto/messages.h"
#include "proto/transport.h"
#include "proto/wire.h"

namespace rgpu::proto {
namespace {

TEST(Codec, IntegersAreLittleEndianWhateverTheHost) {
  std::vector<uint8_t> b;
  Writer w(&b);
  w.u16(0x0102);
  w.u32(0x03040506);
  w.u64(0x0708090a0b0c0d0eull);
  w.i32(-2);
  const std::vector<uint8_t> want = {0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0x0e, 0x0d, 0x0c,
                                     0x0b, 0x0a, 0x09, 0x08, 0x07, 0xfe, 0xff, 0xff, 0xff};
  EXPECT_EQ(b, want);
  Reader r(b.data(), b.size());
  EXPECT_EQ(r.u16(), 0x0102);
  EXPECT_EQ(r.u32(), 0x03040506u);
  EXPECT_EQ(r.u64(), 0x0708090a0b0c0d0eull);
  EXPECT_EQ(r.i32(), -2);
  EXPECT_TRUE(r.done());
}

TEST(Codec, StringsAndBytesRoundTrip) {
  std::vector<uint8_t> b;
  Writer w(&b);
  w.str("kernel void k() {}");
  w.bytes("\0\1\2", 3);
  w.str("");
  Reader r(b.data(), b.size());
  EXPECT_EQ(r.str(), "kernel void k() {}");
  auto raw = r.bytes();
  ASSERT_EQ(raw.size(), 3u);
  EXPECT_EQ(raw[1], '\1');
  EXPECT_EQ(r.str(), "");
  EXPECT_TRUE(r.done());
}

TEST(Codec, TruncatedInputFailsAndStaysFailed) {
  std::vector<uint8_t> b;
  Writer w(&b);
  w.u64(42);
  w.str("hello");
  for (size_t cut = 0; cut < b.size(); ++cut) {
    Reader r(b.data(), cut);
    r.u64();
    r.str();
    EXPECT_FALSE(r.ok()) << "cut at " << cut;
    EXPECT_EQ(r.u32(), 0u);  // later reads return zero, never read past the end
  }
}

TEST(Codec, LengthsAndCountsAreCheckedBeforeAllocating) {
  std::vector<uint8_t> b;
  Writer w(&b);
  w.u32(0xffffffffu);  // a string claiming 4 GiB in a 4-byte frame
  Reader r(b.data(), b.size());
  EXPECT_TRUE(r.bytes().empty());
  EXPECT_FALSE(r.ok());
  std::vector<uint8_t> c;
  Writer wc(&c);
  wc.u32(1000);  // 1000 eight-byte ids, none present
  Reader rc(c.data(), c.size());
  EXPECT_EQ(rc.count(4096, 8), 0u);
  EXPECT_FALSE(rc.ok());
  std::vector<uint8_t> d;
  Writer wd(&d);
  wd.u32(5000);  // over the op's own limit even if the bytes were there
  d.resize(4 + 5000 * 8);
  Reader rd(d.data(), d.size());
  EXPECT_EQ(rd.count(4096, 8), 0u);
  EXPECT_FALSE(rd.ok());
}

TEST(Codec, HeaderRoundTrip) {
  FrameHeader h{123456, static_cast<uint16_t>(Op::NDRangeKernel), kFlagReply, 0x1122334455667788ull};
  uint8_t raw[kHeaderSize];
  EncodeHeader(h, raw);
  EXPECT_EQ(raw[0], 0x40);  // 123456 = 0x0001e240, low byte first
  EXPECT_EQ(raw[4], 48);    // op NDRangeKernel
  FrameHeader g = DecodeHeader(raw);
  EXPECT_EQ(g.body_len, h.body_len);
  EXPECT_EQ(g.op, h.op);
  EXPECT_EQ(g.flags, h.flags);
  EXPECT_EQ(g.tag, h.tag);
  EXPECT_STREQ(OpName(48), "NDRangeKernel");
  EXPECT_STREQ(OpName(999), "Unknown");
}

TEST(Codec, InfoValuesKeepTheirValues) {
  size_t sizes[3] = {1024, 1, 64};
  std::vector<uint8_t> wire;
  Writer w(&wire);
  InfoValue::FromHost(InfoKindOf(InfoFamily::Device, CL_DEVICE_MAX_WORK_ITEM_SIZES), sizes,
                      sizeof(sizes))
      .EncodeTo(w);
  cl_ulong mem = 80ull << 30;
  InfoValue::FromHost(InfoKindOf(InfoFamily::Device, CL_DEVICE_GLOBAL_MEM_SIZE), &mem, sizeof(mem))
      .EncodeTo(w);
  cl_uint units = 132;
  InfoValue::FromHost(InfoKindOf(InfoFamily::Device, CL_DEVICE_MAX_COMPUTE_UNITS), &units,
                      sizeof(units))
      .EncodeTo(w);
  InfoValue::FromHost(InfoKindOf(InfoFamily::Device, CL_DEVICE_NAME), "NVIDIA H200", 12)
      .EncodeTo(w);
  Reader r(wire.data(), wire.size());
  InfoValue v;
  ASSERT_TRUE(InfoValue::Decode(r, &v));
  std::vector<uint8_t> host = v.ToHost();
  ASSERT_EQ(host.size(), sizeof(sizes));
  EXPECT_EQ(std::memcmp(host.data(), sizes, sizeof(sizes)), 0);
  ASSERT_TRUE(InfoValue::Decode(r, &v));
  host = v.ToHost();
  ASSERT_EQ(host.size(), sizeof(mem));
  EXPECT_EQ(std::memcmp(host.data(), &mem, sizeof(mem)), 0);
  ASSERT_TRUE(InfoValue::Decode(r, &v));
  host = v.ToHost();
  ASSERT_EQ(host.size(), sizeof(units));
  EXPECT_EQ(std::memcmp(host.data(), &units, sizeof(units)), 0);
  ASSERT_TRUE(InfoValue::Decode(r, &v));
  EXPECT_STREQ(reinterpret_cast<const char*>(v.ToHost().data()), "NVIDIA H200");
  EXPECT_TRUE(r.done());
  uint8_t bad_kind[] = {9, 0, 0, 0, 0};
  Reader rb(bad_kind, sizeof(bad_kind));
  EXPECT_FALSE(InfoValue::Decode(rb, &v));
  // What the client answers itself (Local) travels as bytes when the server is asked anyway.
  const InfoValue local = InfoValue::FromHost(InfoKind::Local, "ab", 2);
  EXPECT_EQ(local.kind, InfoKind::Bytes);
  EXPECT_EQ(local.bytes, "ab");
}

// NVIDIA answers CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE (a size_t) in 4 bytes: the
// client must get those 4 bytes, not nothing (it then left the caller's value unwritten).
TEST(Codec, AFourByteAnswerToASizeQueryStaysFourBytes) {
  const uint32_t total = 0x01020304;
  const auto wire =
      EncodeBody(InfoValue::FromHost(InfoKindOf(InfoFamily::ProgramBuild,
                                                CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE),
                                     &total, sizeof(total)));
  Reader r(wire.data(), wire.size());
  InfoValue value;
  ASSERT_TRUE(InfoValue::Decode(r, &value));
  const std::vector<uint8_t> v = value.ToHost();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(std::memcmp(v.data(), &total, 4), 0);
  EXPECT_TRUE(r.done());
}

// The maps a host-access flag forbids: the specification's table when the device allows
// none beyond it (PoCL), and the device's own where it allows some (NVIDIA 580:
// CL_MAP_WRITE_INVALIDATE_REGION on HOST_READ_ONLY and HOST_NO_ACCESS buffers).
TEST(Info, MapsRefusedFollowTheSpecUnlessTheDeviceAllowsThem) {
  const uint64_t ro = CL_MEM_HOST_READ_ONLY, wo = CL_MEM_HOST_WRITE_ONLY,
                 na = CL_MEM_HOST_NO_ACCESS;
  const uint64_t rd = CL_MAP_READ, wr = CL_MAP_WRITE, inv = CL_MAP_WRITE_INVALIDATE_REGION;
  for (uint64_t f : {ro, wo, na, uint64_t{0}})
    for (uint64_t m : {rd, wr, rd | wr, inv}) {
      const bool spec = ((f & (wo | na)) && (m & rd)) || ((f & (ro | na)) && (m & (wr | inv)));
      EXPECT_EQ(MapRefused(CL_MEM_READ_WRITE | f, m, 0), spec) << f << " " << m;
    }
  const uint32_t nvidia = MapBit(1, 2) | MapBit(2, 2);
  EXPECT_FALSE(MapRefused(ro, inv, nvidia));
  EXPECT_FALSE(MapRefused(na, inv, nvidia));
  EXPECT_TRUE(MapRefused(ro, wr, nvidia));
  EXPECT_TRUE(MapRefused(na, rd, nvidia));
  EXPECT_TRUE(MapRefused(wo, rd, nvidia));
  EXPECT_FALSE(MapRefused(wo, inv, nvidia));
}

TEST(Messages, HelloBytesAreExact) {
  HelloRequest h;
  h.features = kFeatureHeartbeat | kFeatureShared;
  h.token = "tk";
  h.client_name = "c";
  const std::vector<uint8_t> want = {0x52, 0x47, 0x50, 0x55,  // magic "RGPU"
                                     0x01, 0x00,              // version 1
                                     0x03, 0x00,              // features
                                     0x02, 0x00, 0x00, 0x00, 't', 'k',
                                     0x01, 0x00, 0x00, 0x00, 'c'};
  ASSERT_EQ(kVersion, 1);
  EXPECT_EQ(h.Encode(), want);
}

TEST(Messages, HelloRoundTripsAndRefusesWhatIsNotAHello) {
  HelloRequest h;
  h.version = 7;  // a version mismatch is the server's to answer, so it decodes
  h.features = kFeatureShared;
  h.token = std::string(kMaxTokenBytes, 'x');
  h.client_name = "rgpu status";
  const auto body = h.Encode();
  Reader r(body.data(), body.size());
  HelloRequest got;
  ASSERT_TRUE(HelloRequest::Decode(r, &got));
  EXPECT_TRUE(r.done());
  EXPECT_EQ(got.version, 7);
  EXPECT_EQ(got.features, kFeatureShared);
  EXPECT_EQ(got.token, h.token);
  EXPECT_EQ(got.client_name, "rgpu status");

  auto refused = [](std::vector<uint8_t> b) {
    Reader rr(b.data(), b.size());
    HelloRequest x;
    return !HelloRequest::Decode(rr, &x);
  };
  auto wrong_magic = body;
  wrong_magic[0] ^= 1;
  EXPECT_TRUE(refused(wrong_magic));
  EXPECT_TRUE(refused(std::vector<uint8_t>(body.begin(), body.end() - 1)));  // name cut short
  HelloRequest long_token = h;
  long_token.token += 'x';  // one byte over the limit
  EXPECT_TRUE(refused(long_token.Encode()));
  HelloRequest long_name = h;
  long_name.client_name = std::string(kMaxClientNameBytes + 1, 'n');
  EXPECT_TRUE(refused(long_name.Encode()));
}

TEST(Codec, Addresses) {
  auto a = ParseAddress("127.0.0.1:7420");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->port, 7420);
  EXPECT_TRUE(a->IsLoopbackOrLocal());
  auto u = ParseAddress("unix:/run/rgpu.sock");
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->is_unix);
  auto v6 = ParseAddress("[::1]:9");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(ParseAddress("gpu-host")->port, 7420);  // default port
  EXPECT_FALSE(ParseAddress("host:99999").ok());
  EXPECT_FALSE(ParseAddress(":7420").ok());
  EXPECT_FALSE(ParseAddress("0.0.0.0:1")->IsLoopbackOrLocal());
}

// Frames through a real socket pair: oversized bodies are refused from the header alone,
// and a peer that hangs up mid-frame is an error, not a hang or a partial frame.
TEST(Codec, FramesOverASocket) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  Stream a(sv[0]), b(sv[1]);
  const char body[] = "payload";
  ASSERT_TRUE(a.SendFrame(FrameHeader{7, 1, 0, 9}, body, 7).ok());
  FrameHeader h;
  std::vector<uint8_t> got;
  ASSERT_TRUE(b.RecvFrame(&h, &got).ok());
  EXPECT_EQ(h.tag, 9u);
  EXPECT_EQ(std::string(got.begin(), got.end()), "payload");

  uint8_t huge[kHeaderSize];
  EncodeHeader(FrameHeader{kMaxBody + 1, 1, 0, 0}, huge);
  ASSERT_EQ(write(sv[0], huge, sizeof(huge)), static_cast<ssize_t>(sizeof(huge)));
  Status s = b.RecvFrame(&h, &got);
  EXPECT_TRUE(s.is_protocol()) << s.ToString();
  EXPECT_LE(got.capacity(), 64u);  // nothing was allocated for the claimed body

  uint8_t partial[kHeaderSize + 3];
  EncodeHeader(FrameHeader{100, 1, 0, 0}, partial);
  std::memcpy(partial + kHeaderSize, "abc", 3);
  ASSERT_EQ(write(sv[0], partial, sizeof(partial)), static_cast<ssize_t>(sizeof(partial)));
  a.Shutdown();
  s = b.RecvFrame(&h, &got);
  EXPECT_FALSE(s.ok());
}


// The numbers of the session-level ops and Hello's feature bits are part of the protocol.
static_assert(static_cast<uint16_t>(Op::Hello) == 1);
static_assert(static_cast<uint16_t>(Op::Goodbye) == 2);
static_assert(static_cast<uint16_t>(Op::Heartbeat) == 3);
static_assert(kFeatureHeartbeat == 1);

TEST(Codec, HeartbeatIsAnEmptyFrame) {
  uint8_t hdr[kHeaderSize];
  EncodeHeader(FrameHeader{0, static_cast<uint16_t>(Op::Heartbeat), kFlagNotify, 0}, hdr);
  const uint8_t expected[kHeaderSize] = {0, 0, 0, 0, 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(hdr, expected, kHeaderSize), 0);
  EXPECT_STREQ(OpName(3), "Heartbeat");
}

// PeerWatch judges from the socket: bytes that arrive are life even when nobody reads them,
// silence for the timeout is death, and quiet on our side asks for a heartbeat.
TEST(Liveness, PeerWatchOverASocketPair) {
  using namespace std::chrono;
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  Stream ours(sv[0]), theirs(sv[1]);
  auto t = steady_clock::now();
  PeerWatch w(milliseconds(1000), t);
  w.Observe(ours, t);
  EXPECT_FALSE(w.Dead(t + milliseconds(999)));
  EXPECT_TRUE(w.Quiet(t + milliseconds(250), milliseconds(250)));
  // The peer speaks and nobody reads it: alive, and still alive while it waits unread.
  ASSERT_TRUE(theirs.SendFrame(FrameHeader{0, 3, 0, 0}, nullptr, 0).ok());
  t += milliseconds(900);
  w.Observe(ours, t);
  EXPECT_FALSE(w.Dead(t + milliseconds(999)));
  EXPECT_EQ(ours.UnreadBytes(), kHeaderSize);
  w.Observe(ours, t + milliseconds(5000));
  EXPECT_FALSE(w.Dead(t + milliseconds(5000))) << "unread bytes: our reader is behind, not the peer";
  // Read, then silence: dead after the timeout.
  FrameHeader h;
  std::vector<uint8_t> body;
  ASSERT_TRUE(ours.RecvFrame(&h, &body).ok());
  EXPECT_EQ(ours.BytesReceived(), kHeaderSize);
  t += milliseconds(5000);
  w.Observe(ours, t);
  EXPECT_TRUE(w.Dead(t)) << "read, and nothing since";
  w = PeerWatch(milliseconds(1000), t);
  w.Observe(ours, t);
  EXPECT_FALSE(w.Dead(t + milliseconds(999)));
  t += milliseconds(1000);
  w.Observe(ours, t);
  EXPECT_TRUE(w.Dead(t));
  EXPECT_EQ(w.Silent(t).count(), 1000);
  // Our own sending resets Quiet, not the peer's silence.
  ASSERT_TRUE(ours.SendFrame(FrameHeader{0, 3, 0, 0}, nullptr, 0).ok());
  w.Observe(ours, t);
  EXPECT_FALSE(w.Quiet(t + milliseconds(100), milliseconds(250)));
  EXPECT_TRUE(w.Dead(t));
}


// --- the typed commands (proto/messages.h): exact bytes, round trips, cut-short bodies ---

// Expected bytes, written without proto::Writer so that a mistake there shows here.
struct Expect {
  std::vector<uint8_t> b;
  Expect& le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Expect& u8(uint8_t v) { return le(v, 1); }
  Expect& u16(uint16_t v) { return le(v, 2); }
  Expect& u32(uint32_t v) { return le(v, 4); }
  Expect& str(const std::string& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (char c : v) u8(static_cast<uint8_t>(c));
    return *this;
  }
  Expect& u64(uint64_t v) { return le(v, 8); }
};

// Decodes what `m` encodes (every byte of it), and checks that no shorter body decodes.
template <typename M>
M RoundTrip(const M& m) {
  const auto body = EncodeBody(m);
  for (size_t n = 0; n < body.size(); ++n) {
    Reader cut(body.data(), n);
    M x;
    EXPECT_FALSE(M::Decode(cut, &x)) << "a body cut to " << n << " of " << body.size() << " bytes";
  }
  Reader r(body.data(), body.size());
  M got;
  EXPECT_TRUE(M::Decode(r, &got));
  EXPECT_TRUE(r.done());
  return got;
}

// Decodes all of `body` as an M (for bodies too large for RoundTrip's cut-by-cut check).
template <typename M>
M Decoded(const std::vector<uint8_t>& body) {
  Reader r(body.data(), body.size());
  M got;
  EXPECT_TRUE(M::Decode(r, &got));
  EXPECT_TRUE(r.done());
  return got;
}

// True when M refuses `body` (a count or a length over its limit, say).
template <typename M>
bool Refused(const std::vector<uint8_t>& body) {
  Reader r(body.data(), body.size());
  M x;
  return !M::Decode(r, &x);
}

TEST(Messages, CommandHeaderBytesAreExact) {
  CommandHeader h{0x11, 0x22, {0x33, 0x44}};
  const auto want = Expect{}.u64(0x11).u64(0x22).u32(2).u64(0x33).u64(0x44).b;
  EXPECT_EQ(EncodeBody(h), want);
  EXPECT_EQ(RoundTrip(h), h);
  EXPECT_EQ(RoundTrip(CommandHeader{7, 0, {}}), (CommandHeader{7, 0, {}}));
  // A wait list longer than the limit, or than the frame could hold, is refused.
  auto over = Expect{}.u64(1).u64(0).u32(kMaxWaitList + 1).b;
  over.resize(over.size() + 8 * (kMaxWaitList + 1));
  Reader r1(over.data(), over.size());
  CommandHeader x;
  EXPECT_FALSE(CommandHeader::Decode(r1, &x));
  const auto lying = Expect{}.u64(1).u64(0).u32(3).u64(9).b;  // says 3, carries 1
  Reader r2(lying.data(), lying.size());
  EXPECT_FALSE(CommandHeader::Decode(r2, &x));
}

TEST(Messages, TransferBytesAreExact) {
  EXPECT_EQ(EncodeBody(WriteBufferRequest{1, 2, 3}), Expect{}.u64(1).u64(2).u64(3).b);
  EXPECT_EQ(EncodeBody(ReadBufferRequest{4, 5, 6}), Expect{}.u64(4).u64(5).u64(6).b);
  EXPECT_EQ(EncodeBody(CopyBufferRequest{1, 2, 3, 4, 5}), Expect{}.u64(1).u64(2).u64(3).u64(4).u64(5).b);
  EXPECT_EQ(EncodeBody(SharedTransferRequest{9, 8, 7, 6}), Expect{}.u64(9).u64(8).u64(7).u64(6).b);
  EXPECT_EQ(EncodeBody(FillBufferRequest{3, {0xaa, 0xbb}, 16, 32}),
            Expect{}.u64(3).u32(2).u8(0xaa).u8(0xbb).u64(16).u64(32).b);
  EXPECT_EQ(EncodeBody(MigrateMemObjectsRequest{1, {5, 6}}), Expect{}.u64(1).u32(2).u64(5).u64(6).b);
  const BufferRectRequest rect{2, {1, 2, 3}, {4, 5, 6}, 64, 4096};
  const auto rect_bytes = Expect{}.u64(2).u64(1).u64(2).u64(3).u64(4).u64(5).u64(6).u64(64).u64(4096).b;
  EXPECT_EQ(EncodeBody(rect), rect_bytes);
  auto write_rect = rect_bytes;
  Expect size;
  size.u64(120);
  write_rect.insert(write_rect.end(), size.b.begin(), size.b.end());
  EXPECT_EQ(EncodeBody(WriteBufferRectRequest{rect, 120}), write_rect);
  EXPECT_EQ(rect.PackedSize(), 4u * 5 * 6);
  EXPECT_EQ(EncodeBody(CopyBufferRectRequest{1, 2, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}, 12, 13, 14, 15}),
            Expect{}.u64(1).u64(2).u64(3).u64(4).u64(5).u64(6).u64(7).u64(8).u64(9).u64(10).u64(11)
                .u64(12).u64(13).u64(14).u64(15).b);
}

TEST(Messages, TransfersRoundTrip) {
  const uint64_t big = 0x8877665544332211ull;  // every byte distinct, the top bit set
  for (const auto& m : {WriteBufferRequest{big, 1, 2}, WriteBufferRequest{}}) EXPECT_EQ(RoundTrip(m), m);
  for (const auto& m : {ReadBufferRequest{1, big, 3}}) EXPECT_EQ(RoundTrip(m), m);
  for (const auto& m : {CopyBufferRequest{1, 2, big, 4, 5}}) EXPECT_EQ(RoundTrip(m), m);
  for (const auto& m : {SharedTransferRequest{1, 2, 3, big}}) EXPECT_EQ(RoundTrip(m), m);
  const BufferRectRequest rect{big, {1, 2, 3}, {4, 5, 6}, 7, 8};
  EXPECT_EQ(RoundTrip(rect), rect);
  EXPECT_EQ(RoundTrip(WriteBufferRectRequest{rect, 9}), (WriteBufferRectRequest{rect, 9}));
  const CopyBufferRectRequest copy{1, 2, {3, 4, 5}, {6, 7, big}, {9, 10, 11}, 12, 13, 14, 15};
  EXPECT_EQ(RoundTrip(copy), copy);
  FillBufferRequest fill{1, std::vector<uint8_t>(kMaxPatternBytes, 0x5a), 0, 1 << 20};
  EXPECT_EQ(RoundTrip(fill), fill);
  fill.pattern.push_back(0);  // one byte over OpenCL's largest pattern
  const auto long_pattern = EncodeBody(fill);
  Reader r(long_pattern.data(), long_pattern.size());
  FillBufferRequest x;
  EXPECT_FALSE(FillBufferRequest::Decode(r, &x));
  MigrateMemObjectsRequest migrate{CL_MIGRATE_MEM_OBJECT_HOST, {}};
  for (uint64_t i = 0; i < kMaxMigrateObjects; ++i) migrate.mems.push_back(i + 1);
  EXPECT_EQ(RoundTrip(migrate), migrate);
  migrate.mems.push_back(0);
  const auto too_many = EncodeBody(migrate);
  Reader r2(too_many.data(), too_many.size());
  MigrateMemObjectsRequest y;
  EXPECT_FALSE(MigrateMemObjectsRequest::Decode(r2, &y));
}

TEST(Messages, NDRangeKernelBytesAreExactAndRoundTrip) {
  NDRangeKernelRequest k;
  k.kernel = 0x42;
  k.dims = 2;
  k.has_offset = false;
  k.has_local = true;
  k.global = {1024, 768, 1};
  k.local = {16, 16, 1};
  const auto want = Expect{}
                        .u64(0x42)
                        .u32(2)
                        .u8(0)
                        .u8(1)
                        .u64(0).u64(0).u64(0)       // offset
                        .u64(1024).u64(768).u64(1)  // global
                        .u64(16).u64(16).u64(1)     // local
                        .b;
  EXPECT_EQ(EncodeBody(k), want);
  EXPECT_EQ(RoundTrip(k), k);
  k.has_offset = true;
  k.offset = {5, 6, 7};
  k.dims = 3;
  EXPECT_EQ(RoundTrip(k), k);
  // Any non-zero byte is "true", as rgpud always read it.
  auto odd = want;
  odd[12] = 0x80;
  Reader r(odd.data(), odd.size());
  NDRangeKernelRequest got;
  ASSERT_TRUE(NDRangeKernelRequest::Decode(r, &got));
  EXPECT_TRUE(got.has_offset);
}


TEST(Messages, ImageCommandsBytesAreExactAndRoundTrip) {
  const ImageTransferRequest read{7, {1, 2, 0}, {3, 4, 1}};
  const auto read_bytes = Expect{}.u64(7).u64(1).u64(2).u64(0).u64(3).u64(4).u64(1).b;
  EXPECT_EQ(EncodeBody(read), read_bytes);
  EXPECT_EQ(RoundTrip(read), read);
  auto write_bytes = read_bytes;
  write_bytes.resize(write_bytes.size() + 8);
  write_bytes[write_bytes.size() - 8] = 48;  // 3 x 4 pixels of 4 bytes
  EXPECT_EQ(EncodeBody(WriteImageRequest{read, 48}), write_bytes);
  EXPECT_EQ(RoundTrip(WriteImageRequest{read, 48}), (WriteImageRequest{read, 48}));

  const CopyImageRequest copy{1, 2, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}};
  EXPECT_EQ(EncodeBody(copy), Expect{}.u64(1).u64(2).u64(3).u64(4).u64(5).u64(6).u64(7).u64(8).u64(9)
                                  .u64(10).u64(11).b);
  EXPECT_EQ(RoundTrip(copy), copy);
  const CopyImageToBufferRequest to_buffer{1, 2, {3, 4, 5}, {6, 7, 8}, 9};
  EXPECT_EQ(EncodeBody(to_buffer),
            Expect{}.u64(1).u64(2).u64(3).u64(4).u64(5).u64(6).u64(7).u64(8).u64(9).b);
  EXPECT_EQ(RoundTrip(to_buffer), to_buffer);
  const CopyBufferToImageRequest to_image{1, 2, 3, {4, 5, 6}, {7, 8, 9}};
  EXPECT_EQ(EncodeBody(to_image),
            Expect{}.u64(1).u64(2).u64(3).u64(4).u64(5).u64(6).u64(7).u64(8).u64(9).b);
  EXPECT_EQ(RoundTrip(to_image), to_image);

  FillImageRequest fill{5, {}, {0, 0, 0}, {8, 8, 1}};
  for (int i = 0; i < 16; ++i) fill.color[i] = static_cast<uint8_t>(i + 1);
  Expect want;
  want.u64(5).u32(16);
  for (int i = 0; i < 16; ++i) want.u8(static_cast<uint8_t>(i + 1));
  want.u64(0).u64(0).u64(0).u64(8).u64(8).u64(1);
  EXPECT_EQ(EncodeBody(fill), want.b);
  EXPECT_EQ(RoundTrip(fill), fill);
  // A color of any other size is refused, even with the frame's length consistent.
  Expect short_color;
  short_color.u64(5).u32(12);
  for (int i = 0; i < 12; ++i) short_color.u8(0);
  short_color.u64(0).u64(0).u64(0).u64(8).u64(8).u64(1);
  Reader r(short_color.b.data(), short_color.b.size());
  FillImageRequest x;
  EXPECT_FALSE(FillImageRequest::Decode(r, &x));
}


TEST(Messages, SetKernelArgBytesAreExactAndRoundTrip) {
  using Kind = SetKernelArgRequest::Kind;
  SetKernelArgRequest value{7, 2, Kind::Bytes, {1, 2, 3, 4}, 0, 0};
  EXPECT_EQ(value.Encode(), Expect{}.u64(7).u32(2).u8(0).u32(4).u8(1).u8(2).u8(3).u8(4).b);
  SetKernelArgRequest mem{7, 0, Kind::Mem, {}, 0x99, 0};
  EXPECT_EQ(mem.Encode(), Expect{}.u64(7).u32(0).u8(1).u64(0x99).b);
  SetKernelArgRequest local{7, 3, Kind::Local, {}, 0, 4096};
  EXPECT_EQ(local.Encode(), Expect{}.u64(7).u32(3).u8(2).u64(4096).b);
  SetKernelArgRequest sampler{7, 1, Kind::Sampler, {}, 0x55, 0};
  EXPECT_EQ(sampler.Encode(), Expect{}.u64(7).u32(1).u8(3).u64(0x55).b);
  for (const auto& m : {value, mem, local, sampler}) {
    const auto body = m.Encode();
    Reader r(body.data(), body.size());
    SetKernelArgRequest got;
    ASSERT_TRUE(SetKernelArgRequest::Decode(r, &got));
    EXPECT_EQ(got, m);
    for (size_t n = 0; n < body.size(); ++n) {  // every shorter body, and one byte more
      Reader cut(body.data(), n);
      EXPECT_FALSE(SetKernelArgRequest::Decode(cut, &got)) << n;
    }
    auto longer = body;
    longer.push_back(0);
    Reader extra(longer.data(), longer.size());
    EXPECT_FALSE(SetKernelArgRequest::Decode(extra, &got));
  }
  auto refused = [](const std::vector<uint8_t>& b) {
    Reader r(b.data(), b.size());
    SetKernelArgRequest x;
    return !SetKernelArgRequest::Decode(r, &x);
  };
  EXPECT_TRUE(refused(Expect{}.u64(7).u32(0).u8(4).u64(0).b));                   // unknown kind
  EXPECT_TRUE(refused(Expect{}.u64(7).u32(kMaxKernelArgs).u8(1).u64(1).b));      // index too large
  SetKernelArgRequest big{7, 0, Kind::Bytes, std::vector<uint8_t>(kMaxArgBytes + 1, 0), 0, 0};
  EXPECT_TRUE(refused(big.Encode()));                                             // value too large
}


TEST(Messages, ObjectCreatesBytesAreExactAndRoundTrip) {
  const CreateContextRequest ctx{0x11, {0, 2}};
  EXPECT_EQ(EncodeBody(ctx), Expect{}.u64(0x11).u32(2).u32(0).u32(2).b);
  EXPECT_EQ(RoundTrip(ctx), ctx);
  const CreateQueueRequest queue{0x12, 0x11, 1, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  EXPECT_EQ(EncodeBody(queue), Expect{}.u64(0x12).u64(0x11).u32(1).u64(1).b);
  EXPECT_EQ(RoundTrip(queue), queue);
  const CreateBufferRequest buffer{0x13, 0x11, CL_MEM_READ_ONLY, 4096, 4096};
  EXPECT_EQ(EncodeBody(buffer), Expect{}.u64(0x13).u64(0x11).u64(4).u64(4096).u64(4096).b);
  EXPECT_EQ(RoundTrip(buffer), buffer);
  const CreateSubBufferRequest sub{0x14, 0x13, CL_MEM_READ_WRITE, 256, 512};
  EXPECT_EQ(EncodeBody(sub), Expect{}.u64(0x14).u64(0x13).u64(1).u64(256).u64(512).b);
  EXPECT_EQ(RoundTrip(sub), sub);
  const CreateSamplerRequest sampler{0x15, 0x11, {CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR}};
  EXPECT_EQ(EncodeBody(sampler), Expect{}.u64(0x15).u64(0x11).u32(2).u64(0x1154).u64(0x1141).b);
  EXPECT_EQ(RoundTrip(sampler), sampler);
  const CreateUserEventRequest user{0x16, 0x11};
  EXPECT_EQ(EncodeBody(user), Expect{}.u64(0x16).u64(0x11).b);
  EXPECT_EQ(RoundTrip(user), user);
  const uint64_t big = 0x8877665544332211ull;
  const CreateBufferRequest no_data{big, big, big, big, 0};
  EXPECT_EQ(RoundTrip(no_data), no_data);
  const CreateQueueRequest high{big, big, 0xfffffffe, big};
  EXPECT_EQ(RoundTrip(high), high);
}

TEST(Messages, ObjectCreatesKeepTheirLimits) {
  CreateContextRequest ctx{1, std::vector<uint32_t>(kMaxDevices, 3)};
  EXPECT_EQ(RoundTrip(ctx), ctx);
  ctx.devices.push_back(3);  // one device over
  EXPECT_TRUE(Refused<CreateContextRequest>(EncodeBody(ctx)));
  EXPECT_TRUE(Refused<CreateContextRequest>(Expect{}.u64(1).u32(2).u32(0).b));  // says 2, carries 1
  CreateSamplerRequest sampler{1, 2, std::vector<uint64_t>(kMaxSamplerValues, 0)};
  EXPECT_EQ(kMaxSamplerValues, 32u);
  EXPECT_EQ(RoundTrip(sampler), sampler);
  sampler.properties.push_back(0);
  EXPECT_TRUE(Refused<CreateSamplerRequest>(EncodeBody(sampler)));
  EXPECT_TRUE(Refused<CreateSamplerRequest>(Expect{}.u64(1).u64(2).u32(1).b));
  // CreateBuffer's data follows its fields: Decode leaves it to be read.
  auto with_data = Expect{}.u64(1).u64(2).u64(0).u64(3).u64(3).u8(7).u8(8).u8(9).b;
  Reader r(with_data.data(), with_data.size());
  CreateBufferRequest buffer;
  ASSERT_TRUE(CreateBufferRequest::Decode(r, &buffer));
  EXPECT_EQ(buffer.data_size, 3u);
  EXPECT_EQ(r.remaining(), 3u);
}

TEST(Messages, ProgramRequestsBytesAreExactAndRoundTrip) {
  const CreateProgramWithSourceRequest src{0x21, 0x11, "kernel void k() {}"};
  Expect want_src;
  want_src.u64(0x21).u64(0x11).u32(18);
  for (char c : src.source) want_src.u8(static_cast<uint8_t>(c));
  EXPECT_EQ(EncodeBody(src), want_src.b);
  EXPECT_EQ(RoundTrip(src), src);

  const CreateProgramWithBinaryRequest bin{0x22, 0x11, {{0, "\x7f" "ELF"}, {3, ""}}};
  EXPECT_EQ(EncodeBody(bin), Expect{}.u64(0x22).u64(0x11).u32(2).u32(0).u32(4).u8(0x7f).u8('E')
                                 .u8('L').u8('F').u32(3).u32(0).b);
  EXPECT_EQ(RoundTrip(bin), bin);
  const CreateProgramWithBinaryReply status{{CL_SUCCESS, CL_INVALID_BINARY}};
  EXPECT_EQ(EncodeBody(status), Expect{}.u32(2).u32(0).u32(static_cast<uint32_t>(-42)).b);
  EXPECT_EQ(RoundTrip(status), status);

  const BuildProgramRequest build{0x21, {{1, 2}, "-cl-fast-relaxed-math"}};
  Expect want_build;
  want_build.u64(0x21).u32(2).u32(1).u32(2).u32(21);
  for (char c : build.target.options) want_build.u8(static_cast<uint8_t>(c));
  EXPECT_EQ(EncodeBody(build), want_build.b);
  EXPECT_EQ(RoundTrip(build), build);
  EXPECT_EQ(RoundTrip(BuildProgramRequest{7, {}}), (BuildProgramRequest{7, {}}));

  const CompileProgramRequest compile{0x23, {{}, "-I"}, {{0x24, "a.h"}}};
  EXPECT_EQ(EncodeBody(compile), Expect{}.u64(0x23).u32(0).u32(2).u8('-').u8('I').u32(1).u64(0x24)
                                     .u32(3).u8('a').u8('.').u8('h').b);
  EXPECT_EQ(RoundTrip(compile), compile);

  const LinkProgramRequest link{0x25, 0x11, {{0}, ""}, {0x23, 0x24}};
  EXPECT_EQ(EncodeBody(link),
            Expect{}.u64(0x25).u64(0x11).u32(1).u32(0).u32(0).u32(2).u64(0x23).u64(0x24).b);
  EXPECT_EQ(RoundTrip(link), link);

  const CreateKernelRequest kernel{0x26, 0x21, "k"};
  EXPECT_EQ(EncodeBody(kernel), Expect{}.u64(0x26).u64(0x21).u32(1).u8('k').b);
  EXPECT_EQ(RoundTrip(kernel), kernel);
  const CloneKernelRequest clone{0x27, 0x26};
  EXPECT_EQ(EncodeBody(clone), Expect{}.u64(0x27).u64(0x26).b);
  EXPECT_EQ(RoundTrip(clone), clone);
}

TEST(Messages, ProgramRequestsKeepTheirLimits) {
  BuildProgramRequest build{1, {std::vector<uint32_t>(kMaxDevices, 0), {}}};
  build.target.options = std::string(kMaxOptionBytes, 'o');
  EXPECT_EQ(Decoded<BuildProgramRequest>(EncodeBody(build)), build);
  build.target.options += 'o';  // one byte of options over
  EXPECT_TRUE(Refused<BuildProgramRequest>(EncodeBody(build)));
  build.target.options.pop_back();
  build.target.devices.push_back(0);  // one device over
  EXPECT_TRUE(Refused<BuildProgramRequest>(EncodeBody(build)));

  using Binary = CreateProgramWithBinaryRequest::Binary;
  CreateProgramWithBinaryRequest bin{1, 2, std::vector<Binary>(kMaxDevices)};
  EXPECT_EQ(Decoded<CreateProgramWithBinaryRequest>(EncodeBody(bin)), bin);
  bin.binaries.emplace_back();
  EXPECT_TRUE(Refused<CreateProgramWithBinaryRequest>(EncodeBody(bin)));
  EXPECT_TRUE(Refused<CreateProgramWithBinaryReply>(Expect{}.u32(kMaxDevices + 1).b));

  CompileProgramRequest compile{1, {}, std::vector<CompileProgramRequest::Header>(kMaxHeaders)};
  compile.headers[0].name = std::string(kMaxNameBytes, 'h');
  EXPECT_EQ(Decoded<CompileProgramRequest>(EncodeBody(compile)), compile);
  compile.headers[1].name = std::string(kMaxNameBytes + 1, 'h');  // a name over
  EXPECT_TRUE(Refused<CompileProgramRequest>(EncodeBody(compile)));
  compile.headers[1].name.clear();
  compile.headers.emplace_back();  // one header over
  EXPECT_TRUE(Refused<CompileProgramRequest>(EncodeBody(compile)));

  LinkProgramRequest link{1, 2, {}, std::vector<uint64_t>(kMaxLinkInputs, 3)};
  EXPECT_EQ(Decoded<LinkProgramRequest>(EncodeBody(link)), link);
  link.inputs.push_back(3);
  EXPECT_TRUE(Refused<LinkProgramRequest>(EncodeBody(link)));

  CreateKernelRequest kernel{1, 2, std::string(kMaxNameBytes, 'k')};
  EXPECT_EQ(Decoded<CreateKernelRequest>(EncodeBody(kernel)), kernel);
  kernel.name += 'k';
  EXPECT_TRUE(Refused<CreateKernelRequest>(EncodeBody(kernel)));
}

TEST(Messages, ObjectRequestsBytesAreExactAndRoundTrip) {
  const ReleaseRequest release{ObjType::Kernel, 0x31};
  EXPECT_EQ(EncodeBody(release), Expect{}.u8(6).u64(0x31).b);
  EXPECT_EQ(RoundTrip(release), release);
  EXPECT_EQ(Decoded<ReleaseRequest>(Expect{}.u8(200).u64(1).b).type, static_cast<ObjType>(200));

  EXPECT_EQ(EncodeBody(FlushRequest{0x32}), Expect{}.u64(0x32).b);
  EXPECT_EQ(RoundTrip(FinishRequest{0x8877665544332211ull}), FinishRequest{0x8877665544332211ull});
  EXPECT_EQ(EncodeBody(WatchEventRequest{0x33}), Expect{}.u64(0x33).b);
  EXPECT_EQ(RoundTrip(GetEventProfilingRequest{0x33}), GetEventProfilingRequest{0x33});
  const GetEventProfilingReply times{1, 2, 3, 0xfffffffffffffffeull};
  EXPECT_EQ(EncodeBody(times), Expect{}.u64(1).u64(2).u64(3).u64(0xfffffffffffffffeull).b);
  EXPECT_EQ(RoundTrip(times), times);

  const SetUserEventStatusRequest user{0x34, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST};
  EXPECT_EQ(EncodeBody(user), Expect{}.u64(0x34).u32(static_cast<uint32_t>(-14)).b);
  EXPECT_EQ(RoundTrip(user), user);
  EXPECT_EQ(RoundTrip(SetUserEventStatusRequest{1, CL_COMPLETE}), (SetUserEventStatusRequest{1, 0}));

  const WaitEventsRequest wait{{0x35, 0x36}};
  EXPECT_EQ(EncodeBody(wait), Expect{}.u32(2).u64(0x35).u64(0x36).b);
  EXPECT_EQ(RoundTrip(wait), wait);
  const WaitEventsReply waited{{CL_COMPLETE, CL_INVALID_EVENT}};
  EXPECT_EQ(EncodeBody(waited), Expect{}.u32(2).u32(0).u32(static_cast<uint32_t>(-58)).b);
  EXPECT_EQ(RoundTrip(waited), waited);

  EXPECT_TRUE(EncodeBody(StatsRequest{}).empty());
  EXPECT_EQ(RoundTrip(StatsRequest{}), StatsRequest{});
}

TEST(Messages, WaitListsKeepTheirLimit) {
  WaitEventsRequest wait{std::vector<uint64_t>(kMaxWaitList, 1)};
  EXPECT_EQ(Decoded<WaitEventsRequest>(EncodeBody(wait)), wait);
  wait.events.push_back(1);
  EXPECT_TRUE(Refused<WaitEventsRequest>(EncodeBody(wait)));
  EXPECT_TRUE(Refused<WaitEventsRequest>(Expect{}.u32(2).u64(1).b));  // says 2, carries 1
  WaitEventsReply waited{std::vector<int32_t>(kMaxWaitList, CL_COMPLETE)};
  EXPECT_EQ(Decoded<WaitEventsReply>(EncodeBody(waited)), waited);
  waited.status.push_back(CL_COMPLETE);
  EXPECT_TRUE(Refused<WaitEventsReply>(EncodeBody(waited)));
}

TEST(Messages, InfoImageAndSharedRequestsBytesAreExactAndRoundTrip) {
  const GetInfoRequest info{InfoFamily::KernelArg, 0x41, CL_KERNEL_ARG_NAME, -1, 2};
  EXPECT_EQ(EncodeBody(info), Expect{}.u8(9).u64(0x41).u32(0x119A).u32(0xffffffffu).u32(2).b);
  EXPECT_EQ(RoundTrip(info), info);
  EXPECT_EQ(Decoded<GetInfoRequest>(Expect{}.u8(0).u64(1).u32(2).u32(3).u32(4).b).family,
            static_cast<InfoFamily>(0));  // an unknown family decodes; rgpud answers it

  CreateImageRequest image;
  image.mem = 0x42;
  image.context = 0x11;
  image.flags = CL_MEM_READ_ONLY;
  image.channel_order = CL_RGBA;
  image.channel_type = CL_UNORM_INT8;
  image.image_type = CL_MEM_OBJECT_IMAGE2D;
  image.width = 640;
  image.height = 480;
  image.depth = 1;
  image.array_size = 1;
  image.row_pitch = 2560;
  image.slice_pitch = 0;
  image.mip_levels = 0;
  image.samples = 0;
  image.buffer = 0x13;
  image.data_size = 0;
  EXPECT_EQ(EncodeBody(image), Expect{}
                                   .u64(0x42).u64(0x11).u64(4)
                                   .u32(0x10B5).u32(0x10D2).u32(0x10F1)
                                   .u64(640).u64(480).u64(1).u64(1).u64(2560).u64(0)
                                   .u32(0).u32(0)
                                   .u64(0x13).u64(0)
                                   .b);
  EXPECT_EQ(RoundTrip(image), image);
  image.data_size = 640 * 480 * 4;
  image.row_pitch = 0;
  EXPECT_EQ(RoundTrip(image), image);
  const CreateImageReply made{4, 2560, 0, 1228800};
  EXPECT_EQ(EncodeBody(made), Expect{}.u64(4).u64(2560).u64(0).u64(1228800).b);
  EXPECT_EQ(RoundTrip(made), made);

  const GetSupportedImageFormatsRequest formats{0x11, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE3D};
  EXPECT_EQ(EncodeBody(formats), Expect{}.u64(0x11).u64(1).u32(0x10F2).b);
  EXPECT_EQ(RoundTrip(formats), formats);
  const GetSupportedImageFormatsReply listed{{{CL_R, CL_FLOAT}, {CL_RGBA, CL_UNSIGNED_INT8}}};
  EXPECT_EQ(EncodeBody(listed), Expect{}.u32(2).u32(0x10B0).u32(0x10DE).u32(0x10B5).u32(0x10DA).b);
  EXPECT_EQ(RoundTrip(listed), listed);
  GetSupportedImageFormatsReply most;
  most.formats.resize(kMaxImageFormats, {CL_R, CL_FLOAT});
  EXPECT_EQ(Decoded<GetSupportedImageFormatsReply>(EncodeBody(most)), most);
  most.formats.emplace_back();
  EXPECT_TRUE(Refused<GetSupportedImageFormatsReply>(EncodeBody(most)));

  const AttachSharedRequest attach{4096 + (64u << 20)};
  EXPECT_EQ(EncodeBody(attach), Expect{}.u64(4096 + (64u << 20)).b);
  EXPECT_EQ(RoundTrip(attach), attach);
}

// --- the replies with a variable layout ---

TEST(Messages, InfoValueBytesAreExactAndRoundTrip) {
  const InfoValue bytes{InfoKind::Bytes, "gpu", {}};
  EXPECT_EQ(EncodeBody(bytes), Expect{}.u8(0).str("gpu").b);
  EXPECT_EQ(RoundTrip(bytes), bytes);
  const InfoValue u32s{InfoKind::U32, "", {1, 0xffffffffu}};
  EXPECT_EQ(EncodeBody(u32s), Expect{}.u8(1).u32(2).u32(1).u32(0xffffffffu).b);
  EXPECT_EQ(RoundTrip(u32s), u32s);
  const InfoValue u64s{InfoKind::U64, "", {80ull << 30}};
  EXPECT_EQ(EncodeBody(u64s), Expect{}.u8(2).u32(1).u64(80ull << 30).b);
  EXPECT_EQ(RoundTrip(u64s), u64s);
  const InfoValue sizes{InfoKind::Size, "", {1024, 1, 64}};
  EXPECT_EQ(EncodeBody(sizes), Expect{}.u8(3).u32(3).u64(1024).u64(1).u64(64).b);
  EXPECT_EQ(RoundTrip(sizes), sizes);
  EXPECT_EQ(RoundTrip(InfoValue{}), InfoValue{});  // an empty string
  static_assert(std::is_same_v<GetInfoReply, InfoValue>);
}

TEST(Messages, InfoValueKeepsItsLimits) {
  EXPECT_TRUE(Refused<InfoValue>(Expect{}.u8(4).u32(0).b));  // Local never travels
  EXPECT_TRUE(Refused<InfoValue>(Expect{}.u8(9).u32(0).b));
  InfoValue most{InfoKind::U32, "", std::vector<uint64_t>(kMaxInfoNumbers, 7)};
  EXPECT_EQ(Decoded<InfoValue>(EncodeBody(most)), most);
  most.numbers.push_back(7);
  EXPECT_TRUE(Refused<InfoValue>(EncodeBody(most)));
  most.kind = InfoKind::Size;
  EXPECT_TRUE(Refused<InfoValue>(EncodeBody(most)));
  EXPECT_TRUE(Refused<InfoValue>(Expect{}.u8(2).u32(2).u64(1).b));  // says 2, carries 1
}

HelloReply SampleHelloReply() {
  HelloReply h;
  h.session = 0x0102030405060708ull;
  h.server_name = "s1";
  h.devices = {{{{CL_DEVICE_NAME, {InfoKind::Bytes, "gpu", {}}},
                 {CL_DEVICE_MAX_COMPUTE_UNITS, {InfoKind::U32, "", {132}}}},
                3},
               {{}, 5}};
  h.mem_left = 1u << 20;
  h.features = kFeatureHeartbeat | kFeatureShared;
  h.heartbeat_interval_ms = 1000;
  h.peer_timeout_ms = 5000;
  h.shared_cap = 4096 + (64u << 20);
  return h;
}

TEST(Messages, HelloReplyBytesAreExact) {
  HelloReply h = SampleHelloReply();
  Expect want;
  want.u16(1).u64(0x0102030405060708ull).str("s1");
  want.u32(2);                             // devices
  want.u32(2);                             // the first one's queries
  want.u32(0x102B).u8(0).str("gpu");       // CL_DEVICE_NAME
  want.u32(0x1002).u8(1).u32(1).u32(132);  // CL_DEVICE_MAX_COMPUTE_UNITS
  want.u32(0);                             // the second one's queries
  want.u32(2).u32(3).u32(5);               // server indices
  want.u64(1u << 20);                      // memory left
  const std::vector<uint8_t> fixed = want.b;
  EXPECT_EQ(EncodeBody(h), Expect{fixed}.u32(1000).u32(5000).u64(4096 + (64u << 20)).b);
  h.features = kFeatureHeartbeat;
  EXPECT_EQ(EncodeBody(h), Expect{fixed}.u32(1000).u32(5000).b);
  h.features = kFeatureShared;
  EXPECT_EQ(EncodeBody(h), Expect{fixed}.u64(4096 + (64u << 20)).b);
  h.features = 0;
  EXPECT_EQ(EncodeBody(h), fixed);
  HelloReply none;  // no devices, no quota
  EXPECT_EQ(EncodeBody(none), Expect{}.u16(1).u64(0).u32(0).u32(0).u32(0).u64(UINT64_MAX).b);
}

TEST(Messages, HelloReplyRoundTripsAndReadsOnlyTheFieldsItAskedFor) {
  const HelloReply h = SampleHelloReply();
  const auto body = EncodeBody(h);
  const size_t fixed = body.size() - 16;  // up to the memory left
  // Cut before the memory left: refused. Cut after it: the reply of a server that sent fewer
  // of the fields at the end (an older one).
  for (size_t n = 0; n <= body.size(); ++n) {
    Reader r(body.data(), n);
    HelloReply got;
    got.features = h.features;
    const bool ok = HelloReply::Decode(r, &got);
    if (n < fixed) {
      EXPECT_FALSE(ok) << "a body cut to " << n << " of " << body.size() << " bytes";
      continue;
    }
    ASSERT_TRUE(ok) << "a body cut to " << n;
    HelloReply want = h;
    if (n < fixed + 16) {  // no shared cap
      want.features = kFeatureHeartbeat;
      want.shared_cap = 0;
    }
    if (n < fixed + 8) {  // no heartbeat either
      want.features = 0;
      want.heartbeat_interval_ms = want.peer_timeout_ms = 0;
    }
    EXPECT_EQ(got, want) << "a body cut to " << n;
  }
  // Asked for none (`rgpu status`): the fields at the end are left unread.
  Reader r(body.data(), body.size());
  HelloReply plain;
  ASSERT_TRUE(HelloReply::Decode(r, &plain));
  EXPECT_EQ(r.remaining(), 16u);
  EXPECT_EQ(plain.features, 0);
  EXPECT_EQ(plain.devices, h.devices);
  // Asked for SHARED alone: the cap comes straight after the memory left.
  HelloReply shared = h;
  shared.features = kFeatureShared;
  shared.heartbeat_interval_ms = shared.peer_timeout_ms = 0;
  const auto shared_body = EncodeBody(shared);
  Reader rs(shared_body.data(), shared_body.size());
  HelloReply got;
  got.features = kFeatureShared;
  ASSERT_TRUE(HelloReply::Decode(rs, &got));
  EXPECT_TRUE(rs.done());
  EXPECT_EQ(got, shared);
}

TEST(Messages, HelloReplyKeepsItsLimits) {
  HelloReply h = SampleHelloReply();
  h.features = 0;  // and so none of the fields at the end
  h.heartbeat_interval_ms = h.peer_timeout_ms = 0;
  h.shared_cap = 0;
  h.server_name = std::string(kMaxServerNameBytes, 'n');
  EXPECT_EQ(Decoded<HelloReply>(EncodeBody(h)), h);
  h.server_name += 'n';  // a name over
  EXPECT_TRUE(Refused<HelloReply>(EncodeBody(h)));
  h.server_name = "s";
  h.devices.resize(kMaxDevices);
  EXPECT_EQ(Decoded<HelloReply>(EncodeBody(h)), h);
  h.devices.emplace_back();  // one device over
  EXPECT_TRUE(Refused<HelloReply>(EncodeBody(h)));
  h.devices.resize(1);
  h.devices[0].queries.resize(kMaxDeviceQueries, {1, {InfoKind::U32, "", {}}});
  EXPECT_EQ(Decoded<HelloReply>(EncodeBody(h)), h);
  h.devices[0].queries.push_back({1, {}});  // one query over
  EXPECT_TRUE(Refused<HelloReply>(EncodeBody(h)));
  h.devices[0].queries.resize(1);
  h.devices[0].queries[0].second.kind = InfoKind::Local;  // an info value that never travels
  EXPECT_TRUE(Refused<HelloReply>(EncodeBody(h)));
  // The server indices must be one per device.
  auto two = Expect{}.u16(1).u64(1).str("").u32(1).u32(0).u32(2).u32(0).u32(1).u64(0).b;
  EXPECT_TRUE(Refused<HelloReply>(two));
}

// Decodes a kernel list whose shapes may be dropped (and their bytes left unread).
KernelList DecodedList(const std::vector<uint8_t>& body) {
  Reader r(body.data(), body.size());
  KernelList got;
  EXPECT_TRUE(KernelList::Decode(r, &got));
  return got;
}

KernelList SampleKernelList() {
  using Arg = KernelList::Arg;
  return {{{"add", 3}, {"k2", 0}},
          std::vector<std::vector<Arg>>{{{2, 8, 0}, {1, 4, 3}, {3, 0, 0}}, {}}};
}

TEST(Messages, KernelListBytesAreExact) {
  const auto names = Expect{}.u32(2).str("add").u32(3).str("k2").u32(0).b;
  Expect want{names};
  want.u32(2);               // shapes, one per kernel
  want.u32(3);               // add's arguments
  want.u8(2).u32(8).u32(0);  // a buffer
  want.u8(1).u32(4).u32(3);  // by value: 4 bytes, or 3
  want.u8(3).u32(0).u32(0);  // __local
  want.u32(0);               // k2's arguments
  EXPECT_EQ(EncodeBody(SampleKernelList()), want.b);
  EXPECT_EQ(EncodeBody(KernelList{SampleKernelList().kernels, std::nullopt}), names);
  // No kernels listed (the build failed before) and none built: shapes absent, or empty.
  EXPECT_EQ(EncodeBody(KernelList{}), Expect{}.u32(0).b);
  EXPECT_EQ(EncodeBody(KernelList{{}, std::vector<std::vector<KernelList::Arg>>{}}),
            Expect{}.u32(0).u32(0).b);
  static_assert(std::is_same_v<BuildProgramReply, KernelList>);
  static_assert(std::is_same_v<LinkProgramReply, KernelList>);
}

TEST(Messages, KernelListRoundTripsAndDropsShapesCutShort) {
  const KernelList list = SampleKernelList();
  const auto body = EncodeBody(list);
  const size_t names = 4 + (4 + 3 + 4) + (4 + 2 + 4);
  // Cut within the kernels: refused. Cut within the shapes: the kernels without shapes.
  for (size_t n = 0; n <= body.size(); ++n) {
    Reader r(body.data(), n);
    KernelList got;
    const bool ok = KernelList::Decode(r, &got);
    if (n < names) {
      EXPECT_FALSE(ok) << "a body cut to " << n << " of " << body.size() << " bytes";
      continue;
    }
    ASSERT_TRUE(ok) << "a body cut to " << n;
    const KernelList want = n == body.size() ? list : KernelList{list.kernels, std::nullopt};
    EXPECT_EQ(got, want) << "a body cut to " << n;
  }
  EXPECT_EQ(RoundTrip(KernelList{}), KernelList{});
  const KernelList none_built{{}, std::vector<std::vector<KernelList::Arg>>{}};
  EXPECT_EQ(Decoded<KernelList>(EncodeBody(none_built)), none_built);
  // Trailing bytes that are not shapes are dropped with them.
  auto junk = EncodeBody(KernelList{list.kernels, std::nullopt});
  junk.push_back(1);
  EXPECT_EQ(DecodedList(junk), (KernelList{list.kernels, std::nullopt}));
}

TEST(Messages, KernelListKeepsItsLimits) {
  KernelList list{{{std::string(kMaxNameBytes, 'k'), 1}}, std::nullopt};
  EXPECT_EQ(Decoded<KernelList>(EncodeBody(list)), list);
  list.kernels[0].name += 'k';  // a name over
  EXPECT_TRUE(Refused<KernelList>(EncodeBody(list)));
  auto over = Expect{}.u32(kMaxListedKernels + 1).b;  // one kernel over
  over.resize(over.size() + 8 * (kMaxListedKernels + 1));
  EXPECT_TRUE(Refused<KernelList>(over));
  // Arguments over the limit: the shapes are dropped, the kernels kept.
  list.kernels[0].name = "k";
  list.shapes.emplace(1, std::vector<KernelList::Arg>(kMaxListedArgs));
  EXPECT_EQ(Decoded<KernelList>(EncodeBody(list)), list);
  (*list.shapes)[0].emplace_back();
  EXPECT_EQ(DecodedList(EncodeBody(list)), (KernelList{list.kernels, std::nullopt}));
}

StatsReply SampleStatsReply() {
  return {3,
          10,
          2,
          {{"alice", "latency-critical", 2000, 1, 1u << 20, 0, 123456789, 42},
           {"bob", "best-effort", 1000, 0, 0, 1u << 20, 0, 0}},
          {{7, "alice", "unix", 3, 42, 1}}};
}

TEST(Messages, StatsReplyBytesAreExactAndRoundTrip) {
  const StatsReply stats = SampleStatsReply();
  Expect want;
  want.u64(3).u64(10).u64(2);
  want.u32(2);  // tenants
  want.str("alice").str("latency-critical").u64(2000).u32(1);
  want.u64(1u << 20).u64(0).u64(123456789).u64(42);
  want.str("bob").str("best-effort").u64(1000).u32(0);
  want.u64(0).u64(1u << 20).u64(0).u64(0);
  want.u32(1);  // sessions
  want.u64(7).str("alice").str("unix").u64(3).u64(42).u64(1);
  EXPECT_EQ(EncodeBody(stats), want.b);
  EXPECT_EQ(RoundTrip(stats), stats);
  EXPECT_EQ(RoundTrip(StatsReply{}), StatsReply{});
}

TEST(Messages, StatsReplyKeepsItsLimits) {
  StatsReply stats;
  stats.tenants.resize(kMaxStatsTenants);
  EXPECT_EQ(Decoded<StatsReply>(EncodeBody(stats)), stats);
  stats.tenants.emplace_back();  // one tenant over
  EXPECT_TRUE(Refused<StatsReply>(EncodeBody(stats)));
  EXPECT_TRUE(
      Refused<StatsReply>(Expect{}.u64(0).u64(0).u64(0).u32(0).u32(kMaxStatsSessions + 1).b));
  // Counts the frame cannot hold.
  EXPECT_TRUE(Refused<StatsReply>(Expect{}.u64(0).u64(0).u64(0).u32(2).b));
  EXPECT_TRUE(Refused<StatsReply>(Expect{}.u64(0).u64(0).u64(0).u32(0).u32(1).u64(1).b));
}

// --- the reply status, PutData's fields and the notifications ---

TEST(Messages, ReplyStatusBytesAreExact) {
  // CL_INVALID_VALUE (-30) and why; success is a zero code and an empty message.
  const std::vector<uint8_t> failed = {0xe2, 0xff, 0xff, 0xff, 3, 0, 0, 0, 'b', 'a', 'd'};
  EXPECT_EQ(EncodeBody(ReplyStatus{CL_INVALID_VALUE, "bad"}), failed);
  EXPECT_EQ(EncodeBody(ReplyStatus{}), std::vector<uint8_t>(8, 0));
  EXPECT_EQ(EncodeBody(ReplyStatus::Of(Status::Ok())), std::vector<uint8_t>(8, 0));
  // A status that is ok says nothing of a message it may carry.
  EXPECT_EQ(ReplyStatus::Of(Status::Error(CL_SUCCESS, "ignored")), ReplyStatus{});
  EXPECT_EQ(ReplyStatus::Of(Status::Error(CL_INVALID_VALUE, "bad")),
            (ReplyStatus{CL_INVALID_VALUE, "bad"}));
  EXPECT_EQ(ReplyStatus::Of(Status::Protocol("malformed")), (ReplyStatus{-1, "malformed"}));
}

TEST(Messages, ReplyStatusRoundTripsAndLeavesTheReplysFields) {
  for (const auto& m : {ReplyStatus{}, ReplyStatus{CL_OUT_OF_RESOURCES, "read failed"},
                        ReplyStatus{INT32_MIN, std::string(300, 'x')}})
    EXPECT_EQ(RoundTrip(m), m);
  EXPECT_TRUE(ReplyStatus{}.ToStatus().ok());
  const Status s = ReplyStatus{CL_INVALID_KERNEL, "no kernel"}.ToStatus();
  EXPECT_EQ(s.code(), CL_INVALID_KERNEL);
  EXPECT_EQ(s.message(), "no kernel");
  EXPECT_FALSE(s.is_protocol());
  // The reply's own fields follow the status: Decode reads the status only.
  auto body = EncodeBody(ReplyStatus{});
  const auto fields = EncodeBody(GetEventProfilingReply{1, 2, 3, 4});
  body.insert(body.end(), fields.begin(), fields.end());
  Reader r(body.data(), body.size());
  ReplyStatus head;
  ASSERT_TRUE(ReplyStatus::Decode(r, &head));
  EXPECT_EQ(head, ReplyStatus{});
  GetEventProfilingReply got;
  ASSERT_TRUE(GetEventProfilingReply::Decode(r, &got));
  EXPECT_EQ(got, (GetEventProfilingReply{1, 2, 3, 4}));
  EXPECT_TRUE(r.done());
}

TEST(Messages, ReplyStatusKeepsItsLimit) {
  const ReplyStatus longest{CL_BUILD_PROGRAM_FAILURE, std::string(kMaxReplyMessageBytes, 'e')};
  EXPECT_EQ(Decoded<ReplyStatus>(EncodeBody(longest)), longest);
  EXPECT_TRUE(Refused<ReplyStatus>(
      EncodeBody(ReplyStatus{-1, std::string(kMaxReplyMessageBytes + 1, 'e')})));
  EXPECT_TRUE(
      Refused<ReplyStatus>(Expect{}.u32(0).u32(5).u8('a').u8('b').u8('c').u8('d').b));  // 5, has 4
}

TEST(Messages, PutDataAndReadDataBytesAreExactAndRoundTrip) {
  const uint64_t big = 0x8877665544332211ull;  // every byte distinct, the top bit set
  EXPECT_EQ(EncodeBody(PutDataRequest{big}), Expect{}.u64(big).b);
  EXPECT_EQ(EncodeBody(ReadDataNotice{big}), Expect{}.u64(big).b);
  EXPECT_EQ(EncodeBody(PutDataRequest{}).size(), PutDataRequest::kBytes);
  EXPECT_EQ(EncodeBody(ReadDataNotice{}).size(), ReadDataNotice::kBytes);
  for (const auto& m : {PutDataRequest{big}, PutDataRequest{}}) EXPECT_EQ(RoundTrip(m), m);
  for (const auto& m : {ReadDataNotice{big}, ReadDataNotice{}}) EXPECT_EQ(RoundTrip(m), m);
  // The data follows the fields, to the end of the frame.
  auto body = Expect{}.u64(4096).u8(0xaa).u8(0xbb).b;
  Reader r(body.data(), body.size());
  ReadDataNotice note;
  ASSERT_TRUE(ReadDataNotice::Decode(r, &note));
  EXPECT_EQ(note.offset, 4096u);
  size_t len = 0;
  const uint8_t* data = r.rest(&len);
  ASSERT_EQ(len, 2u);
  EXPECT_EQ(data[0], 0xaa);
  Reader rp(body.data(), body.size());
  PutDataRequest put;
  ASSERT_TRUE(PutDataRequest::Decode(rp, &put));
  EXPECT_EQ(put.total, 4096u);
  EXPECT_EQ(rp.remaining(), 2u);
}

TEST(Messages, NotificationsBytesAreExactAndRoundTrip) {
  const EventDoneNotice done{0x1122334455667788ull, CL_COMPLETE};
  EXPECT_EQ(EncodeBody(done), Expect{}.u64(0x1122334455667788ull).u32(0).b);
  const EventDoneNotice failed{7, CL_OUT_OF_RESOURCES};  // -5
  EXPECT_EQ(EncodeBody(failed),
            (std::vector<uint8_t>{7, 0, 0, 0, 0, 0, 0, 0, 0xfb, 0xff, 0xff, 0xff}));
  for (const auto& m : {done, failed, EventDoneNotice{}}) EXPECT_EQ(RoundTrip(m), m);

  const AsyncErrorNotice error{static_cast<uint16_t>(Op::CreateBuffer), 42,
                               CL_MEM_OBJECT_ALLOCATION_FAILURE, "over quota"};
  EXPECT_EQ(EncodeBody(error), Expect{}
                                   .u16(12)
                                   .u64(42)
                                   .u32(static_cast<uint32_t>(CL_MEM_OBJECT_ALLOCATION_FAILURE))
                                   .str("over quota")
                                   .b);
  for (const auto& m : {error, AsyncErrorNotice{}}) EXPECT_EQ(RoundTrip(m), m);

  const GoodbyeNotice bye{"the server is shutting down"};
  EXPECT_EQ(EncodeBody(bye), Expect{}.str("the server is shutting down").b);
  for (const auto& m : {bye, GoodbyeNotice{}}) EXPECT_EQ(RoundTrip(m), m);
}

TEST(Messages, NotificationsKeepTheirLimits) {
  const AsyncErrorNotice longest{1, 2, -3, std::string(kMaxNoticeMessageBytes, 'm')};
  EXPECT_EQ(Decoded<AsyncErrorNotice>(EncodeBody(longest)), longest);
  EXPECT_TRUE(Refused<AsyncErrorNotice>(
      EncodeBody(AsyncErrorNotice{1, 2, -3, std::string(kMaxNoticeMessageBytes + 1, 'm')})));
  const GoodbyeNotice bye{std::string(kMaxNoticeMessageBytes, 'r')};
  EXPECT_EQ(Decoded<GoodbyeNotice>(EncodeBody(bye)), bye);
  EXPECT_TRUE(Refused<GoodbyeNotice>(
      EncodeBody(GoodbyeNotice{std::string(kMaxNoticeMessageBytes + 1, 'r')})));
}

}  // namespace
}  // namespace rgpu::proto
