#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string_view>

#include "cli/docker_run.h"
#include "cli/documented_flags.h"
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
    "       confine learn [OPTIONS] [--] CMD [ARGS...]\n"
    "       confine checkpoints [list [--json] | restore [ID|latest] [--force] | rm ID | prune [--keep N]] [-w DIR]\n\n"
    "confine: run a command (a coding agent, a build) in a kernel sandbox where only the workspace is\n"
    "writable, your home directory and secrets are invisible, and the network is off.\n";

constexpr const char* kFooter =
    "\nExamples:\n"
    "  confine -- codex                          # the current directory is the workspace\n"
    "  confine -w ~/src/app --ro ~/.gitconfig -- make test\n"
    "  confine explain -- codex                  # what would be enforced here, layer by layer\n"
    "  confine learn -- npm install >npm.toml    # a profile from a run you trust: review it, then --profile\n"
    "\nExit status: the command's own; 128+N if it died by signal N; 125 if confine could not set up the\n"
    "sandbox (or cannot enforce it on this kernel); 126 if the command cannot be executed; 127 if not found.\n";

struct Flags {
  bool verbose = false;
  bool quiet = false;
};

// Each option's names, placeholder and help come from the flag table (flag_docs.h).
void add_sandbox_options(CLI::App& app, Options& o) {
  constexpr auto set = FlagSet::sandbox;
  add_documented_option(app, option_doc(set, "--profile"), o.profile);
  add_documented_option(app, option_doc(set, "-w,--workspace"), o.workspace);
  const auto& net = option_doc(set, "--net");
  // The word is checked first (IsMember), so the callback's parse cannot fail: the type is set at the edge.
  app.add_option_function<std::string>(std::string(net.names), [&o](const std::string& word) {
                                         auto chosen = parse_net(word);
                                         o.net = *chosen;
                                       },
                                       std::string(net.help))
      ->type_name(std::string(net.value))
      ->check(CLI::IsMember(net_words()));
  add_documented_option(app, option_doc(set, "--allow"), o.allow);
  add_documented_option(app, option_doc(set, "--net-log"), o.net_log);
  add_documented_switch(app, switch_doc(set, "--check-sni"), o.check_sni);
  add_documented_option(app, option_doc(set, "--upstream-proxy"), o.upstream_proxy);
  add_documented_option(app, option_doc(set, "--secret"), o.secrets);
  add_documented_option(app, option_doc(set, "--for"), o.secret_for);
  add_documented_option(app, option_doc(set, "--broker"), o.brokers);
  add_documented_option(app, option_doc(set, "--publish"), o.publish);
  add_documented_option(app, option_doc(set, "--ro"), o.ro_binds);
  add_documented_option(app, option_doc(set, "--rw"), o.rw_binds);
  add_documented_option(app, option_doc(set, "--tmpfs"), o.tmpfs);
  add_documented_option(app, option_doc(set, "--device"), o.devices);
  add_documented_option(app, option_doc(set, "--gpus"), o.gpus);
  add_documented_option(app, option_doc(set, "--mask"), o.masks);
  constexpr const auto& scan_skip = option_doc(set, "--scan-skip");
  add_documented_option(app, scan_skip, o.scan_skip)
      ->description(fmt::format(fmt::runtime(scan_skip.help), fmt::join(default_secret_names().skipped_dir_names(), " ")));
  add_documented_option(app, option_doc(set, "--scan-walk"), o.scan_walk);
  add_documented_option(app, option_doc(set, "--env"), o.set_env);
  add_documented_option(app, option_doc(set, "--pass-env"), o.pass_env);
  add_documented_option(app, option_doc(set, "--preserve-fd"), o.preserve_fds);
  add_documented_option(app, option_doc(set, "--user"), o.user);
  add_documented_switch(app, switch_doc(set, "--allow-git-config"), o.allow_git_config);
  add_documented_switch(app, switch_doc(set, "--allow-nested"), o.allow_nested);
  add_documented_option(app, option_doc(set, "--seccomp"), o.seccomp_file);
  add_documented_switch(app, switch_doc(set, "--seccomp-log"), o.seccomp_log);
  add_documented_switch(app, switch_doc(set, "--checkpoint"), o.checkpoint);
  add_documented_option(app, option_doc(set, "--checkpoint-exclude"), o.checkpoint_exclude);
  add_documented_option(app, option_doc(set, "--worktree"), o.worktree);
  add_documented_switch(app, switch_doc(set, "--best-effort"), o.best_effort);
  add_documented_option(app, option_doc(set, "--require"), o.require);
  add_documented_switch(app, switch_doc(set, "--no-namespaces"), o.no_namespaces);
  add_documented_option(app, option_doc(set, "--memory"), o.memory);
  add_documented_option(app, option_doc(set, "--memory-swap"), o.memory_swap);
  add_documented_option(app, option_doc(set, "--pids,--pids-limit"), o.pids);
  add_documented_option(app, option_doc(set, "--cpus"), o.cpus);
  add_documented_option(app, option_doc(set, "--tmpfs-size"), o.tmpfs_size);
  add_documented_option(app, option_doc(set, "--shm-size"), o.shm_size);
  add_documented_option(app, option_doc(set, "--status-fd"), o.status_fd);
  add_documented_option(app, option_doc(set, "--report"), o.report_file);
  add_documented_option(app, option_doc(set, "--log"), o.log_file);
}

