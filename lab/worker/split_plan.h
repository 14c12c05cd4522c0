// Splitting one kernel launch into sequential pieces ("thread groups"), the
// technique of seed 001: a GPU tenant that wakes, synchronises and yields more
// often leaves the CPU to its neighbours more often.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rgpu::lab {

struct LaunchPiece {
  std::uint64_t offset = 0;  // first work-item of the piece (OpenCL global offset)
  std::uint64_t count = 0;   // work-items launched; a multiple of the local size
};

// Cuts [0, total_items) into at most `groups` pieces of equal size, rounded up
// to whole work-groups; the last piece takes the remainder (seed 001 runs the
// remainder last too). The last piece may run past total_items: kernels guard.
std::vector<LaunchPiece> PlanPieces(std::uint64_t total_items, std::uint64_t local_size,
                                    int groups);

// Seed 001, Algorithm 1, as read in shared/seeds-digest.md: no split for a lone
// tenant or for a launch smaller than the GPU's lane count; otherwise
// tenants * alpha pieces ("the more VMs, the smaller the pieces").
int GroupsBySeed001Rule(std::uint64_t total_items, int tenants, double alpha,
                        std::uint64_t device_lanes);

// Parses the --groups option: a positive count, or "rule" for the seed-001 rule.
int ResolveGroups(const std::string& groups_option, std::uint64_t total_items, int tenants,
                  double alpha, std::uint64_t device_lanes);

}  // namespace rgpu::lab
