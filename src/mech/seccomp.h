// Installs a compiled seccomp program (child side, the last step before execve).
#pragma once

#include "core/seccomp_compile.h"

namespace confine::mech {

// Async-signal-safe. Requires no_new_privs (set earlier by pid 1).
int install_seccomp(const SeccompProgram& program);

}  // namespace confine::mech
