// Typed messages: one struct per request whose layout both ends (and the tools and tests)
// write, with the limits both ends must agree on named beside it. A message's Encode gives
// the frame body; Decode reads one from a body and fails on anything malformed.
//
// Only Hello is typed so far (issue 10 moves the other operations here one by one); the
// layouts of the rest are in docs/protocol.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace rgpu::proto
