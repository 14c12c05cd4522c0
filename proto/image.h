// Image facts both ends need: a pixel's size from its format (the client packs host data by
// it, the server checks payloads against it) and packed sizes computed without overflow.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rgpu::proto {

// Bytes per pixel of an OpenCL image format (channel order, channel data type), or 0 when
// the pair is not one the specification defines.
size_t ImageElementSize(uint32_t channel_order, uint32_t channel_type);
// One of OpenCL's six image object types (CL_MEM_OBJECT_IMAGE2D and the rest).
bool IsImageType(uint32_t type);

// a * b * c * d, or false when the product does not fit in 64 bits.
bool CheckedProduct(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t* out);

// The bytes of an image packed without padding (rows of width pixels), counting only the
// dimensions its type has; false on overflow or an unknown type.
bool PackedImageBytes(uint32_t image_type, uint64_t width, uint64_t height, uint64_t depth,
                      uint64_t array_size, uint64_t element_size, uint64_t* out);

}  // namespace rgpu::proto
