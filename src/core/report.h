// Machine- and human-readable reports: the --status-fd/--report line, `confine probe`, `confine explain`.
// Pure formatting; the JSON writer only escapes strings it is given (it parses nothing).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/layers.h"
#include "core/plan.h"
#include "core/policy.h"

namespace confine {

std::string json_string(const std::string& s);
std::string json_array(const std::vector<std::string>& items);

struct ProbeRow {
  std::string name;
  std::string status;  // "yes", "no", or a value such as "abi 7"
  std::string detail;
  // The cgroup row's controllers, usable and missing, as JSON arrays too (the detail says the same in words).
  struct Controllers {
    std::vector<std::string> usable, missing;
  };
  std::optional<Controllers> controllers = std::nullopt;
  bool wall = false;  // a kernel layer the sandbox's walls are made of: `doctor` passes or fails on it
};

std::string probe_table(const std::vector<ProbeRow>& rows);
std::string probe_json(const std::vector<ProbeRow>& rows);

// What the run says once its command runs (Plan::start_report): the status line's facts and the masks counted.
StartReport start_report(const Enforcement& e, const PlanInputs& in);
// One JSON line describing what was applied, written once the command runs.
std::string status_line(const StartReport& r, pid_t sandbox_pid, const std::string& version);

// `confine explain`: the resolved policy, which layer enforces each promise, and what is not enforced.
std::string explain_text(const Policy& policy, const Plan& plan, const Enforcement& e);
std::string explain_json(const Policy& policy, const Plan& plan, const Enforcement& e);
// `confine -v explain`: every step of the plan, in order, by who runs it: confine, the sandbox's init (pid 1), the
// command.
std::string explain_steps(const Plan& plan);

// The screen printed when a run may not go ahead (exit 125).
std::string refusal_text(const Enforcement& e);

}  // namespace confine
