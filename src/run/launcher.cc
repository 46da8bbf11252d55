#include "run/launcher.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <vector>

#include "core/exit_status.h"
#include "core/resolve.h"
#include "mech/identity.h"
#include "mech/mounts.h"
#include "run/channel.h"
#include "run/child.h"
#include "sys/held_path.h"
#include "sys/log.h"
#include "sys/syscalls.h"
#include "sys/unique_fd.h"

namespace confine::run {
namespace {

using sys::UniqueFd;

// Forwarded to the command (through pid 1). SIGTSTP/TTIN/TTOU are not: their default action stops confine
// together with the command, which is what the user's shell expects for job control.
constexpr std::array kForwardedSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

// Kills and reaps the sandbox if the parent leaves early.
class ChildProcess {
 public:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  [[nodiscard]] pid_t pid() const { return pid_; }
  void reaped() { pid_ = -1; }

 private:
  pid_t pid_;
};

// Argument vectors in the form execvp wants, built before clone.
struct CStrings {
  std::vector<char*> ptrs;
  explicit CStrings(const std::vector<std::string>& v) {
    for (const auto& s : v) ptrs.push_back(const_cast<char*>(s.c_str()));
    ptrs.push_back(nullptr);
  }
};

unsigned long clone_flags(const Plan& plan) {
  if (plan.mode == Mode::fallback) return 0;  // a plain fork: Landlock and seccomp are the walls
  unsigned long f = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  return plan.new_netns ? (f | CLONE_NEWNET) : f;
}

sys::Status start_child(int channel, const std::vector<UniqueFd>& trees) {
  if (trees.size() > kMaxPassedFds)
    return sys::plain_error("too many --ro/--rw mounts (at most " + std::to_string(kMaxPassedFds) + " when run as root)");
  std::vector<int> fds;
  for (const auto& t : trees) fds.push_back(t.get());
  if (send_go(channel, fds.data(), static_cast<int>(fds.size())) != 0) return sys::errno_error("start the sandbox");
  return sys::ok_status();
}

// Run by root, from what was resolved and held (never the name again: its owner may have renamed a directory on
// the way since); a source with nothing held (a directory confine made after resolving) is resolved here, with
// the same ownership rule.
sys::Result<UniqueFd> clone_held_source(const MountOp& op) {
  std::optional<sys::HeldPath> held;
  int source = op.source_fd;
  if (source < 0) {
    auto h = sys::hold_path("bind source", op.source, sys::PathTrust::owners_checked);
    if (!h) return h.error();
    held = std::move(*h);
    source = held->fd->get();
  }
  UniqueFd tree(sys::clone_mount_tree(source, "", op.recursive));
  if (!tree.valid()) return sys::errno_error("open `" + op.source + "` to bind it");
  return tree;
}

// Run by root: user binds are cloned here, in the host's mount namespace with root's access, and idmapped
// through the sandbox's user namespace so the owner's files appear as the sandbox user's own.
sys::Result<std::vector<UniqueFd>> prepare_parent_trees(const Plan& plan, pid_t child) {
  std::vector<UniqueFd> trees;
  UniqueFd userns;
  for (const auto& op : plan.mounts) {
    if (!op.from_parent) continue;
    if (!userns.valid()) {
      userns.reset(::open(("/proc/" + std::to_string(child) + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC));
      if (!userns.valid()) return sys::errno_error("open the sandbox's user namespace");
    }
    auto tree = clone_held_source(op);
    if (!tree) return tree.error();
    if (sys::set_tree_attributes(tree->get(), mech::bind_attributes(op), 0) != 0)
      return sys::errno_error("set mount attributes on `" + op.source + "`");
    if (sys::set_tree_attributes(tree->get(), sys::kAttrIdmap, 0, true, userns.get()) != 0 && !op.read_only)
      return sys::errno_error("idmap `" + op.source +
                              "` for the sandbox user (run by root, confine shows the workspace to the sandbox through "
                              "an idmapped mount; this filesystem or kernel lacks them — tmpfs needs Linux 6.3. Run "
                              "confine as the directory's owner, or use --no-namespaces --best-effort)");
    trees.push_back(std::move(*tree));
  }
  return trees;
}

// The signalfd plus the mask to restore when the launch is over (a fallback launch blocks them again).
struct SignalFd {
  UniqueFd fd;
  sigset_t original;
  SignalFd() = default;
  SignalFd(SignalFd&& o) noexcept : fd(std::move(o.fd)), original(o.original), active(std::exchange(o.active, false)) {}
  SignalFd& operator=(SignalFd&&) = delete;
  ~SignalFd() {
    if (active) ::sigprocmask(SIG_SETMASK, &original, nullptr);
  }
  bool active = false;
};

// Blocks the forwarded signals and SIGCHLD before clone, so none is lost between clone and the supervise loop.
sys::Result<SignalFd> block_signals() {
  SignalFd s;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int sig : kForwardedSignals) sigaddset(&set, sig);
  if (::sigprocmask(SIG_BLOCK, &set, &s.original) != 0) return sys::errno_error("block signals");
  s.active = true;
  s.fd.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!s.fd.valid()) return sys::errno_error("signalfd");
  return s;
}

// A host file at an inside path: through the bind whose destination holds it (the workspace, a --ro: the sandbox
// sees it), or at the same path where nothing is bound (full mode: outside the sandbox's view; fallback mode: the
// host's own filesystem, which the sandbox sees).
struct HostFile {
  std::string path;
  bool seen_inside = false;
};

HostFile host_file_of(const Plan& plan, const std::string& inside) {
  const MountOp* best = nullptr;
  for (const auto& m : plan.mounts)
    if (m.kind == MountKind::bind && m.beneath.empty() && !m.dest.empty() && is_within(inside, m.dest) &&
        (best == nullptr || m.dest.size() > best->dest.size()))
      best = &m;
  if (best == nullptr) return {inside, plan.mode == Mode::fallback};
  return {best->source + inside.substr(best->dest.size()), true};
}

// The host file the sandbox's command names: the same name on the command's $PATH, or the same path from its
// working directory, looked up on the host's side. Only to word the message: nothing of it is run or read.
std::optional<HostFile> found_on_host(const Plan& plan) {
  const std::string& name = plan.argv[0];
  auto exists = [](const HostFile& f) { return ::access(f.path.c_str(), F_OK) == 0; };
  if (name.find('/') != std::string::npos) {
    auto f = host_file_of(plan, normalize_absolute(name.starts_with('/') ? name : plan.workdir + "/" + name));
    return exists(f) ? std::optional(f) : std::nullopt;
  }
  std::string_view path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& e : plan.env)
    if (e.starts_with("PATH=")) path = std::string_view(e).substr(5);
  while (!path.empty()) {
    auto colon = path.find(':');
    auto dir = std::string(path.substr(0, colon));
    path = colon == std::string_view::npos ? std::string_view{} : path.substr(colon + 1);
    if (auto f = host_file_of(plan, dir + "/" + name); dir.starts_with('/') && exists(f)) return f;
  }
  return std::nullopt;
}

