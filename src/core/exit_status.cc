#include "core/exit_status.h"

#include <sys/wait.h>

#include <cerrno>

namespace confine {

int exit_code_from_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return kExitSignalBase + WTERMSIG(wait_status);
  return kExitSetupFailed;
}

int exit_code_for_exec_errno(int err) {
  // ENOENT/ENOTDIR: no such file along PATH; everything else means "found, but not runnable".
  return (err == ENOENT || err == ENOTDIR) ? kExitNotFound : kExitNotExecutable;
}

}  // namespace confine
