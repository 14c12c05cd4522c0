// The ICD dispatch table. Every entry rgpu implements points into rgpu::client (declared
// here from the loader's own function-pointer types, so a signature that drifts fails to
// link); every other OpenCL entry answers CL_INVALID_OPERATION through a typed stub, so no
// application call reaches a null pointer (the graphics-sharing entries stay null: no
// device of ours reports those extensions). The field list follows CL/cl_icd.h.
#include <type_traits>

#include "client/icd.h"

extern "C" void* clGetExtensionFunctionAddress(const char* name);
extern "C" void* clGetExtensionFunctionAddressForPlatform(cl_platform_id, const char* name);

namespace rgpu::client {

std::remove_pointer_t<cl_api_clGetPlatformInfo> GetPlatformInfo;
std::remove_pointer_t<cl_api_clGetDeviceIDs> GetDeviceIDs;
std::remove_pointer_t<cl_api_clGetDeviceInfo> GetDeviceInfo;
std::remove_pointer_t<cl_api_clCreateContext> CreateContext;
std::remove_pointer_t<cl_api_clCreateContextFromType> CreateContextFromType;
std::remove_pointer_t<cl_api_clRetainContext> RetainContext;
std::remove_pointer_t<cl_api_clReleaseContext> ReleaseContext;
std::remove_pointer_t<cl_api_clGetContextInfo> GetContextInfo;
std::remove_pointer_t<cl_api_clCreateCommandQueue> CreateCommandQueue;
std::remove_pointer_t<cl_api_clRetainCommandQueue> RetainCommandQueue;
std::remove_pointer_t<cl_api_clReleaseCommandQueue> ReleaseCommandQueue;
std::remove_pointer_t<cl_api_clGetCommandQueueInfo> GetCommandQueueInfo;
std::remove_pointer_t<cl_api_clSetCommandQueueProperty> SetCommandQueueProperty;
std::remove_pointer_t<cl_api_clCreateBuffer> CreateBuffer;
std::remove_pointer_t<cl_api_clCreateImage2D> CreateImage2D;
std::remove_pointer_t<cl_api_clCreateImage3D> CreateImage3D;
std::remove_pointer_t<cl_api_clRetainMemObject> RetainMemObject;
std::remove_pointer_t<cl_api_clReleaseMemObject> ReleaseMemObject;
std::remove_pointer_t<cl_api_clGetSupportedImageFormats> GetSupportedImageFormats;
std::remove_pointer_t<cl_api_clGetMemObjectInfo> GetMemObjectInfo;
std::remove_pointer_t<cl_api_clGetImageInfo> GetImageInfo;
std::remove_pointer_t<cl_api_clCreateSampler> CreateSampler;
std::remove_pointer_t<cl_api_clRetainSampler> RetainSampler;
std::remove_pointer_t<cl_api_clReleaseSampler> ReleaseSampler;
std::remove_pointer_t<cl_api_clGetSamplerInfo> GetSamplerInfo;
std::remove_pointer_t<cl_api_clCreateProgramWithSource> CreateProgramWithSource;
std::remove_pointer_t<cl_api_clCreateProgramWithBinary> CreateProgramWithBinary;
std::remove_pointer_t<cl_api_clRetainProgram> RetainProgram;
std::remove_pointer_t<cl_api_clReleaseProgram> ReleaseProgram;
std::remove_pointer_t<cl_api_clBuildProgram> BuildProgram;
std::remove_pointer_t<cl_api_clUnloadCompiler> UnloadCompiler;
std::remove_pointer_t<cl_api_clGetProgramInfo> GetProgramInfo;
std::remove_pointer_t<cl_api_clGetProgramBuildInfo> GetProgramBuildInfo;
std::remove_pointer_t<cl_api_clCreateKernel> CreateKernel;
std::remove_pointer_t<cl_api_clCreateKernelsInProgram> CreateKernelsInProgram;
std::remove_pointer_t<cl_api_clRetainKernel> RetainKernel;
std::remove_pointer_t<cl_api_clReleaseKernel> ReleaseKernel;
std::remove_pointer_t<cl_api_clSetKernelArg> SetKernelArg;
std::remove_pointer_t<cl_api_clGetKernelInfo> GetKernelInfo;
std::remove_pointer_t<cl_api_clGetKernelWorkGroupInfo> GetKernelWorkGroupInfo;
std::remove_pointer_t<cl_api_clWaitForEvents> WaitForEvents;
std::remove_pointer_t<cl_api_clGetEventInfo> GetEventInfo;
std::remove_pointer_t<cl_api_clRetainEvent> RetainEvent;
std::remove_pointer_t<cl_api_clReleaseEvent> ReleaseEvent;
std::remove_pointer_t<cl_api_clGetEventProfilingInfo> GetEventProfilingInfo;
std::remove_pointer_t<cl_api_clFlush> Flush;
std::remove_pointer_t<cl_api_clFinish> Finish;
std::remove_pointer_t<cl_api_clEnqueueReadBuffer> EnqueueReadBuffer;
std::remove_pointer_t<cl_api_clEnqueueWriteBuffer> EnqueueWriteBuffer;
std::remove_pointer_t<cl_api_clEnqueueCopyBuffer> EnqueueCopyBuffer;
std::remove_pointer_t<cl_api_clEnqueueMapBuffer> EnqueueMapBuffer;
std::remove_pointer_t<cl_api_clEnqueueUnmapMemObject> EnqueueUnmapMemObject;
std::remove_pointer_t<cl_api_clEnqueueNDRangeKernel> EnqueueNDRangeKernel;
std::remove_pointer_t<cl_api_clEnqueueTask> EnqueueTask;
std::remove_pointer_t<cl_api_clEnqueueNativeKernel> EnqueueNativeKernel;
std::remove_pointer_t<cl_api_clEnqueueMarker> EnqueueMarker;
std::remove_pointer_t<cl_api_clEnqueueWaitForEvents> EnqueueWaitForEvents;
std::remove_pointer_t<cl_api_clEnqueueBarrier> EnqueueBarrier;
std::remove_pointer_t<cl_api_clSetEventCallback> SetEventCallback;
std::remove_pointer_t<cl_api_clCreateSubBuffer> CreateSubBuffer;
std::remove_pointer_t<cl_api_clSetMemObjectDestructorCallback> SetMemObjectDestructorCallback;
std::remove_pointer_t<cl_api_clCreateUserEvent> CreateUserEvent;
std::remove_pointer_t<cl_api_clSetUserEventStatus> SetUserEventStatus;
std::remove_pointer_t<cl_api_clEnqueueReadBufferRect> EnqueueReadBufferRect;
std::remove_pointer_t<cl_api_clEnqueueWriteBufferRect> EnqueueWriteBufferRect;
std::remove_pointer_t<cl_api_clEnqueueCopyBufferRect> EnqueueCopyBufferRect;
std::remove_pointer_t<cl_api_clCreateSubDevices> CreateSubDevices;
std::remove_pointer_t<cl_api_clRetainDevice> RetainDevice;
std::remove_pointer_t<cl_api_clReleaseDevice> ReleaseDevice;
std::remove_pointer_t<cl_api_clCreateImage> CreateImage;
std::remove_pointer_t<cl_api_clCreateProgramWithBuiltInKernels> CreateProgramWithBuiltInKernels;
std::remove_pointer_t<cl_api_clCompileProgram> CompileProgram;
std::remove_pointer_t<cl_api_clLinkProgram> LinkProgram;
std::remove_pointer_t<cl_api_clUnloadPlatformCompiler> UnloadPlatformCompiler;
std::remove_pointer_t<cl_api_clGetKernelArgInfo> GetKernelArgInfo;
std::remove_pointer_t<cl_api_clEnqueueFillBuffer> EnqueueFillBuffer;
std::remove_pointer_t<cl_api_clEnqueueMigrateMemObjects> EnqueueMigrateMemObjects;
std::remove_pointer_t<cl_api_clEnqueueMarkerWithWaitList> EnqueueMarkerWithWaitList;
std::remove_pointer_t<cl_api_clEnqueueBarrierWithWaitList> EnqueueBarrierWithWaitList;
std::remove_pointer_t<cl_api_clCreateCommandQueueWithProperties> CreateCommandQueueWithProperties;
std::remove_pointer_t<cl_api_clCreateBufferWithProperties> CreateBufferWithProperties;
std::remove_pointer_t<cl_api_clSetContextDestructorCallback> SetContextDestructorCallback;
std::remove_pointer_t<cl_api_clCloneKernel> CloneKernel;
std::remove_pointer_t<cl_api_clCreateImageWithProperties> CreateImageWithProperties;
std::remove_pointer_t<cl_api_clCreateSamplerWithProperties> CreateSamplerWithProperties;
std::remove_pointer_t<cl_api_clEnqueueReadImage> EnqueueReadImage;
std::remove_pointer_t<cl_api_clEnqueueWriteImage> EnqueueWriteImage;
std::remove_pointer_t<cl_api_clEnqueueCopyImage> EnqueueCopyImage;
std::remove_pointer_t<cl_api_clEnqueueCopyImageToBuffer> EnqueueCopyImageToBuffer;
std::remove_pointer_t<cl_api_clEnqueueCopyBufferToImage> EnqueueCopyBufferToImage;
std::remove_pointer_t<cl_api_clEnqueueMapImage> EnqueueMapImage;
std::remove_pointer_t<cl_api_clEnqueueFillImage> EnqueueFillImage;

namespace {

template <typename F>
struct Unsupported;
template <typename R, typename... A>
struct Unsupported<R(CL_API_CALL*)(A...)> {
  static R CL_API_CALL Fn(A... args) {
    // Entry points that create an object report the error through their cl_int* argument.
    ([&](auto a) {
      if constexpr (std::is_same_v<decltype(a), cl_int*>)
        if (a) *a = CL_INVALID_OPERATION;
    }(args), ...);
    if constexpr (std::is_pointer_v<R>) return nullptr;
    else if constexpr (std::is_void_v<R>) return;
    else return CL_INVALID_OPERATION;
  }
};

// The ICD loader's table: one line per OpenCL entry point, kept in one function (over 80
// lines) so that the table reads whole.
cl_icd_dispatch MakeDispatch() {
  cl_icd_dispatch d{};
  d.clGetPlatformIDs = &Unsupported<cl_api_clGetPlatformIDs>::Fn;
  d.clGetPlatformInfo = &GetPlatformInfo;
  d.clGetDeviceIDs = &GetDeviceIDs;
  d.clGetDeviceInfo = &GetDeviceInfo;
  d.clCreateContext = &CreateContext;
  d.clCreateContextFromType = &CreateContextFromType;
  d.clRetainContext = &RetainContext;
  d.clReleaseContext = &ReleaseContext;
  d.clGetContextInfo = &GetContextInfo;
  d.clCreateCommandQueue = &CreateCommandQueue;
  d.clRetainCommandQueue = &RetainCommandQueue;
  d.clReleaseCommandQueue = &ReleaseCommandQueue;
  d.clGetCommandQueueInfo = &GetCommandQueueInfo;
  d.clSetCommandQueueProperty = &SetCommandQueueProperty;
  d.clCreateBuffer = &CreateBuffer;
  d.clCreateImage2D = &CreateImage2D;
  d.clCreateImage3D = &CreateImage3D;
  d.clRetainMemObject = &RetainMemObject;
  d.clReleaseMemObject = &ReleaseMemObject;
  d.clGetSupportedImageFormats = &GetSupportedImageFormats;
  d.clGetMemObjectInfo = &GetMemObjectInfo;
  d.clGetImageInfo = &GetImageInfo;
  d.clCreateSampler = &CreateSampler;
  d.clRetainSampler = &RetainSampler;
  d.clReleaseSampler = &ReleaseSampler;
  d.clGetSamplerInfo = &GetSamplerInfo;
  d.clCreateProgramWithSource = &CreateProgramWithSource;
  d.clCreateProgramWithBinary = &CreateProgramWithBinary;
  d.clRetainProgram = &RetainProgram;
  d.clReleaseProgram = &ReleaseProgram;
  d.clBuildProgram = &BuildProgram;
  d.clUnloadCompiler = &UnloadCompiler;
  d.clGetProgramInfo = &GetProgramInfo;
  d.clGetProgramBuildInfo = &GetProgramBuildInfo;
  d.clCreateKernel = &CreateKernel;
  d.clCreateKernelsInProgram = &CreateKernelsInProgram;
  d.clRetainKernel = &RetainKernel;
  d.clReleaseKernel = &ReleaseKernel;
  d.clSetKernelArg = &SetKernelArg;
  d.clGetKernelInfo = &GetKernelInfo;
  d.clGetKernelWorkGroupInfo = &GetKernelWorkGroupInfo;
  d.clWaitForEvents = &WaitForEvents;
  d.clGetEventInfo = &GetEventInfo;
  d.clRetainEvent = &RetainEvent;
  d.clReleaseEvent = &ReleaseEvent;
  d.clGetEventProfilingInfo = &GetEventProfilingInfo;
  d.clFlush = &Flush;
  d.clFinish = &Finish;
  d.clEnqueueReadBuffer = &EnqueueReadBuffer;
  d.clEnqueueWriteBuffer = &EnqueueWriteBuffer;
  d.clEnqueueCopyBuffer = &EnqueueCopyBuffer;
  d.clEnqueueReadImage = &EnqueueReadImage;
  d.clEnqueueWriteImage = &EnqueueWriteImage;
  d.clEnqueueCopyImage = &EnqueueCopyImage;
  d.clEnqueueCopyImageToBuffer = &EnqueueCopyImageToBuffer;
  d.clEnqueueCopyBufferToImage = &EnqueueCopyBufferToImage;
  d.clEnqueueMapBuffer = &EnqueueMapBuffer;
  d.clEnqueueMapImage = &EnqueueMapImage;
  d.clEnqueueUnmapMemObject = &EnqueueUnmapMemObject;
  d.clEnqueueNDRangeKernel = &EnqueueNDRangeKernel;
  d.clEnqueueTask = &EnqueueTask;
  d.clEnqueueNativeKernel = &EnqueueNativeKernel;
  d.clEnqueueMarker = &EnqueueMarker;
  d.clEnqueueWaitForEvents = &EnqueueWaitForEvents;
  d.clEnqueueBarrier = &EnqueueBarrier;
  d.clGetExtensionFunctionAddress = &::clGetExtensionFunctionAddress;
  d.clSetEventCallback = &SetEventCallback;
  d.clCreateSubBuffer = &CreateSubBuffer;
  d.clSetMemObjectDestructorCallback = &SetMemObjectDestructorCallback;
  d.clCreateUserEvent = &CreateUserEvent;
  d.clSetUserEventStatus = &SetUserEventStatus;
  d.clEnqueueReadBufferRect = &EnqueueReadBufferRect;
  d.clEnqueueWriteBufferRect = &EnqueueWriteBufferRect;
  d.clEnqueueCopyBufferRect = &EnqueueCopyBufferRect;
  d.clCreateSubDevicesEXT = &Unsupported<cl_api_clCreateSubDevicesEXT>::Fn;
  d.clRetainDeviceEXT = &Unsupported<cl_api_clRetainDeviceEXT>::Fn;
  d.clReleaseDeviceEXT = &Unsupported<cl_api_clReleaseDeviceEXT>::Fn;
  d.clCreateSubDevices = &CreateSubDevices;
  d.clRetainDevice = &RetainDevice;
  d.clReleaseDevice = &ReleaseDevice;
  d.clCreateImage = &CreateImage;
  d.clCreateProgramWithBuiltInKernels = &CreateProgramWithBuiltInKernels;
  d.clCompileProgram = &CompileProgram;
  d.clLinkProgram = &LinkProgram;
  d.clUnloadPlatformCompiler = &UnloadPlatformCompiler;
  d.clGetKernelArgInfo = &GetKernelArgInfo;
  d.clEnqueueFillBuffer = &EnqueueFillBuffer;
  d.clEnqueueFillImage = &EnqueueFillImage;
  d.clEnqueueMigrateMemObjects = &EnqueueMigrateMemObjects;
  d.clEnqueueMarkerWithWaitList = &EnqueueMarkerWithWaitList;
  d.clEnqueueBarrierWithWaitList = &EnqueueBarrierWithWaitList;
  d.clGetExtensionFunctionAddressForPlatform = &::clGetExtensionFunctionAddressForPlatform;
  d.clCreateCommandQueueWithProperties = &CreateCommandQueueWithProperties;
  d.clCreatePipe = &Unsupported<cl_api_clCreatePipe>::Fn;
  d.clGetPipeInfo = &Unsupported<cl_api_clGetPipeInfo>::Fn;
  d.clSVMAlloc = &Unsupported<cl_api_clSVMAlloc>::Fn;
  d.clSVMFree = &Unsupported<cl_api_clSVMFree>::Fn;
  d.clEnqueueSVMFree = &Unsupported<cl_api_clEnqueueSVMFree>::Fn;
  d.clEnqueueSVMMemcpy = &Unsupported<cl_api_clEnqueueSVMMemcpy>::Fn;
  d.clEnqueueSVMMemFill = &Unsupported<cl_api_clEnqueueSVMMemFill>::Fn;
  d.clEnqueueSVMMap = &Unsupported<cl_api_clEnqueueSVMMap>::Fn;
  d.clEnqueueSVMUnmap = &Unsupported<cl_api_clEnqueueSVMUnmap>::Fn;
  d.clCreateSamplerWithProperties = &CreateSamplerWithProperties;
  d.clSetKernelArgSVMPointer = &Unsupported<cl_api_clSetKernelArgSVMPointer>::Fn;
  d.clSetKernelExecInfo = &Unsupported<cl_api_clSetKernelExecInfo>::Fn;
  d.clGetKernelSubGroupInfoKHR = &Unsupported<cl_api_clGetKernelSubGroupInfoKHR>::Fn;
  d.clCloneKernel = &CloneKernel;
  d.clCreateProgramWithIL = &Unsupported<cl_api_clCreateProgramWithIL>::Fn;
  d.clEnqueueSVMMigrateMem = &Unsupported<cl_api_clEnqueueSVMMigrateMem>::Fn;
  d.clGetDeviceAndHostTimer = &Unsupported<cl_api_clGetDeviceAndHostTimer>::Fn;
  d.clGetHostTimer = &Unsupported<cl_api_clGetHostTimer>::Fn;
  d.clGetKernelSubGroupInfo = &Unsupported<cl_api_clGetKernelSubGroupInfo>::Fn;
  d.clSetDefaultDeviceCommandQueue = &Unsupported<cl_api_clSetDefaultDeviceCommandQueue>::Fn;
  d.clSetProgramReleaseCallback = &Unsupported<cl_api_clSetProgramReleaseCallback>::Fn;
  d.clSetProgramSpecializationConstant = &Unsupported<cl_api_clSetProgramSpecializationConstant>::Fn;
  d.clCreateBufferWithProperties = &CreateBufferWithProperties;
  d.clCreateImageWithProperties = &CreateImageWithProperties;
  d.clSetContextDestructorCallback = &SetContextDestructorCallback;
  return d;
}

}  // namespace

cl_icd_dispatch g_dispatch = MakeDispatch();

}  // namespace rgpu::client
