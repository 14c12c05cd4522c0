// How each clGet*Info answer crosses the wire. The server knows the C type of every value
// it reads from its OpenCL implementation; it sends numbers as little-endian arrays so a
// client of the other byte order (or another size_t) can rebuild the host representation.
#pragma once

#include <CL/cl.h>

#include <cstdint>

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

// rgpu's own device query, sent in the Hello reply beside the device's answers (a U32): the
// maps the device allows although the buffer's host-access flag forbids them, which the
// specification refuses with CL_INVALID_OPERATION (NVIDIA allows CL_MAP_WRITE_INVALIDATE_REGION
// on HOST_READ_ONLY and HOST_NO_ACCESS buffers). rgpud learns it once per device by trying
// each map (server/backend/opencl_backend.cpp); the ICD gives the device's answer.
constexpr uint32_t kDeviceMapsBeyondHostAccess = 0x52475001;
// Bit MapBit(h, m) for kHostAccess[h] and kMapKinds[m].
constexpr uint64_t kHostAccess[3] = {CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY,
                                     CL_MEM_HOST_NO_ACCESS};
constexpr uint64_t kMapKinds[3] = {CL_MAP_READ, CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION};
constexpr uint32_t MapBit(int h, int m) { return 1u << (3 * h + m); }
// Whether the specification refuses map kind m on a buffer with host-access flag h: reads on
// HOST_WRITE_ONLY, writes on HOST_READ_ONLY, everything on HOST_NO_ACCESS.
constexpr bool SpecRefusesMap(int h, int m) { return h == 2 || (h == 0 ? m == 0 : m != 0); }
// Whether a map with `map_flags` of a buffer with `mem_flags` is refused, given the device's
// kDeviceMapsBeyondHostAccess answer.
constexpr bool MapRefused(uint64_t mem_flags, uint64_t map_flags, uint32_t device_allows) {
  for (int h = 0; h < 3; ++h)
    for (int m = 0; m < 3; ++m)
      if ((mem_flags & kHostAccess[h]) && (map_flags & kMapKinds[m]) && SpecRefusesMap(h, m) &&
          !(device_allows & MapBit(h, m)))
        return true;
  return false;
}

// The value itself crosses as a proto::InfoValue (proto/messages.h), which converts it from
// and to the host's bytes (InfoValue::FromHost on the server, ToHost on the client).

}  // namespace rgpu::proto
