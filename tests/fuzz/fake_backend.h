// A device-less implementation of server/backend/backend.h for the fuzz target.
//
// Why not PoCL: under libFuzzer every input runs a whole session, and PoCL would compile
// random OpenCL C with its in-process clang (hundreds of milliseconds, and LLVM's own
// caches and fatal errors would drown the findings about rgpud). The fake keeps what the
// server relies on: reference counts, sizes and bounds of buffers, events that complete,
// programs whose kernels are named in their source. It allocates no device memory, so a
// hostile size cannot exhaust the fuzzing host. Its oracle: every object a session created
// is released once the session has ended (LiveObjects() == 0).
#pragma once

#include <atomic>
#include <mutex>
#include <type_traits>
#include <utility>

#include "server/backend/backend.h"

namespace rgpu::fuzz {

// The byte vector behind server::Bytes (the buffer-creation payload has the same type).
using ByteVec = std::remove_cvref_t<decltype(*std::declval<server::Bytes>())>;

class FakeBackend : public server::Backend {
 public:
  FakeBackend();
  ~FakeBackend() override;
  long LiveObjects() const { return live_.load(); }

  const std::vector<server::DeviceDesc>& Devices() const override { return devices_; }
  Status DeviceInfo(int device, uint32_t param, std::vector<uint8_t>* raw) override;
  Result<server::BkContext*> CreateContext(std::span<const int> devices) override;
  Result<server::BkQueue*> CreateQueue(server::BkContext* ctx, int device,
                                       uint64_t properties) override;
  Result<server::BkMem*> CreateBuffer(server::BkContext* ctx, uint64_t flags, size_t size,
                                      const ByteVec* init) override;
  Result<server::BkMem*> CreateSubBuffer(server::BkMem* parent, uint64_t flags, size_t origin,
                                         size_t size) override;
  Result<server::ImageFacts> CreateImage(server::BkContext* ctx, uint64_t flags,
                                         const server::ImageDesc& desc,
                                         const ByteVec* init) override;
  Result<std::vector<std::pair<uint32_t, uint32_t>>> SupportedImageFormats(
      server::BkContext* ctx, uint64_t flags, uint32_t image_type) override;
  Result<server::BkSampler*> CreateSampler(server::BkContext* ctx,
                                           std::span<const uint64_t> props) override;
  Result<server::BkProgram*> CreateProgramWithSource(server::BkContext* ctx,
                                                     std::string_view src) override;
  Result<server::BkProgram*> CreateProgramWithBinary(server::BkContext* ctx,
                                                     std::span<const int> devices,
                                                     const std::vector<std::string>& binaries,
                                                     std::vector<int32_t>* binary_status) override;
  Status BuildProgram(server::BkProgram* p, std::span<const int> devices,
                      const std::string& options) override;
  Status CompileProgram(server::BkProgram* p, std::span<const int> devices,
                        const std::string& options, std::span<server::BkProgram* const> headers,
                        const std::vector<std::string>& header_names) override;
  Result<server::BkProgram*> LinkProgram(server::BkContext* ctx, std::span<const int> devices,
                                         const std::string& options,
                                         std::span<server::BkProgram* const> inputs) override;
  Result<std::vector<server::KernelDesc>> KernelsOf(server::BkProgram* p) override;
  Result<server::BkKernel*> CreateKernel(server::BkProgram* p, const std::string& name) override;
  Status GetInfo(proto::InfoFamily family, void* object, int device, uint32_t aux,
                 uint32_t param, std::vector<uint8_t>* raw) override;
  Result<server::ProfilingTimes> Profiling(server::BkEvent* e) override;

