// The rgpu platform and its devices; the ICD entry points the loader looks up.
#include <CL/cl_ext.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <sstream>

#include "client/discovery.h"
#include "client/icd.h"
#include "proto/messages.h"

namespace rgpu::client {
namespace {

// The newest OpenCL rgpu carries; each device reports its own version up to this.
constexpr char kPlatformVersion[] = "OpenCL 3.0 rgpu 0.1.0";
// How long we try each server before reporting no devices; servers are tried in parallel.
constexpr auto kConnectTimeout = std::chrono::milliseconds(1500);
// After no server answered, wait this long before trying again on the next query.
constexpr auto kRetryAfter = std::chrono::seconds(2);

std::mutex g_devices_mu;
// Root devices live as long as the process (OpenCL never releases them). The list is never
// destroyed, so it stays valid during exit and leak checkers see the devices as reachable.
std::vector<cl_device_id>& g_devices = *new std::vector<cl_device_id>;  // GUARDED_BY(g_devices_mu)
std::chrono::steady_clock::time_point g_last_attempt;  // GUARDED_BY(g_devices_mu)
bool g_attempted = false;  // GUARDED_BY(g_devices_mu)

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string AsString(const std::vector<uint8_t>& v) {
  std::string s(v.begin(), v.end());
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}
void SetString(std::vector<uint8_t>& v, const std::string& s) {
  v.assign(s.begin(), s.end());
  v.push_back(0);
}

// Extensions that need no entry point we lack (compiler-side features) pass through.
bool ExtensionServed(const std::string& e) {
  static const char* kPrefixes[] = {"cl_khr_fp64", "cl_khr_fp16", "cl_khr_int64",
                                    "cl_khr_global_int32", "cl_khr_local_int32",
                                    "cl_khr_byte_addressable_store", "cl_khr_icd",
                                    "cl_nv_compiler_options", "cl_nv_device_attribute_query",
                                    "cl_nv_pragma_unroll", "cl_khr_subgroup_", "cl_khr_integer_dot",
                                    "cl_khr_extended_bit_ops", "cl_intel_subgroups",
                                    "cl_khr_3d_image_writes", "cl_khr_image2d_from_buffer",
                                    "cl_khr_depth_images", "cl_khr_srgb_image_writes"};
  for (const char* p : kPrefixes)
    if (e.rfind(p, 0) == 0) return true;
  return false;
}

template <typename T>
void SetValue(std::vector<uint8_t>& v, T x) {
  v.assign(reinterpret_cast<uint8_t*>(&x), reinterpret_cast<uint8_t*>(&x) + sizeof(x));
}

// "OpenCL X.Y rest" -> X * 10 + Y (0 if unreadable).
int VersionOf(const std::string& v) {
  int major = 0, minor = 0;
  return std::sscanf(v.c_str(), "OpenCL %d.%d", &major, &minor) == 2 ? major * 10 + minor : 0;
}

// Keeps the entries of a cl_name_version array whose name passes `keep`.
void FilterNameVersions(std::vector<uint8_t>& v, bool (*keep)(const std::string&)) {
  std::vector<uint8_t> out;
  for (size_t at = 0; at + sizeof(cl_name_version) <= v.size(); at += sizeof(cl_name_version)) {
    cl_name_version nv;
    std::memcpy(&nv, v.data() + at, sizeof(nv));
    nv.name[CL_NAME_VERSION_MAX_NAME_SIZE - 1] = 0;
    if (keep(nv.name)) out.insert(out.end(), v.data() + at, v.data() + at + sizeof(nv));
  }
  v = std::move(out);
}

// OpenCL C features that need what rgpu does not carry: pipes, device-side enqueue,
// sub-groups (clGetKernelSubGroupInfo).
bool FeatureServed(const std::string& f) {
  static const char* kAbsent[] = {"__opencl_c_pipes", "__opencl_c_device_enqueue",
                                  "__opencl_c_subgroups"};
  for (const char* a : kAbsent)
    if (f == a) return false;
  return true;
}

// Optional OpenCL 3.0 features rgpu cannot carry over a network, reported absent the way
// the specification allows (docs/architecture.md, "OpenCL 3.0 features").
void HideUncarried30(std::map<uint32_t, std::vector<uint8_t>>& info) {
  SetValue<cl_device_svm_capabilities>(info[CL_DEVICE_SVM_CAPABILITIES], 0);
  SetValue<cl_bool>(info[CL_DEVICE_PIPE_SUPPORT], CL_FALSE);
  for (cl_uint p : {CL_DEVICE_MAX_PIPE_ARGS, CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS,
                    CL_DEVICE_PIPE_MAX_PACKET_SIZE, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE,
                    CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, CL_DEVICE_MAX_ON_DEVICE_QUEUES,
                    CL_DEVICE_MAX_ON_DEVICE_EVENTS, CL_DEVICE_MAX_NUM_SUB_GROUPS})
    SetValue<cl_uint>(info[p], 0);
  SetValue<cl_bool>(info[CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS], CL_FALSE);
  SetValue<cl_device_device_enqueue_capabilities>(info[CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES], 0);
  SetValue<cl_command_queue_properties>(info[CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES], 0);
  SetString(info[CL_DEVICE_IL_VERSION], "");
  info[CL_DEVICE_ILS_WITH_VERSION].clear();
  info[CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION].clear();
  FilterNameVersions(info[CL_DEVICE_EXTENSIONS_WITH_VERSION], ExtensionServed);
  FilterNameVersions(info[CL_DEVICE_OPENCL_C_FEATURES], FeatureServed);
}

// The device as the application sees it: the server's answers, except where rgpu speaks
// for itself (the OpenCL version it carries, extensions needing entry points). Images and
// samplers are the device's own: its image support, limits and formats pass through.
void PresentDevice(_cl_device_id* d) {
  auto& info = d->info;
  // OpenCL 3.0 devices keep their version. 2.x makes SVM, pipes and device-side enqueue
  // mandatory, which rgpu cannot carry: such a device (and a newer one, until rgpu knows its
  // version) is presented as OpenCL 1.2, without the queries newer than 1.2.
  auto version = AsString(info[CL_DEVICE_VERSION]);  // "OpenCL X.Y vendor-specific"
  if (VersionOf(version) != 30) {
    for (auto it = info.begin(); it != info.end();)
      it = (it->first >= 0x104A && it->first < 0x4000) ? info.erase(it) : std::next(it);
    std::string rest = version.size() > 10 ? version.substr(10) : "";
    if (auto sp = rest.find(' '); sp != std::string::npos) rest = rest.substr(sp);
    else rest = "";
    if (VersionOf(version) > 12) {
      SetString(info[CL_DEVICE_VERSION], "OpenCL 1.2" + rest);
      SetString(info[CL_DEVICE_OPENCL_C_VERSION], "OpenCL C 1.2 ");
    }
  } else {
    HideUncarried30(info);
  }
  std::string ext_out;
  for (const auto& e : Split(AsString(info[CL_DEVICE_EXTENSIONS]), ' '))
    if (ExtensionServed(e)) ext_out += e + " ";
  SetString(info[CL_DEVICE_EXTENSIONS], ext_out);
  SetString(info[CL_DEVICE_BUILT_IN_KERNELS], "");
  SetValue<cl_uint>(info[CL_DEVICE_PARTITION_MAX_SUB_DEVICES], 0);
  // No sub-devices: an empty partition list is {0}.
  SetValue<cl_device_partition_property>(info[CL_DEVICE_PARTITION_PROPERTIES], 0);
  info[CL_DEVICE_PARTITION_TYPE].clear();
  SetValue<cl_device_affinity_domain>(info[CL_DEVICE_PARTITION_AFFINITY_DOMAIN], 0);
}

}  // namespace

cl_platform_id ThePlatform() {
  static _cl_platform_id platform;
  return &platform;
}

std::vector<cl_device_id> AllDevices() {
  std::lock_guard lk(g_devices_mu);
  auto now = std::chrono::steady_clock::now();
  if (!g_devices.empty() || (g_attempted && now - g_last_attempt < kRetryAfter)) return g_devices;
  g_attempted = true;
  g_last_attempt = now;
  const char* env = std::getenv("RGPU_SERVER");
  const Discovery found = Discover(env && *env ? env : "127.0.0.1:7420", kConnectTimeout);
  const std::vector<std::string>& servers = found.servers;
  if (servers.empty() && std::getenv("RGPU_DEBUG"))
    std::fprintf(stderr, "rgpu: no servers: %s\n", found.error.c_str());
  const char* tok = std::getenv("RGPU_TOKEN");
  std::string token = tok ? tok : "";
  std::vector<std::future<Result<std::shared_ptr<Connection>>>> attempts;
  attempts.reserve(servers.size());
  for (const auto& s : servers)
    attempts.push_back(std::async(std::launch::async, [s, token] {
      return Connection::Open(s, token, kConnectTimeout);
    }));
  // A pool offers its devices least busy first (found.rank); a list keeps its own order.
  std::vector<std::pair<size_t, cl_device_id>> ranked;
  for (size_t i = 0; i < attempts.size(); ++i) {
    auto conn = attempts[i].get();
    if (!conn.ok()) {
      // A refusal (wrong token, too many sessions) or a TLS failure (untrusted server, no
      // client certificate) is always worth a line; an absent server only when debugging.
      const std::string& why = conn.status().message();
      if (std::getenv("RGPU_DEBUG") || why.find("refused:") != std::string::npos ||
          why.find("TLS") != std::string::npos)
        std::fprintf(stderr, "rgpu: no devices from %s: %s\n", servers[i].c_str(),
                     conn.status().message().c_str());
      continue;
    }
    RegisterConnectionCallbacks(*conn);
    for (size_t di = 0; di < (*conn)->devices().size(); ++di) {
      auto* d = new _cl_device_id();
      d->conn = *conn;
      d->index = (*conn)->devices()[di].server_index;
      d->info = (*conn)->devices()[di].info;
      PresentDevice(d);
      auto rank = found.rank.find({i, d->index});
      ranked.push_back({rank != found.rank.end() ? rank->second : found.rank.size() + ranked.size(), d});
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [rank, d] : ranked) g_devices.push_back(d);
  return g_devices;
}

cl_int ReturnInfo(const void* value, size_t value_size, size_t param_value_size,
                  void* param_value, size_t* param_value_size_ret) {
  if (param_value) {
    // CL_INVALID_VALUE if size in bytes specified by param_value_size is < size of return type
    if (param_value_size < value_size) return CL_INVALID_VALUE;
    if (value_size) std::memcpy(param_value, value, value_size);
  }
  if (param_value_size_ret) *param_value_size_ret = value_size;
  return CL_SUCCESS;
}

cl_int RemoteInfo(Connection& c, proto::InfoFamily family, uint64_t id, cl_uint param,
                  int32_t device, uint32_t aux, size_t size, void* out, size_t* size_ret) {
  const proto::GetInfoRequest req{family, id, param, device, aux};
  Reply rep = c.Call(proto::Op::GetInfo, proto::EncodeBody(req));
  if (!rep.status.ok()) return rep.status.code();
  proto::Reader r = rep.reader();
  proto::GetInfoReply value;
  if (!proto::GetInfoReply::Decode(r, &value)) return CL_OUT_OF_RESOURCES;
  const std::vector<uint8_t> v = value.ToHost();
  return ReturnInfo(v.data(), v.size(), size, out, size_ret);
}

// ------------------------------------------------------------------ API

cl_int GetPlatformInfo(cl_platform_id platform, cl_platform_info param, size_t size, void* value,
                       size_t* size_ret) {
  // CL_INVALID_PLATFORM if platform is not a valid platform
  if (platform != nullptr && platform != ThePlatform()) return CL_INVALID_PLATFORM;
  switch (param) {
    case CL_PLATFORM_PROFILE: return ReturnString("FULL_PROFILE", size, value, size_ret);
    case CL_PLATFORM_VERSION: return ReturnString(kPlatformVersion, size, value, size_ret);
    case CL_PLATFORM_NAME: return ReturnString("rgpu", size, value, size_ret);
    case CL_PLATFORM_VENDOR: return ReturnString("rgpu project", size, value, size_ret);
    case CL_PLATFORM_EXTENSIONS: return ReturnString("cl_khr_icd", size, value, size_ret);
    case CL_PLATFORM_ICD_SUFFIX_KHR: return ReturnString("RGPU", size, value, size_ret);
    case CL_PLATFORM_NUMERIC_VERSION:
      return ReturnValue<cl_version>(CL_MAKE_VERSION(3, 0, 0), size, value, size_ret);
    case CL_PLATFORM_EXTENSIONS_WITH_VERSION: {
      cl_name_version icd{CL_MAKE_VERSION(1, 0, 0), "cl_khr_icd"};
      return ReturnValue(icd, size, value, size_ret);
    }
    // 0: clGetDeviceAndHostTimer and clGetHostTimer are not offered.
    case CL_PLATFORM_HOST_TIMER_RESOLUTION: return ReturnValue<cl_ulong>(0, size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

cl_int GetDeviceIDs(cl_platform_id platform, cl_device_type type, cl_uint num_entries,
                    cl_device_id* devices, cl_uint* num_devices) {
  if (platform != nullptr && platform != ThePlatform()) return CL_INVALID_PLATFORM;
  // CL_INVALID_VALUE if num_entries is equal to zero and devices is not NULL or if both
  // num_devices and devices are NULL
  if ((num_entries == 0 && devices) || (!num_devices && !devices)) return CL_INVALID_VALUE;
  const cl_device_type known = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU |
                               CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM;
  if (type != CL_DEVICE_TYPE_ALL && (type & ~known)) return CL_INVALID_DEVICE_TYPE;
  std::vector<cl_device_id> match;
  for (cl_device_id d : AllDevices()) {
    cl_device_type t = d->Get<cl_device_type>(CL_DEVICE_TYPE);
    if (type == CL_DEVICE_TYPE_ALL || (type & t) ||
        (type == CL_DEVICE_TYPE_DEFAULT && match.empty()))
      match.push_back(d);
  }
  if (type == CL_DEVICE_TYPE_DEFAULT && match.size() > 1) match.resize(1);
  if (match.empty()) return CL_DEVICE_NOT_FOUND;
  if (num_devices) *num_devices = static_cast<cl_uint>(match.size());
  if (devices)
    for (cl_uint i = 0; i < num_entries && i < match.size(); ++i) devices[i] = match[i];
  return CL_SUCCESS;
}

cl_int GetDeviceInfo(cl_device_id d, cl_device_info param, size_t size, void* value,
                     size_t* size_ret) {
  if (!ValidDevice(d)) return CL_INVALID_DEVICE;
  switch (param) {
    case CL_DEVICE_PLATFORM: return ReturnValue(ThePlatform(), size, value, size_ret);
    case CL_DEVICE_PARENT_DEVICE: return ReturnValue<cl_device_id>(nullptr, size, value, size_ret);
    case CL_DEVICE_REFERENCE_COUNT: return ReturnValue<cl_uint>(1, size, value, size_ret);
    default: break;
  }
  auto it = d->info.find(param);
  if (it != d->info.end()) return ReturnInfo(it->second.data(), it->second.size(), size, value, size_ret);
  // Newer than the device's presented version (hidden on purpose) or unknown to the server.
  return CL_INVALID_VALUE;
}

cl_int CreateSubDevices(cl_device_id, const cl_device_partition_property*, cl_uint, cl_device_id*,
                        cl_uint*) {
  return CL_INVALID_VALUE;  // partitioning is not offered (CL_DEVICE_PARTITION_MAX_SUB_DEVICES 0)
}
cl_int RetainDevice(cl_device_id d) { return ValidDevice(d) ? CL_SUCCESS : CL_INVALID_DEVICE; }
cl_int ReleaseDevice(cl_device_id d) { return ValidDevice(d) ? CL_SUCCESS : CL_INVALID_DEVICE; }
cl_int UnloadPlatformCompiler(cl_platform_id p) {
  return p == ThePlatform() ? CL_SUCCESS : CL_INVALID_PLATFORM;
}
cl_int UnloadCompiler() { return CL_SUCCESS; }

}  // namespace rgpu::client

extern "C" {

__attribute__((visibility("default"))) cl_int clIcdGetPlatformIDsKHR(cl_uint num_entries,
                                                                    cl_platform_id* platforms,
                                                                    cl_uint* num_platforms) {
  if ((num_entries == 0 && platforms) || (!platforms && !num_platforms)) return CL_INVALID_VALUE;
  if (platforms && num_entries > 0) platforms[0] = rgpu::client::ThePlatform();
  if (num_platforms) *num_platforms = 1;
  return CL_SUCCESS;
}

__attribute__((visibility("default"))) void* clGetExtensionFunctionAddress(const char* name) {
  if (name && std::strcmp(name, "clIcdGetPlatformIDsKHR") == 0)
    return reinterpret_cast<void*>(&clIcdGetPlatformIDsKHR);
  return nullptr;
}

__attribute__((visibility("default"))) void* clGetExtensionFunctionAddressForPlatform(
    cl_platform_id, const char* name) {
  return clGetExtensionFunctionAddress(name);
}

__attribute__((visibility("default"))) cl_int clGetPlatformInfo(cl_platform_id platform,
                                                               cl_platform_info param,
                                                               size_t size, void* value,
                                                               size_t* size_ret) {
  return rgpu::client::GetPlatformInfo(platform, param, size, value, size_ret);
}

}  // extern "C"
