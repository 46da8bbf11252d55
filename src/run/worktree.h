// --worktree BRANCH: the run happens in a linked git worktree next to the repository (`git worktree add
// ../<repo>-<branch> -b BRANCH`), so the agent's changes land on their own branch and the user's checkout is not
// even visible. The sandbox gets the repository's git dir read-write with its hooks and config read-only (see
// GitLayout::common_dir), so commits work there.
#pragma once

#include <string>

#include "sys/result.h"

namespace confine::run {

struct Worktree {
  std::string dir;         // the worktree: the run's workspace
  std::string repository;  // the main checkout's top directory
  std::string branch;
  bool created = false;    // false: an earlier --worktree run's worktree, reused
};

// Creates (or reuses) the worktree for BRANCH of the repository that holds `workspace`.
sys::Result<Worktree> prepare_worktree(const std::string& workspace, const std::string& branch);
// The commands that remove it (and its branch) once the user is done with it.
std::string worktree_removal_hint(const Worktree& w);

}  // namespace confine::run
