#include "runner/experiment.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>

#include "runner/worker_process.h"

namespace rgpu::lab {
namespace {

namespace fs = std::filesystem;

double NowSeconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Worker start-up includes CUDA context creation, MPS client attach and
// input initialisation; generous, but bounded.
constexpr double kInitTimeoutS = 120;

void ExpectEach(const std::vector<std::string>& lines, const std::vector<ChildProcess*>& workers,
                const std::string& expected) {
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i] != expected)
      throw std::runtime_error(workers[i]->label() + ": expected " + expected + ", got '" +
                               lines[i] + "'");
}

nlohmann::json Stats(std::vector<double> values) {
  if (values.empty()) return nullptr;
  std::sort(values.begin(), values.end());
  auto quantile = [&](double q) {
    const double position = q * (values.size() - 1);
    const std::size_t low = static_cast<std::size_t>(position);
    const std::size_t high = std::min(low + 1, values.size() - 1);
    return values[low] + (values[high] - values[low]) * (position - low);
  };
  return {{"median", quantile(0.5)}, {"min", values.front()}, {"max", values.back()},
          {"p10", quantile(0.1)},    {"p90", quantile(0.9)},  {"count", values.size()}};
}

// Per tenant name: statistics over every copy and every round.
nlohmann::json Summarize(const nlohmann::json& rounds) {
  std::map<std::string, std::vector<double>> time_ms, wall_ms;
  std::map<std::string, std::map<std::string, std::vector<double>>> metrics;
  for (const auto& round : rounds)
    for (const auto& report : round) {
      const std::string name = report["name"];
      time_ms[name].push_back(report["time_ms"]);
      wall_ms[name].push_back(report["wall_ms"]);
      if (report.contains("metrics"))
        for (const auto& [key, value] : report["metrics"].items())
          if (value.is_number()) metrics[name][key].push_back(value);
    }
  nlohmann::json summary = nlohmann::json::object();
  for (const auto& [name, values] : time_ms) {
    summary[name]["time_ms"] = Stats(values);
    summary[name]["wall_ms"] = Stats(wall_ms[name]);
    for (const auto& [key, list] : metrics[name]) summary[name]["metrics"][key] = Stats(list)["median"];
  }
  return summary;
}

void WriteJsonAtomically(const fs::path& path, const nlohmann::json& value) {
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary);
    out << value.dump(1) << "\n";
  }
  fs::rename(temporary, path);
}

void WriteSummaryCsv(const fs::path& path, const nlohmann::json& results) {
  std::ofstream out(path);
  out << "# scenario=" << results["scenario"]["name"].get<std::string>()
      << " mode=" << results["mode"].get<std::string>()
      << " commit=" << results["environment"]["git_commit"].get<std::string>() << "\n";
  out << "config,label,name,copies,count,time_median_ms,time_min_ms,time_max_ms,"
         "wall_median_ms,wall_min_ms,wall_max_ms\n";
  for (const auto& config : results["configs"]) {
    if (!config.contains("summary")) continue;
    for (const auto& process : config["processes"]) {
      const std::string name = process["name"];
      if (!config["summary"].contains(name)) continue;
      const auto& s = config["summary"][name];
      out << config["index"] << ",\"" << config["label"].get<std::string>() << "\"," << name << ","
          << process["copies"] << "," << s["time_ms"]["count"] << "," << s["time_ms"]["median"]
          << "," << s["time_ms"]["min"] << "," << s["time_ms"]["max"] << ","
          << s["wall_ms"]["median"] << "," << s["wall_ms"]["min"] << "," << s["wall_ms"]["max"]
          << "\n";
    }
  }
}

