// confine: the table of contents. parse -> (another subcommand) | complete the options -> resolve -> (explain |
// prepare the host -> run: decide, plan, launch, supervise -> record how the run ended).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"
#include "cli/profiles.h"
#include "core/exit_status.h"
#include "core/resolve.h"
#include "run/secret_values.h"
#include "run/checkpoint.h"
#include "run/child.h"
#include "run/doctor.h"
#include "run/learn.h"
#include "run/session.h"
#include "run/worktree.h"
#include "sys/log.h"

extern char** environ;

namespace {

using namespace confine;

CallerContext caller_context() {
  CallerContext c;
  c.uid = ::getuid();
  c.gid = ::getgid();
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) != nullptr) c.cwd = buf.data();
  if (const char* home = std::getenv("HOME")) c.home = home;
  for (char** e = environ; *e != nullptr; ++e) c.environ.emplace_back(*e);
  c.env = caller_environment(c.environ);
#ifdef CONFINE_TEST_HOOKS
  // Tests pin the kernel features so `explain` reads the same on every machine. Only a test build reads it: it
  // can switch a layer off, so what is installed ignores it.
  if (const char* pinned = std::getenv("CONFINE_TEST_FEATURES")) c.test_features = pinned;
  // And they meet the log files' caps with fewer lines than a real run would take.
  if (const char* caps = std::getenv("CONFINE_TEST_LOG_CAPS")) c.test_log_caps = caps;
#endif
  return c;
}

// With stdin/stdout/stderr closed by the caller, the next fds confine opens (the channel, say) would take
// their numbers and receive the command's output. Park /dev/null on any that is closed.
void ensure_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && ::open("/dev/null", O_RDWR) < 0) std::abort();
}

// `confine run` without -i: the command's stdin reads as empty, as under docker.
int redirect_stdin_to_null() {
  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::dup2(fd, STDIN_FILENO) < 0) {
    log::error("redirect stdin to /dev/null: {}", std::strerror(errno));
    return -1;
  }
  ::close(fd);
  return 0;
}

int checkpoints(const Options& o, const CallerContext& c) {
  std::string dir = o.workspace.empty() ? c.cwd : o.workspace;
  char* real = ::realpath(dir.c_str(), nullptr);
  if (real == nullptr) {
    log::error("workspace `{}`: {}", dir, std::strerror(errno));
    return kExitSetupFailed;
  }
  auto data_home = checkpoints_data_home(c.home, c.env);
  auto ws = run::checkpoint_workspace(real, data_home);
  std::free(real);
  if (o.subcommand == Subcommand::checkpoints_restore) return run::restore_checkpoint(ws, data_home, o.checkpoint_id, o.force);
  if (o.subcommand == Subcommand::checkpoints_rm) return run::remove_checkpoint(ws, data_home, o.checkpoint_id);
  if (o.subcommand == Subcommand::checkpoints_prune) return run::prune_checkpoints(ws, data_home, o.keep);
  return run::list_checkpoints(ws, data_home, o.json);
}

// The subcommands that run no sandbox of the command line's, or one of their own (learn); nullopt for a run and
// for explain, which go on in main.
std::optional<int> other_subcommand(Options& o, const CallerContext& c) {
  switch (o.subcommand) {
    case Subcommand::probe: return run::probe(o.json, c.env);
    case Subcommand::doctor: return run::doctor(o, c);
    case Subcommand::checkpoints:
    case Subcommand::checkpoints_restore:
    case Subcommand::checkpoints_rm:
    case Subcommand::checkpoints_prune: return checkpoints(o, c);
    case Subcommand::learn: {
      int code = run::learn(std::move(o), c);
      std::fflush(nullptr);
      _exit(code);  // as a run ends, in main
    }
    case Subcommand::run:
    case Subcommand::explain: return std::nullopt;
  }
  return std::nullopt;
}

// The options a run resolves: the profile's applied under the command line's, and the workspace moved into the
// --worktree (made or reused here, named in `worktree`). False after saying why not.
bool complete_options(Options& options, const CallerContext& caller, std::optional<run::Worktree>& worktree) {
  if (auto s = options.docker_run ? sys::ok_status() : cli::apply_profile_to(options, caller); !s) {
    log::error("{}", s.error().message());
    return false;
  }
  for (const auto& line : options.profile_overrides) log::note("{}", line);
  if (options.worktree.empty() || options.subcommand != Subcommand::run) return true;
  // git runs from / (run_captured): a relative -w is made absolute first.
  auto w = run::prepare_worktree(absolute_from(caller.cwd, options.workspace.empty() ? "." : options.workspace),
                                 options.worktree);
  if (!w) {
    log::error("{}", w.error().message());
    return false;
  }
  options.workspace = w->dir;
  worktree = *w;
  log::info("worktree {} {} (branch {})", w->created ? "created:" : "reused:", w->dir, w->branch);
  return true;
}

// What the host holds ready before the sandbox starts: the output files and the secrets' real values. nullopt
// after saying why not; nothing of the command has run then.
std::optional<run::HostResources> prepare_host(const Policy& policy, const CallerContext& caller) {
  auto files = run::open_output_files(policy);
  if (!files) {
    log::error("{}", files.error().message());
    return std::nullopt;
  }
  // Before anything runs: a secret that cannot be read ends the run here (and the plan leaves out every variable
  // that holds a real value, under any name).
  auto secrets = run::load_secrets(policy.proxy.secrets, caller.environ);
  if (!secrets) {
    log::error("{}", secrets.error().message());
    return std::nullopt;
  }
  files->secrets = std::move(*secrets);
  return std::move(*files);
}

}  // namespace

int main(int argc, char** argv) {
  run::remember_caller_strings(argv, environ);
  ensure_standard_fds();
  if (argc > 1 && std::string_view(argv[1]) == run::kDoctorChecks) return run::doctor_checks(argc, argv);
  auto parsed = cli::parse(argc, argv);
  if (auto* exit_now = std::get_if<cli::ExitNow>(&parsed)) return exit_now->code;
  auto& options = std::get<Options>(parsed);
  log::set_level(static_cast<log::Level>(options.verbosity));
  auto caller = caller_context();
  if (auto code = other_subcommand(options, caller)) return *code;
  if (options.stdin_closed && redirect_stdin_to_null() != 0) return kExitSetupFailed;
  std::optional<run::Worktree> worktree;
  if (!complete_options(options, caller, worktree)) return kExitSetupFailed;
  auto policy = resolve(options, caller);
  if (!policy) {
    log::error("{}", policy.error().message());
    return kExitSetupFailed;
  }
  if (options.subcommand == Subcommand::explain) return run::explain(*policy, options.json);
  auto files = prepare_host(*policy, caller);
  if (!files) return kExitSetupFailed;
  int code = run::run_sandbox(*policy, *files);
  if (worktree) log::emit("confine: ", run::worktree_removal_hint(*worktree));
  // Nothing is left to clean up (the sandbox is gone, the proxy stopped and its log flushed): skip the
  // destructors of everything still in scope, which cost most of a millisecond at every exit.
  std::fflush(nullptr);
  _exit(code);
}
