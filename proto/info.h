// How each clGet*Info answer crosses the wire. The server knows the C type of every value
// it reads from its OpenCL implementation; it sends numbers as little-endian arrays so a
// client of the other byte order (or another size_t) can rebuild the host representation.
#pragma once

#include <cstdint>
#include <vector>

#include "proto/wire.h"

namespace rgpu::proto {

enum class InfoKind : uint8_t {
  Bytes = 0,   // strings and opaque bytes: copied as they are
  U32 = 1,     // cl_uint, cl_int, cl_bool and 32-bit enums, possibly an array
  U64 = 2,     // cl_ulong and cl_bitfield types, possibly an array
  Size = 3,    // size_t (and intptr_t properties), possibly an array; 64-bit on the wire
  Local = 4,   // answered by the ICD from its own objects (handles, reference counts)
};

InfoKind InfoKindOf(InfoFamily family, uint32_t param);

// Server side: `raw` is the value as the server's OpenCL returned it.
void EncodeInfo(InfoKind kind, const void* raw, size_t raw_size, Writer& w);
// Client side: rebuilds the host-native bytes. Returns false on a malformed value.
bool DecodeInfo(Reader& r, std::vector<uint8_t>* native);

}  // namespace rgpu::proto
