#include "proto/wire.h"

namespace rgpu {

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s = protocol_ ? "protocol error: " : "error " + std::to_string(code_) + ": ";
  return s + msg_;
}

}  // namespace rgpu

namespace rgpu::proto {

void EncodeHeader(const FrameHeader& h, uint8_t out[kHeaderSize]) {
  PutLE(out + 0, h.body_len, 4);
  PutLE(out + 4, h.op, 2);
  PutLE(out + 6, h.flags, 2);
  PutLE(out + 8, h.tag, 8);
}

FrameHeader DecodeHeader(const uint8_t in[kHeaderSize]) {
  FrameHeader h;
  h.body_len = static_cast<uint32_t>(GetLE(in + 0, 4));
  h.op = static_cast<uint16_t>(GetLE(in + 4, 2));
  h.flags = static_cast<uint16_t>(GetLE(in + 6, 2));
  h.tag = GetLE(in + 8, 8);
  return h;
}

const char* OpName(uint16_t op) {
  switch (op) {
#define RGPU_OP_NAME(name, num) \
  case num:                     \
    return #name;
    RGPU_OPS(RGPU_OP_NAME)
#undef RGPU_OP_NAME
    default:
      return "Unknown";
  }
}

const char* ObjTypeName(ObjType t) {
  switch (t) {
    case ObjType::Device: return "device";
    case ObjType::Context: return "context";
    case ObjType::Queue: return "queue";
    case ObjType::Mem: return "mem";
    case ObjType::Program: return "program";
    case ObjType::Kernel: return "kernel";
    case ObjType::Event: return "event";
    case ObjType::Sampler: return "sampler";
    default: return "none";
  }
}

}  // namespace rgpu::proto
