// Docker/Podman (OCI `linux.seccomp`) seccomp profiles in JSON, converted to confine's SeccompPolicy, so a profile
// written for containers can be given to `--seccomp FILE` as it is. Pure: compiling is seccomp_compile.h.
#pragma once

#include <string>
#include <string_view>

#include "core/seccomp_policy.h"
#include "sys/result.h"

namespace confine {

// True when `text` is a JSON document (its first non-blank byte is '{'): `--seccomp FILE` then reads it as a
// Docker/OCI seccomp profile instead of confine-seccomp/1 TOML.
bool looks_like_oci_seccomp(std::string_view text);

// Converts a Docker/Podman seccomp profile to confine's model. `kernel_release` ("6.18.0-...") decides rules
// with includes.minKernel. Errors name the source and the JSON location (e.g. `syscalls[12].action`).
sys::Result<SeccompPolicy> parse_oci_seccomp(std::string_view text, const std::string& source,
                                             std::string_view kernel_release);

}  // namespace confine
