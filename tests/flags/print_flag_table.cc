// Prints src/cli/flag_docs.h's table for check.py, one flag a line: SET<TAB>NAMES<TAB>VALUE<TAB>HELP.
#include <cstdio>
#include <string_view>

#include "cli/flag_docs.h"

namespace {

using confine::cli::FlagSet;

std::string_view set_name(FlagSet set) {
  switch (set) {
    case FlagSet::help: return "help";
    case FlagSet::sandbox: return "sandbox";
    case FlagSet::top: return "top";
    case FlagSet::probe: return "probe";
    case FlagSet::explain: return "explain";
    case FlagSet::checkpoints: return "checkpoints";
    case FlagSet::list: return "list";
    case FlagSet::restore: return "restore";
    case FlagSet::prune: return "prune";
    case FlagSet::run: return "run";
  }
  return "?";  // not reached: -Wswitch names a set added without a name here
}

void print(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace

int main() {
  for (const auto& doc : confine::cli::kFlagDocs) {
    print(set_name(doc.set));
    print("\t");
    print(doc.names);
    print("\t");
    print(doc.value);
    print("\t");
    print(doc.help);
    print("\n");
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}
