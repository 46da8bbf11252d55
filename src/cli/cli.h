// Command-line parsing (CLI11) into Options. Each flag's names, placeholder and help come from the flag table,
// src/cli/flag_docs.h, which --help, man/confine.1 and the completions are checked against (tests/flags).
#pragma once

#include <memory>
#include <variant>

#include "core/options.h"

namespace CLI {
class App;
class Formatter;
}

namespace confine::cli {

struct ExitNow {
  int code;  // --help / --version (0) or a usage error (125, already reported)
};

std::variant<Options, ExitNow> parse(int argc, char** argv);

// A repeatable option takes one value per occurrence (`--ro A --ro B`); by default CLI11 would also swallow the
// words after it (`--ro A cmd` would make `cmd` a second bind; `-v A:B IMAGE CMD`, IMAGE and CMD more volumes).
void one_value_per_occurrence(CLI::App& app);

// CLI11 prints a "Usage:" line of its own after an app's description. confine's descriptions open with their own
// usage block (the subcommands, where the command goes), so a main command's help prints no other: one usage
// block. Set on the main command before its subcommands are added (they take it from there).
std::shared_ptr<CLI::Formatter> one_usage_block();

}  // namespace confine::cli
