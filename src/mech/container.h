// The container confine may be running in, and which steps of the full sandbox it allows. Parent side.
#pragma once

#include "core/layers.h"

namespace confine::mech {

// Which engine made the container this process runs in, from the marks engines leave (a file or a variable):
// two stat calls and a getenv, cheap enough for every run.
ContainerFacts detect_container();

// Whether this process shows the marks of a container that refuses steps of the full sandbox: parts of /proc
// mounted over (engines mask /proc/kcore, /proc/keys, /proc/timer_list and bind /proc/sys read-only), or a seccomp
// filter (one that may refuse sethostname). Six system calls: cheap enough for every run, which then tries the
// steps only where it says so.
bool container_may_refuse();

// Tries, in a throwaway child, what a container may refuse the full sandbox: a fresh /proc in a new user and pid
// namespace, and the hostname in a new UTS namespace. About a millisecond: done only where a container is likely.
// A child that cannot make the namespaces at all leaves the facts as they were (the run's own clone says why).
void try_container_steps(ContainerFacts& facts);

// Root: whether the workspace can be bound as an idmapped mount, which needs CAP_SYS_ADMIN in the host's own user
// namespace (a container's root has neither by default).
bool root_can_idmap();

// Blanks this process's arguments where /proc shows them (its argv area, keeping argv[0]): a sandbox that sees the
// container's /proc could otherwise read confine's command line (host paths, --env values, the --mask list).
void hide_own_arguments();

}  // namespace confine::mech
