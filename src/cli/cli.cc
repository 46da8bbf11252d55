#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string_view>

#include "cli/docker_run.h"
#include "core/exit_status.h"
#include "core/net_mode.h"
#include "core/secret_names.h"
#include "core/suggest.h"
#include "sys/log.h"

#ifndef CONFINE_VERSION
#define CONFINE_VERSION "unknown"
#endif

namespace confine::cli {
namespace {

constexpr const char* kDescription =
    "Usage: confine [OPTIONS] [--] CMD [ARGS...]\n"
    "       confine run [DOCKER-RUN FLAGS] IMAGE|host CMD [ARGS...]   (see `confine run --help`)\n"
    "       confine probe [--json]\n"
    "       confine explain [OPTIONS] [--json] [--] CMD [ARGS...]\n"
    "       confine doctor [OPTIONS]\n"
    "       confine checkpoints [list | restore [ID|latest] [--force]] [-w DIR]\n\n"
    "confine: run a command (a coding agent, a build) in a kernel sandbox where only the workspace is\n"
    "writable, your home directory and secrets are invisible, and the network is off.\n";

constexpr const char* kFooter =
    "\nExamples:\n"
    "  confine -- codex                          # the current directory is the workspace\n"
    "  confine -w ~/src/app --ro ~/.gitconfig -- make test\n"
    "  confine explain -- codex                  # what would be enforced here, layer by layer\n"
    "\nExit status: the command's own; 128+N if it died by signal N; 125 if confine could not set up the\n"
    "sandbox (or cannot enforce it on this kernel); 126 if the command cannot be executed; 127 if not found.\n";

struct Flags {
  bool verbose = false;
  bool quiet = false;
};

void add_sandbox_options(CLI::App& app, Options& o) {
  app.add_option("--profile", o.profile,
                 "Start from a profile: a built-in name (default, read-only, workspace-write, full-network, codex, "
                 "claude, aider, gemini, npm, pip, cargo, go), one in ~/.config/confine/profiles/ or "
                 "/etc/confine/profiles/, or a path to a .toml file; flags apply on top (see confine-profile(5))")
      ->type_name("NAME|FILE");
  app.add_option("-w,--workspace", o.workspace,
                 "Project directory: bound read-write at its own path and used as the working directory "
                 "(default: the current directory)");
  app.add_option("--net", o.net,
                 "Network: `none` (default; only loopback), `proxy` (only the --allow hosts, through confine's proxy), "
                 "`veth` (the same proxy reached over a veth pair at 10.77.0.1; root only), or `host` (no isolation; warned)")
      ->check(CLI::IsMember(net_words()));
  app.add_option("--allow", o.allow,
                 "With --net proxy or veth: a host the sandbox may reach (port 443 unless given; *.example.com wildcards; an "
                 "address such as 127.0.0.1:11434 is also forwarded from the sandbox's loopback); repeatable")
      ->type_name("HOST[:PORT]");
  app.add_option("--net-log", o.net_log, "With --net proxy: append one JSON line per proxy decision to FILE")
      ->type_name("FILE");
  app.add_flag("--check-sni", o.check_sni,
               "With --net proxy: a CONNECT tunnel must carry TLS whose server name (SNI) is the allowed host");
  app.add_option("--upstream-proxy", o.upstream_proxy,
                 "With --net proxy: send every allowed request through this proxy (e.g. a corporate Squid)")
      ->type_name("http://HOST:PORT");
  app.add_option("--ro", o.ro_binds, "Bind SRC read-only at DEST (default: the same path); repeatable")
      ->type_name("SRC[:DEST]");
  app.add_option("--rw", o.rw_binds, "Bind SRC read-write at DEST (default: the same path); repeatable")
      ->type_name("SRC[:DEST]");
  app.add_option("--tmpfs", o.tmpfs,
                 "Mount an empty writable tmpfs at DEST (OPTIONS: size=N[k|m|g], mode=OCTAL, as in docker); repeatable")
      ->type_name("DEST[:OPTIONS]");
  app.add_option("--mask", o.masks,
                 "Hide PATH (a file reads as empty, a directory as empty); relative paths are inside the workspace")
      ->type_name("PATH");
  app.add_option("--scan-skip", o.scan_skip,
                 fmt::format("Do not walk directories named NAME when looking for secret files; only private-key "
                             "names are looked for in them, as in those skipped by default: {}; repeatable",
                             fmt::join(default_secret_names().skipped_dir_names(), " ")))
      ->type_name("NAME");
  app.add_option("--scan-walk", o.scan_walk,
                 "Walk directories named NAME, one of those skipped by default, like any other; repeatable")
      ->type_name("NAME");
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
  app.add_flag("--allow-nested", o.allow_nested,
               "Let the command build its own sandbox: namespaces, and mounts inside them (for agents that bring one, "
               "such as Codex's bubblewrap); Landlock's filesystem rules step back");
  app.add_option("--seccomp", o.seccomp_file,
                 "Load this seccomp policy (confine-seccomp/1 TOML, or a Docker/OCI JSON profile) instead of the built-in one")
      ->type_name("FILE");
  app.add_flag("--seccomp-log", o.seccomp_log, "Log every seccomp denial to the kernel log (dmesg / audit)");
  app.add_flag("--checkpoint", o.checkpoint,
               "Before the run, save every file of the workspace (untracked ones too) as a checkpoint outside it, "
               "which the sandbox cannot reach; `confine checkpoints` lists them and says how to restore one");
  app.add_option("--worktree", o.worktree,
                 "Run in a new git worktree beside the repository (git worktree add ../REPO-BRANCH -b BRANCH; reused "
                 "if it exists), so the changes land on their own branch and your checkout stays out of reach")
      ->type_name("BRANCH");
  app.add_flag("--best-effort", o.best_effort,
               "Run even if a promise cannot be enforced on this kernel (each one lost is listed at start); "
               "without it confine refuses with exit 125");
  app.add_option("--require", o.require, "Layers that must be enforced even with --best-effort: namespaces, landlock, seccomp")
      ->type_name("LAYER[,LAYER...]");
  app.add_flag("--no-namespaces", o.no_namespaces,
               "Fallback mode: no namespaces, only Landlock + seccomp + no_new_privs (needs --best-effort)");
  app.add_option("--memory", o.memory,
                 "Memory limit (cgroup v2 memory.max; swap off unless --memory-swap), e.g. 512m or 4g")
      ->type_name("SIZE");
  app.add_option("--memory-swap", o.memory_swap, "Memory plus swap, as in docker (-1: unlimited swap)")->type_name("SIZE");
  app.add_option("--pids,--pids-limit", o.pids, "Most processes and threads the sandbox may have at once (pids.max)")
      ->type_name("N");
  app.add_option("--cpus", o.cpus, "CPU time, in CPUs (cpu.max), e.g. 0.5 or 2")->type_name("X");
  app.add_option("--tmpfs-size", o.tmpfs_size,
                 "Size of each in-memory directory: /tmp, /var/tmp, /run, $HOME, and --tmpfs without size= "
                 "(default 1g, and never more than --memory)")
      ->type_name("SIZE");
  app.add_option("--shm-size", o.shm_size, "Size of /dev/shm (default 64m, as in docker)")->type_name("SIZE");
  app.add_option("--status-fd", o.status_fd, "Write one JSON line with the layers applied to fd N once the command runs")
      ->type_name("N");
  app.add_option("--report", o.report_file, "Write the same JSON line to FILE")->type_name("FILE");
}

void add_common_flags(CLI::App& app, Flags& f) {
  app.add_flag("-v,--verbose", f.verbose, "Say what was set up: masked files, dropped variables, layers");
  app.add_flag("-q,--quiet", f.quiet, "Print only errors");
}

bool mentions(int argc, char** argv, std::string_view word) {
  for (int i = 1; i < argc; ++i)
    if (word == argv[i]) return true;
  return false;
}

// The name a user types for this (sub)command: "confine probe", "confine checkpoints".
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const auto* p = app.get_parent(); p != nullptr; p = p->get_parent()) path = p->get_name() + " " + path;
  return path;
}

