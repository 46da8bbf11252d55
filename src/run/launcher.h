// The parent side: clone the sandbox's pid 1 into new namespaces, write its id maps, hand it the trees only
// the parent may make, then supervise it (signal forwarding, exit status, error reports).
#pragma once

#include <sys/types.h>

#include <functional>
#include <vector>

#include "core/plan.h"
#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::run {

struct LaunchOutcome {
  int exit_code = 0;
  // User namespaces are unusable here (refused at clone, at the id maps, or at the first mount): nothing ran,
  // nothing was reported; the caller decides between failing and falling back.
  bool namespaces_refused = false;
  int err = 0;
};

struct LaunchHooks {
  // Once pid 1 exists with its namespaces and id maps, before it sets anything up (--net veth joins its network
  // namespace here). A failure stops the launch.
  std::function<sys::Status(pid_t sandbox_pid)> before_start;
  // Once the command has been executed (the channel reached EOF with no error report).
  std::function<void(pid_t sandbox_pid)> on_started;
  // When pid 1 hands over the listening sockets of Plan::listeners (--net proxy), in that order.
  std::function<void(std::vector<sys::UniqueFd>)> on_listeners;
};

// Runs the plan to completion. Setup failures other than a namespace refusal are reported here.
// `cgroup_fd`, if not -1, is the cgroup v2 directory pid 1 is born in (CLONE_INTO_CGROUP): its cgroup namespace
// then has that leaf as its root.
LaunchOutcome launch(const Plan& plan, const LaunchHooks& hooks, int cgroup_fd = -1);

}  // namespace confine::run
