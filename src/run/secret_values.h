// The real values of --secret, read by confine on the host before the run (the caller's variable, a file, a
// command's output). They stay in confine: the proxy and the broker put them into request headers, and nothing
// of them reaches the sandbox's environment.
#pragma once

#include <string>
#include <vector>

#include "core/secrets.h"
#include "sys/result.h"

namespace confine::run {

// Every secret's value, or the first one that cannot be had (one line naming the secret and its source).
sys::Result<SecretSet> load_secrets(const std::vector<SecretSpec>& specs, const std::vector<std::string>& environ);

}  // namespace confine::run
