// How the tenants of a scenario share the GPU. The runner sets a mode up
// before the first config and tears it down after the last.
//
//   timeslice  separate CUDA processes, default compute mode: the GPU
//              time-slices between their contexts
//   mps        a private MPS control daemon, started and stopped here, with
//              its own pipe and log directories (nothing global is touched;
//              the compute mode and other GPU settings are never changed)
//   opencl     separate OpenCL processes on a native platform (NVIDIA, PoCL)
//   rgpu       OpenCL processes through an rgpud started here, via the rgpu
//              ICD (OCL_ICD_VENDORS) and platform "rgpu"; with context_group,
//              every worker of a config is a tenant of its own and all of them
//              share rgpud's context group "lab" (one device context)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rgpu::lab {

struct ModeOptions {
  std::string mode;
  std::string cl_platform;     // opencl mode: platform name substring
  std::string rgpu_build_dir;  // rgpu mode: where rgpud and icd/ live
  std::string rgpud_path;      // rgpu mode: explicit rgpud binary (optional)
  std::string policy;          // rgpu mode: --policy for rgpud (optional)
  std::string log_dir;         // daemon logs go here
  bool context_group = false;  // rgpu mode: all workers in one context group
  int tenants = 0;             // rgpu mode with context_group: the most workers of one config
  std::vector<std::string> rgpud_args{};  // rgpu mode: more options for rgpud, as given
};

class SharingMode {
 public:
  virtual ~SharingMode() = default;
  virtual std::string name() const = 0;
  // "cuda" or "opencl": which worker runs the GPU kernels.
  virtual std::string api() const = 0;
  // Environment and options every GPU worker gets in this mode. `worker` is its
  // position among the processes of its config (0, 1, ...); only rgpu mode with a
  // context group tells workers apart (each has a token of its own).
  virtual std::vector<std::string> WorkerEnv(int worker) const { return {}; }
  virtual std::vector<std::string> WorkerArgs() const { return {}; }
  // Facts for the result file's environment header.
  virtual nlohmann::json Describe() const { return nlohmann::json::object(); }
  // Stops daemons. Safe to call twice; the destructor calls it too.
  virtual void Finish() {}
};

std::unique_ptr<SharingMode> StartSharingMode(const ModeOptions& options);

}  // namespace rgpu::lab
