// The exit-code table: the command's own code passes through, death by signal N gives 128+N (bash, bwrap),
// and confine's own failures use docker's codes. The one source of truth for exit codes.
#pragma once

namespace confine {

inline constexpr int kExitSetupFailed = 125;    // confine could not build the sandbox (or bad flags)
inline constexpr int kExitNotExecutable = 126;  // the command exists but cannot be executed
inline constexpr int kExitNotFound = 127;       // the command was not found inside the sandbox
inline constexpr int kExitSignalBase = 128;     // + N when the command died by signal N

// Maps a waitpid() status to the exit code confine itself exits with.
int exit_code_from_wait_status(int wait_status);
// Maps the errno of a failed execve to 126 or 127.
int exit_code_for_exec_errno(int err);

}  // namespace confine
