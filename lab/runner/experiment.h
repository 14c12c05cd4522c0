// Runs the configs of a scenario in one sharing mode and writes the results.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner/scenario.h"
#include "runner/sharing_mode.h"

namespace rgpu::lab {

struct RunOptions {
  std::string worker_dir;  // where rgpu-lab-*-worker live
  std::string out_dir;     // results.json, summary.csv, logs/
  std::string only;        // run only configs whose label contains this
  nlohmann::json header;   // environment header, written into results.json
};

// Returns the number of configs that failed (0: all ran).
int RunScenario(const Scenario& scenario, SharingMode& mode, const RunOptions& options);

// The worker binary that runs `kernel` in `mode`, or "" if none can.
std::string WorkerBinaryFor(const std::string& kernel, const SharingMode& mode,
                            const std::string& worker_dir);

}  // namespace rgpu::lab
