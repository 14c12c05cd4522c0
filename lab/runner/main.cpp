// rgpu-lab: runs the lab's interference scenarios (docs/lab.md).
//
//   rgpu-lab run lab/scenarios/seed000-persistent.toml --mode mps --out DIR
//   rgpu-lab list lab/scenarios/seed001-cpu-tenants.toml
//   rgpu-lab selftest
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "runner/environment.h"
#include "runner/experiment.h"
#include "runner/scenario.h"
#include "runner/sharing_mode.h"
#include "runner/worker_process.h"
#include "worker/split_plan.h"

namespace fs = std::filesystem;
using namespace rgpu::lab;

namespace {

// Runs of rgpu mode under different policies, or with and without a context group, sit
// side by side: rgpu-fifo/, rgpu-fair/, rgpu-fair-group/ (lab/tools/on_device.sh and
// lab/plot.py name them the same way).
std::string ModeDirectory(const std::string& mode, const std::string& policy, bool context_group) {
  if (mode != "rgpu") return mode;
  return mode + (policy.empty() ? "" : "-" + policy) + (context_group ? "-group" : "");
}

std::string SelfDirectory() {
  return fs::read_symlink("/proc/self/exe").parent_path().string();
}

// Checks the pieces of seed 001's split and the rule; run by ctest.
int SelfTest() {
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) {
      std::cerr << "selftest FAILED: " << what << "\n";
      ++failures;
    }
  };
  for (std::uint64_t total : {1ull, 255ull, 256ull, 4096ull, 5120ull * 5120ull, 1000003ull})
    for (int groups : {1, 2, 3, 4, 10, 20, 500, 100000}) {
      const auto pieces = PlanPieces(total, 256, groups);
      std::uint64_t next = 0;
      bool contiguous = true, whole_groups = true;
      for (const auto& p : pieces) {
        contiguous &= p.offset == next;
        whole_groups &= p.count % 256 == 0 && p.count > 0;
        next = p.offset + p.count;
      }
      const std::string label = std::to_string(total) + " items / " + std::to_string(groups);
      expect(contiguous, label + ": pieces are contiguous");
      expect(whole_groups, label + ": pieces are whole work-groups");
      expect(next >= total && next < total + 256 * 1ull, label + ": pieces cover the range once");
      expect(pieces.size() <= std::size_t(groups), label + ": no more pieces than groups");
    }
  expect(PlanPieces(5120ull * 5120, 256, 500).size() == 500, "5120^2 splits into exactly 500");
  expect(GroupsBySeed001Rule(1 << 20, 1, 2.0, 1000) == 1, "lone tenant: no split");
  expect(GroupsBySeed001Rule(100, 4, 2.0, 1000) == 1, "small launch: no split");
  expect(GroupsBySeed001Rule(1 << 20, 3, 2.0, 1000) == 6, "3 tenants x alpha 2 = 6 pieces");
  expect(ResolveGroups("rule", 1 << 20, 5, 2.0, 1000) == 10, "'rule' resolves by the rule");
  expect(ParseCpuList("0-2,5") == std::vector<int>({0, 1, 2, 5}), "CPU list parsing");
  std::cerr << (failures ? "selftest failed\n" : "selftest passed\n");
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rgpu lab: co-location interference experiments (docs/lab.md)"};
  app.require_subcommand(1);

  std::string scenario_path, mode_name, out_dir = "lab-out", profile, cl_platform, rgpu_build,
                             rgpud_path, policy, only, worker_dir = SelfDirectory();
  std::vector<std::string> overrides, rgpud_args;
  int rounds = 0;
  double round_timeout_s = 0;
  bool skip_if_no_platform = false, context_group = false;

  auto* run = app.add_subcommand("run", "run a scenario");
  run->add_option("scenario", scenario_path, "scenario TOML file")->required()->check(CLI::ExistingFile);
  run->add_option("--mode", mode_name,
                  "timeslice, mps, opencl or rgpu; default: every mode the scenario lists");
  run->add_option("--out", out_dir,
                  "output directory (one subdirectory per mode; rgpu with --policy P: rgpu-P, "
                  "with --context-group too: rgpu-P-group)");
  run->add_option("--rounds", rounds, "override the scenario's round count");
  run->add_option("--round-timeout", round_timeout_s, "override the scenario's per-round timeout (s)");
  run->add_option("--profile", profile, "apply the scenario's [profiles.NAME] overrides");
  run->add_option("--set", overrides, "override a worker option: NAME.key=value");
  run->add_option("--only", only, "run only configs whose label contains this");
  run->add_option("--cl-platform", cl_platform, "opencl mode: platform name substring");
  run->add_option("--rgpu-build", rgpu_build, "rgpu mode: build directory with rgpud and icd/");
  run->add_option("--rgpud", rgpud_path, "rgpu mode: the rgpud binary");
  run->add_option("--policy", policy, "rgpu mode: rgpud scheduling policy");
  run->add_option("--rgpud-arg", rgpud_args,
                  "rgpu mode: one more rgpud option (repeatable; --rgpud-arg=--gate-first=0)");
  run->add_flag("--context-group", context_group,
                "rgpu mode: every worker of a config a tenant of its own, all in one rgpud "
                "context group (one device context; results in rgpu[-POLICY]-group/)");
  run->add_option("--worker-dir", worker_dir, "directory of the rgpu-lab-*-worker binaries");
  run->add_flag("--skip-if-no-platform", skip_if_no_platform,
                "exit 77 (skipped) when the OpenCL platform is absent");

  auto* list = app.add_subcommand("list", "print the configs a scenario expands into");
  list->add_option("scenario", scenario_path, "scenario TOML file")->required()->check(CLI::ExistingFile);
  list->add_option("--profile", profile, "apply the scenario's [profiles.NAME] overrides");
  list->add_option("--set", overrides, "override a worker option: NAME.key=value");

  app.add_subcommand("selftest", "check the thread-group split and the scenario plumbing");
  CLI11_PARSE(app, argc, argv);

  try {
    if (app.got_subcommand("selftest")) return SelfTest();
    Scenario scenario = LoadScenario(scenario_path, profile, overrides);
    if (rounds > 0) scenario.rounds = rounds;
    if (round_timeout_s > 0) scenario.round_timeout_s = round_timeout_s;
    if (app.got_subcommand("list")) {
      std::cout << scenario.name << ": " << scenario.configs.size() << " configs, "
                << scenario.rounds << " rounds\n";
      for (std::size_t i = 0; i < scenario.configs.size(); ++i) {
        const Config& c = scenario.configs[i];
        std::cout << "  [" << i << "] " << c.Label() << "  " << c.params.dump() << "\n";
        for (const auto& p : c.processes) {
          std::cout << "       " << p.name << " (" << p.kernel << ")";
          for (const auto& [k, v] : p.args) std::cout << " --" << k << "=" << v;
          if (!p.cpus.empty()) std::cout << "  cpus " << p.cpus;
          std::cout << "\n";
        }
      }
      return 0;
    }

    if (rgpu_build.empty()) rgpu_build = fs::path(worker_dir).parent_path().string();
    rgpu_build = fs::absolute(rgpu_build).string();
    std::vector<std::string> modes;
    if (!mode_name.empty()) modes.push_back(mode_name);
    else modes = scenario.modes;
    if (modes.empty()) throw std::runtime_error("no --mode given and the scenario lists none");

    int failures = 0;
    for (const std::string& mode_to_run : modes) {
      RunOptions options;
      options.worker_dir = worker_dir;
      options.out_dir =
          (fs::path(out_dir) / ModeDirectory(mode_to_run, policy, context_group)).string();
      options.only = only;
      fs::create_directories(fs::path(options.out_dir) / "logs");
      ModeOptions mode_options{mode_to_run, cl_platform, rgpu_build, rgpud_path, policy,
                               options.out_dir + "/logs"};
      mode_options.context_group = context_group;
      mode_options.rgpud_args = rgpud_args;
      for (const Config& config : scenario.configs)
        mode_options.tenants = std::max(mode_options.tenants, config.Tenants());
      auto mode = StartSharingMode(mode_options);

      const std::string worker = fs::path(worker_dir) /
                                 (mode->api() == "cuda" ? "rgpu-lab-cuda-worker" : "rgpu-lab-cl-worker");
      std::vector<std::string> describe = {worker, "--describe"};
      for (const auto& a : mode->WorkerArgs()) describe.push_back(a);
      if (skip_if_no_platform) {
        int status = -1;
        const std::string said = CaptureOutput(describe, mode->WorkerEnv(0), 60, &status);
        if (status == 77 || (status != 0 && mode->api() == "opencl")) {
          std::cerr << "skipped: " << mode_to_run << " mode has no usable platform: " << said;
          return 77;
        }
      }
      options.header = CollectEnvironment(describe, mode->WorkerEnv(0));
      options.header["options"] = {{"mode", mode_to_run},
                                   {"rounds", scenario.rounds},
                                   {"profile", profile},
                                   {"set", overrides},
                                   {"cl_platform", cl_platform},
                                   {"policy", policy},
                                   {"rgpud_args", rgpud_args},
                                   {"context_group", context_group},
                                   {"command", std::vector<std::string>(argv, argv + argc)}};
      std::cerr << "rgpu-lab: " << scenario.name << " in mode " << mode_to_run << ", "
                << scenario.configs.size() << " configs x " << scenario.rounds << " rounds -> "
                << options.out_dir << "\n";
      failures += RunScenario(scenario, *mode, options);
      mode->Finish();
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "rgpu-lab: " << e.what() << "\n";
    return 2;
  }
}
