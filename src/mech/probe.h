// Probing the kernel for each layer, independently. Parent side.
#pragma once

#include <string>
#include <vector>

#include "core/layers.h"
#include "core/policy.h"
#include "core/report.h"

namespace confine::mech {

// Cheap probes done on every run (Landlock ABI, seccomp): microseconds, no fork.
KernelFeatures probe_cheap();

// Why unprivileged user namespaces are refused here, and how to fix it, from the sysctls and our own state.
std::string diagnose_userns(int clone_errno);

// Tries a user + mount namespace in a throwaway child (what `confine probe` and `explain` report).
bool try_user_namespace(std::string& problem);

// Everything `confine probe` prints.
std::vector<ProbeRow> probe_all(const CallerEnvironment& caller);

}  // namespace confine::mech
