// `confine doctor`: the checks a careful user runs to test their containment, run inside a real sandbox built
// from the given options.
#pragma once

#include <string>

#include "core/options.h"
#include "core/resolve.h"

namespace confine::run {

// The parent side: prints the kernel's layers, then runs `confine __doctor-checks` inside a sandbox made from
// `options` (confine's own binary is bound in read-only for that). 0 if every check passed, 1 if one failed.
int doctor(Options options, const CallerContext& caller);

// The sandbox side (`confine __doctor-checks HOME WORKSPACE NET PASSED-NAMES MARKER`): each check, PASS or FAIL.
int doctor_checks(int argc, char** argv);

// The hidden subcommand the sandbox side runs as.
inline constexpr const char* kDoctorChecks = "__doctor-checks";

}  // namespace confine::run