// execve's ENOENT: the command is nowhere, outside the sandbox's view, or there but its #! interpreter is not.
std::string not_found_text(const Plan& plan) {
  const std::string& name = plan.argv[0];
  auto on_host = found_on_host(plan);
  if (!on_host) return "`" + name + "`: command not found (in the sandbox, nor on the host)";
  if (on_host->seen_inside)
    return "`" + name + "`: cannot execute: the interpreter its first line (#!) names is not in the sandbox";
  return fmt::format("`{}`: command not found in the sandbox; the host has it at {}, outside what the sandbox sees "
                     "(--ro {} would show it)", name, on_host->path, on_host->path.substr(0, on_host->path.rfind('/')));
}

std::string command_report_text(const Plan& plan, const ChildReport& r) {
  if (r.step >= plan.command_steps.size()) return "sandbox setup failed";
  const CommandStep& step = plan.command_steps[r.step];
  if (step.kind == CommandStepKind::exec && (r.err == ENOENT || r.err == ENOTDIR)) return not_found_text(plan);
  if (step.kind == CommandStepKind::exec) return sys::Error{"`" + plan.argv[0] + "`: cannot execute", r.err}.message();
  return sys::Error{"cannot " + describe(plan, step), r.err}.message();
}

std::string report_text(const Plan& plan, const ChildReport& r) {
  if (r.phase == Phase::command) return command_report_text(plan, r);
  if (r.phase != Phase::init || r.step >= plan.init_steps.size()) return "sandbox setup failed";
  const InitStep& step = plan.init_steps[r.step];
  auto text = sys::Error{"cannot " + describe(plan, step), r.err}.message();
  bool mask = step.kind == InitStepKind::attach && plan.mounts[step.mount].kind == MountKind::mask;
  // A scan's mask that no longer finds what the scan saw: something moved or replaced it since (another run, an
  // editor), and its secret may be readable at another name. Nothing ran; the next scan sees the tree as it is.
  if (mask && plan.mounts[step.mount].expect_ino != 0 && (r.err == ENOENT || r.err == ESTALE || r.err == ENOTDIR || r.err == ELOOP))
    return "cannot " + describe(plan, step) + ": it was moved or replaced after the scan for secret files (a concurrent "
           "change to the workspace); nothing ran, run confine again";
  // The user's own masks: the file may have been moved, by an earlier run, to be read at its new name in this one.
  if (mask && r.err == ENOENT)
    return text + " (a mask must name something that exists: if it was moved, mask it where it is now)";
  bool overlay = step.kind == InitStepKind::create_layers ||
                 (step.kind == InitStepKind::attach && plan.mounts[step.mount].kind == MountKind::overlay);
  // No overlayfs here (a module not loaded, a kernel before 5.11 in a user namespace, a lower filesystem it
  // refuses): the image can still run read-only.
  return overlay ? text + " (confine run --read-only shows the image read-only, without overlayfs)" : text;
}