  Result<server::BkEvent*> Write(server::BkQueue* q, server::BkMem* m, size_t offset,
                                 server::Bytes data, server::WaitList waits) override;
  Result<server::BkEvent*> Read(server::BkQueue* q, server::BkMem* m, size_t offset,
                                size_t size, server::Bytes dst, server::WaitList waits,
                                bool blocking = false) override;
  Result<server::BkEvent*> WriteFrom(server::BkQueue* q, server::BkMem* m, size_t offset,
                                     size_t size, const void* src, std::shared_ptr<void> keep,
                                     server::WaitList waits) override;
  Result<server::BkEvent*> ReadInto(server::BkQueue* q, server::BkMem* m, size_t offset,
                                    size_t size, void* dst, std::shared_ptr<void> keep,
                                    server::WaitList waits, bool blocking = false) override;
  Result<server::BkEvent*> Copy(server::BkQueue* q, server::BkMem* src, server::BkMem* dst,
                                size_t src_off, size_t dst_off, size_t size,
                                server::WaitList waits) override;
  Result<server::BkEvent*> WriteRect(server::BkQueue* q, server::BkMem* m,
                                     const server::Rect& r, server::Bytes data,
                                     server::WaitList waits) override;
  Result<server::BkEvent*> ReadRect(server::BkQueue* q, server::BkMem* m, const server::Rect& r,
                                    server::Bytes dst, server::WaitList waits) override;
  Result<server::BkEvent*> CopyRect(server::BkQueue* q, server::BkMem* src, server::BkMem* dst,
                                    const server::Rect& src_r, const server::Rect& dst_r,
                                    server::WaitList waits) override;
  Result<server::BkEvent*> Fill(server::BkQueue* q, server::BkMem* m,
                                const std::vector<uint8_t>& pattern, size_t offset, size_t size,
                                server::WaitList waits) override;
  Result<server::BkEvent*> WriteImage(server::BkQueue* q, server::BkMem* m,
                                      const server::ImageRegion& r, server::Bytes data,
                                      server::WaitList waits) override;
  Result<server::BkEvent*> ReadImage(server::BkQueue* q, server::BkMem* m,
                                     const server::ImageRegion& r, server::Bytes dst,
                                     server::WaitList waits) override;
  Result<server::BkEvent*> CopyImage(server::BkQueue* q, server::BkMem* src, server::BkMem* dst,
                                     const server::ImageRegion& s, const size_t dst_origin[3],
                                     server::WaitList waits) override;
  Result<server::BkEvent*> CopyImageToBuffer(server::BkQueue* q, server::BkMem* src,
                                             server::BkMem* dst, const server::ImageRegion& s,
                                             size_t dst_offset, server::WaitList waits) override;
  Result<server::BkEvent*> CopyBufferToImage(server::BkQueue* q, server::BkMem* src,
                                             server::BkMem* dst, size_t src_offset,
                                             const server::ImageRegion& d,
                                             server::WaitList waits) override;
  Result<server::BkEvent*> FillImage(server::BkQueue* q, server::BkMem* m,
                                     const uint8_t color[16], const server::ImageRegion& r,
                                     server::WaitList waits) override;
  Result<server::BkEvent*> Launch(server::BkQueue* q, server::BkKernel* k,
                                  std::span<const server::KernelArgValue> args,
                                  const server::NDRange& range, server::WaitList waits,
                                  bool want_event = true) override;
  Result<server::BkEvent*> Marker(server::BkQueue* q, server::WaitList waits) override;
  Result<server::BkEvent*> Barrier(server::BkQueue* q, server::WaitList waits) override;
  Result<server::BkEvent*> Migrate(server::BkQueue* q, std::span<server::BkMem* const> mems,
                                   uint64_t flags, server::WaitList waits) override;
  Status Flush(server::BkQueue* q) override;
  Status Finish(server::BkQueue* q) override;
  Status Wait(std::span<server::BkEvent* const> events) override;
  Result<server::BkEvent*> CreateUserEvent(server::BkContext* ctx) override;
  Status SetUserEventStatus(server::BkEvent* e, int32_t status) override;
  Result<server::BkEvent*> FailedEvent(server::BkContext* ctx, int32_t code) override;
  int32_t EventStatus(server::BkEvent* e) override;
  void OnComplete(server::BkEvent* e, server::CompletionFn fn, bool urgent = false) override;
  void Retain(proto::ObjType type, void* handle) override;
  void Release(proto::ObjType type, void* handle) override;

  struct Object;

 private:
  Object* New(proto::ObjType type, Object* parent);
  Result<server::BkEvent*> Done(server::BkQueue* q, server::WaitList waits, int32_t status = 0);

  std::vector<server::DeviceDesc> devices_;
  std::atomic<long> live_{0};
  std::mutex mu_;  // user events' status and callbacks
};

}  // namespace rgpu::fuzz
