#include "core/decisions.h"

#include <linux/seccomp.h>
#include <sys/socket.h>

#include <cstdlib>
#include <utility>

#include "core/connect_gate.h"
#include "core/landlock_rules.h"
#include "core/resolve.h"
#include "core/seccomp_compile.h"
#include "core/seccomp_policy.h"
#include "core/seccomp_verdict.h"

namespace confine {
namespace {

// Whether `code` lets the command hand its filter's listener to confine (a sendmsg on the channel, then a close):
// a --seccomp policy that refused either would leave the command waiting for an answer from a listener it holds
// itself.
bool allows_listener_handover(const std::vector<struct sock_filter>& code) {
  SeccompCall sendmsg;
  sendmsg.nr = resolve_syscall("sendmsg");
  sendmsg.arch = seccomp_native_arch();
  sendmsg.args[0] = 3;
  sendmsg.args[1] = 0x7ffc0000;
  sendmsg.args[2] = MSG_NOSIGNAL;
  SeccompCall close = sendmsg;
  close.nr = resolve_syscall("close");
  auto allowed = [&](const SeccompCall& c) {
    auto v = seccomp_verdict(code, c);
    return v && (*v & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW;
  };
  return allowed(sendmsg) && allowed(close);
}

// Refusals go to confine, which answers each with the errno the policy gives it and records it; except with
// --allow-nested, where a nested sandbox may need the one listener a chain of filters can have (the kernel refuses
// a second with EBUSY), or when the policy would refuse the handover itself.
void notify_refusals(SeccompProgram& prog, bool allow_nested) {
  if (allow_nested || !allows_listener_handover(prog.code)) return;
  prog.notifying = refusals_notified(prog.code);
}

}  // namespace

bool gates_network(const Policy& p, const Enforcement& e) {
  return p.net == NetMode::proxy && !p.proxy.over_veth && e.mode == Mode::full && e.use_seccomp && e.use_landlock &&
         e.landlock_abi >= 4 && !p.protection.allow_nested && !p.protection.custom_seccomp;
}

Mode mode_for(const Policy& p, const KernelFeatures& f) {
  return (p.protection.request.no_namespaces || !f.userns) ? Mode::fallback : Mode::full;
}

LandlockPlan landlock_for(const Policy& p, const Enforcement& e, const PlanInputs& in) {
  const auto& system = in.system;
  const Mode mode = e.mode;
  if (!e.use_landlock) return {};
  const auto& data = builtin_landlock_data();
  LandlockRequest req;
  req.abi = e.landlock_abi;
  req.paths = mode == Mode::full ? data.sandbox : data.fallback;
  if (p.fs.workspace_readonly)
    for (auto& path : req.paths)
      if (path.path == "$WORKSPACE") path.access = AccessClass::rx;
  for (const auto& b : p.fs.binds) req.paths.push_back({b.dest, b.writable ? AccessClass::rw : AccessClass::rx, false});
  for (const auto& t : p.fs.tmpfs) req.paths.push_back({t.dest, AccessClass::rw, false});
  // A device where the command reaches it: its bind inside, or (fallback mode) the host's node itself.
  for (const auto& d : p.fs.devices)
    req.paths.push_back({mode == Mode::full ? d.dest : d.source,
                         d.access.write ? AccessClass::dev : AccessClass::dev_read, false});
  if (!in.git.common_dir.empty()) req.paths.push_back({in.git.common_dir, AccessClass::rw, false});
  // A writable image: its directories are throwaway overlays, writable like any container's root.
  if (!p.fs.rootfs.empty() && p.fs.rootfs_writable)
    for (const auto& s : system)
      if (s.link_target.empty()) req.paths.push_back({s.path, AccessClass::rw, false});
  if (!p.fs.rootfs.empty()) {
    // The image's own directories replace the host's: the data's system paths are optional there (an image
    // built FROM scratch has no /usr), and every top-level directory of the image is read+execute.
    for (auto& path : req.paths) path.optional = path.optional || path.access == AccessClass::rx;
    for (const auto& s : system)
      if (s.link_target.empty()) req.paths.push_back({s.path, AccessClass::rx, true});
  }
  req.workspace = p.fs.workspace.empty() ? "" : (mode == Mode::full ? p.fs.workspace_inside : p.fs.workspace);
  req.home = p.fs.home;
  req.run_dir = in.run_dir;
  // In full mode the network namespace is the egress wall and loopback servers (test suites) must keep working;
  // without it, Landlock's TCP rules are what stop egress.
  // Under the gate, confine makes every TCP connect and bind itself, on the socket and address it checked: the
  // command's own would let the kernel re-read both after the check.
  req.deny_tcp = (mode == Mode::fallback && p.net != NetMode::host) || gates_network(p, e);
  // UDP only in fallback mode, beside seccomp's refusal of UDP sockets there; in full mode the network namespace is
  // the wall, as for TCP above.
  req.deny_udp = mode == Mode::fallback && p.net != NetMode::host;
  // Socket files are files: --net host does not reach them. Full mode's mount view already hides the host's.
  req.socket_files = mode == Mode::fallback;
  req.scope_abstract_sockets = p.net != NetMode::host;
  req.writes_only = mode == Mode::full;
  // A domain that handles any filesystem right refuses every mount, even in the command's own namespaces.
  req.filesystem = !(mode == Mode::full && p.protection.allow_nested);
  return make_landlock_plan(req);
}

sys::Result<SeccompProgram> seccomp_for(const Policy& p, const Enforcement& e) {
  if (!e.use_seccomp) return SeccompProgram{};
  const bool namespaces = e.mode == Mode::full;
  // Refusals are named by the same rules the filter was compiled from.
  const SeccompProgram::RuleSource rules{
      p.protection.custom_seccomp ? std::make_shared<const SeccompPolicy>(*p.protection.custom_seccomp) : nullptr,
      p.protection.allow_nested, namespaces};
  if (!p.protection.custom_seccomp) {
    auto prog = builtin_seccomp_program(namespaces, p.protection.allow_nested);
    prog.log_denials = p.protection.seccomp_log;
    prog.rules = rules;
    prog.let_through = p.protection.record_instead_of_refusing;
    notify_refusals(prog, p.protection.allow_nested);
    if (gates_network(p, e) && !prog.notifying.empty()) {
      prog.notifying = network_calls_notified(prog.notifying);
      prog.gates_network = true;
      // Learning, the names looked for are recorded too; only under the gate, whose listener is always served.
      if (p.protection.record_instead_of_refusing) {
        prog.notifying = path_lookups_notified(prog.notifying);
        prog.records_lookups = true;
      }
    }
    return prog;
  }
  auto selected = select_seccomp_rules(*p.protection.custom_seccomp, p.protection.allow_nested, namespaces);
  auto prog = compile_seccomp(selected, p.protection.seccomp_log);
  if (!prog) return prog;
  // The floor as a filter of its own: the kernel applies the stricter of the two, so no user policy removes it.
  auto floor = compile_seccomp(select_seccomp_rules(seccomp_floor_policy(), p.protection.allow_nested, namespaces),
                               p.protection.seccomp_log);
  if (!floor) return floor;
  prog->floor = std::move(floor->code);
  prog->rules = rules;
  prog->let_through = p.protection.record_instead_of_refusing;
  notify_refusals(*prog, p.protection.allow_nested);
  return prog;
}

std::optional<CgroupPlan> cgroup_for(const Policy& p, const Enforcement& e, const KernelFeatures& f) {
  if (!e.use_cgroup || !f.cgroup_place) return std::nullopt;
  return CgroupPlan{*f.cgroup_place, p.limits, p.caller_env};
}

std::vector<std::string> global_git_configs(const std::string& home, const std::string& xdg_config_home) {
  std::vector<std::string> out;
  if (home.empty()) return out;
  out.push_back(home + "/.gitconfig");
  out.push_back((xdg_config_home.empty() ? home + "/.config" : xdg_config_home) + "/git/config");
  return out;
}

std::vector<HostDirectory> host_directories_to_make(const Policy& p, Mode mode, GitLayout& git) {
  std::vector<HostDirectory> out;
  for (const auto& b : p.fs.binds)
    if (b.create) out.push_back({HostDirectory::Purpose::profile, b.source, p.fs.home});
  if (mode != Mode::full || !p.fs.protect_git || p.fs.workspace_readonly || p.fs.workspace.empty()) return out;
  if (git.dir && !git.hooks) {
    out.push_back({HostDirectory::Purpose::git_hooks, p.fs.workspace + "/.git/hooks", p.fs.workspace + "/.git"});
    git.hooks = true;
  }
  if (!git.common_dir.empty()) {
    out.push_back({HostDirectory::Purpose::git_hooks, git.common_dir + "/hooks", git.common_dir});
    git.common_hooks = true;
  }
  return out;
}

std::vector<std::string> writable_trees(const Policy& p) {
  std::vector<std::string> trees;
  if (!p.fs.workspace.empty() && !p.fs.workspace_readonly) trees.push_back(p.fs.workspace);
  for (const auto& b : p.fs.binds)
    if (b.writable && !b.is_file && !b.private_dir) trees.push_back(b.source);
  return trees;
}

GitCheckScope git_check_scope(const Policy& p, const GitLayout& git, const std::string& cache_dir, bool mounts) {
  GitCheckScope s;
  s.trees = writable_trees(p);
  s.cache_dir = cache_dir;
  s.common_dir = git.common_dir;
  s.workspace = p.fs.workspace;
  for (const auto& config : global_git_configs(p.fs.home, p.caller_env.xdg_config_home))
    for (const auto& b : p.fs.binds)
      if (b.writable && is_within(config, b.source)) s.configs.push_back(config);
  if (!mounts) return s;
  // Exactly what make_plan binds read-only: the workspace's own hooks and config when they existed, or a linked
  // worktree's .git file and its repository's hooks and config (bound where they exist).
  auto ws_git = p.fs.workspace + "/.git";
  if (git.dir && git.hooks) s.read_only.push_back(ws_git + "/hooks");
  if (git.dir && git.config) s.read_only.push_back(ws_git + "/config");
  if (!git.common_dir.empty()) {
    s.read_only.push_back(ws_git);
    if (git.common_hooks) s.read_only.push_back(git.common_dir + "/hooks");
    if (git.common_config) s.read_only.push_back(git.common_dir + "/config");
  }
  return s;
}

}  // namespace confine
