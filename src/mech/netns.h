// Network namespace: with --net none, the new namespace gets loopback up and nothing else.
#pragma once

namespace confine::mech {

// Child side, async-signal-safe.
int bring_loopback_up();

}  // namespace confine::mech
