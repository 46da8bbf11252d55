#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cerrno>

#include "core/exit_status.h"

using namespace confine;

TEST_CASE("a normal exit passes through") {
  CHECK(exit_code_from_wait_status(0) == 0);
  CHECK(exit_code_from_wait_status(42 << 8) == 42);
}

TEST_CASE("death by signal N maps to 128+N") {
  CHECK(exit_code_from_wait_status(SIGKILL) == 137);
  CHECK(exit_code_from_wait_status(SIGTERM) == 143);
}

TEST_CASE("exec errors map to 127 (not found) or 126 (not executable)") {
  CHECK(exit_code_for_exec_errno(ENOENT) == kExitNotFound);
  CHECK(exit_code_for_exec_errno(ENOTDIR) == kExitNotFound);
  CHECK(exit_code_for_exec_errno(EACCES) == kExitNotExecutable);
  CHECK(exit_code_for_exec_errno(ENOEXEC) == kExitNotExecutable);
  CHECK(kExitSetupFailed == 125);
}
