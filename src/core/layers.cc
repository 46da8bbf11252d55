#include "core/layers.h"

#include <algorithm>
#include <limits>
#include <cstdlib>
#include <fmt/format.h>

#include "core/limits.h"

namespace confine {
namespace {

Promise promise(PromiseId id, std::string text, std::vector<Enforcer> by, std::string note = {}) {
  return Promise{id, std::move(text), std::move(by), std::move(note), true};
}

// What git run on the host later picks up from the trees the sandbox could write (the workspace, --rw binds, a
// linked worktree's repository): configs, hooks and redirections written during the run are set aside at exit.
Promise git_after_run(const RunRequest& r, std::vector<Enforcer> by, std::string note = {}) {
  auto p = promise(PromiseId::git_after_run,
                   "git run on the host afterwards runs nothing the sandbox wrote (repository configs, hooks, "
                   "commondir and .git links written during the run are set aside)",
                   std::move(by), std::move(note));
  if (!r.protect_git) p.requested = false, p.note = "turned off by --allow-git-config";
  return p;
}

// confine's own writes on the host, the same in every mode: what a sandbox planted cannot redirect them.
Promise own_writes() {
  return promise(PromiseId::own_writes, "confine never writes its files (report, logs, caches) through a link, or to a file "
                               "it does not own", {{Mechanism::confine, "(no-link opens, owner checks)"}});
}

// Adds Landlock as a second wall where the ABI supports the right.
std::vector<Enforcer> with_landlock(std::vector<Enforcer> layers, const KernelFeatures& f, int min_abi, const char* what) {
  if (f.landlock_abi >= min_abi) layers.push_back({Mechanism::landlock, what});
  return layers;
}

// Landlock's filesystem rules as a second wall in full mode, unless --allow-nested made them step back: a Landlock
// domain that handles any filesystem right refuses every mount, and a nested sandbox mounts in its own namespaces.
// The mount namespace alone keeps the boundary then (its mounts are locked in any namespace made inside).
std::vector<Enforcer> with_filesystem_landlock(std::vector<Enforcer> layers, const RunRequest& r, const KernelFeatures& f) {
  if (r.allow_nested) return layers;
  return with_landlock(std::move(layers), f, 1, "filesystem rules");
}

// The rule groups of `need` that this run's seccomp rules lack, comma-separated; empty: all compiled.
std::string missing_groups(const RunRequest& r, std::initializer_list<const char*> need) {
  std::string out;
  for (const char* g : need)
    if (std::find(r.seccomp_groups.begin(), r.seccomp_groups.end(), g) == r.seccomp_groups.end())
      out += (out.empty() ? "" : ", ") + std::string(g);
  return out;
}

// Who keeps a seccomp promise, judged by the rules compiled, not by a filter being loaded: a --seccomp policy
// keeps what confine's floor gives, plus whatever it refuses itself.
std::vector<Enforcer> seccomp_keeps(const RunRequest& r, const std::string& missing, const char* what) {
  if (!missing.empty()) return {};
  return {{Mechanism::seccomp, r.custom_seccomp ? std::string("(confine's floor: ") + what + ")" : std::string("(") + what + ")"}};
}

// What the sandbox leaves in the workspace must not grant privilege on the host: seccomp refuses the setuid and
// setgid modes, and a file capability needs CAP_SETFCAP, which the command never has. `copies`: a mount inside
// (--allow-nested, full mode) can copy a file that has them, past seccomp: the check after the run drops them.
Promise setuid_files_promise(const RunRequest& r, const KernelFeatures& f, bool copies) {
  const char* text = "no setuid/setgid files or file capabilities leave the sandbox";
  if (!f.seccomp) return promise(PromiseId::setuid_files, text, {}, f.seccomp_problem);
  auto missing = missing_groups(r, {"setuid-files", "setuid-files-at", "setuid-files-open", "setuid-files-openat", "openat2"});
  auto by = seccomp_keeps(r, missing, "setuid/setgid modes");
  if (by.empty()) return promise(PromiseId::setuid_files, text, {}, "the seccomp rules lack " + missing);
  by.push_back({Mechanism::capabilities, "dropped (file capabilities)"});
  if (copies) by.push_back({Mechanism::confine, "(the check after the run: copies a mount inside made)"});
  return promise(PromiseId::setuid_files, text, by);
}

// Interfaces that bypass the other walls; with --allow-nested, new namespaces and mounts inside them are the
// command's to make.
Promise kernel_surface_promise(const RunRequest& r, const KernelFeatures& f) {
  std::string text = r.allow_nested ? "dangerous kernel interfaces are refused (TIOCSTI, io_uring, keyring, bpf, …); "
                                      "new namespaces, and mounts inside them, are allowed (--allow-nested)"
                                    : "dangerous kernel interfaces are refused (TIOCSTI, io_uring, keyring, bpf, mount, "
                                      "new namespaces, …)";
  if (!f.seccomp) return promise(PromiseId::kernel_surface, text, {}, f.seccomp_problem);
  auto missing = r.allow_nested ? missing_groups(r, {"terminal-injection", "terminal-state", "io-uring",
                                                     "kernel-attack-surface", "keyring"})
                                : missing_groups(r, {"terminal-injection", "terminal-state", "io-uring",
                                                     "kernel-attack-surface", "keyring", "mounts", "new-namespaces",
                                                     "join-namespaces", "clone3"});
  auto by = seccomp_keeps(r, missing, "kernel interfaces");
  return promise(PromiseId::kernel_surface, text, by, by.empty() ? "the seccomp rules lack " + missing : "");
}

constexpr const char* kProcessListText = "host processes and their command lines are hidden";

// How to give the run what the container withholds, for the engine in use, and what that costs the outer container.
std::string fresh_proc_fix(const ContainerFacts& c) {
  switch (c.engine) {
    case ContainerEngine::podman:
      return "run the container with `--security-opt unmask=ALL` (it unmasks /proc/kcore, /proc/keys and the like "
             "to the container's own root)";
    case ContainerEngine::docker:
      return "run the container with `--security-opt systempaths=unconfined` (it unmasks /proc/kcore, /proc/keys "
             "and the like to the container's own root)";
    case ContainerEngine::kubernetes:
      return "set the pod's `securityContext.procMount: Unmasked`, which needs `hostUsers: false` (a user namespace "
             "for the pod)";
    case ContainerEngine::other:
    case ContainerEngine::none: break;
  }
  return "let confine mount a /proc of its own: unmask the container's /proc (nothing may be mounted over parts of it)";
}

std::string idmap_fix(const ContainerFacts& c) {
  std::string owner = "run the job as the checkout's owner, a user other than root (`--user UID`; Kubernetes "
                      "`runAsUser`), or give the checkout to such a user (chown)";
  if (c.rootless) return owner + " (a rootless container's root cannot make idmapped mounts, whatever its capabilities)";
  if (c.engine == ContainerEngine::podman || c.engine == ContainerEngine::docker)
    return owner + ", or run the container with `--cap-add SYS_ADMIN` (the container's root may then mount)";
  return owner + ", or give the job CAP_SYS_ADMIN";
}

std::string in_container(const ContainerFacts& c) {
  if (c.engine == ContainerEngine::none) return "this system";
  return std::string("this ") + container_engine_name(c.engine) + " container";
}

// root-files in full mode: root's sandbox runs as nobody on the host, its workspace shown through an idmapped bind;
// where the container allows no idmapped mount, it runs as the workspace's owner instead.
Promise root_files_promise(const RunRequest& r, const KernelFeatures& f) {
  const char* text = "files only host root may touch (/etc/shadow, other users' files) are out of reach";
  if (!r.run_by_root) return promise(PromiseId::root_files, text, {{Mechanism::own_uid, "(confine gains no privilege)"}});
  if (f.container.idmap) return promise(PromiseId::root_files, text, {{Mechanism::user_namespace, "(host uid 65534, no capabilities)"}});
  if (!r.inside_root)
    return promise(PromiseId::root_files, text, {{Mechanism::user_namespace, "(the workspace owner's uid, no capabilities)"}});
  return promise(PromiseId::root_files, text, {},
                 in_container(f.container) + " allows no idmapped mounts (they need CAP_SYS_ADMIN), so the sandbox runs as the "
                 "workspace's owner, root, and can read root's files that are visible inside; to keep it, " +
                 idmap_fix(f.container));
}

// With the container's /proc in place of its own, the sandbox lists the container's processes; the pid namespace
// still keeps signals from them, and Landlock (any ABI) keeps ptrace and /proc/PID/environ, mem and fd from them.
void container_proc_promises(std::vector<Promise>& p, const KernelFeatures& f) {
  for (auto& x : p) {
    if (x.id == PromiseId::process_list)
      x.enforced_by.clear(),
      x.note = in_container(f.container) + " refuses a fresh /proc, so the sandbox sees the container's (read-only, "
               "its masks kept): the container's processes and command lines are listed (and pids inside differ from the ones "
               "it shows, so `ps` fails); to keep it, " +
               fresh_proc_fix(f.container);
    if (x.id == PromiseId::processes && f.landlock_abi < 1)
      x.enforced_by.clear(),
      x.note = "with the container's /proc, only Landlock keeps the container's processes from being inspected, "
               "and it is unavailable";
    else if (x.id == PromiseId::processes)
      x.enforced_by = {{Mechanism::pid_namespace, "(signals)"},
                       {Mechanism::landlock, "(no ptrace, no /proc/PID reads outside the sandbox)"}};
  }
}

std::vector<Promise> full_mode(const RunRequest& r, const KernelFeatures& f) {
  std::vector<Promise> p;
  p.push_back(root_files_promise(r, f));
  p.push_back(promise(PromiseId::writes, "writes outside the workspace (and the private temp dirs) fail",
                      with_filesystem_landlock({{Mechanism::mount_namespace, "(read-only binds, sealed root)"}}, r, f)));
  p.push_back(promise(PromiseId::metadata, "metadata outside the workspace (modes, owners, timestamps, xattrs) cannot change",
                      {{Mechanism::mount_namespace, "(read-only binds, sealed root)"}}));
  p.push_back(promise(PromiseId::homes, "home directories (~/.ssh, ~/.aws, other users') are invisible",
                      with_filesystem_landlock({{Mechanism::mount_namespace, "(/home, /root not mounted; $HOME an empty tmpfs)"}}, r, f)));
  p.push_back(promise(PromiseId::workspace_secrets, "secret files in the workspace (.env*, *.key, *.pem, id_rsa*, .npmrc, secrets/, …) read as empty",
                      {{Mechanism::mount_namespace, "(masks)"}}));
  p.push_back(promise(PromiseId::git, ".git/hooks and .git/config cannot be changed", {{Mechanism::mount_namespace, "(read-only binds)"}}));
  if (!r.protect_git) p.back().requested = false, p.back().note = "turned off by --allow-git-config";
  p.push_back(git_after_run(r, {{Mechanism::confine, "(check after the run; the pid namespace ends every process first)"}}));
  if (r.net == NetMode::proxy)
    p.push_back(promise(PromiseId::network, "egress only to the allowlist: through confine's proxy, or by TCP to an allowed name on an allowed port (other names do not resolve; TCP/UDP to addresses fails)",
                        {{Mechanism::network_namespace, "(loopback only)"}, {Mechanism::proxy, "and DNS stub"}}));
  else
    p.push_back(promise(PromiseId::network, "no network: nothing outside the sandbox is reachable over IP",
                        {{Mechanism::network_namespace, "(loopback only)"}}));
  p.push_back(promise(PromiseId::abstract_sockets, "the host's abstract unix sockets are unreachable",
                      with_landlock({{Mechanism::network_namespace}}, f, 6, "scope")));
  if (r.net == NetMode::host) {
    for (auto& x : p)
      if (x.id == PromiseId::network || x.id == PromiseId::abstract_sockets) x.requested = false, x.note = "turned off by --net host";
  }
  p.push_back(promise(PromiseId::socket_files, "the host's unix socket files (D-Bus, ssh-agent, docker.sock) are unreachable",
                      {{Mechanism::mount_namespace, "(private /run, homes hidden)"}}));
  p.push_back(promise(PromiseId::processes, "host processes cannot be signalled, traced or inspected",
                      with_landlock({{Mechanism::pid_namespace}}, f, 6, "signal scope")));
  p.push_back(promise(PromiseId::process_list, kProcessListText, {{Mechanism::pid_namespace, "(a /proc of its own)"}}));
  p.push_back(promise(PromiseId::private_tmp, "/tmp, /var/tmp, /dev/shm and /run are private", {{Mechanism::mount_namespace, "(tmpfs)"}}));
  p.push_back(promise(PromiseId::privilege, "no capabilities, no setuid gains", {{Mechanism::capabilities, "dropped"}, {Mechanism::no_new_privs}}));
  p.push_back(setuid_files_promise(r, f, r.allow_nested));
  p.push_back(kernel_surface_promise(r, f));
  p.push_back(promise(PromiseId::lifetime, "nothing of the sandbox outlives confine", {{Mechanism::pid_namespace}, {Mechanism::parent_death_signal}}));
  p.push_back(promise(PromiseId::environment, "credential variables are removed from the environment", {{Mechanism::confine, "(scrubbing)"}}));
  p.push_back(own_writes());
  if (!f.container.fresh_proc) container_proc_promises(p, f);
  return p;
}

std::vector<Promise> fallback_mode(const RunRequest& r, const KernelFeatures& f) {
  const int abi = f.landlock_abi;
  auto landlock = [&](int min_abi, const std::string& what) {
    return abi >= min_abi ? std::vector<Enforcer>{{Mechanism::landlock, what}} : std::vector<Enforcer>{};
  };
  auto needs = [&](int min_abi, const std::string& what) {
    return abi >= min_abi ? std::string() : "needs Landlock ABI " + std::to_string(min_abi) + " (" + what + "); this kernel has " +
                                                (abi > 0 ? "ABI " + std::to_string(abi) : "no Landlock");
  };
  std::vector<Promise> p;
  if (!r.run_by_root)
    p.push_back(promise(PromiseId::root_files, "files only host root may touch (/etc/shadow, other users' files) are out of reach",
                        {{Mechanism::own_uid, "(confine gains no privilege)"}}));
  else if (r.switch_user)
    p.push_back(promise(PromiseId::root_files, "files only host root may touch (/etc/shadow, other users' files) are out of reach",
                        {{Mechanism::switched_uid, "(root switches to that uid, no capabilities)"}}));
  else
    p.push_back(promise(PromiseId::root_files, "files only host root may touch (/etc/shadow, other users' files) are out of reach",
                        {}, "without a user namespace the sandbox stays host root: pass --user UID:GID"));
  p.push_back(promise(PromiseId::writes, "writes outside the workspace (and the private $HOME and $TMPDIR) fail", landlock(3, "filesystem rules"),
                      needs(3, "truncate(2) is only restricted from ABI 3")));
  p.push_back(promise(PromiseId::metadata, "metadata outside the workspace (modes, owners, timestamps, xattrs) cannot change", {},
                      "needs a mount namespace: Landlock has no right for chmod, chown, utimes or setxattr"));
  p.push_back(promise(PromiseId::homes, "home directories are unreadable (names still visible to stat)",
                      landlock(1, "filesystem rules"), needs(1, "filesystem rules")));
  p.push_back(promise(PromiseId::workspace_secrets, "secret files in the workspace read as empty", {},
                      "needs a mount namespace: Landlock cannot deny files inside an allowed directory"));
  p.push_back(promise(PromiseId::git, ".git/hooks and .git/config cannot be changed", {}, "needs a mount namespace"));
  if (!r.protect_git) p.back().requested = false, p.back().note = "turned off by --allow-git-config";
  p.push_back(git_after_run(r, {}, "confine checks after the run, but without a pid namespace a process that "
                                   "detaches from the command can write after the check"));
  std::vector<Enforcer> net;
  auto unfiltered = missing_groups(r, {"fallback-udp", "fallback-mptcp", "fallback-fastopen-sendto",
                                       "fallback-fastopen-sendmsg", "fallback-fastopen-sendmmsg",
                                       "fallback-fastopen-connect"});
  if (abi >= 4 && f.seccomp && unfiltered.empty())
    net = {{Mechanism::landlock, abi >= 10 ? "TCP and UDP rules" : "TCP rules"},
           {Mechanism::seccomp, "(UDP, raw, MPTCP sockets, TCP Fast Open)"}};
  p.push_back(promise(PromiseId::network, "no network: nothing outside is reachable over IP", net,
                      net.empty() ? (abi < 4 ? needs(4, "TCP rules") : f.seccomp_problem) : ""));
  if (r.net == NetMode::proxy) p.push_back(promise(PromiseId::proxy, "allowlisted hosts are reachable through confine's proxy", {},
                                       "needs a network namespace to put the proxy in; all egress is refused instead"));
  p.push_back(promise(PromiseId::abstract_sockets, "the host's abstract unix sockets are unreachable", landlock(6, "scope"),
                      needs(6, "abstract unix socket scope")));
  if (r.net == NetMode::host) {
    for (auto& x : p)
      if (x.id == PromiseId::network || x.id == PromiseId::abstract_sockets) x.requested = false, x.note = "turned off by --net host";
  }
  p.push_back(promise(PromiseId::socket_files, "the host's unix socket files (D-Bus, ssh-agent, docker.sock) are unreachable",
                      landlock(9, "socket file rules (those in the workspace and the private $HOME and $TMPDIR stay reachable)"),
                      needs(9, "connecting to unix socket files")));
  p.push_back(promise(PromiseId::processes, "host processes cannot be signalled, traced or inspected",
                      landlock(6, "signal scope and ptrace rules"),
                      needs(6, "signal scope")));
  p.push_back(promise(PromiseId::process_list, kProcessListText, {},
                      "needs a pid namespace: /proc lists every host process with its command line"));
  p.push_back(promise(PromiseId::private_tmp, "/tmp, /var/tmp, /dev/shm and /run are private", {},
                      "needs a mount namespace: they are the host's, out of reach in fallback mode; the command gets "
                      "a private $HOME and $TMPDIR instead, removed after the run"));
  p.push_back(promise(PromiseId::privilege, "no capabilities, no setuid gains", {{Mechanism::no_new_privs}, {Mechanism::capabilities, "dropped"}}));
  p.push_back(setuid_files_promise(r, f, false));  // Landlock refuses every mount in fallback mode
  p.push_back(kernel_surface_promise(r, f));
  p.push_back(promise(PromiseId::lifetime, "nothing of the sandbox outlives confine", {},
                      "needs a pid namespace: processes that detach from the command survive it"));
  p.push_back(promise(PromiseId::environment, "credential variables are removed from the environment", {{Mechanism::confine, "(scrubbing)"}}));
  p.push_back(own_writes());
  return p;
}

bool layer_available(Layer l, const KernelFeatures& f, Mode mode) {
  switch (l) {
    case Layer::namespaces: return mode == Mode::full && f.userns;
    case Layer::landlock: return f.landlock_abi > 0;
    case Layer::seccomp: return f.seccomp;
  }
  return false;
}

std::string layer_problem(Layer l, const KernelFeatures& f, const RunRequest& r) {
  switch (l) {
    case Layer::namespaces: return r.no_namespaces ? "--no-namespaces was given" : f.userns_problem;
    case Layer::landlock: return f.landlock_problem;
    case Layer::seccomp: return f.seccomp_problem;
  }
  return {};
}

}  // namespace

const char* promise_id_name(PromiseId id) {
  switch (id) {
    case PromiseId::abstract_sockets: return "abstract-sockets";
    case PromiseId::device_access: return "device-access";
    case PromiseId::environment: return "environment";
    case PromiseId::git: return "git";
    case PromiseId::git_after_run: return "git-after-run";
    case PromiseId::homes: return "homes";
    case PromiseId::kernel_surface: return "kernel-surface";
    case PromiseId::lifetime: return "lifetime";
    case PromiseId::limits: return "limits";
    case PromiseId::metadata: return "metadata";
    case PromiseId::network: return "network";
    case PromiseId::own_writes: return "own-writes";
    case PromiseId::private_tmp: return "private-tmp";
    case PromiseId::privilege: return "privilege";
    case PromiseId::process_count: return "process-count";
    case PromiseId::process_list: return "process-list";
    case PromiseId::processes: return "processes";
    case PromiseId::profile_copies: return "profile-copies";
    case PromiseId::proxy: return "proxy";
    case PromiseId::root_files: return "root-files";
    case PromiseId::setuid_files: return "setuid-files";
    case PromiseId::socket_files: return "socket-files";
    case PromiseId::workspace_readonly: return "workspace-readonly";
    case PromiseId::workspace_secrets: return "workspace-secrets";
    case PromiseId::writes: return "writes";
  }
  return "?";
}

const char* mechanism_name(Mechanism m) {
  switch (m) {
    case Mechanism::user_namespace: return "user namespace";
    case Mechanism::mount_namespace: return "mount namespace";
    case Mechanism::pid_namespace: return "pid namespace";
    case Mechanism::network_namespace: return "network namespace";
    case Mechanism::landlock: return "Landlock";
    case Mechanism::seccomp: return "seccomp";
    case Mechanism::cgroup: return "cgroup v2";
    case Mechanism::nproc_limit: return "RLIMIT_NPROC";
    case Mechanism::capabilities: return "capabilities";
    case Mechanism::no_new_privs: return "no_new_privs";
    case Mechanism::parent_death_signal: return "parent-death signal";
    case Mechanism::own_uid: return "your own uid";
    case Mechanism::switched_uid: return "--user";
    case Mechanism::confine: return "confine";
    case Mechanism::proxy: return "confine's allowlist proxy";
  }
  return "?";
}

std::string enforcer_text(const Enforcer& e) {
  return e.what.empty() ? std::string(mechanism_name(e.by)) : std::string(mechanism_name(e.by)) + " " + e.what;
}

const char* layer_name(Layer layer) {
  switch (layer) {
    case Layer::namespaces: return "namespaces";
    case Layer::landlock: return "landlock";
    case Layer::seccomp: return "seccomp";
  }
  return "?";
}

bool parse_layer(const std::string& name, Layer& out) {
  for (Layer l : {Layer::namespaces, Layer::landlock, Layer::seccomp})
    if (name == layer_name(l)) return out = l, true;
  return false;
}

const char* mode_name(Mode mode) { return mode == Mode::full ? "full" : "fallback"; }

// --memory/--pids/--cpus: kept by a cgroup v2 leaf; the rlimit stand-ins of --best-effort are not counted as
// keeping it (they are far weaker), only named.
constexpr const char* kRlimitStandIns =
    "with --best-effort confine uses rlimits instead: RLIMIT_NPROC for --pids (per user namespace, so per sandbox "
    "only in full mode), RLIMIT_AS for --memory (address space, not memory in use: much weaker, and programs that "
    "reserve large mappings fail), nothing for --cpus";

Promise limits_promise(const RunRequest& r, const KernelFeatures& f) {
  if (f.cgroup_place) return promise(PromiseId::limits, "resource limits hold: " + describe_limits(r.limits), {{Mechanism::cgroup, std::string("(") + cgroup_place_name(f.cgroup_place->kind) + ")"}});
  return promise(PromiseId::limits, "resource limits hold: " + describe_limits(r.limits), {}, f.cgroup_problem + "; " + kRlimitStandIns);
}

// Without --pids a sandbox still gets a bound on its processes and threads. RLIMIT_NPROC counts the tasks of one
// real uid within one user namespace, and the sandbox's namespace maps a single uid: in full mode it bounds this
// sandbox alone, and its command cannot raise it (no CAP_SYS_RESOURCE on the host). Without a user namespace it
// would count every process of that uid on the host, and root's not at all, so fallback mode sets none.
Promise process_bound_promise(Mode mode) {
  auto text = fmt::format("the sandbox runs at most {} processes and threads at once (--pids sets another bound)", kDefaultPids);
  if (mode == Mode::full) return promise(PromiseId::process_count, text, {{Mechanism::nproc_limit, "in the sandbox's own user namespace"}});
  return promise(PromiseId::process_count, text, {},
                 "needs a user namespace (without one, RLIMIT_NPROC would count every process of the uid on the host); "
                 "--pids bounds it where a cgroup v2 pids controller is available");
}

// --device with PERMS r: Landlock alone keeps it (a read-only bind does not stop writes to a device).
Promise device_access_promise(const RunRequest& r, const KernelFeatures& f, Mode mode) {
  const char* text = "the devices given read-only cannot be written";
  if (f.landlock_abi < 1) return promise(PromiseId::device_access, text, {}, "needs Landlock (" + f.landlock_problem + ")");
  if (mode == Mode::full && r.allow_nested)
    return promise(PromiseId::device_access, text, {}, "--allow-nested turns Landlock's filesystem rules off");
  return promise(PromiseId::device_access, text, {{Mechanism::landlock, "device rules"}});
}

// A read-only workspace: the bind in full mode; in fallback mode Landlock.
Promise readonly_workspace_promise(const RunRequest& r, const KernelFeatures& f, Mode mode) {
  const char* text = "the workspace cannot be changed (read-only profile)";
  if (mode == Mode::full) return promise(PromiseId::workspace_readonly, text, with_filesystem_landlock({{Mechanism::mount_namespace, "(read-only bind)"}}, r, f));
  if (f.landlock_abi < 1) return promise(PromiseId::workspace_readonly, text, {}, "needs a mount namespace or Landlock");
  return promise(PromiseId::workspace_readonly, text, {{Mechanism::landlock, "filesystem rules"}});
}

std::vector<Promise> evaluate_promises(const RunRequest& request, const KernelFeatures& features, Mode mode) {
  auto p = mode == Mode::full ? full_mode(request, features) : fallback_mode(request, features);
  if (request.workspace_readonly) p.push_back(readonly_workspace_promise(request, features, mode));
  if (request.limits.any()) p.push_back(limits_promise(request, features));
  if (request.read_only_devices) p.push_back(device_access_promise(request, features, mode));
  if (request.default_process_bound) p.push_back(process_bound_promise(mode));
  // Fallback mode refuses copies and private directories outright (needs_mounts): only full mode makes them.
  if (request.profile_own_copies && mode == Mode::full)
    p.push_back(promise(PromiseId::profile_copies, "the profile's copied settings and private caches never reach the host's",
                        {{Mechanism::mount_namespace, "(copies in the sandbox's own home, caches in confine's directory)"}}));
  return p;
}

std::vector<std::string> Enforcement::lost() const {
  std::vector<std::string> out;
  for (const auto& p : promises)
    if (p.requested && !p.kept()) out.push_back(p.text + ": " + p.note);
  return out;
}

std::vector<std::string> Enforcement::layers_applied() const {
  std::vector<std::string> out;
  if (mode == Mode::full) out = {"user-namespace", "mount-namespace", "pid-namespace", "ipc-namespace", "uts-namespace",
                                 "cgroup-namespace"};
  for (const auto& p : promises)
    if (p.id == PromiseId::network && p.requested && mode == Mode::full) out.push_back("network-namespace");
  if (use_landlock) out.push_back("landlock-abi-" + std::to_string(landlock_abi));
  if (use_seccomp) out.push_back("seccomp");
  if (use_cgroup) out.push_back("cgroup-v2-limits");
  if (use_rlimits) out.push_back("rlimits");
  out.push_back("capabilities-dropped");
  out.push_back("no-new-privs");
  return out;
}

const char* container_engine_name(ContainerEngine engine) {
  switch (engine) {
    case ContainerEngine::none: return "none";
    case ContainerEngine::podman: return "podman";
    case ContainerEngine::docker: return "docker";
    case ContainerEngine::kubernetes: return "Kubernetes";
    case ContainerEngine::other: return "other";
  }
  return "other";
}

namespace {

// What the full sandbox does where the container refuses a step; the promises above say what each one costs.
void decide_stand_ins(Enforcement& e, const RunRequest& r, const KernelFeatures& f) {
  e.stand_ins.container_proc = !f.container.fresh_proc;
  e.stand_ins.owner_identity = r.run_by_root && !f.container.idmap;
  e.stand_ins.keep_hostname = !f.container.hostname;
  if (e.stand_ins.keep_hostname)
    e.notes.push_back(in_container(f.container) + " does not let the sandbox set its hostname: it keeps the container's");
}

// Each promise lost is a reason to refuse, except, under --no-namespaces, those only namespaces keep: kept in full
// mode, and lost in fallback mode even with every Landlock right there is. Those are the flag's own consequence,
// counted in one line rather than listed; one lost for want of this kernel's Landlock is still named.
void refuse_lost_promises(Enforcement& e, const RunRequest& request, const KernelFeatures& features) {
  std::vector<Promise> in_full, with_all_landlock;
  if (e.mode == Mode::fallback && request.no_namespaces) {
    in_full = evaluate_promises(request, features, Mode::full);
    auto newest = features;
    newest.landlock_abi = std::numeric_limits<int>::max();
    with_all_landlock = evaluate_promises(request, newest, Mode::fallback);
  }
  auto kept = [](const std::vector<Promise>& all, const Promise& p) {
    return std::any_of(all.begin(), all.end(), [&](const Promise& q) { return q.id == p.id && q.kept(); });
  };
  for (const auto& p : e.promises) {
    if (!p.requested || p.kept()) continue;
    if (kept(in_full, p) && !kept(with_all_landlock, p)) ++e.given_up;
    else e.problems.push_back(p.text + ": " + p.note);
  }
}

}  // namespace

Enforcement decide(const RunRequest& request, const KernelFeatures& features, Mode mode) {
  Enforcement e;
  e.mode = mode;
  e.promises = evaluate_promises(request, features, mode);
  e.use_landlock = features.landlock_abi > 0;
  e.use_seccomp = features.seccomp;
  e.landlock_abi = features.landlock_abi;
  e.use_cgroup = request.limits.any() && features.cgroup_place.has_value();
  e.use_rlimits = request.limits.any() && !e.use_cgroup && request.best_effort;
  for (Layer l : request.required)
    if (!layer_available(l, features, mode))
      e.problems.push_back(std::string("required layer `") + layer_name(l) + "` is unavailable: " +
                           layer_problem(l, features, request));
  if (mode == Mode::full) decide_stand_ins(e, request, features);
  if (!request.best_effort)
    refuse_lost_promises(e, request, features);
  else
    for (const auto& l : e.lost()) e.warnings.push_back("not enforced (--best-effort): " + l);
  if (mode == Mode::fallback && !request.no_namespaces)
    (request.best_effort ? e.warnings : e.problems)
        .insert((request.best_effort ? e.warnings : e.problems).begin(),
                features.refused_step.empty()
                    ? "user namespaces are unavailable, so only fallback mode is possible: " + features.userns_problem
                    : "this system refused a step of the full sandbox (" + features.refused_step +
                          "), so only fallback mode is possible; `confine probe` shows what it allows");
  // Not a promise that can be weakened: without a mount namespace the command would see another filesystem.
  if (mode == Mode::fallback && !request.needs_mounts.empty())
    e.problems.push_back(request.needs_mounts + " need a mount namespace, which fallback mode does not have");
  // Likewise: without a network namespace the sandbox's servers listen on the host's own addresses.
  if (mode == Mode::fallback && request.publishes)
    e.problems.push_back("--publish needs a network namespace, which fallback mode does not have");
  if (mode == Mode::full && !e.use_landlock)
    e.warnings.push_back("Landlock is unavailable (" + features.landlock_problem +
                         "): the mount namespace is the only filesystem wall");
  return e;
}

std::optional<FeatureOverride> parse_feature_override(const std::string& spec) {
  if (spec.empty()) return std::nullopt;
  auto value = [&](const std::string& key) -> std::optional<int> {
    auto pos = spec.find(key + "=");
    if (pos == std::string::npos) return std::nullopt;
    return std::atoi(spec.c_str() + pos + key.size() + 1);
  };
  FeatureOverride o;
  o.landlock_abi = value("landlock");
  if (auto v = value("seccomp")) o.seccomp = *v != 0;
  if (auto v = value("userns")) o.userns = *v != 0;
  if (auto v = value("proc")) o.fresh_proc = *v != 0;
  if (auto v = value("hostname")) o.hostname = *v != 0;
  if (auto v = value("idmap")) o.idmap = *v != 0;
  return o;
}

void apply_feature_override(KernelFeatures& f, const FeatureOverride& pinned) {
  if (pinned.landlock_abi) f.landlock_abi = *pinned.landlock_abi, f.landlock_problem = *pinned.landlock_abi ? "" : "disabled for this test";
  if (pinned.seccomp) f.seccomp = *pinned.seccomp, f.seccomp_problem = *pinned.seccomp ? "" : "disabled for this test";
  if (pinned.userns) f.userns = *pinned.userns, f.userns_problem = *pinned.userns ? "" : "disabled for this test";
  if (pinned.fresh_proc) f.container.fresh_proc = *pinned.fresh_proc;
  if (pinned.hostname) f.container.hostname = *pinned.hostname;
  if (pinned.idmap) f.container.idmap = *pinned.idmap;
}

}  // namespace confine
