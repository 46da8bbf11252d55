#include "mech/caps.h"

#include <cerrno>

namespace confine::mech {

CapabilityDrop prepare_capability_drop() {
  CapabilityDrop d;
  d.empty = cap_init();  // all three sets cleared
  d.last_cap = static_cast<int>(cap_max_bits()) - 1;
  return d;
}

int drop_all_capabilities(const CapabilityDrop& drop, bool bounding_set) {
  if (drop.empty == nullptr) {
    errno = ENOMEM;
    return -1;
  }
  for (int cap = 0; bounding_set && cap <= drop.last_cap; ++cap)
    if (cap_drop_bound(static_cast<cap_value_t>(cap)) != 0 && errno != EINVAL) return -1;
  if (cap_reset_ambient() != 0) return -1;
  return cap_set_proc(drop.empty);
}

}  // namespace confine::mech