class Supervisor {
 public:
  Supervisor(const Plan& plan, ChildProcess& child, int channel, int signal_fd, const Launch::Events& events,
             std::optional<ChildReport> report, bool channel_open)
      : plan_(plan), child_(child), channel_(channel), signal_fd_(signal_fd), events_(events),
        channel_open_(channel_open), report_(report) {}

  LaunchOutcome run() {
    std::vector<struct pollfd> fds;
    while (!exit_status_) {
      fds.assign({{signal_fd_, POLLIN, 0}, {channel_open_ ? channel_ : -1, POLLIN, 0}});
      if (events_.watches) events_.watches->append_to(fds);
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        log::error("poll: {}", std::strerror(errno));
        return {kExitSetupFailed};
      }
      // The watches first: a refused call waits for its answer, and pid 1's exit ends the loop.
      if (events_.watches) events_.watches->serve(fds);
      if (fds[1].revents != 0) read_channel();
      if (fds[0].revents != 0) read_signals();
    }
    while (channel_open_) read_channel();  // a report sent just before pid 1 exited
    return finish();
  }

 private:
  void read_channel() {
    ChildReport r{};
    int fds[kMaxPassedFds];
    int fd_count = 0;
    auto n = receive_message(channel_, r, fds, &fd_count);
    std::vector<UniqueFd> passed(fds, fds + fd_count);
    if (n == static_cast<ssize_t>(sizeof r) && r.phase == Phase::seccomp_listener) {
      if (events_.seccomp_listener) events_.seccomp_listener(passed.empty() ? UniqueFd() : std::move(passed.front()));
    } else if (n == static_cast<ssize_t>(sizeof r) && r.phase != Phase::listeners && r.phase != Phase::refusal_files) {
      if (!report_) report_ = r;
    } else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      channel_open_ = false;
      if (n == 0 && !report_ && !exit_status_ && events_.started) events_.started(child_.pid());
    } else if (n < 0 && errno == EAGAIN && exit_status_) {
      channel_open_ = false;
    }
  }

  void read_signals() {
    struct signalfd_siginfo si {};
    while (::read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
      int sig = static_cast<int>(si.ssi_signo);
      if (sig == SIGCHLD) {
        int status = 0;
        if (::waitpid(child_.pid(), &status, WNOHANG) == child_.pid()) {
          child_.reaped();
          exit_status_ = status;
        }
      } else if (si.ssi_code != SI_KERNEL) {
        // Terminal-generated signals already reached the command (same process group); others are relayed.
        ::kill(child_.pid(), sig);
      }
    }
  }

  // AppArmor's userns restriction and seccomp-confined containers let the clone succeed but refuse the first
  // privileged step inside: that is a refusal of namespaces, not a setup bug.
  bool is_namespace_refusal(const ChildReport& r) const {
    if (r.phase != Phase::init || r.step >= plan_.init_steps.size() || (r.err != EPERM && r.err != EACCES)) return false;
    auto kind = plan_.init_steps[r.step].kind;
    return kind == InitStepKind::set_ids || kind == InitStepKind::make_mounts_private || kind == InitStepKind::create_root;
  }

  // A step a container or the kernel may refuse (a new filesystem, the hostname, the loopback, the root's
  // switch): the command has not run, so a weaker mode may still. Not a step on the workspace's paths (a bind, a
  // mask): a previous run's sandbox could make one of those fail on purpose, to push the next into a weaker mode.
  bool is_step_refusal(const ChildReport& r) const {
    if (r.phase != Phase::init || r.step >= plan_.init_steps.size() || (r.err != EPERM && r.err != EACCES)) return false;
    const auto& step = plan_.init_steps[r.step];
    switch (step.kind) {
      case InitStepKind::set_hostname:
      case InitStepKind::loopback_up:
      case InitStepKind::create_layers:
      case InitStepKind::pivot_root:
      case InitStepKind::seal_root: return true;
      case InitStepKind::attach: {
        auto kind = plan_.mounts[step.mount].kind;
        return kind == MountKind::proc || kind == MountKind::sysfs || kind == MountKind::devpts || kind == MountKind::tmpfs;
      }
      case InitStepKind::set_ids:
      case InitStepKind::check_ids:
      case InitStepKind::make_mounts_private:
      case InitStepKind::clone_source:
      case InitStepKind::create_root:
      case InitStepKind::open_listeners:
      case InitStepKind::hand_over_refusal_files:
      case InitStepKind::close_inherited_fds:
      case InitStepKind::drop_capabilities:
      case InitStepKind::no_new_privs:
      case InitStepKind::not_dumpable: return false;
    }
    return false;
  }

  LaunchOutcome finish() {
    if (report_ && plan_.mode == Mode::full && is_namespace_refusal(*report_))
      return {kExitSetupFailed, true, report_->err};
    if (report_ && plan_.mode == Mode::full && is_step_refusal(*report_))
      return {kExitSetupFailed, true, report_->err, report_text(plan_, *report_)};
    if (report_) {
      log::error("{}", report_text(plan_, *report_));
      if (report_->phase == Phase::command && report_->step < plan_.command_steps.size() &&
          plan_.command_steps[report_->step].kind == CommandStepKind::exec)
        return {exit_code_for_exec_errno(report_->err)};
      return {kExitSetupFailed};
    }
    return {exit_code_from_wait_status(*exit_status_)};
  }

  const Plan& plan_;
  ChildProcess& child_;
  int channel_;
  int signal_fd_;
  const Launch::Events& events_;
  bool channel_open_ = true;
  std::optional<ChildReport> report_;
  std::optional<int> exit_status_;
};

