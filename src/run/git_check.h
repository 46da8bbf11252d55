// After a run (and before confine runs git itself on a repository a sandbox could write): what the run left that
// git on the host would run or follow — a repository config, a hook, a redirection to another git dir — is renamed
// aside (NAME.confine-untrusted, which git never reads) and named on stderr and in --report.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/git_state.h"
#include "core/host_layout.h"
#include "core/plan.h"
#include "core/policy.h"
#include "run/scan_cache.h"
#include "sys/unique_fd.h"

namespace confine::run {

struct GitSetAside {
  struct Moved {
    std::string path;        // absolute, as it was
    std::string renamed_to;  // its new name, in the same directory
    const char* what;        // describe(hazard)
  };
  std::vector<Moved> moved;
  std::vector<std::string> not_moved;   // "PATH (what): reason": could not be renamed; the run fails (exit 125)
  std::vector<std::string> unreadable;  // directories nothing could be checked in
  bool incomplete = false;              // the walk hit a limit
};


// Checks what the run could have written — the workspace (where the secret scan, run again with its cache,
// says git would find a repository, and every gitlink of an index written during the run), every writable bind,
// a linked worktree's repository — and renames aside what the host's git would run or follow. What the sandbox
// saw read-only is left alone. Changes nothing when nothing changed during the run.
// `kept`: the caches the start-up scans used (see KeptScanCache); a tree without one reads its cache file.
GitSetAside set_aside_untrusted_git_state(const GitCheckScope& scope, KeptScanCaches* kept = nullptr);

// A record of a run's check to come, kept in confine's state directory (outside every sandbox) from before the
// sandbox starts until its check is done: removed by the destructor, so a confine that is killed leaves it.
class PendingGitCheck {
 public:
  explicit PendingGitCheck(const GitCheckScope& scope);
  ~PendingGitCheck();
  PendingGitCheck(const PendingGitCheck&) = delete;
  PendingGitCheck& operator=(const PendingGitCheck&) = delete;

 private:
  sys::UniqueFd dir_;  // invalid: no record was written
  std::string name_;
};

// Runs the checks that runs killed before their end noted in `dir` (their confine is gone): the
// finish_interrupted_checks step, before anything else in this run touches a repository. Quiet when there are none.
void finish_interrupted_git_checks(const std::string& dir);

// Says what was set aside on stderr; returns the `"event":"git"` line for --report (empty when nothing was found).
std::string report_git_set_aside(const GitSetAside& outcome);

// Names the directories a check after the run could not read (the first ten, then their count), each with what
// that leaves unchecked and what to do.
void warn_unreadable(const std::vector<std::string>& dirs, std::string_view what_then);

// The clock file change times are stamped with, now.
std::timespec file_clock_now();

}  // namespace confine::run
