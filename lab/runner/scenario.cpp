#include "runner/scenario.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

#include <toml++/toml.h>

namespace rgpu::lab {

int Config::Tenants() const {
  int tenants = 0;
  for (const auto& p : processes) tenants += p.copies;
  return tenants;
}

std::string Config::Label() const {
  std::string label;
  for (const auto& p : processes) {
    if (!label.empty()) label += " + ";
    label += p.name + " x" + std::to_string(p.copies);
  }
  // Swept options other than copy counts tell otherwise equal labels apart.
  for (const auto& [key, value] : params.items())
    if (key.size() < 7 || key.compare(key.size() - 7, 7, ".copies") != 0)
      label += " " + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  return label;
}

std::string Config::Signature() const {
  // Order-free: "gmem x1 + smem x1" and "smem x1 + gmem x1" run the same.
  std::vector<std::string> parts;
  for (const auto& p : processes) {
    std::ostringstream out;
    out << p.name << '|' << p.kernel << '|' << p.copies << '|' << p.cpus;
    for (const auto& [key, value] : p.args) out << '|' << key << '=' << value;
    parts.push_back(out.str());
  }
  std::sort(parts.begin(), parts.end());
  std::string signature;
  for (const auto& part : parts) signature += part + ';';
  return signature;
}

namespace {

std::string ScalarText(const toml::node& node) {
  if (auto s = node.value<std::string>()) return *s;
  if (node.is_integer()) return std::to_string(*node.value<std::int64_t>());
  if (node.is_boolean()) return *node.value<bool>() ? "true" : "false";
  if (auto d = node.value<double>()) {
    std::ostringstream out;
    out << *d;
    return out.str();
  }
  throw std::runtime_error("unsupported TOML value in a scenario");
}

nlohmann::json ScalarJson(const toml::node& node) {
  if (node.is_integer()) return *node.value<std::int64_t>();
  if (node.is_floating_point()) return *node.value<double>();
  if (node.is_boolean()) return *node.value<bool>();
  return ScalarText(node);
}

// Values of a field: an array is a sweep axis, a scalar a single value.
std::vector<const toml::node*> Values(const toml::node& node) {
  std::vector<const toml::node*> values;
  if (const auto* array = node.as_array()) {
    for (const auto& element : *array) values.push_back(&element);
    if (values.empty()) throw std::runtime_error("empty array in a scenario");
  } else {
    values.push_back(&node);
  }
  return values;
}

void ApplyTable(const toml::table* table, std::map<std::string, std::string>& args) {
  if (!table) return;
  for (const auto& [key, value] : *table) args[std::string(key.str())] = ScalarText(value);
}

struct Axis {
  std::size_t process;
  std::string key;  // "copies" or an argument name
  std::vector<const toml::node*> values;
};

}  // namespace

Scenario LoadScenario(const std::string& path, const std::string& profile,
                      const std::vector<std::string>& overrides) {
  Scenario scenario;
  scenario.path = path;
  {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read scenario " + path);
    std::ostringstream text;
    text << in.rdbuf();
    scenario.source_text = text.str();
  }
  toml::table root;
  try {
    root = toml::parse(scenario.source_text, path);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << e;
    throw std::runtime_error(msg.str());
  }
  scenario.name = root["name"].value_or(std::string("unnamed"));
  scenario.title = root["title"].value_or(std::string());
  scenario.rounds = root["rounds"].value_or(3);
  scenario.round_timeout_s = root["round_timeout_s"].value_or(300.0);
  if (const auto* modes = root["modes"].as_array())
    for (const auto& m : *modes) scenario.modes.push_back(m.value_or(std::string()));

  const toml::table* profile_table = nullptr;
  if (!profile.empty()) {
    profile_table = root["profiles"][profile].as_table();
    if (!profile_table) throw std::runtime_error("scenario has no profile '" + profile + "'");
    if (auto rounds = (*profile_table)["rounds"].value<int>()) scenario.rounds = *rounds;
    if (auto t = (*profile_table)["round_timeout_s"].value<double>()) scenario.round_timeout_s = *t;
  }

  // --set NAME.key=value, split once here.
  std::vector<std::tuple<std::string, std::string, std::string>> sets;
  for (const auto& o : overrides) {
    auto dot = o.find('.'), eq = o.find('=');
    if (dot == std::string::npos || eq == std::string::npos || eq < dot)
      throw std::runtime_error("--set wants NAME.key=value, got '" + o + "'");
    sets.emplace_back(o.substr(0, dot), o.substr(dot + 1, eq - dot - 1), o.substr(eq + 1));
  }

  std::map<std::string, std::size_t> seen;
  const auto* experiments = root["experiment"].as_array();
  if (!experiments) throw std::runtime_error("scenario has no [[experiment]]");
  for (const auto& experiment_node : *experiments) {
    const auto& experiment = *experiment_node.as_table();
    const std::string experiment_name = experiment["name"].value_or(std::string("experiment"));
    const auto* processes = experiment["process"].as_array();
    if (!processes) throw std::runtime_error(experiment_name + ": no [[experiment.process]]");

    std::vector<ProcessSpec> base;
    std::vector<Axis> axes;
    for (const auto& process_node : *processes) {
      const auto& process = *process_node.as_table();
      ProcessSpec spec;
      spec.kernel = process["kernel"].value_or(std::string());
      if (spec.kernel.empty()) throw std::runtime_error(experiment_name + ": process without kernel");
      spec.name = process["name"].value_or(spec.kernel);
      spec.cpus = process["cpus"].value_or(std::string());
      ApplyTable(root["kernels"][spec.kernel].as_table(), spec.args);
      if (profile_table) ApplyTable((*profile_table)["kernels"][spec.kernel].as_table(), spec.args);
      const std::size_t index = base.size();
      if (const auto* copies = process.get("copies"))
        axes.push_back({index, "copies", Values(*copies)});
      if (const auto* args = process["args"].as_table())
        for (const auto& [key, value] : *args)
          axes.push_back({index, std::string(key.str()), Values(value)});
      base.push_back(spec);
    }

    // Walk the Cartesian product of the axes like an odometer.
    std::vector<std::size_t> position(axes.size(), 0);
    while (true) {
      Config config;
      config.experiments.push_back(experiment_name);
      std::vector<ProcessSpec> specs = base;
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const auto& axis = axes[a];
        const toml::node& value = *axis.values[position[a]];
        auto& spec = specs[axis.process];
        if (axis.key == "copies")
          spec.copies = static_cast<int>(value.value_or(std::int64_t{1}));
        else
          spec.args[axis.key] = ScalarText(value);
        if (axis.values.size() > 1) config.params[spec.name + "." + axis.key] = ScalarJson(value);
      }
      // An option of a process that is not there is no parameter of the config.
      for (const auto& spec : specs)
        if (spec.copies == 0)
          for (const auto& axis : axes)
            if (axis.key != "copies" && &specs[axis.process] == &spec)
              config.params.erase(spec.name + "." + axis.key);
      for (auto& spec : specs) {
        if (profile_table) ApplyTable((*profile_table)["processes"][spec.name].as_table(), spec.args);
        for (const auto& [who, key, value] : sets)
          if (who == spec.name || who == spec.kernel) spec.args[key] = value;
        if (spec.copies > 0) config.processes.push_back(spec);
      }
      if (!config.processes.empty()) {
        const std::string signature = config.Signature();
        auto it = seen.find(signature);
        if (it == seen.end()) {
          seen[signature] = scenario.configs.size();
          scenario.configs.push_back(config);
        } else {
          scenario.configs[it->second].experiments.push_back(experiment_name);
        }
      }
      std::size_t a = 0;
      for (; a < axes.size(); ++a) {
        if (++position[a] < axes[a].values.size()) break;
        position[a] = 0;
      }
      if (a == axes.size()) break;
    }
  }
  return scenario;
}

}  // namespace rgpu::lab
