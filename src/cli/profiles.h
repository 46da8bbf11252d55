// Finding profiles on disk and in the binary, and applying the chosen one (or `default`) to the options.
#pragma once

#include <string>

#include "core/options.h"
#include "core/profile.h"
#include "core/resolve.h"
#include "sys/result.h"

namespace confine::cli {

// --profile NAME: ~/.config/confine/profiles/NAME.toml ($XDG_CONFIG_HOME), /etc/confine/profiles/NAME.toml,
// then the built-in one; --profile PATH (a `/` in it): that file. Never a file from the workspace unless named
// by path: the agent can write there.
sys::Status apply_profile_to(Options& o, const CallerContext& caller);

// The profile --profile NAME|FILE names, looked for as above and loaded with its parents.
sys::Result<Profile> find_and_load_profile(const std::string& name, const CallerContext& caller);

}  // namespace confine::cli
