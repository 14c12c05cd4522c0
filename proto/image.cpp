#include "proto/image.h"

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <initializer_list>

namespace rgpu::proto {

namespace {
size_t ChannelCount(uint32_t order) {
  switch (order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_Rx: case CL_DEPTH:
      return 1;
    case CL_RG: case CL_RA: case CL_RGx:
      return 2;
    case CL_RGB: case CL_RGBx: case CL_sRGB: case CL_sRGBx:
      return 3;  // CL_sRGB is 8-bit per channel: 3 bytes
    case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_ABGR: case CL_sRGBA: case CL_sBGRA:
      return 4;
    default:
      return 0;
  }
}

// Packed types hold all channels in one word and need a 3- or 4-channel order.
size_t PackedSize(uint32_t type, uint32_t order) {
  const size_t channels = ChannelCount(order);
  switch (type) {
    case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555:
      return channels == 3 ? 2 : 0;
    case CL_UNORM_INT_101010:
      return channels == 3 ? 4 : 0;
    case CL_UNORM_INT_101010_2:
      return channels == 4 ? 4 : 0;
    default:
      return 0;
  }
}

size_t ChannelSize(uint32_t type) {
  switch (type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8:
      return 1;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16:
    case CL_HALF_FLOAT:
      return 2;
    case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT:
      return 4;
    default:
      return 0;
  }
}
}  // namespace

bool IsImageType(uint32_t type) {
  switch (type) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    case CL_MEM_OBJECT_IMAGE2D:
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    case CL_MEM_OBJECT_IMAGE3D:
      return true;
    default:
      return false;
  }
}

size_t ImageElementSize(uint32_t channel_order, uint32_t channel_type) {
  const size_t channels = ChannelCount(channel_order);
  if (channels == 0) return 0;
  if (size_t packed = PackedSize(channel_type, channel_order)) return packed;
  // CL_UNORM_INT24 is a depth format: one 32-bit word per pixel.
  if (channel_type == CL_UNORM_INT24) return channel_order == CL_DEPTH ? 4 : 0;
  // RGB and the "x" orders take packed types only (rgpu does not size the padded ones).
  if (channel_order == CL_RGB || channel_order == CL_RGBx || channel_order == CL_RGx ||
      channel_order == CL_Rx || channel_order == CL_sRGBx)
    return 0;
  return channels * ChannelSize(channel_type);
}

bool CheckedProduct(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t* out) {
  uint64_t p = 1;
  for (uint64_t v : {a, b, c, d}) {
    if (v != 0 && p > UINT64_MAX / v) return false;
    p *= v;
  }
  *out = p;
  return true;
}

bool PackedImageBytes(uint32_t image_type, uint64_t width, uint64_t height, uint64_t depth,
                      uint64_t array_size, uint64_t element_size, uint64_t* out) {
  switch (image_type) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER: return CheckedProduct(width, 1, 1, element_size, out);
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: return CheckedProduct(width, array_size, 1, element_size, out);
    case CL_MEM_OBJECT_IMAGE2D: return CheckedProduct(width, height, 1, element_size, out);
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
      return CheckedProduct(width, height, array_size, element_size, out);
    case CL_MEM_OBJECT_IMAGE3D: return CheckedProduct(width, height, depth, element_size, out);
    default: return false;
  }
}

}  // namespace rgpu::proto
