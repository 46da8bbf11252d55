// Running git on the host, outside any sandbox, for --checkpoint and --worktree.
#pragma once

#include <string>
#include <vector>

#include "sys/result.h"

namespace confine::run {

// Runs `args` (args[0] looked up in PATH) in `dir` with stdin from /dev/null; returns its stdout without the
// trailing newlines, its stderr passes through. An error names the command if it does not exit 0.
sys::Result<std::string> run_captured(const std::vector<std::string>& args, const std::string& dir);

}  // namespace confine::run
