// Kernel slicing that never changes a result.
//
// The scheduler may run one clEnqueueNDRangeKernel as several sub-launches ("slices"), each
// covering a range of whole work-groups and placed with a global work offset. OpenCL's offset
// moves only get_global_id: get_group_id, get_num_groups, get_global_size, get_global_offset and
// get_global_linear_id would describe the slice, not the launch. This library
//
//   1. rewrites a program's source so that every kernel takes one hidden argument (a ulong16
//      describing the whole launch and where the slice sits in it) and those built-ins read it,
//   2. plans slices of a launch and computes the hidden argument of each slice.
//
// What it cannot rewrite with certainty it refuses, with a reason; such programs run whole.
// docs/scheduling.md ("Slicing without changing results") describes the rewrite and its limits.
//
// Threading: every function here is pure (no shared state) and may be called from any thread.

#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/status.h"

namespace rgpu::slicer {

// ---------------------------------------------------------------------------------------------
// Errors are values (rgpu::Status, proto/status.h). A refusal is not a failure of the daemon:
// the caller runs the work whole and logs the reason (message()); its code never reaches an
// application.

using rgpu::Result;
using rgpu::Status;
inline Status Refused(std::string reason) {
  return Status::Error(CL_INVALID_OPERATION, std::move(reason));
}

// ---------------------------------------------------------------------------------------------
// Rewriting a program.

// Every kernel of a rewritten program has exactly this many extra arguments, placed after the
// application's own: user argument count N means the hidden argument is argument N. The server
// sets it on every launch of a kernel from a rewritten program (HiddenArgForWholeLaunch() when
// the launch is not sliced) and hides it from the application (CL_KERNEL_NUM_ARGS reports N).
inline constexpr cl_uint kHiddenArgCount = 2;
// The hidden argument's OpenCL C type and name, as appended to the kernel signatures.
inline constexpr std::string_view kHiddenArgType = "ulong16";
inline constexpr std::string_view kHiddenArgName = "__rgpu_launch";
// The second hidden argument (index N + 1): the control words of a preemptible run (stop flag,
// group counter, limit; see PlanRun). Launches that are not runs pass NULL; it is not read.
inline constexpr std::string_view kControlArgType = "volatile __global uint*";
inline constexpr std::string_view kControlArgName = "__rgpu_ctl";

struct KernelInfo {
  std::string name;
  // Arguments the application sees and sets; the hidden argument has this index.
  cl_uint user_arg_count = 0;
  // True when the kernel (or anything it calls) depends on the work-group shape: local ids and
  // sizes, group ids and counts, barriers, local memory, work-group or sub-group functions,
  // reqd_work_group_size. Such a kernel cannot be sliced when the launch leaves the local size
  // to the driver, whose choice rgpu cannot see (see PlanSlices).
  bool observes_work_groups = false;
};

struct RewrittenProgram {
  // Build this instead of the application's source (with the application's build options).
  std::string source;
  // Every kernel definition found, in source order, one entry per name.
  std::vector<KernelInfo> kernels;
  // Non-kernel functions that were given the hidden parameter because they (or functions they
  // call) use a rewritten built-in. For logs and tests.
  std::vector<std::string> helpers_given_launch;

