// Environment scrubbing: which inherited variables may carry credentials and are dropped by default.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace confine {

// True when a variable name looks like it carries a credential or a handle to one (an agent socket, a bus).
bool is_credential_variable(std::string_view name);

struct ScrubbedEnvironment {
  std::vector<std::string> kept;           // "NAME=value" entries passed into the sandbox
  std::vector<std::string> dropped_names;  // names removed, for -v
};

// Drops credential variables from `inherited` except those named in `pass`, then applies `set` ("K=V", later wins).
ScrubbedEnvironment scrub_environment(const std::vector<std::string>& inherited, const std::vector<std::string>& pass,
                                      const std::vector<std::string>& set);

}  // namespace confine
