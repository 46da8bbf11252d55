// `confine run`: a `docker run` command line, flag for flag, translated into Options. The table of what each
// docker flag becomes is README.md's "docker run flags"; the flags confine refuses are listed in kRefused.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "cli/cli.h"
#include "core/options.h"
#include "sys/result.h"

namespace confine::cli {

// argv[0] is "run"; the rest is what follows `docker run`.
std::variant<Options, ExitNow> parse_docker_run(int argc, char** argv);

// Pure steps, exposed for unit tests.
struct Volume {
  std::string source;  // as given (absolute or ./relative host path)
  std::string dest;    // absolute inside
  bool read_only = false;
};
// -v SRC:DST[:OPTS] or --mount type=bind,…; an error names the spec and what is wrong with it.
sys::Result<Volume> parse_volume(const std::string& spec);
// --mount type=bind|tmpfs,…: a bind as a Volume, or a tmpfs as "DEST[:size=…,mode=…]" in `tmpfs`.
sys::Result<std::variant<Volume, std::string>> parse_mount(const std::string& spec);
// Picks the volume that becomes confine's workspace (secrets masked, .git protected): the one that holds the
// working directory (deepest first), else the first read-write one; -1 for none.
int pick_workspace(const std::vector<Volume>& volumes, const std::string& workdir);

}  // namespace confine::cli