void add_common_flags(CLI::App& app, Flags& f) {
  add_documented_switch(app, switch_doc(FlagSet::top, "-v,--verbose"), f.verbose);
  add_documented_switch(app, switch_doc(FlagSet::top, "-q,--quiet"), f.quiet);
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

// An executable of that name in $PATH, as a shell would find it.
bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    auto colon = dirs.find(':');
    auto dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    auto file = std::string(dir.empty() ? "." : dir) + "/" + name;
    if (::access(file.c_str(), X_OK) == 0) return true;
  }
  return false;
}

// `confine exlpain` or `confine checkpoint list` would run a program of that name, which is rarely meant: a first
// word one typo away from a subcommand, that names no program on the host, is refused with the subcommand. Only
// then is $PATH searched, so a plain run pays for an edit distance over a few names.
bool is_mistyped_subcommand(const CLI::App& app, const std::string& word) {
  if (word.find('/') != std::string::npos) return false;
  std::vector<std::string> names{"run"};
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  auto meant = closest_name(word, names);
  if (!meant || on_path(word)) return false;
  log::error("{}: not a confine subcommand; did you mean `confine {}`? (to run a program named `{}`, put `--` before it)",
             word, *meant, word);
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
  } else if (sub == nullptr && !o.command.empty() && is_mistyped_subcommand(app, o.command.front())) {
    return false;
  }
  return true;
}

