// Installs a compiled seccomp program (child side, the last step before execve).
#pragma once

#include "core/seccomp_compile.h"

namespace confine::mech {

// Async-signal-safe. Requires no_new_privs (set earlier by pid 1). With program.notifying, *listener is the
// filter's listener, or -1 when the kernel gave none (EBUSY: this process already runs under a filter with a
// listener, such as another sandbox's) and `code` was installed instead, refusing by itself.
int install_seccomp(const SeccompProgram& program, int* listener);

}  // namespace confine::mech
