// The parent side: clone the sandbox's pid 1 into new namespaces, write its id maps, hand it the trees only
// the parent may make, then supervise it (signal forwarding, exit status, error reports).
#pragma once

#include <sys/types.h>

#include <functional>

#include "core/plan.h"

namespace confine::run {

struct LaunchOutcome {
  int exit_code = 0;
  // User namespaces are unusable here (refused at clone, at the id maps, or at the first mount): nothing ran,
  // nothing was reported; the caller decides between failing and falling back.
  bool namespaces_refused = false;
  int err = 0;
};

// Called once the command has been executed (the channel reached EOF with no error report).
using OnStarted = std::function<void(pid_t sandbox_pid)>;

// Runs the plan to completion. Setup failures other than a namespace refusal are reported here.
LaunchOutcome launch(const Plan& plan, const OnStarted& on_started);

}  // namespace confine::run
