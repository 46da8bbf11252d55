#include "run/child.h"

#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "core/exit_status.h"
#include "mech/identity.h"
#include "mech/landlock.h"
#include "mech/mounts.h"
#include "mech/netns.h"
#include "mech/seccomp.h"
#include "run/channel.h"
#include "sys/log.h"
#include "sys/syscalls.h"

extern char** environ;

namespace confine::run {
namespace {

// Strings the kernel copied at exec, end to end: [begin, end).
struct StringArea {
  char* begin = nullptr;
  char* end = nullptr;
};

StringArea g_arguments;
StringArea g_environment;

// The area stops at the first string that does not follow the previous one (one a library put there since).
StringArea area_of(char** strings) {
  if (strings == nullptr || strings[0] == nullptr) return {};
  StringArea a{strings[0], strings[0]};
  for (char** s = strings; *s != nullptr && *s == a.end; ++s) a.end += std::strlen(*s) + 1;
  return a;
}

void erase(const StringArea& a) {
  if (a.begin != nullptr) std::memset(a.begin, 0, static_cast<std::size_t>(a.end - a.begin));
}

// What /proc/1/cmdline shows inside.
constexpr char kInitTitle[] = "confine-init";

// /proc/1/cmdline is readable by every process of the sandbox, with no ptrace check: confine's arguments (host
// paths, --env values, the --mask list) must not be there. /proc/1/environ is closed already (pid 1 is
// non-dumpable and outside the command's Landlock domain), but it holds the variables the scrub kept from the
// command, so it is erased as well: nothing in pid 1 reads it after clone (the command gets its own copy).
void erase_caller_strings() {
  erase(g_arguments);
  erase(g_environment);
  if (g_arguments.end - g_arguments.begin >= static_cast<std::ptrdiff_t>(sizeof kInitTitle))
    std::memcpy(g_arguments.begin, kInitTitle, sizeof kInitTitle);
}

[[noreturn]] void fail(const ChildContext& ctx, Phase phase, std::size_t step, int err, int code) {
  send_report(ctx.channel, phase, static_cast<std::uint32_t>(step), err);
  _exit(code);
}

// PR_SET_PDEATHSIG is cleared whenever our credentials change, so it is (re)armed after set_ids; if confine
// already died in between, its end of the channel is closed and we stop here.
int arm_parent_death_signal(int channel) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
  struct pollfd p {channel, POLLIN, 0};
  if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)) != 0) _exit(kExitSetupFailed);
  return 0;
}

int close_inherited_fds(const ChildContext& ctx, const mech::MountState& mounts) {
  // Keep the channel (until the command is forked), the pty held under the caller's terminal's own name
  // (mech::MountState::held_pty: closing it would take that name away) and the fds the user preserved; sorted.
  int keep[kMaxPassedFds + 2];
  int n = 0;
  for (int fd : ctx.plan->keep_fds)
    if (n < kMaxPassedFds) keep[n++] = fd;
  keep[n++] = ctx.channel;
  if (mounts.held_pty >= 0) keep[n++] = mounts.held_pty;
  std::sort(keep, keep + n);
  return sys::close_fds_from(3, keep, n);
}

// Listening sockets on the sandbox's loopback, handed to confine, which serves them from outside: the sockets
// stay in this network namespace, so the sandbox reaches the proxy without any route out.
int open_listeners(const ChildContext& ctx) {
  const auto& specs = ctx.plan->listeners;
  int fds[kMaxPassedFds];
  int n = 0;
  int rc = 0;
  for (const auto& l : specs) {
    if (l.place != Listener::Place::sandbox_loopback) continue;  // the others are confine's own (a veth end)
    if (n == kMaxPassedFds) break;
    int fd = l.service == Listener::Service::dns ? mech::bind_udp(kDnsStubAddress, l.port)
                                                 : mech::listen_on_loopback(l.ipv6, l.port);
    if (fd < 0) {
      rc = -1;
      break;
    }
    fds[n++] = fd;
  }
  int saved = errno;
  if (rc == 0) rc = send_fds(ctx.channel, Phase::listeners, fds, n, 0);
  saved = rc == 0 ? saved : errno;
  for (int i = 0; i < n; ++i) ::close(fds[i]);
  errno = saved;
  return rc;
}