std::vector<std::string> long_option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* option : app.get_options())
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

// One line for a word that `app` does not take: an unknown option (with the closest known one), or an argument
// it has no place for.
void report_unknown_word(const CLI::App& app, const std::string& word, bool takes_command) {
  auto path = command_path(app);
  if (word.starts_with("-"))
    log::error("{}: unknown option of `{}`{} (see `{} --help`{})", word, path, did_you_mean(word, long_option_names(app)),
               path, takes_command ? "; the command goes after `--`" : "");
  else
    log::error("{}: unexpected argument: `{}` takes no command or other words (see `{} --help`)", word, path, path);
}

// A subcommand that runs no command takes no words beyond its own options and arguments: whatever CLI11 left
// over in it, or in a subcommand nested in it, is refused, never ignored.
bool no_words_left(const CLI::App& sub) {
  if (auto left = sub.remaining(); !left.empty()) {
    report_unknown_word(sub, left.front(), false);
    return false;
  }
  for (const auto* nested : sub.get_subcommands())
    if (!no_words_left(*nested)) return false;
  return true;
}

// prefix_command() also stops at an unknown option; only `--` or a plain word may start the command.
// (For a subcommand, CLI11 hands the words after `--` to the parent, with the `--` already consumed.)
bool take_command(CLI::App& app, CLI::App* sub, Options& o) {
  if (sub != nullptr) {
    o.command = sub->remaining();
    if (o.command.empty()) {
      o.command = app.remaining();
      return true;
    }
  } else {
    o.command = app.remaining();
  }
  if (!o.command.empty() && o.command.front() == "--") {
    o.command.erase(o.command.begin());
  } else if (!o.command.empty() && o.command.front().starts_with("-")) {
    report_unknown_word(sub != nullptr ? *sub : app, o.command.front(), true);
    return false;
  }
  return true;
}

