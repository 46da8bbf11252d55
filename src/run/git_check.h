// After a run (and before confine runs git itself on a repository a sandbox could write): what the run left that
// git on the host would run or follow — a repository config, a hook, a redirection to another git dir — is renamed
// aside (NAME.confine-untrusted, which git never reads) and named on stderr and in --report.
#pragma once

#include <string>
#include <vector>

#include "core/git_state.h"
#include "core/host_layout.h"
#include "core/policy.h"

namespace confine::run {

struct GitSetAside {
  std::vector<std::string> moved;      // absolute paths, as they were
  std::vector<std::string> not_moved;  // "PATH: reason": could not be renamed (the user must look)
  bool incomplete = false;             // the walk hit a limit
};

// What the run could have written and must be checked: the workspace and every writable bind (whole), a linked
// worktree's repository (as a git dir); what it saw read-only is left to the host.
// `mounts`: the run had its own mount view, so the git files make_plan binds read-only were out of its reach.
GitCheckRequest git_check_request(const Policy& p, const GitLayout& git, bool mounts, std::timespec since);

// Finds and renames; changes nothing when nothing changed during the run.
GitSetAside set_aside_untrusted_git_state(const GitCheckRequest& request);

// Says what was set aside on stderr; returns the `"event":"git"` line for --report (empty when nothing was found).
std::string report_git_set_aside(const GitSetAside& outcome);

// The clock file change times are stamped with, now.
std::timespec file_clock_now();

}  // namespace confine::run