// The main command, `explain` and `learn` take the command to run; every other subcommand takes no words but its
// own.
bool take_command_or_nothing(CLI::App& app, const std::vector<CLI::App*>& running, Options& o) {
  auto chosen = app.get_subcommands();
  if (chosen.empty()) return take_command(app, nullptr, o);
  if (std::find(running.begin(), running.end(), chosen.front()) != running.end()) return take_command(app, chosen.front(), o);
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
  // Before the subcommands too: each copies its parent's help flag when it is added.
  constexpr const auto& help = switch_doc(FlagSet::help, "-h,--help");
  app.set_help_flag(std::string(help.names), std::string(help.help));
  app.footer(kFooter);
  app.prefix_command();  // everything from the first positional on is the command, untouched
  // One subcommand at most: `confine doctor probe` is doctor given a word it does not take, not two subcommands.
  app.require_subcommand(0, 1);
  add_sandbox_options(app, o);
  add_common_flags(app, flags);
  constexpr const auto& version = switch_doc(FlagSet::top, "--version");
  app.set_version_flag(std::string(version.names), std::string("confine ") + CONFINE_VERSION, std::string(version.help));

  auto* probe = app.add_subcommand("probe", "Show which kernel layers this machine offers (a table, or --json)");
  add_documented_switch(*probe, switch_doc(FlagSet::probe, "--json"), o.json);
  auto* explain = app.add_subcommand("explain", "Show what a run with these options would enforce here, and by which layer");
  explain->prefix_command();
  // The sandbox options of explain and doctor are built only when the word is on the command line: three copies
  // of forty-odd CLI11 options are a sizeable share of a plain run's start-up (allocation and page faults).
  if (mentions(argc, argv, "explain")) add_sandbox_options(*explain, o);
  add_documented_switch(*explain, switch_doc(FlagSet::explain, "--json"), o.json);
  auto* doctor = app.add_subcommand("doctor", "Test your containment: try, inside a sandbox with these options, what "
                                               "a careful user would (read ~/.ssh and ~/.aws, connect out, look for "
                                               "credentials, write outside the workspace); PASS/FAIL for each");
  if (mentions(argc, argv, "doctor")) add_sandbox_options(*doctor, o);
  auto* learn = app.add_subcommand("learn", "Run the command in a sandbox that records instead of refusing (every "
                                            "host, files written in your home, variables kept out), then print a "
                                            "profile that lets the same run succeed in the strict sandbox");
  learn->prefix_command();
  if (mentions(argc, argv, "learn")) add_sandbox_options(*learn, o);
  auto* checkpoints = app.add_subcommand("checkpoints", "List the workspace's checkpoints (--checkpoint), restore one, "
                                                       "or remove them");
  checkpoints->require_subcommand(0, 1);
  auto* checkpoints_list = checkpoints->add_subcommand("list", "List them, newest first: the time, the command each "
                                                                "preceded, its size and what it did not save (the default)");
  auto* restore = checkpoints->add_subcommand("restore", "Put the workspace back as it was at a checkpoint (refused if it "
                                                         "changed after the last run with --checkpoint ended)");
  restore->add_option("ID", o.checkpoint_id, "A checkpoint's id, or `latest` (the default)")->type_name("ID|latest");
  add_documented_switch(*restore, switch_doc(FlagSet::restore, "--force"), o.force);
  auto* rm = checkpoints->add_subcommand("rm", "Remove a checkpoint");
  rm->add_option("ID", o.checkpoint_id, "A checkpoint's id, or `latest`")->type_name("ID|latest")->required();
  auto* prune = checkpoints->add_subcommand("prune", "Remove all but the newest checkpoints");
  add_documented_option(*prune, option_doc(FlagSet::prune, "--keep"), o.keep);
  for (auto* a : {checkpoints, checkpoints_list}) add_documented_switch(*a, switch_doc(FlagSet::list, "--json"), o.json);
  // -w before or after the subcommand's name, as users type it.
  for (auto* a : {checkpoints, checkpoints_list, restore, rm, prune})
    add_documented_option(*a, option_doc(FlagSet::checkpoints, "-w,--workspace"), o.workspace);
  // The subcommands that run no command keep every word they do not take, for take_command_or_nothing to refuse
  // (prefix_command, from the main command, would also make their help say they take one).
  for (auto* a : {probe, doctor, checkpoints, checkpoints_list, restore, rm, prune}) a->prefix_command(false)->allow_extras();
  for (auto* a : {&app, probe, explain, doctor, learn, checkpoints, checkpoints_list, restore, rm, prune}) one_value_per_occurrence(*a);
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
  if (learn->parsed()) o.subcommand = Subcommand::learn;
  if (checkpoints->parsed())
    o.subcommand = restore->parsed() ? Subcommand::checkpoints_restore
                   : rm->parsed()    ? Subcommand::checkpoints_rm
                   : prune->parsed() ? Subcommand::checkpoints_prune
                                     : Subcommand::checkpoints;
  if (!take_command_or_nothing(app, {explain, learn}, o)) return ExitNow{kExitSetupFailed};
  // Given alone it would do nothing: a flag that changes nothing must not pass for one that does.
  if (o.subcommand == Subcommand::run && !o.checkpoint_exclude.empty() && !o.checkpoint) {
    log::error("--checkpoint-exclude needs --checkpoint (it names what the checkpoint does not save)");
    return ExitNow{kExitSetupFailed};
  }
  auto net_given = [](const CLI::App* a) {
    const auto* net = a->get_option_no_throw("--net");
    return net != nullptr && net->count() > 0;
  };
  o.net_given = net_given(&app) || net_given(explain) || net_given(doctor) || net_given(learn);
  o.verbosity = flags.quiet ? 0 : (flags.verbose ? 2 : 1);
  return o;
}

}  // namespace confine::cli
