// `confine learn [OPTIONS] -- CMD`: the command runs in a sandbox that records instead of refusing (every host
// name through the proxy, the host's loopback by address, a throw-away home of its own, the names it looks up
// outside its view), then the profile that lets the same run succeed under the strict sandbox is printed on
// stdout (core/learn.h writes it).
#pragma once

#include "core/options.h"
#include "core/resolve.h"

namespace confine::run {

// The command's exit status (the profile is printed whatever it was), or 125 when learn could not run it.
int learn(Options options, const CallerContext& caller);

}  // namespace confine::run
