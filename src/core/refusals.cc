#include "core/refusals.h"

#include <fmt/format.h>

namespace confine {
namespace {

constexpr std::size_t kMaxNamesPerLayer = 1000;  // counted by name; beyond, only the total grows
constexpr std::size_t kSummaryNames = 5;         // named per layer in the exit summary

// How the exit summary introduces a layer's names.
const char* summary_label(RefusalLayer layer) {
  switch (layer) {
    case RefusalLayer::seccomp: return "syscalls";
    case RefusalLayer::network: return "network";
    case RefusalLayer::limits: return "limits reached";
    case RefusalLayer::files: return "masked files read (as empty)";
    case RefusalLayer::git: return "git state set aside";
    case RefusalLayer::git_config: return "writes to git's read-only config (--allow-git-config allows them)";
  }
  return "";
}

}  // namespace

const char* layer_name(RefusalLayer layer) {
  switch (layer) {
    case RefusalLayer::seccomp: return "seccomp";
    case RefusalLayer::network: return "network";
    case RefusalLayer::limits: return "limits";
    case RefusalLayer::files: return "files";
    case RefusalLayer::git: return "git";
    case RefusalLayer::git_config: return "git-config";
  }
  return "";
}

const char* action_name(RefusalAction action) {
  switch (action) {
    case RefusalAction::refused: return "refused";
    case RefusalAction::failed: return "failed";
    case RefusalAction::killed: return "killed";
    case RefusalAction::neutralised: return "neutralised";
    case RefusalAction::recorded: return "recorded";
  }
  return "";
}

namespace {

// The strings of a record's fields, at any depth (a seccomp line's "args" is an object).
void collect_strings(nlohmann::ordered_json& j, std::vector<std::string*>& out) {
  if (auto* s = j.get_ptr<std::string*>()) out.push_back(s);
  else if (j.is_structured())
    for (auto& value : j) collect_strings(value, out);
}

}  // namespace

std::string refusal_line(const Refusal& r, std::int64_t time_ms) {
  auto cut = r;
  std::vector<std::string*> fields = {&cut.what, &cut.allow_with};
  collect_strings(cut.detail, fields);
  return fit_line(fields, [&cut, time_ms] {
    // In this order on every line: the common fields, the layer's, then the way to allow it.
    nlohmann::ordered_json line = {{"time", time_ms}, {"layer", layer_name(cut.layer)},
                                   {"action", action_name(cut.action)}, {"what", cut.what}};
    for (const auto& [key, value] : cut.detail.items()) line[key] = value;
    if (!cut.allow_with.empty()) line["allow_with"] = cut.allow_with;
    return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  });
}

void RefusalCounts::add(const Refusal& r) {
  ++total_;
  layers_.try_emplace(r.layer, kMaxNamesPerLayer).first->second.add(cut_text(r.what, kMaxCountedName));
}

std::string RefusalCounts::summary() const {
  std::string line;
  for (const auto& [layer, tally] : layers_) {
    if (layer == RefusalLayer::network) continue;
    line += fmt::format("{}{} {}", line.empty() ? "" : "; ", summary_label(layer), tally.top_list(kSummaryNames));
  }
  return line.empty() ? line : "refused: " + line;
}

std::string RefusalCounts::report_line() const {
  nlohmann::json j = {{"event", "refusals"}, {"total", total_}};
  for (const auto& [layer, tally] : layers_) {
    nlohmann::json by_name = nlohmann::json::object();
    for (const auto& [name, count] : tally.counts()) by_name[name] = count;
    j[layer_name(layer)] = {{"total", tally.total()}, {"by_name", std::move(by_name)}};
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace confine
