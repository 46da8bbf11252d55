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

// Checks what the run could have written — the workspace (where the secret scan, run again with its cache,
// says git would find a repository, and every gitlink of an index written during the run), every writable bind,
// a linked worktree's repository — and renames aside what the host's git would run or follow. What the sandbox
// saw read-only is left alone (`mounts`: it had its own mount view, with .git/config and .git/hooks read-only).
// Changes nothing when nothing changed during the run.
GitSetAside set_aside_untrusted_git_state(const Policy& p, const GitLayout& git, bool mounts, std::timespec since);

// Says what was set aside on stderr; returns the `"event":"git"` line for --report (empty when nothing was found).
std::string report_git_set_aside(const GitSetAside& outcome);

// The clock file change times are stamped with, now.
std::timespec file_clock_now();

}  // namespace confine::run
