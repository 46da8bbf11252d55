// Landlock: probe the kernel's ABI (parent) and apply a LandlockPlan (child, just before seccomp).
#pragma once

#include "core/landlock_rules.h"

namespace confine::mech {

// The Landlock ABI version, or 0 when the kernel lacks it; `reason` gets why (e.g. "disabled at boot").
int probe_landlock_abi(const char** reason = nullptr);

// Async-signal-safe. Requires no_new_privs. Optional paths that do not exist are skipped.
int apply_landlock(const LandlockPlan& plan);

}  // namespace confine::mech
