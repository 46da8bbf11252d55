#include "run/session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <future>
#include <memory>
#include <optional>
#include <system_error>
#include <string>

#include "core/agent_config.h"
#include "core/decisions.h"
#include "core/exit_status.h"
#include "core/host_layout.h"
#include "core/parent_steps.h"
#include "core/plan.h"
#include "core/report.h"
#include "core/secret_scan.h"
#include "mech/probe.h"
#include "mech/cgroup.h"
#include "mech/container.h"
#include "mech/sandbox_sockets.h"
#include "mech/veth.h"
#include "net/net_recorder.h"
#include "net/proxy.h"
#include "net/publish.h"
#include "core/resolve.h"
#include "run/checkpoint.h"
#include "run/file_privileges.h"
#include "run/git_check.h"
#include "run/git_config_watch.h"
#include "run/host_dirs.h"
#include "run/launcher.h"
#include "run/mask_watch.h"
#include "run/refusal_log.h"
#include "run/connect_gate.h"
#include "run/lookup_record.h"
#include "run/seccomp_watch.h"
#include "run/scan_cache.h"
#include "sys/log.h"
#include "sys/owned_files.h"
#include "sys/private_dir.h"
#include "sys/unique_fd.h"
#include "sys/user_files.h"

#ifndef CONFINE_VERSION
#define CONFINE_VERSION "unknown"
#endif

namespace confine::run {
namespace {

// The kernel's features for a run: probed (microseconds), pinned by a test build's CONFINE_TEST_FEATURES, and
// where a limited cgroup leaf can go, looked up only when limits are asked for (it reads a dozen cgroupfs files).
//
// What a container allows of the full sandbox is tried where a container may refuse a step, where the user
// accepts stand-ins (--best-effort), or for `explain` (`try_container`): a run on a plain host pays five statx
// calls for it (and root one file read more).
KernelFeatures features_for_run(const Policy& p, bool try_container = false) {
  auto f = mech::probe_cheap();
  if (!p.protection.request.no_namespaces) {
    bool try_steps = try_container || p.protection.request.best_effort || mech::container_may_refuse(f.seccomp_filtered);
    f.container = mech::container_facts(try_steps, p.ids.run_by_root, p.caller_env);
  }
  if (p.test_features) apply_feature_override(f, *p.test_features);
  if (p.limits.any()) {
    auto place = mech::find_cgroup_place(needed_controllers(p.limits), p.caller_env);
    if (place) f.cgroup_place = std::move(*place);
    else f.cgroup_problem = place.error().message();
  }
  return f;
}

// The files a profile copies into the sandbox, read before clone (as their owner, when run by root); a missing
// one is skipped, unless confine points it at a broker (core/agent_config.h): then the copy holds that alone.
constexpr std::size_t kMaxCopySize = 64 * sys::kMiB;

sys::Result<std::vector<std::pair<std::string, std::string>>> read_copies(const Policy& p) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& path : p.fs.copies) {
    std::vector<FsPolicy::CopyEdit> edits;
    for (const auto& e : p.fs.copy_edits)
      if (e.path == path) edits.push_back(e);
    auto text = sys::read_user_file("profile copy", path, kMaxCopySize);
    if (!text && text.error().err == ENOENT && edits.empty()) continue;
    if (!text && text.error().err != ENOENT) return text.error();
    if (edits.empty()) {
      out.emplace_back(path, std::move(*text));
      continue;
    }
    auto edited = apply_copy_edits(text ? std::optional<std::string>(std::move(*text)) : std::nullopt, path, edits);
    if (!edited) return edited.error();
    out.emplace_back(path, std::move(*edited));
  }
  return out;
}