// What confine reads the run's refusals from: the writable end of the denial log, the masks' watch, each only
// where there is one (a read-only /run of the user's leaves no file; no masks, no watch), then the writable tmpfs
// mounts, which confine finds full or not after the run. `present` says which came, in that order.
int hand_over_refusal_files(const ChildContext& ctx, mech::MountState& mounts) {
  int fds[2 + kMaxWatchedTmpfs];
  int n = 0;
  std::uint32_t present = 0;
  if (mounts.confine_writes >= 0) fds[n++] = mounts.confine_writes, present |= kHandsOverDenialLog;
  if (mounts.mask_watch >= 0) fds[n++] = mounts.mask_watch, present |= kHandsOverMaskWatch;
  for (int i = 0; i < mounts.tmpfs_count; ++i) fds[n++] = mounts.tmpfs_roots[i], present |= kHandsOverTmpfs;
  int rc = send_fds(ctx.channel, Phase::refusal_files, fds, n, present);
  int saved = errno;
  for (int i = 0; i < n; ++i) ::close(fds[i]);
  mounts.confine_writes = mounts.mask_watch = -1;
  mounts.tmpfs_count = 0;
  errno = saved;
  return rc;
}

int run_init_step(ChildContext& ctx, const InitStep& step, mech::MountState& mounts) {
  const Plan& plan = *ctx.plan;
  switch (step.kind) {
    case InitStepKind::set_ids: return mech::apply_ids(plan.ids) == 0 ? arm_parent_death_signal(ctx.channel) : -1;
    case InitStepKind::check_ids: return mech::check_ids(plan.ids);
    case InitStepKind::make_mounts_private: return sys::make_mounts_private();
    case InitStepKind::clone_source: return mech::clone_bind_source(plan.mounts[step.mount], &ctx.tree_fds[step.mount]);
    case InitStepKind::create_root: return mech::create_root(mounts);
    case InitStepKind::create_layers: return mech::create_layers(mounts, plan.layers_options.c_str());
    case InitStepKind::attach: return mech::attach_mount(plan, step.mount, mounts);
    case InitStepKind::pivot_root: return mech::pivot_into_root(mounts);
    case InitStepKind::seal_root: return mech::seal_root(mounts);
    case InitStepKind::set_hostname: return ::sethostname(plan.hostname.data(), plan.hostname.size());
    case InitStepKind::loopback_up: return mech::bring_loopback_up();
    case InitStepKind::open_listeners: return open_listeners(ctx);
    case InitStepKind::hand_over_refusal_files: return hand_over_refusal_files(ctx, mounts);
    case InitStepKind::close_inherited_fds: return close_inherited_fds(ctx, mounts);
    case InitStepKind::drop_capabilities: return mech::drop_all_capabilities(ctx.caps, plan.drop_bounding_set);
    case InitStepKind::no_new_privs: return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    case InitStepKind::not_dumpable: return ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  }
  errno = EINVAL;  // not a step: a value no plan holds
  return -1;
}

int set_rlimits(const Plan& plan) {
  for (const auto& [resource, value] : plan.rlimits) {
    // A hard limit already below ours is a tighter bound, kept as it is: raising it would need CAP_SYS_RESOURCE.
    struct rlimit now {};
    if (::getrlimit(resource, &now) != 0) return -1;
    rlim_t bound = std::min(static_cast<rlim_t>(value), now.rlim_max);
    struct rlimit r {bound, bound};
    if (::setrlimit(resource, &r) != 0) return -1;
  }
  return 0;
}

// The filter, and its listener handed to confine (none: the kernel gave none, and confine says refusals go
// unrecorded). Sent before exec, and the policy allows sending it (seccomp_for checks): until confine holds the
// listener, a refused call of the command waits for an answer.
int apply_seccomp(const ChildContext& ctx) {
  int listener = -1;
  if (mech::install_seccomp(ctx.plan->seccomp, &listener) != 0) return -1;
  if (ctx.plan->seccomp.notifying.empty()) return 0;
  int rc = send_fds(ctx.channel, Phase::seccomp_listener, &listener, listener >= 0 ? 1 : 0, 0);
  int saved = errno;
  if (listener >= 0) ::close(listener);
  errno = saved;
  return rc;
}

