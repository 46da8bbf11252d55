#include "cli/cli.h"

#include <CLI/CLI.hpp>

#include "core/exit_status.h"
#include "sys/log.h"

#ifndef CONFINE_VERSION
#define CONFINE_VERSION "unknown"
#endif

namespace confine::cli {
namespace {

constexpr const char* kDescription =
    "Usage: confine [OPTIONS] [--] CMD [ARGS...]\n\nconfine: run a command (a coding agent, a build) in a kernel sandbox where only the workspace is\n"
    "writable, your home directory and secrets are invisible, and the network is off.\n";

constexpr const char* kFooter =
    "\nExamples:\n"
    "  confine -- codex                          # the current directory is the workspace\n"
    "  confine -w ~/src/app --ro ~/.gitconfig -- make test\n"
    "\nExit status: the command's own; 128+N if it died by signal N; 125 if confine could not set up the\n"
    "sandbox; 126 if the command cannot be executed; 127 if it was not found.\n";

void add_options(CLI::App& app, Options& o, bool& verbose, bool& quiet) {
  app.add_option("-w,--workspace", o.workspace,
                 "Project directory: bound read-write at its own path and used as the working directory "
                 "(default: the current directory)");
  app.add_option("--net", o.net, "Network: `none` (default; only loopback) or `host` (no isolation; warned)")
      ->check(CLI::IsMember({"none", "host"}));
  app.add_option("--ro", o.ro_binds, "Bind SRC read-only at DEST (default: the same path); repeatable")
      ->type_name("SRC[:DEST]");
  app.add_option("--rw", o.rw_binds, "Bind SRC read-write at DEST (default: the same path); repeatable")
      ->type_name("SRC[:DEST]");
  app.add_option("--tmpfs", o.tmpfs, "Mount an empty writable tmpfs at DEST; repeatable")->type_name("DEST");
  app.add_option("--mask", o.masks,
                 "Hide PATH (a file reads as empty, a directory as empty); relative paths are inside the workspace")
      ->type_name("PATH");
  app.add_option("--env", o.set_env, "Set a variable inside; repeatable")->type_name("NAME=VALUE");
  app.add_option("--pass-env", o.pass_env, "Keep a variable that credential scrubbing would drop; repeatable")
      ->type_name("NAME");
  app.add_option("--preserve-fd", o.preserve_fds, "Keep inherited file descriptor N open inside; repeatable")
      ->type_name("N");
  app.add_option("--user", o.user, "The uid[:gid] the command sees inside (default: yours; as root: the workspace owner's)")
      ->type_name("UID[:GID]");
  app.add_flag("--allow-git-config", o.allow_git_config,
               "Leave .git/hooks and .git/config writable (by default read-only, so the agent cannot plant code "
               "that runs outside the sandbox on your next git command)");
  app.add_flag("-v,--verbose", verbose, "Say what was set up: masked files, dropped variables");
  app.add_flag("-q,--quiet", quiet, "Print only errors");
  app.set_version_flag("--version", std::string("confine ") + CONFINE_VERSION);
}

}  // namespace

std::variant<Options, ExitNow> parse(int argc, char** argv) {
  Options o;
  bool verbose = false, quiet = false;
  CLI::App app{kDescription, "confine"};
  app.footer(kFooter);
  app.prefix_command();  // everything from the first positional on is the command, untouched
  add_options(app, o, verbose, quiet);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return ExitNow{app.exit(e)};
  } catch (const CLI::CallForVersion& e) {
    return ExitNow{app.exit(e)};
  } catch (const CLI::ParseError& e) {
    log::error("{} (see `confine --help`)", e.what());
    return ExitNow{kExitSetupFailed};
  }
  o.command = app.remaining();
  // prefix_command() also stops at an unknown option; only `--` or a plain word may start the command.
  if (!o.command.empty() && o.command.front() == "--") {
    o.command.erase(o.command.begin());
  } else if (!o.command.empty() && o.command.front().starts_with("-")) {
    log::error("{}: unknown option (see `confine --help`; the command goes after `--`)", o.command.front());
    return ExitNow{kExitSetupFailed};
  }
  o.verbosity = quiet ? 0 : (verbose ? 2 : 1);
  return o;
}

}  // namespace confine::cli
