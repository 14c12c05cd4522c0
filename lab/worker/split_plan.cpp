#include "worker/split_plan.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rgpu::lab {

std::vector<LaunchPiece> PlanPieces(std::uint64_t total_items, std::uint64_t local_size,
                                    int groups) {
  if (local_size == 0) throw std::invalid_argument("local size must be positive");
  std::uint64_t work_groups = (total_items + local_size - 1) / local_size;
  std::uint64_t wanted = std::clamp<std::uint64_t>(groups < 1 ? 1 : groups, 1,
                                                   std::max<std::uint64_t>(work_groups, 1));
  std::uint64_t groups_per_piece = (work_groups + wanted - 1) / wanted;
  std::uint64_t piece_items = groups_per_piece * local_size;
  std::vector<LaunchPiece> pieces;
  for (std::uint64_t offset = 0; offset < total_items; offset += piece_items) {
    std::uint64_t remaining_groups = (total_items - offset + local_size - 1) / local_size;
    pieces.push_back({offset, std::min(piece_items, remaining_groups * local_size)});
  }
  return pieces;
}

int GroupsBySeed001Rule(std::uint64_t total_items, int tenants, double alpha,
                        std::uint64_t device_lanes) {
  if (tenants <= 1 || total_items < device_lanes) return 1;
  return std::max(1, static_cast<int>(std::lround(tenants * alpha)));
}

int ResolveGroups(const std::string& groups_option, std::uint64_t total_items, int tenants,
                  double alpha, std::uint64_t device_lanes) {
  if (groups_option == "rule")
    return GroupsBySeed001Rule(total_items, tenants, alpha, device_lanes);
  int groups = std::stoi(groups_option);
  if (groups < 1) throw std::invalid_argument("--groups must be >= 1 or 'rule'");
  return groups;
}

}  // namespace rgpu::lab