class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), start_(NowSeconds()), tty_(isatty(2)) {}
  void Round(std::size_t config, const std::string& label, int round, int rounds) {
    std::fprintf(stderr, "%s[%zu/%zu round %d/%d, %.0f s] %s%s", tty_ ? "\r\033[K" : "", config + 1,
                 total_, round + 1, rounds, NowSeconds() - start_, label.c_str(), tty_ ? "" : "\n");
    std::fflush(stderr);
  }
  void Done(std::size_t config, const std::string& label, const nlohmann::json& entry) {
    std::string line;
    if (entry.contains("error")) {
      line = "FAILED: " + entry["error"].get<std::string>();
    } else if (entry.contains("skipped")) {
      line = "skipped: " + entry["skipped"].get<std::string>();
    } else {
      char text[160];
      for (const auto& [name, s] : entry["summary"].items()) {
        std::snprintf(text, sizeof(text), "  %s %.2f ms [%.2f..%.2f]", name.c_str(),
                      s["time_ms"]["median"].get<double>(), s["time_ms"]["min"].get<double>(),
                      s["time_ms"]["max"].get<double>());
        line += text;
      }
    }
    std::fprintf(stderr, "%s[%zu/%zu, %.0f s] %s:%s\n", tty_ ? "\r\033[K" : "", config + 1, total_,
                 NowSeconds() - start_, label.c_str(), line.c_str());
  }

 private:
  std::size_t total_;
  double start_;
  bool tty_;
};

std::string Substitute(std::string value, int tenants) {
  const std::string placeholder = "{tenants}";
  for (auto at = value.find(placeholder); at != std::string::npos; at = value.find(placeholder))
    value.replace(at, placeholder.size(), std::to_string(tenants));
  return value;
}

}  // namespace

std::string WorkerBinaryFor(const std::string& kernel, const SharingMode& mode,
                            const std::string& worker_dir) {
  std::string binary;
  if (kernel == "cpu-matmul")
    binary = "rgpu-lab-cpu-worker";
  else if (kernel == "device-report")
    binary = mode.api() == "cuda" ? "rgpu-lab-cuda-worker" : "";
  else
    binary = mode.api() == "cuda" ? "rgpu-lab-cuda-worker" : "rgpu-lab-cl-worker";
  if (binary.empty()) return "";
  const fs::path path = fs::path(worker_dir) / binary;
  return fs::exists(path) ? path.string() : "";
}

