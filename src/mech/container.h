// The container confine may be running in, and which steps of the full sandbox it allows. Parent side.
#pragma once

#include "core/layers.h"
#include "core/policy.h"

namespace confine::mech {

// Whether this process shows the marks of a container that refuses steps of the full sandbox: parts of /proc
// mounted over (engines mask /proc/kcore, /proc/keys, /proc/timer_list and bind /proc/sys read-only), or a seccomp
// filter on it (`seccomp_filtered`, from probe_cheap; one that may refuse sethostname). Five statx calls: cheap
// enough for every run, which then tries the steps only where it says so.
bool container_may_refuse(bool seccomp_filtered);

// What a container allows of the full sandbox. `try_steps`: try, in a throwaway child, what it may refuse (a fresh
// /proc in a new user and pid namespace, the hostname in a new UTS namespace; about a millisecond); otherwise they
// are assumed to work. `run_by_root`: whether root can bind the workspace as an idmapped mount, which needs
// CAP_SYS_ADMIN in the host's user namespace. The engine (from the marks engines leave) and whether the container
// has a user namespace of its own are looked up only where a step is refused (the engine's variables from `caller`):
// they only word the fix.
ContainerFacts container_facts(bool try_steps, bool run_by_root, const CallerEnvironment& caller);

// Blanks this process's arguments where /proc shows them (its argv area, keeping argv[0]): a sandbox that sees the
// container's /proc could otherwise read confine's command line (host paths, --env values, the --mask list).
void hide_own_arguments();

}  // namespace confine::mech
