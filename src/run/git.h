// Running git on the host, outside any sandbox, for --worktree.
#pragma once

#include <string>
#include <vector>

#include "sys/result.h"

namespace confine::run {

// `git ARGS` as confine runs it on the user's repository (`--worktree`), never on
// one a sandbox wrote and nobody checked: the settings known to make git run a program (fsmonitor, hooks, pager,
// editors, ssh, credential helpers, every transport, automatic gc and maintenance, signing, submodule recursion)
// are overridden on the command line, which outranks every config file for those keys.
std::vector<std::string> host_git(std::vector<std::string> args);

// Runs `args` (args[0] looked up in PATH) in `dir` with stdin from /dev/null and a scrubbed environment (no GIT_*
// variable of the caller's, no terminal prompts); returns its stdout without the trailing newlines, its stderr
// passes through. An error names the command if it does not exit 0. `extra_env` ("NAME=value") is added.
sys::Result<std::string> run_captured(const std::vector<std::string>& args, const std::string& dir,
                                      const std::vector<std::string>& extra_env = {});

}  // namespace confine::run