int RunScenario(const Scenario& scenario, SharingMode& mode, const RunOptions& options) {
  const fs::path out = options.out_dir;
  fs::create_directories(out / "logs");
  nlohmann::json results;
  results["environment"] = options.header;
  results["scenario"] = {{"name", scenario.name}, {"title", scenario.title},
                         {"path", scenario.path}, {"rounds", scenario.rounds},
                         {"source", scenario.source_text}};
  results["mode"] = mode.name();
  results["configs"] = nlohmann::json::array();

  int failures = 0;
  Progress progress(scenario.configs.size());
  for (std::size_t index = 0; index < scenario.configs.size(); ++index) {
    const Config& config = scenario.configs[index];
    const std::string label = config.Label();
    if (!options.only.empty() && label.find(options.only) == std::string::npos) continue;
    nlohmann::json entry = {{"index", index},
                            {"label", label},
                            {"experiments", config.experiments},
                            {"params", config.params},
                            {"processes", nlohmann::json::array()},
                            {"rounds", nlohmann::json::array()}};
    for (const auto& p : config.processes)
      entry["processes"].push_back(
          {{"name", p.name}, {"kernel", p.kernel}, {"copies", p.copies}, {"cpus", p.cpus}, {"args", p.args}});

    std::vector<std::unique_ptr<ChildProcess>> tenants;
    std::vector<ChildProcess*> all, measured, background;
    std::vector<std::pair<std::string, int>> identity;  // name, copy
    try {
      const int tenant_count = config.Tenants();
      for (const auto& spec : config.processes) {
        const std::string binary = WorkerBinaryFor(spec.kernel, mode, options.worker_dir);
        if (binary.empty())
          throw std::invalid_argument("no worker runs kernel '" + spec.kernel + "' in mode " +
                                      mode.name());
        const bool on_gpu = spec.kernel != "cpu-matmul";
        for (int copy = 0; copy < spec.copies; ++copy) {
          SpawnOptions spawn;
          spawn.argv = {binary, "--kernel=" + spec.kernel};
          if (on_gpu)
            for (const auto& a : mode.WorkerArgs()) spawn.argv.push_back(a);
          if (!spec.args.count("seed")) spawn.argv.push_back("--seed=" + std::to_string(copy + 1));
          for (const auto& [key, value] : spec.args) {
            std::string option = key;  // TOML style sync_each_piece -> --sync-each-piece
            std::replace(option.begin(), option.end(), '_', '-');
            spawn.argv.push_back("--" + option + "=" + Substitute(value, tenant_count));
          }
          if (on_gpu) spawn.env = mode.WorkerEnv(static_cast<int>(all.size()));  // its position
          spawn.cpus = spec.cpus;
          spawn.stderr_path = (out / "logs" /
                               ("config" + std::to_string(index) + "-" + spec.name + "-" +
                                std::to_string(copy) + ".log"))
                                  .string();
          const std::string who = spec.name + "#" + std::to_string(copy);
          tenants.push_back(std::make_unique<ChildProcess>(spawn, who));
          all.push_back(tenants.back().get());
          (spec.background() ? background : measured).push_back(tenants.back().get());
          identity.emplace_back(spec.name, copy);
        }
      }
      auto identify = [&](ChildProcess* w) {
        for (std::size_t i = 0; i < all.size(); ++i)
          if (all[i] == w) return identity[i];
        return std::pair<std::string, int>{"?", -1};
      };
      auto parse_reports = [&](const std::vector<ChildProcess*>& workers,
                               const std::vector<std::string>& lines, nlohmann::json& round) {
        for (std::size_t i = 0; i < lines.size(); ++i) {
          nlohmann::json report;
          try {
            report = nlohmann::json::parse(lines[i]);
          } catch (const std::exception&) {
            throw std::runtime_error(workers[i]->label() + ": not a report: '" + lines[i] + "'");
          }
          auto [name, copy] = identify(workers[i]);
          report["name"] = name;
          report["copy"] = copy;
          round.push_back(report);
        }
      };

      ExpectEach(AwaitOneLineEach(all, kInitTimeoutS), all, "READY");
      for (int round_index = 0; round_index < scenario.rounds; ++round_index) {
        progress.Round(index, label, round_index, scenario.rounds);
        nlohmann::json round = nlohmann::json::array();
        // Background tenants first, and only once they are resident do the
        // measured ones start: the measured kernels run entirely beside them.
        for (auto* w : background) w->Send("GO");
        ExpectEach(AwaitOneLineEach(background, kInitTimeoutS), background, "RUNNING");
        // The barrier: every measured tenant is READY; release them together.
        for (auto* w : measured) w->Send("GO");
        parse_reports(measured, AwaitOneLineEach(measured, scenario.round_timeout_s), round);
        for (auto* w : background) w->Send("STOP");
        parse_reports(background, AwaitOneLineEach(background, scenario.round_timeout_s), round);
        ExpectEach(AwaitOneLineEach(all, kInitTimeoutS), all, "READY");
        entry["rounds"].push_back(round);
      }
      for (auto* w : all) w->Send("QUIT");
      for (auto* w : all)
        if (w->WaitExit(30) < 0) w->Terminate(SIGTERM, 5);
      entry["summary"] = Summarize(entry["rounds"]);
    } catch (const std::invalid_argument& e) {
      entry["skipped"] = e.what();
    } catch (const std::exception& e) {
      entry["error"] = e.what();
      ++failures;
    }
    tenants.clear();  // kills whatever is left of a failed config
    progress.Done(index, label, entry);
    results["configs"].push_back(entry);
    results["mode_details"] = mode.Describe();
    WriteJsonAtomically(out / "results.json", results);
    WriteSummaryCsv(out / "summary.csv", results);  // also after each config: a cut run keeps both
  }
  return failures;
}

}  // namespace rgpu::lab