  const KernelInfo* FindKernel(std::string_view name) const;
};

// Rewrites `source` (an OpenCL C program given to clCreateProgramWithSource, all strings
// concatenated) for slicing. `build_options` are the options the application passes to
// clBuildProgram: its -D macros are taken into account like #defines.
// Refuses, with a reason, any program it does not understand completely; the caller then
// builds the original source and runs its kernels whole. Programs created from binaries or IL,
// or through clCompileProgram/clLinkProgram, must not be passed here: they are never sliced.
Result<RewrittenProgram> RewriteForSlicing(std::string_view source,
                                           std::string_view build_options);

// A kernel as the OpenCL compiler saw it in the built rewritten program
// (CL_PROGRAM_KERNEL_NAMES and CL_KERNEL_NUM_ARGS).
struct BuiltKernel {
  std::string name;
  cl_uint num_args = 0;
};

// The rewriter reads source without running the preprocessor, so after building the rewritten
// program the server must confirm the compiler saw the same kernels with one extra argument
// each. If this refuses (or the rewritten source fails to build where the original builds), the
// server must build the original source instead and run its kernels whole.
Status CheckBuiltKernels(const RewrittenProgram& program, std::span<const BuiltKernel> built);

// ---------------------------------------------------------------------------------------------
// Planning slices of a launch.

// One clEnqueueNDRangeKernel as the application asked for it.
struct LaunchShape {
  cl_uint dims = 1;                  // work_dim, 1 to 3
  size_t offset[3] = {0, 0, 0};      // global_work_offset (zeros when the application passed NULL)
  size_t global[3] = {1, 1, 1};      // global_work_size
  size_t local[3] = {1, 1, 1};       // local_work_size; read only when local_given
  bool local_given = false;          // false when the application passed NULL
};

// One sub-launch. Enqueue it with the launch's work_dim, this offset and global size, and the
// launch's local size (NULL when the launch had none), after setting argument
// KernelInfo::user_arg_count to hidden_arg. Slices must run in order, one after another.
struct Slice {
  size_t offset[3] = {0, 0, 0};
  size_t global[3] = {1, 1, 1};
  // Launch-wide id of the slice's first work-group in each dimension (zero when the local size
  // is implicit: such kernels never read group ids).
  size_t group_base[3] = {0, 0, 0};
  cl_ulong16 hidden_arg{};
};

struct SlicePlan {
  LaunchShape launch;
  cl_uint sliced_dim = 0;   // the dimension cut into slices
  std::vector<Slice> slices;
};

// With an implicit local size, slices along dimension 0 are cut at multiples of this many
// work-items so that the driver can still choose wide work-groups; other dimensions are cut at
// any work-item.
inline constexpr size_t kImplicitGranule = 64;

// Cuts the launch into min(num_slices, units) slices of equal size along one dimension, the
// remainder going to the last slice. A unit is one work-group (explicit local size) or one
// granule (implicit local size). The dimension is the outermost one with at least num_slices
// units, else the one with the most units. num_slices 1 gives the whole launch as one slice.
//
// Refuses (the caller runs the launch whole) when the shape is invalid, when an explicit local
// size does not divide the global size (non-uniform work-groups), or when the local size is
// implicit and kernel.observes_work_groups: the driver's choice of work-group size is not
// visible. A server that wants to slice such launches may choose the local size itself (it is
// the implementation, as far as the application can tell), e.g. from
// CL_KERNEL_COMPILE_WORK_GROUP_SIZE or a divisor of the global size not above
// CL_KERNEL_WORK_GROUP_SIZE, and use that same choice for whole and sliced launches.
Result<SlicePlan> PlanSlices(const KernelInfo& kernel, const LaunchShape& launch,
                             size_t num_slices);

// As PlanSlices, but each slice holds about max_groups_per_slice work-groups (granules when the
// local size is implicit), counted over all dimensions, the last one smaller; for policies that
// size slices from a measured cost per work-group. A slice is at least one unit along the cut
// dimension, so it can hold more than asked when that dimension's cross-section is larger.
Result<SlicePlan> PlanSlicesOfSize(const KernelInfo& kernel, const LaunchShape& launch,
                                   size_t max_groups_per_slice);

// The hidden argument for one slice of `launch`: the launch's global offset, global size and
// number of work-groups, and the slice's first group id. Layout (also in the prelude of the
// rewritten source): s0-s2 offset, s3 = 1 (sliced), s4-s6 global size, s8-sa number of groups,
// sc-se group base. Dimensions beyond launch.dims are not read (the kernel asks the real
// built-ins there, which answer a slice as they answer the whole launch); they hold 0, 1, 1, 0.
cl_ulong16 HiddenArgForSlice(const LaunchShape& launch, const Slice& slice);

// The hidden argument for a launch that is not sliced: all zero, which makes the rewritten
// kernel call the real built-ins, so it behaves exactly like the original.
cl_ulong16 HiddenArgForWholeLaunch();

// ---------------------------------------------------------------------------------------------
// Preemptible runs.
//
// A launch can also run as one or more "runs": each run is launched with as many work-groups as
// are left, and every work-group first claims the next launch-wide group id from a counter in
// a small control buffer (the second hidden argument). A work-group that finds the stop flag
// set, or the counter at the run's limit, returns at once. Claimed ids are contiguous, so after
// a run the counter says exactly which groups ran, and the next run resumes from it. The server
// stops a run by writing the stop flag from another queue while the run is on the device.
//
// Control buffer: uint ctl[4] = {stop, counter, limit, unused}; before a run the server writes
// {0, groups done so far, limit}, and afterwards reads it back: groups done = min(counter, limit).
inline constexpr size_t kControlBytes = 16;
// With an implicit local size, runs need a local size of at least this many work-items (or the
// whole dimension) that divides the global size; otherwise the launch is not run preemptibly.
inline constexpr size_t kMinRunLocal = 16;

struct RunPlan {
  LaunchShape launch;        // with the local size the runs use (chosen if the launch had none)
  uint64_t total_groups = 0;
  // The hidden argument of every run of this launch.
  cl_ulong16 HiddenArg() const;
  // What to enqueue for a run of `groups` work-groups: work_dim = launch.dims, no offset.
  struct Physical {
    size_t global[3];
    size_t local[3];
  };
  Physical Range(uint64_t groups) const;
};

// Plans preemptible runs of a launch. Refuses like PlanSlices (non-uniform work-groups,
// invalid shapes, an implicit local size for a kernel that observes work-groups), and when no
// usable local size divides an implicit launch. `max_local`: the kernel's largest work-group
// size on the device (CL_KERNEL_WORK_GROUP_SIZE), used only when the launch has no local size.
Result<RunPlan> PlanRun(const KernelInfo& kernel, const LaunchShape& launch, size_t max_local);

}  // namespace rgpu::slicer
