// Capabilities (libcap): drop every one, in every set, including the bounding set.
#pragma once

#include <sys/capability.h>

namespace confine::mech {

// Prepared in the parent (libcap allocates), used by the child.
struct CapabilityDrop {
  cap_t empty = nullptr;
  int last_cap = 0;
};

CapabilityDrop prepare_capability_drop();
// Child side: bounding set first (needs CAP_SETPCAP, which the last call removes), then ambient, then
// effective/permitted/inheritable all empty.
// Without CAP_SETPCAP (fallback mode, not root) the bounding set stays: no_new_privs makes it moot.
int drop_all_capabilities(const CapabilityDrop& drop, bool bounding_set);

}  // namespace confine::mech
