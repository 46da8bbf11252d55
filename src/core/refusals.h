// What confine refused, or set right, during and after a run: one record type for every layer, written as one
// JSON line each to --log and to the file the sandbox reads (/run/confine/denials.jsonl), and counted for the
// exit summary and --report. Pure: src/run/refusal_log.cc does the I/O.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/log_budget.h"
#include "core/proxy_outcome.h"

namespace confine {

// The layer that refused, the log's "layer" field.
enum class RefusalLayer { seccomp, network, limits, files, git, git_config };
const char* layer_name(RefusalLayer layer);

// The log's "action" field: what became of the attempt.
enum class RefusalAction {
  refused,      // the call, request or name failed with an error (seccomp's errno, a 403, NXDOMAIN, a reset)
  failed,       // allowed, but it could not be done (a name that does not resolve, a host that does not answer)
  killed,       // the command was killed (the memory limit)
  neutralised,  // confine made it harmless instead (a masked file read as empty, git state set aside)
  recorded,     // confine learn: let through, and recorded as what the strict run would refuse
};
const char* action_name(RefusalAction action);

struct Refusal {
  RefusalLayer layer = RefusalLayer::seccomp;
  RefusalAction action = RefusalAction::refused;
  std::string what;        // the short name the exit summary counts: "ptrace", "evil.example:443", ".env"
  std::string allow_with;  // the flag or profile key that would allow it; empty: none does
  nlohmann::ordered_json detail = nlohmann::ordered_json::object();  // the layer's own fields (man/confine.1, LOG)
};

// The record's one JSON line, newline included: "time" (ms since the epoch), "layer", "action", "what", the
// layer's fields, then "allow_with" when there is one. Names from the sandbox (a command's name, a host) are
// written as JSON strings, invalid UTF-8 replaced: a line is always one valid JSON object. At most kMaxLogLine
// bytes (core/log_budget.h): the longest strings are cut, with a marker saying how much they lost.
std::string refusal_line(const Refusal& r, std::int64_t time_ms);

// Where a refusal goes: the run's denial log (run/refusal_log.h), from any thread. Declared here so that what sees
// refusals (the network's recorder, the watches) needs only core.
class RefusalSink {
 public:
  virtual void record(const Refusal& r) = 0;

 protected:
  ~RefusalSink() = default;
};

// Counts per layer and name, for the exit summary and --report. Fixed memory, however many refusals.
class RefusalCounts {
 public:
  void add(const Refusal& r);
  [[nodiscard]] int total() const { return total_; }
  // One line, or empty when nothing was counted: "refused: syscalls ptrace ×2, bpf ×1; masked files read
  // .env ×1".
  // The network has its own lines (the proxy's summary), so it is not repeated here.
  [[nodiscard]] std::string summary() const;
  // {"event":"refusals","total":3,"seccomp":{"total":3,"by_name":{"ptrace":2,"bpf":1}},...} and a newline: the
  // counts for --report (at most 1000 names per layer; the totals count every refusal).
  [[nodiscard]] std::string report_line() const;

 private:
  std::map<RefusalLayer, TargetTally> layers_;
  int total_ = 0;
};

}  // namespace confine