int run_command_step(const ChildContext& ctx, const CommandStep& step) {
  switch (step.kind) {
    case CommandStepKind::reset_signals: {
      // Default dispositions before unblocking, so nothing pending reaches pid 1's forwarding handlers.
      for (int i = 0; i < ctx.forwarded_count; ++i) ::signal(ctx.forwarded[i], SIG_DFL);
      ::signal(SIGCHLD, SIG_DFL);
      return ::sigprocmask(SIG_SETMASK, &ctx.original_mask, nullptr);
    }
    case CommandStepKind::change_directory: return ::chdir(ctx.plan->workdir.c_str());
    case CommandStepKind::set_rlimits: return set_rlimits(*ctx.plan);
    case CommandStepKind::apply_landlock: return mech::apply_landlock(ctx.plan->landlock);
    case CommandStepKind::apply_seccomp: return apply_seccomp(ctx);
    case CommandStepKind::exec:
      // execvp searches the PATH of `environ`, which must be the sandbox's environment.
      environ = const_cast<char**>(ctx.envp);
      return ::execvp(ctx.argv[0], ctx.argv);
  }
  errno = EINVAL;  // not a step: a value no plan holds
  return -1;
}

[[noreturn]] void run_command(const ChildContext& ctx) {
  // Dies with pid 1. In full mode the pid namespace already guarantees it; in fallback mode this is what keeps
  // the command from outliving confine (it survives execve).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const auto& steps = ctx.plan->command_steps;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (run_command_step(ctx, steps[i]) != 0) {
      int err = errno;
      fail(ctx, Phase::command, i, err, steps[i].kind == CommandStepKind::exec ? exit_code_for_exec_errno(err) : kExitSetupFailed);
    }
  }
  fail(ctx, Phase::command, steps.size() - 1, ENOEXEC, kExitNotExecutable);  // exec returned without error
}

// Big enough for the command steps (Landlock rules, execvp's PATH search); only the pages touched are faulted in.
constexpr std::size_t kCommandStackSize = 256 * 1024;

int command_entry(void* ctx) { run_command(*static_cast<const ChildContext*>(ctx)); }

// Starts the command the way posix_spawn does: CLONE_VM|CLONE_VFORK, on its own stack. No page tables are
// copied and nothing is faulted in copy-on-write, and pid 1 sleeps until the command has called execve (or
// exited), so the two never run at the same time on the shared memory. The command's steps only read the
// context; what they write (errno, environ) pid 1 never reads again. Signal handlers are not shared (no
// CLONE_SIGHAND), so reset_signals stays the command's own.
pid_t spawn_command(const ChildContext& ctx) {
  void* stack = ::mmap(nullptr, kCommandStackSize, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (stack == MAP_FAILED) return -1;
  char* top = static_cast<char*>(stack) + kCommandStackSize;
  return ::clone(command_entry, top, CLONE_VM | CLONE_VFORK | SIGCHLD, const_cast<ChildContext*>(&ctx));
}

void forwarding_handler(int) {}

// pid 1 of a pid namespace only receives signals it has a handler for: install a no-op one for each
// forwarded signal; they stay blocked and are collected with sigwaitinfo.
void install_forwarding_handlers(const ChildContext& ctx) {
  struct sigaction sa {};
  sa.sa_handler = forwarding_handler;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < ctx.forwarded_count; ++i) ::sigaction(ctx.forwarded[i], &sa, nullptr);
}

// pid 1 is no debugger, yet a child that calls PTRACE_TRACEME makes it its tracer: every signal then stops that
// child until pid 1 lets it go. pid 1 detaches at the first such stop and passes the signal on, as a debugger
// that passes signals does; SIGTRAP (the trap after an execve, a breakpoint) belongs to debuggers and is dropped.
// Returns false for any other stop: PTRACE_GETSIGINFO succeeds only on our tracee in a signal-delivery stop.
bool release_tracee(pid_t pid, int sig) {
  siginfo_t si{};
  if (::ptrace(PTRACE_GETSIGINFO, pid, nullptr, &si) == 0) {
    ::ptrace(PTRACE_DETACH, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(sig == SIGTRAP ? 0 : sig)));
    return true;
  }
  // Traced but in a group stop (another thread stopped the process): once detached it stays stopped, like any
  // stopped process.
  if (errno == EINVAL) ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
  return false;
}

