// The environment header of every result file: enough to tell which machine,
// driver, code and options produced a number (style.md, habit 5).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rgpu::lab {

// `describe_argv` runs a worker with --describe through the sharing mode's
// environment `describe_env`, so the header names the device the workers saw.
nlohmann::json CollectEnvironment(const std::vector<std::string>& describe_argv,
                                  const std::vector<std::string>& describe_env);

std::string UtcTimestamp();

}  // namespace rgpu::lab
