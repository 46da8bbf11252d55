// One run, from a resolved Policy: probe the layers, decide the mode (the degradation ladder), gather the host
// facts, build the plan, launch it, and fall back or refuse when namespaces turn out to be unavailable.
#pragma once

#include "core/policy.h"

namespace confine::run {

int run_sandbox(const Policy& policy);
int explain(const Policy& policy, bool json);
int probe(bool json);

}  // namespace confine::run
