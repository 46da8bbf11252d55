// User namespace identity: the parent writes the id maps; the child switches to its ids.
#pragma once

#include <sys/types.h>

#include "core/policy.h"
#include "sys/result.h"

namespace confine::mech {

// Parent side: deny setgroups, then map exactly one uid and one gid (inside -> host).
sys::Status write_id_maps(pid_t child, const Identity& ids);
// Child side (async-signal-safe): become the inside uid/gid; capabilities in the new namespace are kept.
int apply_ids(const Identity& ids);
// Child side (async-signal-safe): 0 if the real, effective and saved uid and gid are all the inside ones and, run
// by root, no supplementary group is left; else -1 with EPERM. Fails closed should a switch have been a no-op.
int check_ids(const Identity& ids);

}  // namespace confine::mech
