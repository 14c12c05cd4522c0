// How large transfers over the socket are cut into pieces (issue 12, outcome 3): the client
// sends a large write as several WriteBuffer commands, each handed to the device as soon as it
// has arrived, and rgpud reads a large buffer piece by piece, sending each as soon as the
// device has it. Not part of the protocol: each side cuts its own direction, by this rule.
#pragma once

#include <algorithm>
#include <cstdint>

namespace rgpu::proto {

inline constexpr uint64_t kPieceMin = uint64_t{1} << 20;
inline constexpr uint64_t kPieceMax = uint64_t{4} << 20;
// Transfers of at least this size (on an in-order queue) are cut, into 8 pieces or more.
// Smaller ones still go whole: whether cutting them pays on a GPU was not measured.
inline constexpr uint64_t kPiecedFrom = uint64_t{8} << 20;

// The piece size for a transfer of `size` bytes. One piece's device copy is not overlapped
// with the network (the last of a write, the first of a read): at 4 MiB pieces that was a
// quarter of a 16 MiB transfer, so pieces are a sixteenth of it, in whole MiB (the data
// chunk size). Never below 1 MiB, where each command's own cost starts to tell; never above
// 4 MiB, so that larger transfers get more pieces rather than larger ones.
constexpr uint64_t PieceBytes(uint64_t size) {
  return std::clamp(size / 16 / kPieceMin * kPieceMin, kPieceMin, kPieceMax);
}
static_assert(kPiecedFrom / PieceBytes(kPiecedFrom) >= 8);

// rgpud's reads over the socket are cut from a smaller size: a read of 1 MiB (a 512 x 512
// float matrix) sent whole waits for the device's whole copy before its first byte leaves,
// then for the whole send (1 MiB blocking reads ran at 0.35 of the raw TCP stream on an H200,
// docs/performance.md). Below kPiecedFrom a read goes in pieces of an eighth of it, at least
// kReadPieceMin: below that a piece's command costs the driver about as long as its copy
// (about 10 us against 8-12 GB/s), so the device side would fall behind the socket.
inline constexpr uint64_t kReadPiecedFrom = uint64_t{512} << 10;
inline constexpr uint64_t kReadPieceMin = uint64_t{256} << 10;
inline constexpr uint64_t kReadPieceGrain = uint64_t{64} << 10;

constexpr uint64_t ReadPieceBytes(uint64_t size) {
  if (size >= kPiecedFrom) return PieceBytes(size);
  return std::clamp(size / 8 / kReadPieceGrain * kReadPieceGrain, kReadPieceMin, kPieceMin);
}
static_assert(kReadPiecedFrom / ReadPieceBytes(kReadPiecedFrom) == 2);
static_assert(ReadPieceBytes(kPiecedFrom - 1) < kPieceMin);

}  // namespace rgpu::proto
