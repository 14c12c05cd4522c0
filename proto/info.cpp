#include "proto/info.h"

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <cstring>

#include "proto/messages.h"

namespace rgpu::proto {
namespace {

// One case per device query, kept in one switch (over 80 lines) so that the table reads whole.
InfoKind DeviceKind(uint32_t p) {
  switch (p) {
    case CL_DEVICE_PLATFORM:
    case CL_DEVICE_PARENT_DEVICE:
    case CL_DEVICE_REFERENCE_COUNT:
      return InfoKind::Local;
    case CL_DEVICE_TYPE:
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
    case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE:
    case CL_DEVICE_GLOBAL_MEM_SIZE:
    case CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE:
    case CL_DEVICE_LOCAL_MEM_SIZE:
    case CL_DEVICE_SINGLE_FP_CONFIG:
    case CL_DEVICE_DOUBLE_FP_CONFIG:
    case CL_DEVICE_HALF_FP_CONFIG:
    case CL_DEVICE_EXECUTION_CAPABILITIES:
    case CL_DEVICE_QUEUE_PROPERTIES:
    case CL_DEVICE_PARTITION_AFFINITY_DOMAIN:
    case CL_DEVICE_SVM_CAPABILITIES:
    case CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES:
    case CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES:
    case CL_DEVICE_ATOMIC_FENCE_CAPABILITIES:
    case CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES:
      return InfoKind::U64;
    case CL_DEVICE_MAX_WORK_GROUP_SIZE:
    case CL_DEVICE_MAX_WORK_ITEM_SIZES:
    case CL_DEVICE_IMAGE2D_MAX_WIDTH:
    case CL_DEVICE_IMAGE2D_MAX_HEIGHT:
    case CL_DEVICE_IMAGE3D_MAX_WIDTH:
    case CL_DEVICE_IMAGE3D_MAX_HEIGHT:
    case CL_DEVICE_IMAGE3D_MAX_DEPTH:
    case CL_DEVICE_MAX_PARAMETER_SIZE:
    case CL_DEVICE_PROFILING_TIMER_RESOLUTION:
    case CL_DEVICE_PRINTF_BUFFER_SIZE:
    case CL_DEVICE_IMAGE_MAX_BUFFER_SIZE:
    case CL_DEVICE_IMAGE_MAX_ARRAY_SIZE:
    case CL_DEVICE_PARTITION_PROPERTIES:
    case CL_DEVICE_PARTITION_TYPE:
    case CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE:
    case CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE:
    case CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
      return InfoKind::Size;
    case CL_DEVICE_NAME:
    case CL_DEVICE_VENDOR:
    case CL_DRIVER_VERSION:
    case CL_DEVICE_PROFILE:
    case CL_DEVICE_VERSION:
    case CL_DEVICE_OPENCL_C_VERSION:
    case CL_DEVICE_EXTENSIONS:
    case CL_DEVICE_BUILT_IN_KERNELS:
    case CL_DEVICE_IL_VERSION:
    case CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED:
    case CL_DEVICE_UUID_KHR:
    case CL_DRIVER_UUID_KHR:
    case CL_DEVICE_LUID_KHR:
      return InfoKind::Bytes;
    default:
      // Every other standard and vendor (NV, AMD, Intel) device query answers a 32-bit
      // value or a string; unknown ones travel as bytes and keep the server's byte order.
      break;
  }
  switch (p) {
    case CL_DEVICE_VENDOR_ID:
    case CL_DEVICE_MAX_COMPUTE_UNITS:
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_INT:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF:
    case CL_DEVICE_MAX_CLOCK_FREQUENCY:
    case CL_DEVICE_ADDRESS_BITS:
    case CL_DEVICE_MAX_READ_IMAGE_ARGS:
    case CL_DEVICE_MAX_WRITE_IMAGE_ARGS:
    case CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS:
    case CL_DEVICE_IMAGE_SUPPORT:
    case CL_DEVICE_MAX_SAMPLERS:
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN:
    case CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE:
    case CL_DEVICE_GLOBAL_MEM_CACHE_TYPE:
    case CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE:
    case CL_DEVICE_MAX_CONSTANT_ARGS:
    case CL_DEVICE_LOCAL_MEM_TYPE:
    case CL_DEVICE_ERROR_CORRECTION_SUPPORT:
    case CL_DEVICE_ENDIAN_LITTLE:
    case CL_DEVICE_AVAILABLE:
    case CL_DEVICE_COMPILER_AVAILABLE:
    case CL_DEVICE_LINKER_AVAILABLE:
    case CL_DEVICE_HOST_UNIFIED_MEMORY:
    case CL_DEVICE_PREFERRED_INTEROP_USER_SYNC:
    case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
    case CL_DEVICE_IMAGE_PITCH_ALIGNMENT:
    case CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT:
    case CL_DEVICE_MAX_PIPE_ARGS:
    case CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS:
    case CL_DEVICE_PIPE_MAX_PACKET_SIZE:
    case CL_DEVICE_MAX_ON_DEVICE_QUEUES:
    case CL_DEVICE_MAX_ON_DEVICE_EVENTS:
    case CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE:
    case CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE:
    case CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT:
    case CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT:
    case CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT:
    case CL_DEVICE_MAX_NUM_SUB_GROUPS:
    case CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
    case CL_DEVICE_NUMERIC_VERSION:
    case CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT:
    case CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT:
    case CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT:
    case CL_DEVICE_PIPE_SUPPORT:
    case CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV:
    case CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV:
    case CL_DEVICE_REGISTERS_PER_BLOCK_NV:
    case CL_DEVICE_WARP_SIZE_NV:
    case CL_DEVICE_GPU_OVERLAP_NV:
    case CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV:
    case CL_DEVICE_INTEGRATED_MEMORY_NV:
      return InfoKind::U32;
    default:
      return InfoKind::Bytes;
  }
}

InfoKind ProgramKind(uint32_t p) {
  switch (p) {
    case CL_PROGRAM_REFERENCE_COUNT:
    case CL_PROGRAM_CONTEXT:
    case CL_PROGRAM_NUM_DEVICES:
    case CL_PROGRAM_DEVICES:
    case CL_PROGRAM_BINARIES:  // pointers to client memory: handled by the ICD
      return InfoKind::Local;
    case CL_PROGRAM_BINARY_SIZES:
    case CL_PROGRAM_NUM_KERNELS:
      return InfoKind::Size;
    case CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT:
    case CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT:
      return InfoKind::U32;
    default:
      return InfoKind::Bytes;  // source, kernel names, IL
  }
}

InfoKind ProgramBuildKind(uint32_t p) {
  switch (p) {
    case CL_PROGRAM_BUILD_STATUS:
    case CL_PROGRAM_BINARY_TYPE:
      return InfoKind::U32;
    case CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE:
      return InfoKind::Size;
    default:
      return InfoKind::Bytes;  // options, log
  }
}

InfoKind KernelKind(uint32_t p) {
  switch (p) {
    case CL_KERNEL_NUM_ARGS:
      return InfoKind::U32;
    case CL_KERNEL_REFERENCE_COUNT:
    case CL_KERNEL_CONTEXT:
    case CL_KERNEL_PROGRAM:
      return InfoKind::Local;
    default:
      return InfoKind::Bytes;  // function name, attributes
  }
}

InfoKind KernelWorkGroupKind(uint32_t p) {
  switch (p) {
    case CL_KERNEL_LOCAL_MEM_SIZE:
    case CL_KERNEL_PRIVATE_MEM_SIZE:
      return InfoKind::U64;
    case CL_KERNEL_WORK_GROUP_SIZE:
    case CL_KERNEL_COMPILE_WORK_GROUP_SIZE:
    case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
    case CL_KERNEL_GLOBAL_WORK_SIZE:
      return InfoKind::Size;
    default:
      return InfoKind::Bytes;
  }
}

InfoKind KernelArgKind(uint32_t p) {
  switch (p) {
    case CL_KERNEL_ARG_ADDRESS_QUALIFIER:
    case CL_KERNEL_ARG_ACCESS_QUALIFIER:
      return InfoKind::U32;
    case CL_KERNEL_ARG_TYPE_QUALIFIER:
      return InfoKind::U64;
    default:
      return InfoKind::Bytes;  // type name, arg name
  }
}

size_t ElemSize(InfoKind k) {
  switch (k) {
    case InfoKind::U32:
      return 4;
    case InfoKind::U64:
      return 8;
    case InfoKind::Size:
      return sizeof(size_t);
    default:
      return 1;
  }
}

}  // namespace

InfoKind InfoKindOf(InfoFamily family, uint32_t param) {
  switch (family) {
    case InfoFamily::Device:
      return DeviceKind(param);
    case InfoFamily::Program:
      return ProgramKind(param);
    case InfoFamily::ProgramBuild:
      return ProgramBuildKind(param);
    case InfoFamily::Kernel:
      return KernelKind(param);
    case InfoFamily::KernelWorkGroup:
      return KernelWorkGroupKind(param);
    case InfoFamily::KernelArg:
      return KernelArgKind(param);
    case InfoFamily::Event:
      return param == CL_EVENT_COMMAND_EXECUTION_STATUS ? InfoKind::U32 : InfoKind::Local;
    default:
      return InfoKind::Local;  // contexts, queues and memory objects are fully described locally
  }
}

InfoValue InfoValue::FromHost(InfoKind kind, const void* raw, size_t raw_size) {
  InfoValue v;
  v.kind = kind == InfoKind::Local ? InfoKind::Bytes : kind;
  // A device may answer a size_t or 64-bit query in 4 bytes (NVIDIA's
  // CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE): the client gets the 4 bytes it wrote.
  if ((v.kind == InfoKind::Size || v.kind == InfoKind::U64) && raw_size % 8 != 0 &&
      raw_size % 4 == 0)
    v.kind = InfoKind::U32;
  if (v.kind == InfoKind::Bytes) {
    if (raw_size > 0) v.bytes.assign(static_cast<const char*>(raw), raw_size);
    return v;
  }
  const size_t elem = ElemSize(v.kind);
  const auto* p = static_cast<const uint8_t*>(raw);
  v.numbers.resize(raw_size / elem);
  for (size_t i = 0; i < v.numbers.size(); ++i) {
    if (elem == 4) {
      uint32_t x;
      std::memcpy(&x, p + i * 4, 4);
      v.numbers[i] = x;
    } else {
      std::memcpy(&v.numbers[i], p + i * 8, 8);
    }
  }
  return v;
}

std::vector<uint8_t> InfoValue::ToHost() const {
  if (kind == InfoKind::Bytes) return {bytes.begin(), bytes.end()};
  const size_t elem = ElemSize(kind);
  std::vector<uint8_t> host(numbers.size() * elem);
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (kind == InfoKind::U32) {
      const auto x = static_cast<uint32_t>(numbers[i]);
      std::memcpy(host.data() + i * 4, &x, 4);
    } else if (kind == InfoKind::U64) {
      std::memcpy(host.data() + i * 8, &numbers[i], 8);
    } else {
      const auto x = static_cast<size_t>(numbers[i]);
      std::memcpy(host.data() + i * elem, &x, elem);
    }
  }
  return host;
}

}  // namespace rgpu::proto