// Walks `dir` for secrets (the names in `names`) and settles what to mask. `held`: the directory as resolved (see
// sys/held_path.h), walked instead of its name. A walk that saw the tree move (a directory renamed while it was read,
// a secret gone before it was pinned) walks again, the cache re-reading only what changed; a tree still moving after
// a few walks fails the start rather than run with a secret perhaps unmasked under a name the walk never saw.
// The cache is kept in `keep`, for the save_scan_caches step and the check after the run.
sys::Result<SecretScan> scan_with_cache(const std::string& dir, ScanCacheLocation cache_at,
                                        const std::shared_ptr<const sys::UniqueFd>& held, const SecretNames& names,
                                        KeptScanCaches& keep) {
  constexpr int kWalks = 3;
  ScanLimits limits;
  limits.names = &names;
  auto cache = load_scan_cache(cache_at, dir, limits);
  sys::UniqueFd root(held ? ::openat(held->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                          : ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  SecretScan scan;
  for (int walk = 0; walk < kWalks; ++walk) {
    scan = scan_workspace_secrets(dir, limits, &cache, held ? held->get() : -1);
    if (scan.vanished.empty() && root.valid()) resolve_masks(root.get(), dir, scan, limits);
    if (scan.vanished.empty()) break;
  }
  keep.push_back({dir, std::move(cache_at), std::move(cache), limits});
  if (!scan.vanished.empty())
    return sys::plain_error(fmt::format("`{}/{}` moved while `{}` was scanned for secret files ({} scans in a row saw a "
                                        "concurrent change); nothing ran, run confine again",
                                        dir, scan.vanished.front(), dir, kWalks));
  return scan;
}

// What the host is, for the plan: changes nothing on the host (the plan's steps make what it needs). `keep`: where
// the scans' caches are kept, for the plan's save_scan_caches step and the check after the run. `run_dir`: where
// fallback mode's private directory is to be (chosen, not made yet). `secrets`: the --secret values, which no
// variable of the command's may hold.
sys::Result<PlanInputs> gather_inputs(const Policy& p, const KernelFeatures& f, const Enforcement& e, KeptScanCaches& keep,
                                      const std::string& run_dir, const SecretSet& secrets) {
  PlanInputs in;
  in.env_holding_secrets = variables_holding_secrets(p.proc.env, secrets);
  in.mode = e.mode;
  in.cgroup = cgroup_for(p, e, f);
  in.run_dir = run_dir;
  in.rlimit_stand_ins = e.use_rlimits;
  in.pending_checks_dir = scan_cache_place(p).dir;
  in.stand_ins = e.stand_ins;
  auto copies = read_copies(p);
  if (!copies) return copies.error();
  in.copies = std::move(*copies);
  if (e.mode == Mode::full) {
    in.system = p.fs.rootfs.empty() ? discover_system_entries() : discover_image_entries(p.fs.rootfs);
    auto cache_at = scan_cache_location(p);
    in.scan_cache_dir = in.pending_checks_dir;  // the same place
    if (!p.fs.workspace.empty()) {
      auto scan = scan_with_cache(p.fs.workspace, scan_cache_beside(cache_at, p.fs.workspace), p.fs.workspace_fd,
                                  p.fs.secret_names, keep);
      if (!scan) return scan.error();
      in.secrets = std::move(*scan);
      in.git = discover_git_layout(p.fs.workspace);
    }
    for (const auto& b : p.fs.binds) {
      if (!b.scan_secrets) continue;
      auto scan = scan_with_cache(b.source, scan_cache_beside(cache_at, b.source), b.source_fd, p.fs.secret_names, keep);
      if (!scan) return scan.error();
      in.bind_secrets.push_back({b.dest, std::move(*scan)});
    }
    if (p.net == NetMode::host) in.resolver_dir = discover_resolver_dir();
    in.terminal = discover_terminal();
    if (auto s = check_mount_points(p, in.system); !s) return s.error();
  }
  in.landlock = landlock_for(p, e, in);
  auto seccomp = seccomp_for(p, e);
  if (!seccomp) return seccomp.error();
  in.seccomp = std::move(*seccomp);
  return in;
}

// What a scan masked under `dir` (inside path), and where it stopped early.
void report_scan(const std::string& dir, const SecretScan& scan) {
  if (scan.truncated)
    log::warn("the scan for secret files in `{}` stopped early ({} entries, or deeper than the depth limit); files "
              "it did not reach are not masked — add --mask PATH for those",
              dir, scan.entries_seen);
  // Every name masked, as the start line counts them: secret files and directories, links and where they lead,
  // other names of hard-linked secrets; a directory the scan could not read as a warning of its own.
  auto unreadable = [&](const std::string& path) {
    return std::find(scan.unreadable.begin(), scan.unreadable.end(), path) != scan.unreadable.end();
  };
  for (const auto& m : scan.masks) {
    if (m.type == S_IFDIR && unreadable(m.path))
      log::warn("masked {}/{}/ whole: the scan for secret files could not read it", dir, m.path);
    else
      log::info("masked {}/{}{}", dir, m.path, m.type == S_IFDIR ? "/" : m.type == S_IFLNK ? " (a symbolic link)" : "");
  }
  for (const auto& l : scan.linked_outside)
    log::warn("{}/{} has {} hard links but the scan found {} of them, all masked; the others are outside the scan "
              "(another directory, or past its limits) and stay readable wherever the sandbox sees them",
              dir, l.path, l.links, l.found);
}

std::string counted(std::size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// Without -v, what was hidden is still said, as counts on one line (nothing when nothing was hidden).
void report_hidden_counts(const Plan& plan) {
  if (log::level() != log::Level::normal) return;  // -v lists each one; -q says nothing
  auto files = plan.start_report.masked_files, dirs = plan.start_report.masked_dirs;
  auto vars = plan.dropped_env;
  if (files + dirs + vars == 0) return;
  std::vector<std::string> said;
  if (files + dirs > 0)
    said.push_back("masked " + (files > 0 && dirs > 0 ? counted(files, "file", "files") + " and " + counted(dirs, "directory", "directories")
                                : files > 0           ? counted(files, "file", "files")
                                                      : counted(dirs, "directory", "directories")));
  if (vars > 0) said.push_back("dropped " + counted(vars, "variable", "variables"));
  log::emit("confine: ", fmt::format("{}; -v lists them", fmt::join(said, ", ")));
}

// --allow-nested: what the command may now do, which layer keeps the boundary, and what still cannot work.
void report_nested(const Policy& p, Mode mode) {
  if (!p.protection.allow_nested) return;
  // A profile that allows nesting says so in its own text, and explain lists what it changes: said with -v only,
  // naming the profile, so each of its runs is not one more warning the user did not ask for.
  if (const auto& profile = p.protection.allow_nested_profile; !profile.empty()) {
    log::info("profile `{}` sets sandbox.allow_nested: the command may make namespaces of its own{}{} (`confine explain "
              "--profile {} -- CMD` lists each promise and what keeps it)", profile,
              mode == Mode::full ? "; Landlock's filesystem rules step back, the mount namespace keeps the boundary"
                                 : "; Landlock still refuses every mount in this mode",
              p.ids.inside_uid == 0 ? "; as root inside, a nested sandbox cannot map root (--user with another id)" : "",
              profile);
    return;
  }
  if (mode == Mode::full)
    log::warn("--allow-nested: the command may make namespaces of its own and mount inside them; Landlock's "
              "filesystem rules step back (they refuse every mount), so the mount namespace alone keeps the "
              "filesystem boundary (`confine explain --allow-nested -- CMD` lists each promise and what keeps it)");
  else
    log::warn("--allow-nested: the command may make namespaces of its own, but Landlock, the filesystem wall of "
              "this mode, still refuses every mount: a nested sandbox that mounts (bwrap) fails here");
  // The kernel lets a process map root of its namespace into a new one only if it held CAP_SETFCAP.
  if (p.ids.inside_uid == 0)
    log::warn("--allow-nested: the command runs as root inside, and a nested sandbox cannot map root into a user "
              "namespace of its own without CAP_SETFCAP, which confine never grants: for bwrap or `codex sandbox`, "
              "pass --user with an id other than 0");
}

// Refused syscalls go unrecorded when the command's filter has no listener of confine's (seccomp_for says when).
void report_unrecorded_syscalls(const Policy& policy, const PlanInputs& in) {
  if (in.seccomp.code.empty() || !in.seccomp.notifying.empty()) return;
  auto why = policy.protection.allow_nested
                 ? "--allow-nested: a nested sandbox may need its own seccomp listener, and the kernel allows one"
                 : "the --seccomp policy refuses sendmsg or close, which hand the listener to confine";
  if (policy.report.log_file.empty()) log::info("refused syscalls are not recorded ({})", why);
  else log::warn("--log: refused syscalls are not recorded ({}); they are still refused", why);
}

void report_start(const Policy& policy, const PlanInputs& in, const Enforcement& e) {
  if (policy.net == NetMode::host) log::warn("--net host: the sandbox shares the host's network (no egress control)");
  report_unrecorded_syscalls(policy, in);
  for (const auto& w : e.warnings) log::warn("{}", w);
  for (const auto& n : e.notes) log::info("{}", n);
  for (const auto& n : policy.proxy.notes) log::note("{}", n);
  for (const auto& n : policy.fs.device_notes) log::note("{}", n);
  report_nested(policy, e.mode);
  if (!policy.fs.workspace.empty()) report_scan(policy.fs.workspace_inside, in.secrets);
  for (const auto& b : in.bind_secrets) report_scan(b.dest, b.scan);
  for (const auto& name : policy.proc.dropped_env) log::info("dropped environment variable {}", name);
  for (const auto& name : in.env_holding_secrets)
    log::info("dropped environment variable {}: it holds a --secret's value", name);
  std::string layers;
  for (const auto& l : e.layers_applied()) layers += (layers.empty() ? "" : " ") + l;
  log::info("{} mode: {}", mode_name(e.mode), layers);
}

void write_status(const ReportPolicy& report, const StartReport& started, pid_t pid, const HostResources& files) {
  auto line = status_line(started, pid, CONFINE_VERSION);
  if (report.status_fd) [[maybe_unused]] auto n = ::write(*report.status_fd, line.data(), line.size());
  if (files.report.valid() && ::write(files.report.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    log::warn("--report `{}`: {}", report.report_file, std::strerror(errno));
}

// The proxy serves every Listener of the plan: `veth` is the socket on the pair's far end (if the plan has one),
// `inside` those pid 1 opened on its loopback, in the plan's order.
std::unique_ptr<net::Proxy> start_proxy(const Plan& plan, sys::UniqueFd veth, std::vector<sys::UniqueFd> inside,
                                        const HostResources& files, const mech::SandboxSockets* sockets,
                                        net::NetRecorder& recorder) {
  const auto& p = plan.proxy;
  net::ProxyConfig config{p.allow, &recorder, std::nullopt, p.check_sni, files.secrets, p.rules, sockets};
  if (!p.upstream_host.empty()) config.upstream = net::Upstream{p.upstream_host, p.upstream_port};
  for (const auto& spec : plan.listeners)
    if (spec.service == Listener::Service::http_proxy || spec.service == Listener::Service::broker)
      config.own_ports.push_back(spec.port);
  auto proxy = std::make_unique<net::Proxy>(std::move(config));
  std::vector<net::Listener> listeners;
  std::size_t next_inside = 0;
  for (const auto& spec : plan.listeners) {
    net::Listener l;
    if (spec.place == Listener::Place::veth) l.fd = std::move(veth);
    else if (next_inside < inside.size()) l.fd = std::move(inside[next_inside++]);
    if (!l.fd.valid()) continue;  // pid 1 failed before handing it over: the run ends with its report
    l.service = spec.service;
    l.forward_host = spec.forward_host;
    l.forward_port = spec.forward_port;
    listeners.push_back(std::move(l));
  }
  proxy->start(std::move(listeners));
  return proxy;
}

// --report is one JSON line at start; lines about the end of the run follow it.
void append_report(const HostResources& files, const std::string& line) {
  if (files.report.valid() && !line.empty()) [[maybe_unused]] auto n = ::write(files.report.get(), line.data(), line.size());
}

// What the limits did, said at exit: an OOM kill is the command's fate, so it sets the exit code (137).
void report_usage(const ReportPolicy& report, const ResourceLimits& limits, const mech::SandboxCgroup& cgroup, int& exit_code,
                  const HostResources& files, RefusalLog& refusals) {
  auto u = cgroup.usage(!report.report_file.empty() || log::level() >= log::Level::verbose);
  if (u.oom_kills > 0 && limits.memory) {
    log::error("killed by the memory limit ({}, peak {})", format_bytes(*limits.memory), format_bytes(u.memory_peak));
    exit_code = kExitSignalBase + SIGKILL;
    refusals.record({RefusalLayer::limits, RefusalAction::killed, "memory", "--memory SIZE (a profile: [limits] memory)",
                     {{"limit", "memory"}, {"limit_bytes", *limits.memory}, {"peak_bytes", u.memory_peak},
                      {"oom_kills", u.oom_kills}}});
  }
  if (u.pids_denied > 0 && limits.pids) {
    log::warn("{} fork{} failed at the pids limit ({})", u.pids_denied, u.pids_denied == 1 ? "" : "s", *limits.pids);
    refusals.record({RefusalLayer::limits, RefusalAction::refused, "pids", "--pids N (a profile: [limits] pids)",
                     {{"limit", "pids"}, {"max", *limits.pids}, {"forks_refused", u.pids_denied}}});
  }
  auto line = fmt::format(R"({{"event":"exit","exit_code":{},"memory_peak_bytes":{},"oom_kills":{},"pids_peak":{},"pids_denied":{},"cpu_usec":{}}})" "\n",
                          exit_code, u.memory_peak, u.oom_kills, u.pids_peak, u.pids_denied, u.cpu_usec);
  append_report(files, line);
  log::info("resources: peak memory {}, cpu {:.2f} s, forks refused {}", format_bytes(u.memory_peak),
            static_cast<double>(u.cpu_usec) / 1e6, u.pids_denied);
}

// A writable tmpfs of the sandbox that is full at the end of the run: what the command wrote there last failed
// with ENOSPC. `fds` are the mounts pid 1 handed over, in the order of the plan's writable tmpfs mounts.
void record_full_tmpfs(const Plan& plan, const std::vector<sys::UniqueFd>& fds, RefusalLog& refusals) {
  std::size_t next = 0;
  for (const auto& m : plan.mounts) {
    if (m.kind != MountKind::tmpfs || m.read_only) continue;
    if (next == fds.size()) return;
    struct statfs fs {};
    if (::fstatfs(fds[next++].get(), &fs) != 0) continue;
    bool no_space = fs.f_blocks > 0 && fs.f_bavail == 0;
    bool no_inodes = fs.f_files > 0 && fs.f_ffree == 0;
    if (!no_space && !no_inodes) continue;
    auto size = static_cast<std::uint64_t>(fs.f_blocks) * static_cast<std::uint64_t>(fs.f_frsize);
    refusals.record({RefusalLayer::limits, RefusalAction::refused, "tmpfs " + m.dest,
                     m.dest == "/dev/shm" ? "--shm-size SIZE (a profile: [limits] shm_size)"
                                          : "--tmpfs-size SIZE (a profile: [limits] tmpfs_size)",
                     {{"limit", "tmpfs"}, {"path", m.dest}, {"size_bytes", size}, {"full", no_space ? "space" : "inodes"}}});
  }
}

// What the git check set aside, or could not, as the denial log records it: the sandbox left something git on the
// host would have run, and confine renamed it where git never reads.
void record_git_refusals(const GitSetAside& set_aside, RefusalLog& refusals) {
  for (const auto& m : set_aside.moved)
    refusals.record({RefusalLayer::git, RefusalAction::neutralised, m.path, "",
                     {{"path", m.path}, {"hazard", m.what}, {"renamed_to", m.renamed_to}}});
  for (const auto& line : set_aside.not_moved)
    refusals.record({RefusalLayer::git, RefusalAction::refused, line, "", {{"not_moved", line}}});
}

// The limits' leaf is made on a thread while the steps before join_cgroup run: a new cgroup costs the kernel far
// more than its few syscalls suggest (the controllers' state).
using PendingCgroup = std::future<sys::Result<mech::SandboxCgroup>>;
PendingCgroup start_making_cgroup(const CgroupPlan& plan) {
  auto make = [plan]() { return mech::SandboxCgroup::create(plan.place, plan.limits, plan.caller); };
  try {
    return std::async(std::launch::async, make);
  } catch (const std::system_error&) {
    return std::async(std::launch::deferred, make);  // no thread to be had: made when it is needed
  }
}

// The parent steps of one run (Plan::parent_steps), carried out: the process work by Launch, the rest here. What
// they decide by is the Plan alone; beside it they hold what the host made ready before (the output files and the
// secrets' values) and what the scans learned (their caches, saved by a step and used by the check after the run).
class RunEffects final : public ParentEffects {
 public:
  RunEffects(const Plan& plan, const HostResources& files, KeptScanCaches& scan_caches)
      : plan_(plan), files_(files), scan_caches_(scan_caches), launch_(plan) {}

  // The run's exit code; a namespace refusal comes back to the caller untouched.
  LaunchOutcome outcome() const {
    auto out = launch_.outcome();
    if (!out.namespaces_refused && exit_code_) out.exit_code = *exit_code_;
    return out;
  }
  [[nodiscard]] bool namespaces_refused() const { return launch_.outcome().namespaces_refused; }
  [[nodiscard]] bool checkpoint_saved() const { return checkpoint_saved_; }

  sys::Status listen_published() override {
    for (const auto& port : plan_.published) {
      auto listener = net::listen_on_host(port);
      if (!listener) return listener.error();
      published_.push_back(std::move(*listener));
    }
    return sys::ok_status();
  }
  sys::Status make_cgroup() override {
    pending_cgroup_ = start_making_cgroup(*plan_.cgroup);
    return sys::ok_status();
  }
  sys::Status save_checkpoint() override {
    auto saved = make_checkpoint(*plan_.checkpoint_save);
    if (!saved) return saved.error();
    checkpoint_saved_ = true;
    if (log::level() >= log::Level::normal) log::emit("confine: ", saved->report);
    // Even with -q: data that a restore cannot bring back must not go unsaid.
    if (!saved->not_saved.empty()) log::emit("confine: warning: ", saved->not_saved);
    return sys::ok_status();
  }
  sys::Status finish_interrupted_checks() override {
    finish_interrupted_git_checks(plan_.pending_checks_dir);
    return sys::ok_status();
  }
  sys::Status make_host_dirs() override {
    for (const auto& dir : plan_.host_dirs) {
      auto made = make_host_directory(dir);
      if (!made) {
        // The undo covers the steps that succeeded: what this one made before it failed goes here.
        remove_made_directories(made_dirs_);
        return made.error();
      }
      for (auto& d : *made) made_dirs_.push_back(std::move(d));
    }
    return sys::ok_status();
  }
  void remove_made_host_dirs() override { remove_made_directories(made_dirs_); }
  sys::Status make_run_dir() override {
    const auto& dir = *plan_.run_dir;
    auto made = sys::PrivateDir::make(dir.path, dir.uid, dir.gid);
    if (!made) return made.error();
    run_dir_.emplace(std::move(*made));
    log::info("private HOME and TMPDIR in {} (removed after the run)", dir.path);
    return sys::ok_status();
  }
  sys::Status save_scan_caches() override {
    for (auto& kept : scan_caches_) save_scan_cache(kept.cache, kept.at);
    return sys::ok_status();
  }
  sys::Status record_git_check() override {
    // Taken after every host change confine makes itself (the hooks dir it creates): from here on, whatever
    // changes in the trees the sandbox can write may be the sandbox's doing.
    git_check_ = *plan_.git_check;
    git_check_->since = file_clock_now();
    watch_git_configs();
    pending_git_check_.emplace(*git_check_);
    return sys::ok_status();
  }
  // The configs the run binds read-only (full mode), watched from before the command starts, so a refused write
  // is recorded with the flag that allows it (run/git_config_watch.h).
  void watch_git_configs() {
    std::vector<std::string> dirs, shown_as;
    for (const auto& path : git_check_->read_only) {
      if (!path.ends_with("/config")) continue;
      dirs.push_back(path.substr(0, path.size() - std::string_view("/config").size()));
      const auto& workspace = git_check_->workspace;
      shown_as.push_back(confine::is_within(path, workspace) ? path.substr(workspace.size() + 1) : path);
    }
    if (!dirs.empty()) git_config_watch_.emplace(watches_, dirs, std::move(shown_as), refusals_);
  }
  sys::Status join_cgroup() override {
    auto made = pending_cgroup_.get();
    if (!made) return sys::plain_error("cannot set up the resource limits: " + made.error().message());
    cgroup_.emplace(std::move(*made));
    return sys::ok_status();
  }
  sys::Status block_signals() override { return launch_.block_signals(); }
  sys::Status shed_groups() override { return launch_.shed_groups(); }
  sys::Status clone_sandbox() override {
    // Before the sandbox exists: every file it changes is stamped at or after this.
    sandbox_since_ = file_clock_now();
    return launch_.clone_sandbox(cgroup_ ? cgroup_->dir_fd() : -1);
  }
  sys::Status write_id_maps() override { return launch_.write_id_maps(); }
  sys::Status connect_veth() override {
    auto link = mech::connect_sandbox_by_veth(launch_.sandbox_pid(), kProxyPort);
    if (!link) return link.error();
    veth_ = std::move(*link);
    return sys::ok_status();
  }
  sys::Status start_socket_maker() override {
    auto maker = mech::SandboxSockets::start(launch_.sandbox_pid());
    if (!maker) return maker.error();
    sockets_.emplace(std::move(*maker));
    return sys::ok_status();
  }
  sys::Status open_idmapped_trees() override { return launch_.open_idmapped_trees(); }
  sys::Status send_go() override { return launch_.send_go(); }
  sys::Status start_services() override {
    bool inside = std::any_of(plan_.listeners.begin(), plan_.listeners.end(),
                              [](const Listener& l) { return l.place == Listener::Place::sandbox_loopback; });
    auto fds = inside ? launch_.receive_listeners() : std::vector<sys::UniqueFd>{};
    // pid 1 made them in the sandbox's network namespace: the gate tells its sockets by it. (Not from /proc: pid 1
    // is not dumpable, and its namespaces are out of a rootless confine's reach there.)
    if (!fds.empty()) sandbox_netns_ = socket_netns(fds.front().get());
    if (!plan_.listeners.empty())
      proxy_ = start_proxy(plan_, std::move(veth_.listener), std::move(fds), files_, sockets_ ? &*sockets_ : nullptr,
                           net_records_);
    if (!published_.empty()) {
      publisher_ = std::make_unique<net::Publisher>(*sockets_, net_records_);
      publisher_->start(std::move(published_));
    }
    return sys::ok_status();
  }
  sys::Status receive_refusal_files() override {
    auto files = launch_.receive_refusal_files();
    refusals_.set_sandbox_file(std::move(files.denial_log));
    if (files.mask_watch.valid()) mask_watch_.emplace(watches_, std::move(files.mask_watch), mask_paths(plan_), refusals_);
    tmpfs_ = std::move(files.tmpfs);
    return sys::ok_status();
  }
  sys::Status supervise() override {
    Launch::Events events;
    events.started = [this](pid_t pid) {
      // Once the command runs: a sandbox that fails to start says only why, in one line.
      report_hidden_counts(plan_);
      write_status(plan_.report, plan_.start_report, pid, files_);
    };
    events.seccomp_listener = [this](sys::UniqueFd listener) { watch_seccomp(std::move(listener)); };
    events.watches = &watches_;
    return launch_.supervise(events);
  }
  sys::Status check_git_state() override {
    if (!git_check_) return sys::ok_status();  // the run failed before it was recorded
    auto set_aside = set_aside_untrusted_git_state(*git_check_, &scan_caches_);
    append_report(files_, report_git_set_aside(set_aside));
    record_git_refusals(set_aside, refusals_);
    pending_git_check_.reset();
    // Something git would run stayed in place: fail closed, as for any promise confine could not keep.
    if (!set_aside.not_moved.empty()) exit_code_ = kExitSetupFailed;
    return sys::ok_status();
  }
  sys::Status drop_file_privileges() override {
    if (!sandbox_since_) return sys::ok_status();  // no sandbox was made: nothing it wrote to judge
    auto dropped = run::drop_file_privileges(plan_.file_privilege_trees, *sandbox_since_);
    append_report(files_, report_file_privileges(dropped));
    // A file that grants privilege stayed: fail closed, as for any promise confine could not keep.
    if (!dropped.not_dropped.empty()) exit_code_ = kExitSetupFailed;
    return sys::ok_status();
  }
  sys::Status record_run_end() override {
    // No checkpoint of this run (its save failed, or a step before it did): no run of one to record the end of.
    if (plan_.checkpoint_save && !checkpoint_saved_) return sys::ok_status();
    run::record_run_end(plan_.run_end_record->workspace, plan_.run_end_record->data_home);
    return sys::ok_status();
  }
  sys::Status remove_run_dir() override {
    if (run_dir_ && !run_dir_->remove())
      log::warn("could not remove all of `{}`, the run's private HOME and TMPDIR (a process of the run still writing "
                "there, or a tree deeper than confine walks); remove it yourself", run_dir_->path());
    return sys::ok_status();
  }
  sys::Status report_usage() override {
    if (!cgroup_) return sys::ok_status();  // never made: nothing ran in it
    int code = outcome().exit_code;
    // The limits the leaf was made with (the Plan's cgroup, which cgroup_ is).
    run::report_usage(plan_.report, plan_.cgroup ? plan_.cgroup->limits : ResourceLimits{}, *cgroup_, code, files_, refusals_);
    exit_code_ = code;
    return sys::ok_status();
  }
  sys::Status report_refusals() override {
    // Every process of the sandbox is gone: the watches' last records are in once they stop.
    seccomp_watch_.reset();
    mask_watch_.reset();
    record_full_tmpfs(plan_, tmpfs_, refusals_);
    tmpfs_.clear();  // the last references: their memory is freed
    // Nothing records after this: each log file gets its line of what its cap dropped, if it dropped anything.
    for (const auto& dropped : {net_records_.finish(), refusals_.finish()})
      if (!dropped.empty()) log::warn("{}", dropped);
    if (auto line = refusals_.summary(); !line.empty())
      log::warn("{} (each one, and why: {})", line, plan_.report.log_file.empty() ? "--log FILE" : plan_.report.log_file);
    // A line only when something was refused: a run without refusals keeps the report it always had.
    if (refusals_.total() > 0) append_report(files_, refusals_.report_line());
    return sys::ok_status();
  }
  sys::Status stop_services() override {
    // The host's published ports are free again once this returns, whatever else the run left.
    if (publisher_) publisher_->stop();
    published_.clear();
    if (proxy_) proxy_->stop();
    for (const auto& line : net_records_.exit_summary()) log::warn("{}", line);
    sockets_.reset();  // after the proxy and the publisher, which ask it for sockets
    return sys::ok_status();
  }

 private:
  // The command's seccomp filter hands its refused calls to confine, which answers and records them.
  void watch_seccomp(sys::UniqueFd listener) {
    if (!listener.valid()) {
      log::warn("refused syscalls are not recorded: this process already runs under a seccomp filter with a listener "
                "(another sandbox's), and the kernel allows one; they are still refused");
      return;
    }
    auto rules = [this] { return rules_of(plan_.seccomp.rules); };
    std::function<SeccompWatch::NetworkGate(int)> network;
    if (plan_.seccomp.gates_network && proxy_)
      network = [this](int fd) -> SeccompWatch::NetworkGate {
        auto& gate = gate_.emplace(fd, sandbox_netns_, *proxy_);
        if (!plan_.seccomp.records_lookups)
          return [&gate](const struct seccomp_notif& request) { return gate.take(request); };
        auto& lookups = lookups_.emplace(fd, files_.lookups.valid() ? files_.lookups.get() : -1);
        return [&gate, &lookups](const struct seccomp_notif& request) { return lookups.take(request) || gate.take(request); };
      };
    seccomp_watch_.emplace(watches_, std::move(listener), plan_.seccomp, rules, refusals_, plan_.seccomp.let_through,
                           std::move(network));
  }

  const Plan& plan_;
  const HostResources& files_;
  KeptScanCaches& scan_caches_;
  std::optional<sys::PrivateDir> run_dir_;  // by make_run_dir
  PendingCgroup pending_cgroup_;            // by make_cgroup, until join_cgroup
  // Declaration order is teardown order reversed: the sandbox (Launch) goes first, then the proxy, the veth
  // namespace and the cgroup leaf it ran in.
  std::optional<mech::SandboxCgroup> cgroup_;
  RefusalLog refusals_{files_.log.get(), plan_.report.log_caps};  // the watches and the network record here
  // Every network door's connections (the proxy, the brokers, the published ports): declared before them all.
  net::NetRecorder net_records_{files_.net_log.get(), &refusals_, plan_.proxy.log_caps};
  ino_t sandbox_netns_ = 0;
  std::optional<ConnectGate> gate_;  // the seccomp watch uses it: declared before the watch
  std::optional<LookupRecorder> lookups_;  // the same
  FdWatches watches_;                // served by supervise; the watches remove themselves: declared before them
  std::optional<SeccompWatch> seccomp_watch_;
  std::optional<MaskWatch> mask_watch_;
  std::optional<GitConfigWatch> git_config_watch_;
  std::vector<sys::UniqueFd> tmpfs_;  // the sandbox's writable tmpfs mounts, held until they are checked
  std::optional<GitCheckScope> git_check_;
  std::optional<std::timespec> sandbox_since_;  // when clone_sandbox began
  std::optional<PendingGitCheck> pending_git_check_;
  mech::VethLink veth_;
  std::optional<mech::SandboxSockets> sockets_;  // the proxy asks it for sockets: it outlives the proxy
  std::vector<net::HostListener> published_;     // listened on before the sandbox exists, served from start_services
  std::unique_ptr<net::Publisher> publisher_;    // asks sockets_ for sockets: declared after it, so gone first
  std::unique_ptr<net::Proxy> proxy_;
  Launch launch_;
  std::vector<MadeDirectory> made_dirs_;  // by make_host_dirs, outermost first
  std::optional<int> exit_code_;  // set by the steps after the run (an OOM kill, git state left in place)
  bool checkpoint_saved_ = false;
};

// Decides, plans and launches in `mode`; a namespace refusal comes back to the caller untouched. `checkpoint_saved`:
// the --checkpoint is saved (by this attempt or one before it), so that a run that falls back saves it once.
LaunchOutcome attempt(const Policy& p, const KernelFeatures& f, Mode mode, const HostResources& files,
                      bool& checkpoint_saved) {
  auto e = decide(p.protection.request, f, mode);
  if (!e.ok()) {
    log::error("{}", refusal_text(e));
    return {kExitSetupFailed};
  }
  // Before the sandbox exists: with the container's /proc, it would see this process's command line.
  if (e.stand_ins.container_proc) mech::hide_own_arguments();
  KeptScanCaches scan_caches;
  auto inputs = gather_inputs(p, f, e, scan_caches, e.mode == Mode::fallback ? sys::choose_private_dir(sys::kPrivateDirBase) : "",
                              files.secrets);
  if (!inputs) {
    log::error("{}", inputs.error().message());
    return {kExitSetupFailed};
  }
  inputs->checkpoint_saved = checkpoint_saved;
  report_start(p, *inputs, e);
  auto plan = make_plan(p, *inputs);
  plan.start_report = start_report(e, *inputs);
  RunEffects effects(plan, files, scan_caches);
  auto failures = run_parent_steps(plan, effects);
  checkpoint_saved = checkpoint_saved || effects.checkpoint_saved();
  // A namespace refusal is the first failure, and not the user's to read: the caller falls back or explains.
  for (std::size_t i = effects.namespaces_refused() ? 1 : 0; i < failures.size(); ++i)
    log::error("{}", failures[i].error.message());
  return effects.outcome();
}

}  // namespace

sys::Result<HostResources> open_output_files(const Policy& p) {
  HostResources files;
  if (!p.report.report_file.empty()) {
    auto report = sys::open_owned_file("--report", p.report.report_file, sys::FileWrite::truncate, 0644);
    if (!report) return report.error();
    files.report = std::move(*report);
  }
  if (!p.proxy.log_file.empty()) {
    auto log = sys::open_owned_file("--net-log", p.proxy.log_file, sys::FileWrite::append, 0600);
    if (!log) return log.error();
    files.net_log = std::move(*log);
  }
  if (!p.report.log_file.empty()) {
    auto log = sys::open_owned_file("--log", p.report.log_file, sys::FileWrite::append, 0600);
    if (!log) return log.error();
    files.log = std::move(*log);
  }
  return files;
}

int run_sandbox(const Policy& policy, const HostResources& files) {
  auto features = features_for_run(policy);
  bool checkpoint_saved = false;
  auto outcome = attempt(policy, features, mode_for(policy, features), files, checkpoint_saved);
  if (!outcome.namespaces_refused) return outcome.exit_code;
  // The kernel refused the namespaces, or a step in them, after all: say why, then fall back only if the user
  // accepts it.
  features.userns = false;
  features.userns_problem = mech::diagnose_userns(outcome.err);
  features.refused_step = outcome.refused_step;
  return attempt(policy, features, Mode::fallback, files, checkpoint_saved).exit_code;
}

int explain(const Policy& policy, bool json) {
  auto features = features_for_run(policy, !policy.test_features);
  if (!policy.protection.request.no_namespaces && !policy.test_features)
    features.userns = mech::try_user_namespace(features.userns_problem);
  auto e = decide(policy.protection.request, features, mode_for(policy, features));
  KeptScanCaches not_saved;  // explain changes nothing: what the scans learned is not kept
  // No secret is read: explain shows the specs, never a value.
  auto inputs = gather_inputs(policy, features, e, not_saved, e.mode == Mode::fallback ? sys::kPrivateDirExample : "",
                              SecretSet());
  if (!inputs) {
    log::error("{}", inputs.error().message());
    return kExitSetupFailed;
  }
  auto plan = make_plan(policy, *inputs);
  auto text = json ? explain_json(policy, plan, e) : explain_text(policy, plan, e);
  if (!json && log::level() >= log::Level::verbose) text += explain_steps(plan);
  std::fputs(text.c_str(), stdout);
  if (!e.ok() && !json) std::fputs(("\nA run would be refused: " + refusal_text(e) + "\n").c_str(), stdout);
  return 0;
}

int probe(bool json, const CallerEnvironment& env) {
  auto rows = mech::probe_all(env);
  std::fputs((json ? probe_json(rows) : probe_table(rows)).c_str(), stdout);
  return 0;
}

}  // namespace confine::run
