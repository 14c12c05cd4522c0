// Which kernel arguments are images or samplers. The device's clSetKernelArg does not always
// tell (PoCL takes any 8 bytes for both, and dereferences them at launch), yet rgpud must never
// pass a client's raw bytes where the device expects an object: it would crash the daemon.
#pragma once

#include <string_view>
#include <vector>

#include "server/backend/backend.h"

namespace rgpu::server {

// The kinds of `kernel`'s parameters as written in `source` (OpenCL C): Image for image
// types, Sampler for sampler_t, Unchecked for everything else. Empty when the kernel is not
// found (the source was not preprocessed: a kernel whose signature comes from a macro is not
// seen, nor an image type behind a typedef).
std::vector<ArgShape::Kind> ObjectArgsFromSource(std::string_view source, std::string_view kernel);

// The kind an argument's type name (CL_KERNEL_ARG_TYPE_NAME) stands for.
ArgShape::Kind ObjectArgFromTypeName(std::string_view type_name);

}  // namespace rgpu::server