// clone(CLONE_NEWUSER) says EINVAL on a kernel built without user namespaces: a refusal like the others.
bool is_refusal_errno(int err) { return err == EPERM || err == EACCES || err == ENOSPC || err == EUSERS || err == EINVAL; }

// Writing the id maps: EPERM/EACCES is the kernel (or an LSM) refusing; EINVAL is a map it cannot take (an id
// it reserves), which is confine's error to report, never a reason to fall back.
bool is_map_refusal_errno(int err) { return err == EPERM || err == EACCES; }

}  // namespace

struct Launch::State {
  explicit State(const Plan& p) : plan(p), argv(p.argv), envp(p.env), tree_fds(p.mounts.size(), -1) {}
  const Plan& plan;
  // Declared before the child: the child is killed and reaped before the signal mask is restored.
  std::optional<SignalFd> signals;
  UniqueFd parent_end;
  CStrings argv, envp;
  std::vector<int> tree_fds;
  std::optional<ChildProcess> child;
  std::vector<UniqueFd> trees;
  std::optional<ChildReport> report;  // read while waiting for the listeners: pid 1 failed before handing them over
  bool channel_open = true;
  std::optional<int> refused;  // errno of a namespace refusal
  std::optional<LaunchOutcome> supervised;

  sys::Status refusal(int err, sys::Error error) {
    refused = err;
    return error;
  }
};

Launch::Launch(const Plan& plan) : state_(std::make_unique<State>(plan)) {}
Launch::~Launch() = default;

sys::Status Launch::block_signals() {
  auto signals = run::block_signals();
  if (!signals) return signals.error();
  state_->signals.emplace(std::move(*signals));
  return sys::ok_status();
}

sys::Status Launch::shed_groups() {
  if (::setgroups(0, nullptr) != 0) return sys::errno_error("setgroups");
  return sys::ok_status();
}

