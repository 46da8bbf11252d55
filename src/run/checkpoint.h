// --checkpoint: before the run, the workspace's full state (tracked, modified and untracked files, secrets too:
// it is your own data) is committed to a git store of confine's own, outside the workspace and invisible in the
// sandbox, so an agent that deletes everything (.git included) cannot delete the checkpoint. The user's
// repository, HEAD, index and working tree are not touched. `confine checkpoints` lists them.
#pragma once

#include <string>

#include "core/policy.h"
#include "sys/result.h"

namespace confine::run {

// Commits the workspace of `p` on refs/confine/checkpoints/<UTC time>; returns the command that restores it.
// Refused if the store would be within the sandbox's reach (the workspace, a --rw bind) or reached by a link.
sys::Result<std::string> make_checkpoint(const Policy& p, const std::string& home);
// Prints the workspace's checkpoints, newest first, and how to restore one. 0, or 125 on error.
int list_checkpoints(const std::string& workspace, const std::string& home);

}  // namespace confine::run
