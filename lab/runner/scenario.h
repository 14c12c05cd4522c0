// Scenario files (lab/scenarios/*.toml) and their expansion into configs.
//
// A scenario lists experiments; an experiment lists tenant processes; any
// process field given as an array (copies = [1, 2, 3], or an argument such
// as groups = [1, 2, 4]) is a sweep axis, and the experiment expands into
// the Cartesian product of its axes. Identical configs from different
// experiments run once. docs/lab.md describes the format with examples.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rgpu::lab {

struct ProcessSpec {
  std::string name;     // label in tables; defaults to the kernel
  std::string kernel;   // gmem, smem, core, persistent, cpu-matmul, device-report
  int copies = 1;
  std::string cpus;     // CPU list the copies are confined to, as for taskset -c
  std::map<std::string, std::string> args;  // worker options, without the leading --

  // The persistent kernel runs beside the measured tenants for the whole round.
  bool background() const { return kernel == "persistent"; }
};

struct Config {
  std::vector<std::string> experiments;  // experiments that produced this config
  std::vector<ProcessSpec> processes;    // only those with copies > 0
  nlohmann::json params = nlohmann::json::object();  // the swept values: {"gmem.copies": 2}

  int Tenants() const;
  std::string Label() const;      // "gmem x2 + core x1"
  std::string Signature() const;  // equal for configs that would run identically
};

struct Scenario {
  std::string name;
  std::string title;
  std::string path;
  std::string source_text;  // kept verbatim in every result file
  int rounds = 3;
  double round_timeout_s = 300;
  std::vector<std::string> modes;
  std::vector<Config> configs;
};

// `profile` names a [profiles.NAME] table of overrides (the CI uses "tiny");
// `overrides` are "NAME.key=value" strings, NAME being a process name or kernel.
Scenario LoadScenario(const std::string& path, const std::string& profile,
                      const std::vector<std::string>& overrides);

}  // namespace rgpu::lab
