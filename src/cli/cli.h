// Command-line parsing (CLI11) into Options. The help text here is the one source of the flag documentation
// that man/confine.1 mirrors.
#pragma once

#include <variant>

#include "core/options.h"

namespace confine::cli {

struct ExitNow {
  int code;  // --help / --version (0) or a usage error (125, already reported)
};

std::variant<Options, ExitNow> parse(int argc, char** argv);

}  // namespace confine::cli