// The terminal's stop signals stop confine too (same process group), and the user's shell says so.
bool is_terminal_stop(int sig) { return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

// Signals that end a command by default. Sent to a stopped command, they stay pending until it runs again.
bool is_ending_signal(int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT; }

// One line on stderr, written without allocating (pid 1 never does after clone).
void report_stop(int sig) {
  if (log::level() < log::Level::normal || is_terminal_stop(sig)) return;
  const char* name = ::sigabbrev_np(sig);
  std::string_view parts[] = {"confine: the command is stopped (SIG", name != nullptr ? name : "?",
                              "); SIGCONT resumes it, Ctrl-C or SIGTERM to confine ends it\n"};
  struct iovec iov[3];
  for (int i = 0; i < 3; ++i) iov[i] = {const_cast<char*>(parts[i].data()), parts[i].size()};
  [[maybe_unused]] auto n = ::writev(STDERR_FILENO, iov, 3);
}

[[noreturn]] void reap_and_forward(const ChildContext& ctx, pid_t command) {
  sigset_t wait_set;
  sigemptyset(&wait_set);
  sigaddset(&wait_set, SIGCHLD);
  for (int i = 0; i < ctx.forwarded_count; ++i) sigaddset(&wait_set, ctx.forwarded[i]);
  bool stopped = false;  // the command, as its last stop or continue left it
  for (;;) {
    siginfo_t info{};
    int sig = ::sigwaitinfo(&wait_set, &info);
    if (sig == SIGCHLD) {
      int status = 0;
      pid_t pid;
      // A stop is not an exit: stopped and continued children are reported too, like a shell sees its jobs.
      while ((pid = ::waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED)) > 0) {
        if (WIFSTOPPED(status) && release_tracee(pid, WSTOPSIG(status))) continue;
        if (pid != command) continue;  // an orphan: reaped (or left stopped), nothing to report
        if (WIFSTOPPED(status)) {
          if (!stopped) report_stop(WSTOPSIG(status));
          stopped = true;
        } else if (WIFCONTINUED(status)) {
          stopped = false;
        } else {
          _exit(exit_code_from_wait_status(status));  // the namespace dies with us
        }
      }
    } else if (sig > 0) {
      // Terminal-generated signals (SI_KERNEL) already reached the command's process group directly.
      if (info.si_code != SI_KERNEL) ::kill(command, sig);
      // A stopped command would keep an ending signal pending forever, confine waiting on it: continue it so
      // the signal takes effect, as a shell's `kill` does for a stopped job. Only when it is stopped: a running
      // TUI gets no SIGCONT (which would make it redraw) at each Ctrl-C it handles.
      if (stopped && is_ending_signal(sig)) ::kill(command, SIGCONT);
    }
  }
}

}  // namespace

void remember_caller_strings(char** argv, char** envp) {
  g_arguments = area_of(argv);
  g_environment = area_of(envp);
}

void run_sandbox_init(ChildContext& ctx) {
  // First, before any process of the sandbox exists.
  erase_caller_strings();
  if (arm_parent_death_signal(ctx.channel) != 0) _exit(kExitSetupFailed);
  int passed[kMaxPassedFds];
  int count = receive_go(ctx.channel, passed);
  if (count < 0) _exit(kExitSetupFailed);  // confine went away before the maps were written
  const Plan& plan = *ctx.plan;
  for (std::size_t i = 0, next = 0; i < plan.mounts.size(); ++i)
    if (plan.mounts[i].from_parent && next < static_cast<std::size_t>(count)) ctx.tree_fds[i] = passed[next++];

  mech::MountState mounts;
  mounts.tree_fds = ctx.tree_fds;
  for (std::size_t i = 0; i < plan.init_steps.size(); ++i)
    if (run_init_step(ctx, plan.init_steps[i], mounts) != 0) fail(ctx, Phase::init, i, errno, kExitSetupFailed);

  install_forwarding_handlers(ctx);
  pid_t command = spawn_command(ctx);
  if (command < 0) fail(ctx, Phase::init, plan.init_steps.size() - 1, errno, kExitSetupFailed);
  // Our copy of the channel goes, so the parent sees EOF exactly when the command has been executed.
  ::close(ctx.channel);
  reap_and_forward(ctx, command);
}

}  // namespace confine::run
