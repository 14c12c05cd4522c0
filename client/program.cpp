// Programs and kernels. Building is synchronous (the application needs the result); the
// build reply lists the program's kernels and their argument counts, so creating a kernel
// and setting its arguments are checked locally and cost no round trip.
#include <cstdlib>

#include "client/icd.h"
#include "proto/messages.h"

namespace rgpu::client {

using proto::InfoFamily;
using proto::Op;
using proto::Reader;

namespace {

// The kernel list of a build reply: names, argument counts, then how the device checks each
// argument (absent from older servers: then nothing is checked).
void ReadKernelList(cl_program p, Reader r) {
  proto::KernelList list;
  const bool list_ok = proto::KernelList::Decode(r, &list);
  if (!list_ok) list = {};  // a list cut short names no kernels: the program is not built
  std::map<std::string, cl_uint> ks;
  for (const auto& k : list.kernels) ks[k.name] = k.num_args;
  std::map<std::string, std::vector<ArgShape>> shapes;
  if (list.shapes) {
    for (size_t i = 0; i < list.shapes->size() && i < list.kernels.size(); ++i) {
      auto& v = shapes[list.kernels[i].name];
      for (const auto& a : (*list.shapes)[i]) {
        ArgShape s{a.kind, a.size, a.also};
        if (s.kind > ArgShape::Sampler) s.kind = ArgShape::Unchecked;
        v.push_back(s);
      }
    }
  }
  std::lock_guard lk(p->mu);
  p->kernels = std::move(ks);
  p->arg_shapes = std::move(shapes);
  p->built = list_ok;
}

// The devices and options of a build, compile or link: no devices (all of the context's)
// when the application named none.
proto::BuildTarget BuildTargetOf(const cl_device_id* list, const std::vector<uint32_t>& idx,
                                 const char* options) {
  return proto::BuildTarget{list ? idx : std::vector<uint32_t>{}, options ? options : ""};
}

// Device indices on the server for a device list (all of the context's when null).
bool DeviceIndices(cl_context ctx, cl_uint n, const cl_device_id* list, std::vector<uint32_t>* out) {
  if (!list) {
    for (auto* d : ctx->devices) out->push_back(d->index);
    return true;
  }
  for (cl_uint i = 0; i < n; ++i) {
    if (!ValidDevice(list[i]) || !ctx->HasDevice(list[i])) return false;
    out->push_back(list[i]->index);
  }
  return true;
}

// Whether options build a program whose launches may have non-uniform work-groups: the
// OpenCL C 2.0+ rule, unless -cl-uniform-work-group-size asks for uniform ones.
bool AllowsNonUniform(const std::string& options) {
  const bool cl2 = options.find("-cl-std=CL2.") != std::string::npos ||
                   options.find("-cl-std=CL3.") != std::string::npos;
  return cl2 && options.find("-cl-uniform-work-group-size") == std::string::npos;
}

_cl_program* NewProgram(cl_context ctx) {
  auto* p = new _cl_program();
  p->context = ctx;
  Hold(ctx);
  p->id = ctx->conn->NewId();
  return p;
}

}  // namespace

cl_program CreateProgramWithSource(cl_context ctx, cl_uint count, const char** strings,
                                   const size_t* lengths, cl_int* err) {
  if (!ValidContext(ctx)) return SetErr(err, CL_INVALID_CONTEXT), nullptr;
  // CL_INVALID_VALUE if count is zero or if strings or any entry in strings is NULL
  if (count == 0 || !strings) return SetErr(err, CL_INVALID_VALUE), nullptr;
  std::string src;
  for (cl_uint i = 0; i < count; ++i) {
    if (!strings[i]) return SetErr(err, CL_INVALID_VALUE), nullptr;
    if (lengths && lengths[i]) src.append(strings[i], lengths[i]);
    else src.append(strings[i]);
  }
  auto* p = NewProgram(ctx);
  p->source = src;
  const std::vector<uint8_t> body =
      proto::EncodeBody(proto::CreateProgramWithSourceRequest{p->id, ctx->id, std::move(src)});
  if (body.size() > proto::kMaxBody) {
    Drop(p);
    return SetErr(err, CL_OUT_OF_RESOURCES), nullptr;
  }
  ctx->conn->Send(Op::CreateProgramWithSource, body);
  SetErr(err, CL_SUCCESS);
  return p;
}

cl_program CreateProgramWithBinary(cl_context ctx, cl_uint n, const cl_device_id* devices,
                                   const size_t* lengths, const unsigned char** binaries,
                                   cl_int* binary_status, cl_int* err) {
  if (!ValidContext(ctx)) return SetErr(err, CL_INVALID_CONTEXT), nullptr;
  // CL_INVALID_VALUE if device_list is NULL or num_devices is zero
  if (!devices || n == 0) return SetErr(err, CL_INVALID_VALUE), nullptr;
  // CL_INVALID_VALUE if lengths or binaries are NULL or if any entry is zero or NULL
  if (!lengths || !binaries) return SetErr(err, CL_INVALID_VALUE), nullptr;
  std::vector<uint32_t> idx;
  if (!DeviceIndices(ctx, n, devices, &idx)) return SetErr(err, CL_INVALID_DEVICE), nullptr;
  for (cl_uint i = 0; i < n; ++i) {
    if (!lengths[i] || !binaries[i]) {
      if (binary_status) binary_status[i] = CL_INVALID_VALUE;
      return SetErr(err, CL_INVALID_VALUE), nullptr;
    }
  }
  auto* p = NewProgram(ctx);
  p->from_binary = true;
  proto::CreateProgramWithBinaryRequest req{p->id, ctx->id, {}};
  for (cl_uint i = 0; i < n; ++i) {
    const auto* bin = reinterpret_cast<const char*>(binaries[i]);
    req.binaries.push_back({idx[i], std::string(bin, lengths[i])});
  }
  Reply rep = ctx->conn->Call(Op::CreateProgramWithBinary, proto::EncodeBody(req));
  Reader r = rep.reader();
  proto::CreateProgramWithBinaryReply answer;
  if (proto::CreateProgramWithBinaryReply::Decode(r, &answer) && binary_status)
    for (size_t i = 0; i < answer.status.size() && i < n; ++i) binary_status[i] = answer.status[i];
  if (!rep.status.ok()) {
    delete p;  // the server kept nothing
    Drop(ctx);
    return SetErr(err, rep.status.code()), nullptr;
  }
  SetErr(err, CL_SUCCESS);
  return p;
}

cl_program CreateProgramWithBuiltInKernels(cl_context ctx, cl_uint, const cl_device_id*,
                                           const char*, cl_int* err) {
  // No built-in kernels are offered (CL_DEVICE_BUILT_IN_KERNELS is empty).
  return SetErr(err, ValidContext(ctx) ? CL_INVALID_VALUE : CL_INVALID_CONTEXT), nullptr;
}


cl_int RetainProgram(cl_program p) {
  if (!ValidProgram(p)) return CL_INVALID_PROGRAM;
  p->app_refs++;
  Hold(p);
  return CL_SUCCESS;
}

cl_int ReleaseProgram(cl_program p) {
  if (!ValidProgram(p)) return CL_INVALID_PROGRAM;
  if (p->app_refs.fetch_sub(1) == 1) {
    SendRelease(*p->context->conn, proto::ObjType::Program, p->id);
  }
  Drop(p);
  return CL_SUCCESS;
}

using BuildNotify = void(CL_CALLBACK*)(cl_program, void*);

cl_int BuildProgram(cl_program p, cl_uint n, const cl_device_id* list, const char* options,
                    BuildNotify notify, void* data) {
  if (!ValidProgram(p)) return CL_INVALID_PROGRAM;
  // CL_INVALID_VALUE if device_list is NULL and num_devices is greater than zero, or if
  // device_list is not NULL and num_devices is zero; or pfn_notify NULL but user_data not
  if ((!list && n > 0) || (list && n == 0) || (!notify && data)) return CL_INVALID_VALUE;
  std::vector<uint32_t> idx;
  if (!DeviceIndices(p->context, n, list, &idx)) return CL_INVALID_DEVICE;
  // CL_INVALID_OPERATION if there are kernel objects attached to program
  if (p->kernel_count.load() > 0) return CL_INVALID_OPERATION;
  const proto::BuildProgramRequest req{p->id, BuildTargetOf(list, idx, options)};
  Reply rep = p->context->conn->Call(Op::BuildProgram, proto::EncodeBody(req));
  ReadKernelList(p, rep.reader());
  p->non_uniform_ok = AllowsNonUniform(options ? options : "");
  if (!rep.status.ok()) {
    std::lock_guard lk(p->mu);
    p->built = false;
  }
  if (notify) notify(p, data);  // the build is complete when we return: call at once
  return rep.status.ok() ? CL_SUCCESS : rep.status.code();
}

cl_int CompileProgram(cl_program p, cl_uint n, const cl_device_id* list, const char* options,
                      cl_uint num_headers, const cl_program* headers, const char** header_names,
                      BuildNotify notify, void* data) {
  if (!ValidProgram(p)) return CL_INVALID_PROGRAM;
  if ((!list && n > 0) || (list && n == 0) || (!notify && data)) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if num_input_headers is zero and header_include_names or input_headers
  // are not NULL, or non-zero and either is NULL
  if ((num_headers == 0) != (headers == nullptr) || (num_headers == 0) != (header_names == nullptr))
    return CL_INVALID_VALUE;
  std::vector<uint32_t> idx;
  if (!DeviceIndices(p->context, n, list, &idx)) return CL_INVALID_DEVICE;
  if (p->kernel_count.load() > 0) return CL_INVALID_OPERATION;
  proto::CompileProgramRequest req{p->id, BuildTargetOf(list, idx, options), {}};
  for (cl_uint i = 0; i < num_headers; ++i) {
    if (!ValidProgram(headers[i])) return CL_INVALID_PROGRAM;
    req.headers.push_back({headers[i]->id, header_names[i] ? header_names[i] : ""});
  }
  Reply rep = p->context->conn->Call(Op::CompileProgram, proto::EncodeBody(req));
  p->non_uniform_ok = AllowsNonUniform(options ? options : "");
  if (notify) notify(p, data);
  return rep.status.ok() ? CL_SUCCESS : rep.status.code();
}

cl_program LinkProgram(cl_context ctx, cl_uint n, const cl_device_id* list, const char* options,
                       cl_uint num_inputs, const cl_program* inputs, BuildNotify notify, void* data,
                       cl_int* err) {
  if (!ValidContext(ctx)) return SetErr(err, CL_INVALID_CONTEXT), nullptr;
  if ((!list && n > 0) || (list && n == 0) || num_inputs == 0 || !inputs || (!notify && data))
    return SetErr(err, CL_INVALID_VALUE), nullptr;
  std::vector<uint32_t> idx;
  if (!DeviceIndices(ctx, n, list, &idx)) return SetErr(err, CL_INVALID_DEVICE), nullptr;
  for (cl_uint i = 0; i < num_inputs; ++i)
    if (!ValidProgram(inputs[i]) || inputs[i]->context != ctx)
      return SetErr(err, CL_INVALID_PROGRAM), nullptr;
  auto* p = NewProgram(ctx);
  proto::LinkProgramRequest req{p->id, ctx->id, BuildTargetOf(list, idx, options), {}};
  for (cl_uint i = 0; i < num_inputs; ++i) req.inputs.push_back(inputs[i]->id);
  Reply rep = ctx->conn->Call(Op::LinkProgram, proto::EncodeBody(req));
  if (!rep.status.ok()) {
    delete p;
    Drop(ctx);
    return SetErr(err, rep.status.code()), nullptr;
  }
  ReadKernelList(p, rep.reader());
  // Linked objects keep the language of their compile unless linking asks for uniform groups.
  bool non_uniform = true;
  for (cl_uint i = 0; i < num_inputs; ++i) non_uniform = non_uniform && inputs[i]->non_uniform_ok;
  p->non_uniform_ok = non_uniform && !(options && std::strstr(options, "-cl-uniform-work-group-size"));
  if (notify) notify(p, data);
  SetErr(err, CL_SUCCESS);
  return p;
}

cl_int GetProgramInfo(cl_program p, cl_program_info param, size_t size, void* value,
                      size_t* size_ret) {
  if (!ValidProgram(p)) return CL_INVALID_PROGRAM;
  cl_context ctx = p->context;
  switch (param) {
    case CL_PROGRAM_REFERENCE_COUNT: return ReturnValue<cl_uint>(p->app_refs.load(), size, value, size_ret);
    case CL_PROGRAM_CONTEXT: return ReturnValue(ctx, size, value, size_ret);
    case CL_PROGRAM_NUM_DEVICES: return ReturnValue<cl_uint>(ctx->devices.size(), size, value, size_ret);
    case CL_PROGRAM_DEVICES:
      return ReturnInfo(ctx->devices.data(), ctx->devices.size() * sizeof(cl_device_id), size, value,
                        size_ret);
    case CL_PROGRAM_SOURCE:
      if (p->from_binary) return ReturnString("", size, value, size_ret);
      return ReturnString(p->source, size, value, size_ret);
    case CL_PROGRAM_BINARIES: {
      // value is an array of pointers, one per device, each to CL_PROGRAM_BINARY_SIZES bytes.
      size_t need = ctx->devices.size() * sizeof(unsigned char*);
      if (size_ret) *size_ret = need;
      if (!value) return CL_SUCCESS;
      if (size < need) return CL_INVALID_VALUE;
      // The answer's size from the binaries' sizes (each travels with a 4-byte length), so
      // that a query of small binaries does not zero-fill a buffer of the frame limit.
      std::vector<size_t> sizes(ctx->devices.size());
      cl_int rc = RemoteInfo(*ctx->conn, InfoFamily::Program, p->id, CL_PROGRAM_BINARY_SIZES, -1, 0,
                             sizes.size() * sizeof(size_t), sizes.data(), nullptr);
      if (rc != CL_SUCCESS) return rc;
      size_t answer = 0;
      for (size_t s : sizes) answer += 4 + std::min<size_t>(s, proto::kMaxBody);
      std::vector<uint8_t> blob(std::min<size_t>(answer, proto::kMaxBody));
      size_t got = 0;
      rc = RemoteInfo(*ctx->conn, InfoFamily::Program, p->id, CL_PROGRAM_BINARIES, -1, 0,
                      blob.size(), blob.data(), &got);
      if (rc != CL_SUCCESS) return rc;
      proto::Reader r(blob.data(), got);
      auto** outs = static_cast<unsigned char**>(value);
      for (size_t i = 0; i < ctx->devices.size(); ++i) {
        auto bin = r.bytes(proto::kMaxBody);
        if (!r.ok()) return CL_OUT_OF_RESOURCES;
        if (outs[i]) std::memcpy(outs[i], bin.data(), bin.size());
      }
      return CL_SUCCESS;
    }
    default:
      return RemoteInfo(*ctx->conn, InfoFamily::Program, p->id, param, -1, 0, size, value, size_ret);
  }
}

cl_int GetProgramBuildInfo(cl_program p, cl_device_id d, cl_program_build_info param, size_t size,
                           void* value, size_t* size_ret) {
  if (!ValidProgram(p)) return CL_INVALID_PROGRAM;
  if (!ValidDevice(d) || !p->context->HasDevice(d)) return CL_INVALID_DEVICE;
  return RemoteInfo(*p->context->conn, InfoFamily::ProgramBuild, p->id, param, d->index, 0, size,
                    value, size_ret);
}

// ------------------------------------------------------------------ kernels

cl_kernel CreateKernel(cl_program p, const char* name, cl_int* err) {
  if (!ValidProgram(p)) return SetErr(err, CL_INVALID_PROGRAM), nullptr;
  if (!name) return SetErr(err, CL_INVALID_VALUE), nullptr;
  cl_uint nargs;
  std::vector<ArgShape> shapes;
  {
    std::lock_guard lk(p->mu);
    // CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable for program
    if (!p->built) return SetErr(err, CL_INVALID_PROGRAM_EXECUTABLE), nullptr;
    // CL_INVALID_KERNEL_NAME if kernel_name is not found in program
    auto it = p->kernels.find(name);
    if (it == p->kernels.end()) return SetErr(err, CL_INVALID_KERNEL_NAME), nullptr;
    nargs = it->second;
    if (auto sh = p->arg_shapes.find(name); sh != p->arg_shapes.end()) shapes = sh->second;
  }
  auto* k = new _cl_kernel();
  k->program = p;
  Hold(p);
  p->kernel_count++;
  k->name = name;
  k->num_args = nargs;
  k->arg_shapes = std::move(shapes);
  k->arg_set.assign(nargs, false);
  k->id = p->context->conn->NewId();
  p->context->conn->Send(Op::CreateKernel,
                         proto::EncodeBody(proto::CreateKernelRequest{k->id, p->id, name}));
  SetErr(err, CL_SUCCESS);
  return k;
}

cl_int CreateKernelsInProgram(cl_program p, cl_uint n, cl_kernel* kernels, cl_uint* n_ret) {
  if (!ValidProgram(p)) return CL_INVALID_PROGRAM;
  std::vector<std::string> names;
  {
    std::lock_guard lk(p->mu);
    if (!p->built) return CL_INVALID_PROGRAM_EXECUTABLE;
    for (auto& [name, nargs] : p->kernels) names.push_back(name);
  }
  // CL_INVALID_VALUE if kernels is not NULL and num_kernels is less than the number of
  // kernels in program
  if (kernels && n < names.size()) return CL_INVALID_VALUE;
  if (n_ret) *n_ret = static_cast<cl_uint>(names.size());
  if (kernels)
    for (size_t i = 0; i < names.size(); ++i) kernels[i] = CreateKernel(p, names[i].c_str(), nullptr);
  return CL_SUCCESS;
}


cl_int RetainKernel(cl_kernel k) {
  if (!ValidKernel(k)) return CL_INVALID_KERNEL;
  k->app_refs++;
  Hold(k);
  return CL_SUCCESS;
}

cl_int ReleaseKernel(cl_kernel k) {
  if (!ValidKernel(k)) return CL_INVALID_KERNEL;
  if (k->app_refs.fetch_sub(1) == 1) {
    SendRelease(*k->program->context->conn, proto::ObjType::Kernel, k->id);
  }
  Drop(k);
  return CL_SUCCESS;
}

namespace {
// The checks the device makes (its argument shapes, learned at build) in the order of the
// specification's list; CL_SUCCESS if the argument may be set.
cl_int CheckArgAgainstDevice(const ArgShape& shape, size_t size, const void* value) {
  switch (shape.kind) {
    case ArgShape::Local:
      // CL_INVALID_ARG_VALUE if arg_value specified is not NULL for an argument declared
      // with the __local qualifier
      if (value) return CL_INVALID_ARG_VALUE;
      // CL_INVALID_ARG_SIZE if arg_size is zero and the argument is declared with the
      // __local qualifier (shape.size is 1; 0 where the device itself takes a zero size)
      return size < shape.size ? CL_INVALID_ARG_SIZE : CL_SUCCESS;
    case ArgShape::Mem:
      // CL_INVALID_ARG_SIZE if the argument is a memory object and arg_size !=
      // sizeof(cl_mem)
      if (size != sizeof(cl_mem)) return CL_INVALID_ARG_SIZE;
      // CL_INVALID_MEM_OBJECT for an argument declared to be a memory object when the
      // specified arg_value is not a valid memory object
      if (value && *static_cast<void* const*>(value) &&
          !IsOurMem(*static_cast<void* const*>(value)))
        return CL_INVALID_MEM_OBJECT;
      // An image is not a buffer (rgpud refuses it at launch; some devices would not check).
      if (value && *static_cast<void* const*>(value) && (*static_cast<const cl_mem*>(value))->image)
        return CL_INVALID_MEM_OBJECT;
      return CL_SUCCESS;
    case ArgShape::Value:
      // CL_INVALID_ARG_SIZE if arg_size does not match the size of the data type for an
      // argument that is not a memory object
      if (size != shape.size && (shape.also == 0 || size != shape.also)) return CL_INVALID_ARG_SIZE;
      // CL_INVALID_ARG_VALUE if arg_value specified is NULL for an argument that is not
      // declared with the __local qualifier
      return value ? CL_SUCCESS : CL_INVALID_ARG_VALUE;
    case ArgShape::Image:
      // CL_INVALID_MEM_OBJECT for an argument declared to be an image when the specified
      // arg_value is not a valid image object
      if (size != sizeof(cl_mem)) return CL_INVALID_ARG_SIZE;
      if (!value) return CL_INVALID_ARG_VALUE;
      if (!IsOurMem(*static_cast<void* const*>(value)) ||
          !(*static_cast<const cl_mem*>(value))->image)
        return CL_INVALID_MEM_OBJECT;
      return CL_SUCCESS;
    case ArgShape::Sampler:
      // CL_INVALID_SAMPLER for an argument declared to be of type sampler_t when the
      // specified arg_value is not a valid sampler object
      if (size != sizeof(cl_sampler)) return CL_INVALID_ARG_SIZE;
      if (!value) return CL_INVALID_ARG_VALUE;
      if (!IsOurSampler(*static_cast<void* const*>(value))) return CL_INVALID_SAMPLER;
      return CL_SUCCESS;
    default:
      return CL_SUCCESS;
  }
}
}  // namespace

cl_kernel CloneKernel(cl_kernel source, cl_int* err) {
  // CL_INVALID_KERNEL if kernel is not a valid kernel object
  if (!ValidKernel(source)) return SetErr(err, CL_INVALID_KERNEL), nullptr;
  cl_program p = source->program;
  auto* k = new _cl_kernel();
  k->program = p;
  Hold(p);
  p->kernel_count++;
  k->name = source->name;
  k->num_args = source->num_args;
  k->arg_shapes = source->arg_shapes;
  {
    std::lock_guard lk(source->mu);
    k->arg_set = source->arg_set;
  }
  k->id = p->context->conn->NewId();
  p->context->conn->Send(Op::CloneKernel,
                         proto::EncodeBody(proto::CloneKernelRequest{k->id, source->id}));
  SetErr(err, CL_SUCCESS);
  return k;
}

cl_int SetKernelArg(cl_kernel k, cl_uint index, size_t size, const void* value) {
  if (!ValidKernel(k)) return CL_INVALID_KERNEL;
  // CL_INVALID_ARG_INDEX if arg_index is not a valid argument index
  if (index >= k->num_args) return CL_INVALID_ARG_INDEX;
  const ArgShape shape = index < k->arg_shapes.size() ? k->arg_shapes[index] : ArgShape{};
  if (cl_int rc = CheckArgAgainstDevice(shape, size, value); rc != CL_SUCCESS) return rc;
  using ArgKind = proto::SetKernelArgRequest::Kind;
  proto::SetKernelArgRequest arg;
  arg.kernel = k->id;
  arg.index = index;
  // Where the device could not say that an argument takes an object (a program built from a
  // binary, without argument info: an image or a sampler probes as an 8-byte value), a value
  // that is one of our objects is sent as that object, never as its address.
  const bool maybe_object = shape.kind == ArgShape::Unchecked ||
                            (shape.kind == ArgShape::Value && shape.size == sizeof(void*));
  const bool is_sampler = shape.kind == ArgShape::Sampler ||
                          (maybe_object && value && size == sizeof(cl_sampler) &&
                           IsOurSampler(*static_cast<void* const*>(value)));
  const bool is_mem = shape.kind == ArgShape::Mem || shape.kind == ArgShape::Image ||
                      (shape.kind == ArgShape::Value && value && size == sizeof(cl_mem) &&
                       maybe_object && IsOurMem(*static_cast<void* const*>(value))) ||
                      (shape.kind == ArgShape::Unchecked && value && size == sizeof(cl_mem) &&
                       (*static_cast<void* const*>(value) == nullptr ||
                        IsOurMem(*static_cast<void* const*>(value))));
  if (shape.kind == ArgShape::Local || (shape.kind == ArgShape::Unchecked && value == nullptr)) {
    // A __local argument: only its size is given. CL_INVALID_ARG_SIZE if it is 0, unless the
    // device itself takes 0 (its shape says so; CheckArgAgainstDevice applied it).
    if (size == 0 && shape.kind != ArgShape::Local) return CL_INVALID_ARG_SIZE;
    arg.kind = ArgKind::Local;
    arg.local_size = size;
  } else if (is_sampler) {
    cl_sampler smp = *static_cast<const cl_sampler*>(value);
    if (smp->context != k->program->context) return CL_INVALID_SAMPLER;
    arg.kind = ArgKind::Sampler;
    arg.object = smp->id;
  } else if (is_mem) {
    // A buffer, or a NULL one (a NULL arg_value or a pointer to NULL). Unchecked, an 8-byte
    // zero scalar takes this path too and reaches the device as the same 8 zero bytes.
    cl_mem m = value ? *static_cast<const cl_mem*>(value) : nullptr;
    if (m && m->context != k->program->context) return CL_INVALID_MEM_OBJECT;
    if (m == nullptr) {
      arg.kind = ArgKind::Bytes;
      arg.bytes.assign(sizeof(cl_mem), 0);
    } else {
      arg.kind = ArgKind::Mem;
      arg.object = m->id;
    }
  } else {
    if (size == 0 || size > proto::kMaxArgBytes) return CL_INVALID_ARG_SIZE;
    arg.kind = ArgKind::Bytes;
    const auto* v = static_cast<const uint8_t*>(value);
    arg.bytes.assign(v, v + size);
  }
  {
    std::lock_guard lk(k->mu);
    k->arg_set[index] = true;
  }
  k->program->context->conn->Send(Op::SetKernelArg, arg.Encode());
  return CL_SUCCESS;
}

cl_int GetKernelInfo(cl_kernel k, cl_kernel_info param, size_t size, void* value, size_t* size_ret) {
  if (!ValidKernel(k)) return CL_INVALID_KERNEL;
  switch (param) {
    case CL_KERNEL_FUNCTION_NAME: return ReturnString(k->name, size, value, size_ret);
    case CL_KERNEL_NUM_ARGS: return ReturnValue(k->num_args, size, value, size_ret);
    case CL_KERNEL_REFERENCE_COUNT: return ReturnValue<cl_uint>(k->app_refs.load(), size, value, size_ret);
    case CL_KERNEL_CONTEXT: return ReturnValue(k->program->context, size, value, size_ret);
    case CL_KERNEL_PROGRAM: return ReturnValue(k->program, size, value, size_ret);
    default:
      return RemoteInfo(*k->program->context->conn, InfoFamily::Kernel, k->id, param, -1, 0, size,
                        value, size_ret);
  }
}

cl_int GetKernelWorkGroupInfo(cl_kernel k, cl_device_id d, cl_kernel_work_group_info param,
                              size_t size, void* value, size_t* size_ret) {
  if (!ValidKernel(k)) return CL_INVALID_KERNEL;
  cl_context ctx = k->program->context;
  // CL_INVALID_DEVICE if device is not associated with kernel, or is NULL while the kernel
  // is associated with more than one device
  if (!d && ctx->devices.size() == 1) d = ctx->devices[0];
  if (!ValidDevice(d) || !ctx->HasDevice(d)) return CL_INVALID_DEVICE;
  return RemoteInfo(*ctx->conn, InfoFamily::KernelWorkGroup, k->id, param, d->index, 0, size, value,
                    size_ret);
}

cl_int GetKernelArgInfo(cl_kernel k, cl_uint index, cl_kernel_arg_info param, size_t size,
                        void* value, size_t* size_ret) {
  if (!ValidKernel(k)) return CL_INVALID_KERNEL;
  if (index >= k->num_args) return CL_INVALID_ARG_INDEX;
  return RemoteInfo(*k->program->context->conn, InfoFamily::KernelArg, k->id, param, -1, index,
                    size, value, size_ret);
}

}  // namespace rgpu::client

_cl_program::~_cl_program() { rgpu::client::Drop(context); }

_cl_kernel::~_cl_kernel() {
  program->kernel_count--;
  rgpu::client::Drop(program);
}
