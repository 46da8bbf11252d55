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

// Drops from `env` ("NAME=value") every variable whose value holds a real value, under whatever name the caller
// had it; returns the names dropped.
std::vector<std::string> drop_variables_holding_secrets(std::vector<std::string>& env, const SecretSet& secrets);

}  // namespace confine::run
