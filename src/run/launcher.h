// The parent side: clone the sandbox's pid 1 into new namespaces, write its id maps, hand it the trees only
// the parent may make, then supervise it (signal forwarding, exit status, error reports).
#pragma once

#include "core/plan.h"

namespace confine::run {

// Runs the plan to completion; returns the exit code confine should exit with. Reports setup failures itself.
int launch(const Plan& plan);

}  // namespace confine::run