// The main command and `explain` take the command to run; every other subcommand takes no words but its own.
bool take_command_or_nothing(CLI::App& app, CLI::App* explain, Options& o) {
  auto chosen = app.get_subcommands();
  if (chosen.empty()) return take_command(app, nullptr, o);
  if (chosen.front() == explain) return take_command(app, explain, o);
  // Words after a `--` go back to the main command (see take_command).
  if (auto left = app.remaining(); !left.empty()) {
    report_unknown_word(*chosen.front(), left.front(), false);
    return false;
  }
  return no_words_left(*chosen.front());
}

// See one_usage_block(). A subcommand that runs a command says where the command goes.
class OneUsageBlockFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (app->get_parent() == nullptr) return {};
    auto usage = CLI::Formatter::make_usage(app, std::move(name));
    if (app->get_prefix_command() && usage.ends_with('\n')) usage.insert(usage.size() - 1, " [--] CMD [ARGS...]");
    return usage;
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> one_usage_block() { return std::make_shared<OneUsageBlockFormatter>(); }

void one_value_per_occurrence(CLI::App& app) {
  for (auto* option : app.get_options()) option->allow_extra_args(false);
}

std::variant<Options, ExitNow> parse(int argc, char** argv) {
  // `confine run` speaks docker's flags, not confine's: a parser of its own.
  if (argc > 1 && std::string_view(argv[1]) == "run") return parse_docker_run(argc - 1, argv + 1);
  Options o;
  Flags flags;
  CLI::App app{kDescription, "confine"};
  app.formatter(one_usage_block());  // before the subcommands, which take it from here
  app.footer(kFooter);
  app.prefix_command();  // everything from the first positional on is the command, untouched
  // One subcommand at most: `confine doctor probe` is doctor given a word it does not take, not two subcommands.
  app.require_subcommand(0, 1);
  add_sandbox_options(app, o);
  add_common_flags(app, flags);
  app.set_version_flag("--version", std::string("confine ") + CONFINE_VERSION);

  auto* probe = app.add_subcommand("probe", "Show which kernel layers this machine offers (a table, or --json)");
  probe->add_flag("--json", o.json, "Machine-readable output");
  auto* explain = app.add_subcommand("explain", "Show what a run with these options would enforce here, and by which layer");
  explain->prefix_command();
  // The sandbox options of explain and doctor are built only when the word is on the command line: three copies
  // of forty-odd CLI11 options are a sizeable share of a plain run's start-up (allocation and page faults).
  if (mentions(argc, argv, "explain")) add_sandbox_options(*explain, o);
  explain->add_flag("--json", o.json, "Machine-readable output");
  auto* doctor = app.add_subcommand("doctor", "Test your containment: try, inside a sandbox with these options, what "
                                               "a careful user would (read ~/.ssh and ~/.aws, connect out, look for "
                                               "credentials, write outside the workspace); PASS/FAIL for each");
  if (mentions(argc, argv, "doctor")) add_sandbox_options(*doctor, o);
  auto* checkpoints = app.add_subcommand("checkpoints", "List the workspace's checkpoints (--checkpoint), or restore one");
  checkpoints->require_subcommand(0, 1);
  auto* checkpoints_list = checkpoints->add_subcommand("list", "List them, newest first, with what each did not save (the default)");
  auto* restore = checkpoints->add_subcommand("restore", "Put the workspace back as it was at a checkpoint (refused if it "
                                                         "changed after the last run with --checkpoint ended)");
  restore->add_option("ID", o.checkpoint_id, "A checkpoint's id, or `latest` (the default)")->type_name("ID|latest");
  restore->add_flag("--force", o.force, "Restore even over changes made after the run");
  // -w before or after `list`/`restore`, as users type it.
  for (auto* a : {checkpoints, checkpoints_list, restore})
    a->add_option("-w,--workspace", o.workspace, "The workspace (default: the current directory)");
  // The subcommands that run no command keep every word they do not take, for take_command_or_nothing to refuse
  // (prefix_command, from the main command, would also make their help say they take one).
  for (auto* a : {probe, doctor, checkpoints, checkpoints_list, restore}) a->prefix_command(false)->allow_extras();
  for (auto* a : {&app, probe, explain, doctor, checkpoints, checkpoints_list, restore}) one_value_per_occurrence(*a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return ExitNow{app.exit(e)};
  } catch (const CLI::CallForAllHelp& e) {
    return ExitNow{app.exit(e)};
  } catch (const CLI::CallForVersion& e) {
    return ExitNow{app.exit(e)};
  } catch (const CLI::ParseError& e) {
    log::error("{} (see `confine --help`)", e.what());
    return ExitNow{kExitSetupFailed};
  }
  if (probe->parsed()) o.subcommand = Subcommand::probe;
  if (explain->parsed()) o.subcommand = Subcommand::explain;
  if (doctor->parsed()) o.subcommand = Subcommand::doctor;
  if (checkpoints->parsed()) o.subcommand = restore->parsed() ? Subcommand::checkpoints_restore : Subcommand::checkpoints;
  if (!take_command_or_nothing(app, explain, o)) return ExitNow{kExitSetupFailed};
  auto net_given = [](const CLI::App* a) {
    const auto* net = a->get_option_no_throw("--net");
    return net != nullptr && net->count() > 0;
  };
  o.net_given = net_given(&app) || net_given(explain) || net_given(doctor);
  o.verbosity = flags.quiet ? 0 : (flags.verbose ? 2 : 1);
  return o;
}

}  // namespace confine::cli