sys::Status Launch::clone_sandbox(int cgroup_fd) {
  auto& st = *state_;
  const Plan& plan = st.plan;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return sys::errno_error("socketpair");
  UniqueFd parent_end(pair[0]), child_end(pair[1]);
  ChildContext ctx;
  ctx.plan = &plan;
  ctx.channel = child_end.get();
  ctx.tree_fds = st.tree_fds.data();
  ctx.argv = st.argv.ptrs.data();
  ctx.envp = st.envp.ptrs.data();
  ctx.caps = mech::prepare_capability_drop();
  ctx.original_mask = st.signals->original;
  ctx.forwarded = kForwardedSignals.data();
  ctx.forwarded_count = static_cast<int>(kForwardedSignals.size());

  pid_t pid = cgroup_fd >= 0 ? sys::clone_process_into_cgroup(clone_flags(plan), cgroup_fd) : sys::clone_process(clone_flags(plan));
  if (pid < 0) {
    int err = errno;
    cap_free(ctx.caps.empty);
    sys::Error error{"cannot create the sandbox", err};
    if (plan.mode == Mode::full && is_refusal_errno(err)) return st.refusal(err, error);
    return error;
  }
  if (pid == 0) {
    parent_end.reset();
    run_sandbox_init(ctx);
  }
  cap_free(ctx.caps.empty);
  st.child.emplace(pid);
  st.parent_end = std::move(parent_end);
  return sys::ok_status();
}

sys::Status Launch::write_id_maps() {
  auto& st = *state_;
  const auto& ids = st.plan.ids;
  auto s = mech::write_id_maps(st.child->pid(), ids);
  if (s) return s;
  sys::Error error{fmt::format("cannot map the sandbox's ids (uid {} and gid {} inside, uid {} and gid {} on the host): {}",
                               ids.inside_uid, ids.inside_gid, ids.host_uid, ids.host_gid, s.error().message()), 0};
  if (is_map_refusal_errno(s.error().err)) return st.refusal(s.error().err, error);
  return error;
}

sys::Status Launch::open_idmapped_trees() {
  auto trees = prepare_parent_trees(state_->plan, state_->child->pid());
  if (!trees) return trees.error();
  state_->trees = std::move(*trees);
  return sys::ok_status();
}

sys::Status Launch::send_go() {
  auto s = start_child(state_->parent_end.get(), state_->trees);
  state_->trees.clear();  // pid 1 holds its own copies now
  return s;
}

Launch::Handover Launch::receive_handover(Phase phase) {
  auto& st = *state_;
  std::vector<UniqueFd> passed;
  while (st.channel_open && !st.report) {
    struct pollfd p {st.parent_end.get(), POLLIN, 0};
    if (::poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    ChildReport r{};
    int fds[kMaxPassedFds];
    int fd_count = 0;
    auto n = receive_message(st.parent_end.get(), r, fds, &fd_count);
    for (int i = 0; i < fd_count; ++i) passed.emplace_back(fds[i]);
    if (n == static_cast<ssize_t>(sizeof r) && r.phase == phase) return {std::move(passed), static_cast<std::uint32_t>(r.err)};
    passed.clear();
    if (n == static_cast<ssize_t>(sizeof r)) st.report = r;                   // a step failed first
    else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) st.channel_open = false;  // pid 1 is gone
  }
  return {};
}

std::vector<UniqueFd> Launch::receive_listeners() { return receive_handover(Phase::listeners).fds; }

Launch::RefusalFiles Launch::receive_refusal_files() {
  auto handover = receive_handover(Phase::refusal_files);
  RefusalFiles out;
  std::size_t next = 0;
  auto take = [&](std::uint32_t bit) { return (handover.detail & bit) && next < handover.fds.size() ? std::move(handover.fds[next++]) : UniqueFd(); };
  // In the order pid 1 sends them.
  out.denial_log = take(kHandsOverDenialLog);
  out.mask_watch = take(kHandsOverMaskWatch);
  if (handover.detail & kHandsOverTmpfs)
    for (; next < handover.fds.size(); ++next) out.tmpfs.push_back(std::move(handover.fds[next]));
  return out;
}

sys::Status Launch::supervise(const Events& events) {
  auto& st = *state_;
  st.supervised = Supervisor(st.plan, *st.child, st.parent_end.get(), st.signals->fd.get(), events, st.report,
                             st.channel_open)
                      .run();
  return sys::ok_status();
}

pid_t Launch::sandbox_pid() const { return state_->child ? state_->child->pid() : -1; }

LaunchOutcome Launch::outcome() const {
  if (state_->refused) return {kExitSetupFailed, true, *state_->refused};
  if (state_->supervised) return *state_->supervised;
  return {kExitSetupFailed};
}

}  // namespace confine::run
