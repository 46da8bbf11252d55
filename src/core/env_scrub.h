// Environment scrubbing: which inherited variables may carry credentials and are dropped by default.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sys/result.h"

namespace confine {

// True when a variable name looks like it carries a credential or a handle to one (an agent socket, a bus).
bool is_credential_variable(std::string_view name);

// True for a URL whose userinfo holds a password (redis://:pw@host, postgres://u:pw@db, http://u:pw@proxy):
// whatever its variable is called, it carries the credential.
bool is_url_with_password(std::string_view value);

struct ScrubbedEnvironment {
  std::vector<std::string> kept;           // "NAME=value" entries passed into the sandbox
  std::vector<std::string> dropped_names;  // names removed, for -v
};

// Drops credential variables from `inherited` except those named in `pass`, then applies `set` ("K=V", later wins).
ScrubbedEnvironment scrub_environment(const std::vector<std::string>& inherited, const std::vector<std::string>& pass,
                                      const std::vector<std::string>& set);

// A docker --env-file: one NAME=VALUE per line (the value taken literally, quotes included, as docker does), or
// a bare NAME that takes the host's value; blank lines and lines starting with # are skipped.
struct EnvFile {
  std::vector<std::string> set;   // "NAME=VALUE"
  std::vector<std::string> pass;  // NAME
};
sys::Result<EnvFile> parse_env_file(std::string_view text, const std::string& source);

// Sets "NAME=value" in `env`, replacing NAME's earlier value.
void set_variable(std::vector<std::string>& env, const std::string& entry);

}  // namespace confine
