// The user's systemd manager as a source of a delegated cgroup: what `systemd-run --user --scope
// -p Delegate=yes` does, over D-Bus with sd-bus. libsystemd is loaded (dlopen) only when this is needed, so no
// other run pays for mapping it.
#pragma once

#include "sys/result.h"

namespace confine::mech {

// Asks the user's systemd manager for a transient scope `confine-<pid>.scope` holding this process, with
// Delegate=yes, and waits until this process is in it. Afterwards find_cgroup_place() finds it "delegated".
sys::Status move_into_transient_scope();

}  // namespace confine::mech
