#include "core/plan.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <fmt/format.h>

#include <sys/resource.h>
#include <sys/stat.h>

#include "core/decisions.h"
#include "core/resolve.h"
#include "sys/private_dir.h"

namespace confine {
namespace {

// Device nodes bound from the host into the minimal /dev (harmless ones only).
constexpr std::array kDeviceNodes = {std::string_view{"null"}, std::string_view{"zero"}, std::string_view{"full"},
                                     std::string_view{"random"}, std::string_view{"urandom"}, std::string_view{"tty"}};
// What else add_dev makes in /dev (the terminal's name is below pts/, its other at console).
constexpr std::array kDevOwnNames = {std::string_view{"pts"},   std::string_view{"ptmx"},   std::string_view{"fd"},
                                     std::string_view{"stdin"}, std::string_view{"stdout"}, std::string_view{"stderr"},
                                     std::string_view{"shm"},   std::string_view{"console"}};

std::size_t depth(const std::string& path) { return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/')); }

MountOp bind(std::string source, std::string dest, bool read_only) {
  MountOp m;
  m.kind = MountKind::bind;
  m.source = std::move(source);
  m.dest = std::move(dest);
  m.read_only = read_only;
  return m;
}

MountOp fs(MountKind kind, std::string dest, std::string options = {}, bool read_only = false) {
  MountOp m;
  m.kind = kind;
  m.dest = std::move(dest);
  m.fs_options = std::move(options);
  m.read_only = read_only;
  return m;
}

MountOp link(std::string dest, std::string target) {
  MountOp m;
  m.kind = MountKind::symlink;
  m.dest = std::move(dest);
  m.source = std::move(target);
  return m;
}

MountOp beneath(const std::string& dir, MountKind kind, std::string rel, bool skip_if_missing) {
  MountOp m;
  m.kind = kind;
  m.dest = std::move(rel);
  m.beneath = dir;
  m.skip_if_missing = skip_if_missing;
  m.read_only = true;
  return m;
}

MountOp in_workspace(const Policy& p, MountKind kind, std::string rel, bool skip_if_missing) {
  return beneath(p.fs.workspace_inside, kind, std::move(rel), skip_if_missing);
}

// The host's system directories read-only, or an image's: read-only too, or overlays whose writes are thrown away.
void add_system(std::vector<MountOp>& out, const std::vector<SystemEntry>& system, bool writable_image) {
  for (const auto& e : system) {
    if (!e.link_target.empty()) {
      out.push_back(link(e.path, e.link_target));
      continue;
    }
    auto m = bind(e.source, e.path, true);
    if (writable_image) m.kind = MountKind::overlay, m.read_only = false;
    out.push_back(std::move(m));
  }
}

std::string sized(const char* options, std::uint64_t bytes) { return fmt::format("{},size={}", options, bytes); }

// "/dev/pts/N" -> N; -1 for a terminal that is not a pty (a console, a serial line) or an index pid 1 would not
// reach (see MountOp::devpts_index: it opens ptys up to that one).
int pty_index(const std::string& terminal) {
  constexpr std::string_view prefix = "/dev/pts/";
  if (!terminal.starts_with(prefix) || terminal.size() == prefix.size() || terminal.size() > prefix.size() + 3) return -1;
  int n = 0;
  for (char c : terminal.substr(prefix.size())) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n < kMaxDevptsIndex ? n : -1;
}

void add_dev(std::vector<MountOp>& out, const std::string& terminal, std::uint64_t shm_size) {
  out.push_back(fs(MountKind::tmpfs, "/dev", "mode=0755,size=64k"));
  for (auto node : kDeviceNodes) {
    auto m = bind("/dev/" + std::string(node), "/dev/" + std::string(node), false);
    m.recursive = false;
    m.dest_is_file = true;
    m.devices = true;
    out.push_back(std::move(m));
  }
  // A private devpts: the sandbox cannot reach the host's other terminals through /dev/pts.
  out.push_back(fs(MountKind::devpts, "/dev/pts", "newinstance,ptmxmode=0666,mode=0620"));
  out.push_back(link("/dev/ptmx", "pts/ptmx"));
  out.push_back(link("/dev/fd", "/proc/self/fd"));
  out.push_back(link("/dev/stdin", "/proc/self/fd/0"));
  out.push_back(link("/dev/stdout", "/proc/self/fd/1"));
  out.push_back(link("/dev/stderr", "/proc/self/fd/2"));
  out.push_back(fs(MountKind::tmpfs, "/dev/shm", sized("mode=1777", shm_size)));
  if (terminal.empty()) return;
  // The command already holds this terminal as stdin/stdout/stderr; the binds only give it names: its own
  // (/dev/pts/N, what ttyname() and `tty` find) where it is a pty, and /dev/console, as before.
  auto terminal_at = [&](const std::string& dest) {
    auto m = bind(terminal, dest, false);
    m.recursive = false;
    m.dest_is_file = true;
    m.devices = true;
    return m;
  };
  if (int index = pty_index(terminal); index >= 0) {
    auto own = terminal_at(terminal);
    own.devpts_index = index;
    out.push_back(std::move(own));
  }
  out.push_back(terminal_at("/dev/console"));
}

// --device, --gpus: each host device node bound at its place inside, usable (the only binds but /dev's own that are
// not nodev); what the command may do with it is Landlock's to keep (core/decisions.cc): a read-only bind does not
// stop writes to a device.
void add_devices(std::vector<MountOp>& out, const std::vector<HostDevice>& devices) {
  for (const auto& d : devices) {
    auto m = bind(d.source, d.dest, false);
    m.recursive = false;
    m.dest_is_file = true;
    m.devices = true;
    out.push_back(std::move(m));
  }
}

// Private writable places and the user's own mounts. Sorted by depth so a parent (tmpfs /tmp) is mounted
// before anything below it (a workspace under /tmp), whatever order the flags came in.
// Run by root, confine binds the user's trees itself, idmapped through the sandbox's user namespace; where the
// container allows no idmapped mount, the sandbox runs as their owner instead and pid 1 binds them as it is.
bool binds_from_parent(const Policy& p, const PlanInputs& in) { return p.ids.run_by_root && !in.stand_ins.owner_identity; }

std::vector<MountOp> private_and_user_mounts(const Policy& p, const PlanInputs& in) {
  std::vector<MountOp> v;
  const auto size = p.fs.tmpfs_size;
  v.push_back(fs(MountKind::tmpfs, "/tmp", sized("mode=1777", size)));
  // An image's /var/tmp is its own (a throwaway overlay, or read-only as docker's --read-only leaves it).
  if (p.fs.rootfs.empty()) v.push_back(fs(MountKind::tmpfs, "/var/tmp", sized("mode=1777", size)));
  v.push_back(fs(MountKind::tmpfs, "/run", sized("mode=0755", size)));
  v.push_back(fs(MountKind::directory, "/home"));
  v.push_back(fs(MountKind::directory, "/root"));
  if (!p.fs.home.empty()) v.push_back(fs(MountKind::tmpfs, p.fs.home, sized("mode=0700", size)));
  for (const auto& t : p.fs.tmpfs)
    v.push_back(fs(MountKind::tmpfs, t.dest, t.options.find("size=") == std::string::npos ? sized(t.options.c_str(), size) : t.options));
  if (!p.fs.workspace.empty()) {
    auto ws = bind(p.fs.workspace, p.fs.workspace_inside, p.fs.workspace_readonly);
    ws.from_parent = binds_from_parent(p, in);
    ws.source_fd = p.fs.workspace_fd ? p.fs.workspace_fd->get() : -1;
    v.push_back(std::move(ws));
  }
  for (const auto& b : p.fs.binds) {
    auto m = bind(b.source, b.dest, !b.writable);
    m.dest_is_file = b.is_file;
    m.from_parent = binds_from_parent(p, in);
    m.source_fd = b.source_fd ? b.source_fd->get() : -1;
    v.push_back(std::move(m));
  }
  // After $HOME's tmpfs (the sort keeps it first): the copy is written into the sandbox's own home.
  for (const auto& [path, content] : in.copies) {
    auto m = fs(MountKind::copy, path);
    m.content = content;
    v.push_back(std::move(m));
  }
  std::stable_sort(v.begin(), v.end(), [](const MountOp& a, const MountOp& b) { return depth(a.dest) < depth(b.dest); });
  return v;
}

// A linked worktree (`git worktree add`, --worktree): its repository's git dir is bound read-write so commits
// work, with its hooks and config read-only like a workspace's own, and the main checkout's HEAD and index too
// (the worktree has its own); the .git file itself is read-only, so it cannot be pointed at a planted git dir.
void add_linked_repository(std::vector<MountOp>& out, const Policy& p, const PlanInputs& in, const GitLayout& git) {
  if (git.common_dir.empty()) return;
  auto repo = bind(git.common_dir, git.common_dir, false);
  repo.from_parent = binds_from_parent(p, in);
  out.push_back(std::move(repo));
  if (!p.fs.protect_git) return;
  out.push_back(in_workspace(p, MountKind::rebind, ".git", false));
  for (const char* leaf : {"/hooks", "/config", "/HEAD", "/index"}) {
    auto m = fs(MountKind::rebind, git.common_dir + leaf, {}, true);
    m.skip_if_missing = true;
    out.push_back(std::move(m));
  }
}

// Found by a scan of `dir` (inside path), each name as the scan saw it (see resolve_masks: secret files and
// directories, the directories it could not list, secret-named links and where they lead, other names of
// hard-linked secrets). None is skipped when missing: a secret that moved between the scan and the mount may be
// readable at its new name, so the view changed and the start fails (the user runs again).
// A path the user masks too (`user_masks`) is left to the user's mask: two masks stacked on one path leave the
// root busy, and the sandbox would not start. A path below `covers` deeper than `dir` (the sandbox's own $HOME
// inside a --ro of its parent, a --tmpfs, the workspace or another bind with a scan of its own) is not the scanned
// one inside: nothing of it shows there, or the deeper tree's own scan masks it; its mask would find nothing.
void add_scan_masks(std::vector<MountOp>& out, const std::string& dir, const SecretScan& scan,
                    const std::vector<std::string>& user_masks, const std::vector<std::string>& covers) {
  auto shadowed = [&](const std::string& path) {
    return std::any_of(covers.begin(), covers.end(), [&](const std::string& c) {
      return depth(c) > depth(dir) && is_within(c, dir) && is_within(path, c);
    });
  };
  for (const auto& m : scan.masks) {
    if (std::find(user_masks.begin(), user_masks.end(), dir + "/" + m.path) != user_masks.end()) continue;
    if (shadowed(dir + "/" + m.path)) continue;
    auto op = beneath(dir, MountKind::mask, m.path, false);
    op.expect_ino = m.ino;
    op.expect_type = m.type;
    out.push_back(std::move(op));
  }
}

void add_masks(std::vector<MountOp>& out, const Policy& p, const PlanInputs& in, const GitLayout& git) {
  // The trees that stand over part of a scanned one: private (tmpfs) or scanned themselves.
  std::vector<std::string> covers;
  for (const auto& o : out)
    if (o.kind == MountKind::tmpfs && o.beneath.empty()) covers.push_back(o.dest);
  if (!p.fs.workspace.empty()) covers.push_back(p.fs.workspace_inside);
  for (const auto& b : in.bind_secrets) covers.push_back(b.dest);
  if (!p.fs.workspace.empty()) add_scan_masks(out, p.fs.workspace_inside, in.secrets, p.fs.masks, covers);
  for (const auto& b : in.bind_secrets) add_scan_masks(out, b.dest, b.scan, p.fs.masks, covers);
  // The user's own: what is not there is an error (at mount time, inside), never a silent skip: an earlier run
  // may have moved it away for this one to read at its new name.
  for (const auto& m : p.fs.masks) out.push_back(fs(MountKind::mask, m, {}, true));
  add_linked_repository(out, p, in, git);
  // So the agent cannot plant code that runs outside the sandbox the next time the user runs git.
  if (!p.fs.protect_git || !git.dir) return;
  // .git itself stays writable (commits work) but becomes a mount point, so it cannot be renamed away and
  // replaced by a planted one.
  auto git_dir = in_workspace(p, MountKind::rebind, ".git", false);
  git_dir.read_only = false;
  out.push_back(std::move(git_dir));
  if (git.hooks) out.push_back(in_workspace(p, MountKind::rebind, ".git/hooks", false));
  if (git.config) out.push_back(in_workspace(p, MountKind::rebind, ".git/config", false));
}

MountOp file_with(std::string dest, std::string content) {
  auto m = fs(MountKind::file, std::move(dest), {}, true);
  m.content = std::move(content);
  m.skip_if_missing = true;  // an image without /etc: nothing to look names up with, nothing to point elsewhere
  return m;
}

// --net proxy and veth: names are answered by confine's DNS stub (at kDnsStubAddress, a Listener), and nothing
// else answers them: the host's resolver configuration and hosts file (which may name internal machines) are
// replaced by confine's own. A file the user binds there instead is theirs to choose, and is not covered.
void add_name_service(std::vector<MountOp>& out, const Policy& p) {
  auto user_binds = [&](std::string_view dest) {
    return std::any_of(p.fs.binds.begin(), p.fs.binds.end(), [&](const UserBind& b) { return b.dest == dest; });
  };
  if (!user_binds("/etc/resolv.conf"))
    out.push_back(file_with("/etc/resolv.conf", fmt::format("# confine: allowed names get a local address; other names do not exist\n"
                                                            "nameserver {}\n", kDnsStubAddress)));
  if (!user_binds("/etc/hosts"))
    out.push_back(file_with("/etc/hosts", fmt::format("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
                                                      "127.0.1.1\t{}\n", p.hostname)));
}

// The file the sandbox reads its refusals in: read-only inside, written by confine as they happen. Last, so no
// mount of the user's under /run hides it.
MountOp denial_log_file() {
  auto m = file_with(kDenialLogPath, "");
  m.written_by_confine = true;
  return m;
}

// `git`: the layout once the plan's directories are made (host_directories_to_make).
}  // namespace

bool in_confines_dev(std::string_view path) {
  if (!path.starts_with("/dev/")) return false;
  auto name = path.substr(5, path.find('/', 5) == std::string_view::npos ? std::string_view::npos : path.find('/', 5) - 5);
  auto is = [&](std::string_view n) { return n == name; };
  return std::any_of(kDeviceNodes.begin(), kDeviceNodes.end(), is) || std::any_of(kDevOwnNames.begin(), kDevOwnNames.end(), is);
}

namespace {

std::vector<MountOp> mounts_for(const Policy& p, const PlanInputs& in, const GitLayout& git) {
  std::vector<MountOp> out;
  add_system(out, in.system, !p.fs.rootfs.empty() && p.fs.rootfs_writable);
  add_dev(out, in.terminal, p.fs.shm_size);
  add_devices(out, p.fs.devices);
  if (in.stand_ins.container_proc) {
    // The container refuses a fresh /proc: its own, bound with everything it masks (locked to it in any case),
    // read-only: its processes' files (oom_score_adj of confine's own, of the container's init) are the same
    // user's, so only the mount keeps the sandbox from writing them.
    auto proc = bind("/proc", "/proc", true);
    proc.recursive = true;
    out.push_back(std::move(proc));
  } else {
    out.push_back(fs(MountKind::proc, "/proc"));
  }
  auto sys = fs(MountKind::sysfs, "/sys", {}, true);
  sys.skip_if_missing = true;
  out.push_back(std::move(sys));
  if (p.net == NetMode::proxy) add_name_service(out, p);
  auto rest = private_and_user_mounts(p, in);
  out.insert(out.end(), rest.begin(), rest.end());
  if (p.net == NetMode::host && !in.resolver_dir.empty()) {
    auto resolver = bind(in.resolver_dir, in.resolver_dir, true);
    resolver.skip_if_missing = true;
    out.push_back(std::move(resolver));
  }
  add_masks(out, p, in, git);
  out.push_back(denial_log_file());
  return out;
}

// Sets NAME=value in an environment, replacing the variable if it is there.
void set_variable(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  auto entry = name + "=" + value;
  auto same = [&](const std::string& e) { return e.compare(0, name.size() + 1, name + "=") == 0; };
  if (auto it = std::find_if(env.begin(), env.end(), same); it != env.end()) *it = std::move(entry);
  else env.push_back(std::move(entry));
}

// Without namespaces there is nothing to mount or map: only the process-level steps remain. Root with --user
// switches uid first (it needs CAP_SETUID); the switch itself clears root's capabilities.
std::vector<InitStep> fallback_init_steps(bool switch_user) {
  std::vector<InitStep> s = {{InitStepKind::close_inherited_fds}};
  if (switch_user) s.insert(s.end(), {{InitStepKind::set_ids}, {InitStepKind::check_ids}});
  for (auto k : {InitStepKind::drop_capabilities, InitStepKind::no_new_privs, InitStepKind::not_dumpable}) s.push_back({k});
  return s;
}

std::vector<CommandStep> command_steps_for(const Plan& plan) {
  // pid 1 blocks signals to forward them: the command starts with a clean mask.
  std::vector<CommandStep> s = {{CommandStepKind::reset_signals}, {CommandStepKind::change_directory}};
  if (!plan.rlimits.empty()) s.push_back({CommandStepKind::set_rlimits});
  // Landlock before seccomp so the filter need not allow Landlock's syscalls; both need no_new_privs (pid 1).
  if (plan.landlock.abi > 0) s.push_back({CommandStepKind::apply_landlock});
  // seccomp last: every earlier step runs unfiltered, and the filter sees only the command's own syscalls.
  if (!plan.seccomp.code.empty()) s.push_back({CommandStepKind::apply_seccomp});
  s.push_back({CommandStepKind::exec});
  return s;
}

bool listens_on(const Plan& plan, Listener::Place place) {
  return std::any_of(plan.listeners.begin(), plan.listeners.end(), [&](const Listener& l) { return l.place == place; });
}

bool listens_for(const Plan& plan, Listener::Service service) {
  return std::any_of(plan.listeners.begin(), plan.listeners.end(), [&](const Listener& l) { return l.service == service; });
}

// confine serves the sandbox while it runs: the listeners pid 1 opens, or sockets the maker makes later.
bool has_services(const Plan& plan) { return !plan.listeners.empty() || plan.sandbox_sockets; }

std::vector<InitStep> init_steps_for(const Plan& plan) {
  if (plan.mode == Mode::fallback) return fallback_init_steps(plan.switch_user);
  std::vector<InitStep> s;
  // Ids first: as root, the sandbox must stop being host root before it creates a single file.
  s.push_back({InitStepKind::set_ids});
  s.push_back({InitStepKind::check_ids});
  // Before any mount: nothing we mount may propagate back to the host.
  s.push_back({InitStepKind::make_mounts_private});
  // Clone (or open) every host source before the new root is attached over the staging directory and could hide it.
  bool overlays = false;
  for (std::size_t i = 0; i < plan.mounts.size(); ++i) {
    const auto& m = plan.mounts[i];
    overlays = overlays || m.kind == MountKind::overlay;
    if ((m.kind == MountKind::bind && !m.from_parent) || m.kind == MountKind::overlay) s.push_back({InitStepKind::clone_source, i});
  }
  s.push_back({InitStepKind::create_root});
  // The writable layers live on their own tmpfs: the root tmpfs is sealed read-only later, and overlays need
  // their upper directories inside this mount namespace.
  if (overlays) s.push_back({InitStepKind::create_layers});
  for (std::size_t i = 0; i < plan.mounts.size(); ++i) s.push_back({InitStepKind::attach, i});
  s.push_back({InitStepKind::pivot_root});
  s.push_back({InitStepKind::seal_root});
  if (!plan.keep_hostname) s.push_back({InitStepKind::set_hostname});
  if (plan.new_netns) s.push_back({InitStepKind::loopback_up});
  if (listens_on(plan, Listener::Place::sandbox_loopback)) s.push_back({InitStepKind::open_listeners});
  // After the listeners (confine receives them in that order), before the descriptors it is among are closed.
  if (plan.denial_log) s.push_back({InitStepKind::hand_over_refusal_files});
  // Close what confine inherited (all but --preserve-fd) before anything of the command's can run.
  s.push_back({InitStepKind::close_inherited_fds});
  // Capabilities last among the privileged steps: every step above needs CAP_SYS_ADMIN or CAP_NET_ADMIN.
  s.push_back({InitStepKind::drop_capabilities});
  s.push_back({InitStepKind::no_new_privs});
  // pid 1 keeps preserved fds; non-dumpable keeps the command from reading them through /proc/1/fd or ptrace.
  s.push_back({InitStepKind::not_dumpable});
  return s;
}

bool has_parent_trees(const Plan& plan) {
  return std::any_of(plan.mounts.begin(), plan.mounts.end(), [](const MountOp& m) { return m.from_parent; });
}

std::vector<ParentStep> parent_steps_for(const Plan& plan) {
  const bool full = plan.mode == Mode::full;
  std::vector<ParentStep> s;
  // First of all: a host port that is taken (or an address the host does not have) ends the run before anything
  // exists, neither the sandbox nor a record on disk.
  if (!plan.published.empty()) s.push_back({ParentStepKind::listen_published});
  // As early as a step can be: a new cgroup costs the kernel milliseconds, spent on a thread while the steps up
  // to join_cgroup run (a checkpoint's save above all).
  if (plan.cgroup) s.push_back({ParentStepKind::make_cgroup});
  // Before confine changes anything in the workspace (make_host_dirs): the checkpoint is the workspace as the
  // user left it. Kept when the run fails to start: it still is what a restore brings back.
  if (plan.checkpoint_save) s.push_back({ParentStepKind::save_checkpoint});
  // What an earlier run left for git when confine was killed before checking it is set aside before this run
  // begins (after the checkpoint: that is the workspace as the user left it).
  if (!plan.pending_checks_dir.empty()) s.push_back({ParentStepKind::finish_interrupted_checks});
  // Before the git check is recorded (they are confine's changes, not the sandbox's) and before the sandbox
  // exists (it binds them). Undone if the run fails to start: nothing of the user's is left changed.
  if (!plan.host_dirs.empty()) s.push_back({ParentStepKind::make_host_dirs});
  // Before the sandbox exists, which lives in it; left to remove_run_dir (always) when the run fails to start.
  if (plan.run_dir) s.push_back({ParentStepKind::make_run_dir});
  // Before the git check is recorded: the cache's place may be in a tree the check looks at after the run.
  if (plan.save_scan_caches) s.push_back({ParentStepKind::save_scan_caches});
  // On disk before the sandbox exists: if confine is killed before the check after the run, the next confine
  // does it. After every host change confine makes itself (make_host_dirs), so whatever changes from here on may
  // be the sandbox's doing.
  if (plan.git_check) s.push_back({ParentStepKind::record_git_check});
  // Joined before the sandbox is cloned, so pid 1 is never cloned from a multi-threaded process.
  if (plan.cgroup) s.push_back({ParentStepKind::join_cgroup});
  // Before the sandbox exists, so no signal is lost between its birth and the supervise loop.
  s.push_back({ParentStepKind::block_signals});
  // Run by root: the sandbox would inherit root's supplementary groups (gid 0 and friends).
  if (plan.ids.run_by_root) s.push_back({ParentStepKind::shed_groups});
  s.push_back({ParentStepKind::clone_sandbox});
  // pid 1 waits for "go": everything it needs from confine comes before it.
  if (full) s.push_back({ParentStepKind::write_id_maps});
  // The pair's far end joins pid 1's network namespace, which exists once pid 1 does.
  if (listens_on(plan, Listener::Place::veth)) s.push_back({ParentStepKind::connect_veth});
  // pid 1 exists and is still dumpable (it turns undumpable in its last step, after go), so its namespaces can be
  // opened through /proc; its user namespace's maps are written, so the maker joins it with a mapped identity.
  if (plan.sandbox_sockets) s.push_back({ParentStepKind::start_socket_maker});
  // An idmapped mount needs the user namespace's maps written.
  if (full && has_parent_trees(plan)) s.push_back({ParentStepKind::open_idmapped_trees});
  s.push_back({ParentStepKind::send_go});
  // pid 1 opens its listeners once loopback is up, and hands them over before the command exists; the command
  // can connect as soon as it runs (a connection waits in the listen backlog until the proxy accepts it).
  if (has_services(plan)) s.push_back({ParentStepKind::start_services});
  // pid 1 hands it over after its listeners, before the command exists: the command's first refusal is there.
  if (plan.denial_log) s.push_back({ParentStepKind::receive_refusal_files});
  s.push_back({ParentStepKind::supervise});
  // Right after the run (the sandbox is gone, so the summary covers all of it), and before the checks: every socket
  // the sandbox made confine hold (a listener per name it asked for, its tunnels) is closed first, so a sandbox
  // that ran confine out of descriptors cannot make the git check fail to open what it must inspect.
  if (has_services(plan)) s.push_back({ParentStepKind::stop_services, true});
  // After the run, whatever happened before: every process of the sandbox is gone once supervise returns (its pid
  // namespace ends with pid 1; in fallback mode the command was waited for), so nothing changes the trees behind
  // the check.
  if (plan.git_check) s.push_back({ParentStepKind::check_git_state, true});
  // For the same reason after the run; before its end is recorded, which these changes are part of.
  if (!plan.file_privilege_trees.empty()) s.push_back({ParentStepKind::drop_file_privileges, true});
  // After the check: what it set aside for git is part of how the run left the workspace.
  if (plan.run_end_record) s.push_back({ParentStepKind::record_run_end, true});
  if (plan.run_dir) s.push_back({ParentStepKind::remove_run_dir, true});
  // Read before the leaf is removed (when the plan's owner lets it go).
  if (plan.cgroup) s.push_back({ParentStepKind::report_usage, true});
  // Last: every refusal is in by then, the limits' and the git check's too; the seccomp watch ends here, its
  // callers all gone.
  s.push_back({ParentStepKind::report_refusals, true});
  return s;
}

// What confine listens on for the sandbox, in the order pid 1 opens those on its loopback (and hands them over).
std::vector<Listener> listeners_for(const Policy& policy) {
  std::vector<Listener> out;
  Listener proxy;
  proxy.service = Listener::Service::http_proxy;
  if (policy.proxy.over_veth) {
    // Over a veth pair, the proxy's socket is made by confine on the pair's far end (mech/veth.h).
    proxy.place = Listener::Place::veth;
  }
  proxy.port = kProxyPort;
  out.push_back(proxy);
  Listener dns;
  dns.service = Listener::Service::dns;
  dns.port = 53;
  out.push_back(dns);
  for (const auto& [host, port] : policy.proxy.allow.loopback_forwards()) {
    Listener forward;
    forward.place = Listener::Place::sandbox_loopback;
    forward.ipv6 = host == "::1";
    forward.port = port;
    forward.service = Listener::Service::forward;
    forward.forward_host = host;
    forward.forward_port = port;
    out.push_back(std::move(forward));
  }
  for (const auto& b : policy.proxy.brokers) {
    Listener broker;
    broker.place = Listener::Place::sandbox_loopback;
    broker.port = b.local_port;
    broker.service = Listener::Service::broker;
    broker.forward_host = b.host;
    broker.forward_port = b.port;
    out.push_back(std::move(broker));
  }
  return out;
}

}  // namespace

Plan make_plan(const Policy& policy, const PlanInputs& inputs) {
  Plan plan;
  plan.mode = inputs.mode;
  // The host as the plan's first steps leave it: the mounts and the git check count on the directories they make.
  auto git = inputs.git;
  plan.host_dirs = host_directories_to_make(policy, plan.mode, git);
  if (plan.mode == Mode::full) plan.mounts = mounts_for(policy, inputs, git);
  plan.ids = policy.ids;
  plan.new_netns = plan.mode == Mode::full && policy.net != NetMode::host;
  if (plan.mode == Mode::full && policy.net == NetMode::proxy) plan.listeners = listeners_for(policy);
  // The DNS stub gives each allowed name an address as the sandbox asks for it; confine then listens there.
  // Published ports reach the sandbox's loopback through sockets the maker makes there, one per connection.
  if (plan.new_netns) plan.published = policy.published;
  plan.sandbox_sockets = listens_for(plan, Listener::Service::dns) || !plan.published.empty();
  // Fallback: only root may switch uid (to --user's); the host ids then are the inside ids. Otherwise the command
  // keeps the caller's ids: root's, or the user's own (resolve_identity made those the host ids).
  plan.switch_user = plan.mode == Mode::fallback && policy.ids.run_by_root && policy.protection.request.switch_user;
  if (plan.mode == Mode::fallback) {
    plan.ids.host_uid = plan.switch_user ? policy.ids.inside_uid : policy.ids.run_by_root ? 0 : policy.ids.host_uid;
    plan.ids.host_gid = plan.switch_user ? policy.ids.inside_gid : policy.ids.run_by_root ? 0 : policy.ids.host_gid;
    // The private HOME and TMPDIR belong to the ids the command runs as.
    if (!inputs.run_dir.empty()) plan.run_dir = Plan::RunDir{inputs.run_dir, plan.ids.host_uid, plan.ids.host_gid};
  }
  // Root without idmapped binds: the sandbox's user is its host user too, so the trees' files are its own.
  if (inputs.stand_ins.owner_identity) plan.ids.host_uid = plan.ids.inside_uid, plan.ids.host_gid = plan.ids.inside_gid;
  plan.keep_hostname = inputs.stand_ins.keep_hostname;
  // Dropping the bounding set needs CAP_SETPCAP: in the user namespace, or as root that keeps its uid.
  plan.drop_bounding_set = plan.mode == Mode::full || (policy.ids.run_by_root && !plan.switch_user);
  plan.landlock = inputs.landlock;
  plan.seccomp = inputs.seccomp;
  plan.workspace = policy.fs.workspace_inside;
  plan.hostname = policy.hostname;
  plan.workdir = policy.proc.workdir;
  plan.layers_options = sized("mode=0700", policy.fs.tmpfs_size);
  plan.argv = policy.proc.argv;
  plan.env = policy.proc.env;
  std::erase_if(plan.env, [&](const std::string& e) {
    auto name = std::string_view(e).substr(0, e.find('='));
    return std::find(inputs.env_holding_secrets.begin(), inputs.env_holding_secrets.end(), name) !=
           inputs.env_holding_secrets.end();
  });
  if (!inputs.run_dir.empty()) {
    set_variable(plan.env, "HOME", sys::private_home(inputs.run_dir));
    set_variable(plan.env, "TMPDIR", sys::private_tmp(inputs.run_dir));
  }
  plan.denial_log = std::any_of(plan.mounts.begin(), plan.mounts.end(), [](const MountOp& m) { return m.written_by_confine; });
  if (plan.denial_log) set_variable(plan.env, kDenialLogVariable, kDenialLogPath);
  plan.keep_fds = policy.proc.preserve_fds;
  // The default process bound (layers.cc, process-count): only a user namespace of its own makes it per sandbox.
  if (plan.mode == Mode::full && !policy.limits.pids) plan.rlimits.emplace_back(RLIMIT_NPROC, kDefaultPids);
  if (inputs.rlimit_stand_ins) {
    if (policy.limits.pids) plan.rlimits.emplace_back(RLIMIT_NPROC, *policy.limits.pids);
    if (policy.limits.memory) plan.rlimits.emplace_back(RLIMIT_AS, *policy.limits.memory);
  }
  plan.cgroup = inputs.cgroup;
  // The scans ran (full mode, a workspace or a scanned bind) and their caches have a place.
  plan.pending_checks_dir = inputs.pending_checks_dir;
  plan.save_scan_caches = !inputs.scan_cache_dir.empty() && (!policy.fs.workspace.empty() || !inputs.bind_secrets.empty());
  plan.report = policy.report;
  plan.proxy = policy.proxy;
  plan.dropped_env = policy.proc.dropped_env.size();
  if (policy.fs.protect_git) plan.git_check = git_check_scope(policy, git, inputs.scan_cache_dir, plan.mode == Mode::full);
  // Only a namespace of the command's own can give a file privilege (its mounts copy them); in fallback mode
  // Landlock refuses every mount.
  if (policy.protection.allow_nested && plan.mode == Mode::full) plan.file_privilege_trees = writable_trees(policy);
  if (policy.checkpoint.save && !inputs.checkpoint_saved)
    plan.checkpoint_save = Plan::CheckpointSave{policy.fs.workspace, policy.checkpoint.data_home,
                                                policy.checkpoint.exclude, policy.proc.argv};
  if (policy.checkpoint.save) plan.run_end_record = Plan::RunEndRecord{policy.fs.workspace, policy.checkpoint.data_home};
  plan.init_steps = init_steps_for(plan);
  plan.command_steps = command_steps_for(plan);
  plan.parent_steps = parent_steps_for(plan);
  return plan;
}

sys::Status check_mount_points(const Policy& policy, const std::vector<SystemEntry>& system) {
  if (!policy.fs.rootfs.empty() && policy.fs.rootfs_writable) return sys::ok_status();  // overlays can take new ones
  std::vector<std::string> dests;
  for (const auto& t : policy.fs.tmpfs) dests.push_back(t.dest);
  for (const auto& b : policy.fs.binds) dests.push_back(b.dest);
  if (!policy.fs.workspace.empty()) dests.push_back(policy.fs.workspace_inside);
  for (const auto& dest : dests) {
    for (const auto& e : system) {
      struct stat st {};
      if (!e.link_target.empty() || !is_within(dest, e.path)) continue;
      std::string on_host = e.source + dest.substr(e.path.size());
      if (::lstat(on_host.c_str(), &st) == 0) continue;
      return sys::plain_error("mount point `" + dest + "` does not exist inside read-only `" + e.path +
                              "`, where it cannot be created; pick an existing path, or one under /tmp, $HOME, the "
                              "workspace or a new top-level directory");
    }
  }
  return sys::ok_status();
}

std::string describe(const Plan& plan, const InitStep& step) {
  auto mount_text = [&](const MountOp& m) -> std::string {
    std::string where = m.beneath.empty() ? m.dest : m.beneath + "/" + m.dest;
    switch (m.kind) {
      case MountKind::bind: return "bind-mount `" + m.source + "` at `" + where + "`" + (m.read_only ? " read-only" : "");
      case MountKind::tmpfs: return "mount a tmpfs at `" + where + "`";
      case MountKind::proc: return "mount a fresh /proc";
      case MountKind::sysfs: return "mount a read-only /sys";
      case MountKind::devpts: return "mount a private devpts at `" + where + "`";
      case MountKind::directory: return "create directory `" + where + "`";
      case MountKind::symlink: return "create symlink `" + where + "` -> `" + m.source + "`";
      case MountKind::mask: return "mask `" + where + "`";
      case MountKind::rebind: return "re-bind `" + where + "`" + (m.read_only ? " read-only" : "");
      case MountKind::overlay: return "mount `" + m.source + "` at `" + where + "` as an overlay with a throwaway writable layer";
      case MountKind::copy: return "write the sandbox's own copy of `" + where + "`";
      case MountKind::file: return "put confine's own `" + where + "` in place";
    }
    return std::string("mount");
  };
  switch (step.kind) {
    case InitStepKind::set_ids: return "switch to the sandbox's uid/gid";
    case InitStepKind::check_ids: return "check that every uid and gid (real, effective, saved) is the sandbox's";
    case InitStepKind::make_mounts_private: return "make the mount namespace private";
    case InitStepKind::clone_source: return "open `" + plan.mounts[step.mount].source + "` to bind it";
    case InitStepKind::create_root: return std::string("create the new root (a tmpfs over ") + kStagingDir + ")";
    case InitStepKind::create_layers: return "create the tmpfs for the image's writable layers (overlayfs)";
    case InitStepKind::attach: return mount_text(plan.mounts[step.mount]);
    case InitStepKind::pivot_root: return "pivot_root into the new root";
    case InitStepKind::seal_root: return "make the new root read-only";
    case InitStepKind::set_hostname: return "set the hostname";
    case InitStepKind::loopback_up: return "bring up loopback in the new network namespace";
    case InitStepKind::open_listeners: return "open the proxy's listening sockets on the sandbox's loopback";
    case InitStepKind::hand_over_refusal_files: return fmt::format("hand confine the writable end of {}", kDenialLogPath);
    case InitStepKind::close_inherited_fds: return "close inherited file descriptors";
    case InitStepKind::drop_capabilities: return "drop all capabilities";
    case InitStepKind::no_new_privs: return "set no_new_privs";
    case InitStepKind::not_dumpable: return "make the sandbox's init non-dumpable";
  }
  return "setup";
}

std::string describe(const Plan& plan, const CommandStep& step) {
  switch (step.kind) {
    case CommandStepKind::reset_signals: return "reset the signal mask";
    case CommandStepKind::change_directory: return "change directory to `" + plan.workdir + "`";
    case CommandStepKind::apply_landlock: return "apply the Landlock rules (ABI " + std::to_string(plan.landlock.abi) + ")";
    case CommandStepKind::apply_seccomp: return "install the seccomp filter";
    case CommandStepKind::set_rlimits: return "set the rlimits (the default process bound, or stand-ins for --pids/--memory)";
    case CommandStepKind::exec: return "execute `" + (plan.argv.empty() ? std::string() : plan.argv[0]) + "`";
  }
  return "setup";
}

std::string describe(const Plan& plan, const ParentStep& step) {
  switch (step.kind) {
    case ParentStepKind::listen_published: {
      std::string where;
      for (const auto& p : plan.published) where += (where.empty() ? "" : " ") + p.host_endpoint();
      return "listen on the published ports (" + where + ")";
    }
    case ParentStepKind::make_host_dirs: {
      std::string dirs;
      for (const auto& d : plan.host_dirs)
        dirs += fmt::format("{}{} ({})", dirs.empty() ? "" : ", ", d.path,
                            d.purpose == HostDirectory::Purpose::git_hooks ? "bound read-only" : "the profile's");
      return "make the missing directories " + dirs;
    }
    case ParentStepKind::make_cgroup:
      return std::string("start making the cgroup leaf for the limits (") +
             (plan.cgroup ? cgroup_place_name(plan.cgroup->place.kind) : "none") + ")";
    case ParentStepKind::save_checkpoint:
      return "save a checkpoint of " + (plan.checkpoint_save ? plan.checkpoint_save->workspace : std::string());
    case ParentStepKind::finish_interrupted_checks:
      return "check the git state of earlier runs that ended before their check (noted in " + plan.pending_checks_dir + ")";
    case ParentStepKind::save_scan_caches: return "save what the scans for secret files learned, for the next run";
    case ParentStepKind::make_run_dir:
      return fmt::format("make the private HOME and TMPDIR in {}", plan.run_dir ? plan.run_dir->path : "");
    case ParentStepKind::record_git_check: return "record that the workspace's git state is checked after the run";
    case ParentStepKind::join_cgroup: return "wait for the cgroup leaf";
    case ParentStepKind::block_signals: return "block the forwarded signals";
    case ParentStepKind::shed_groups: return "drop root's supplementary groups";
    case ParentStepKind::clone_sandbox: return plan.mode == Mode::full ? "create the sandbox's namespaces and its pid 1" : "start the sandbox's first process";
    case ParentStepKind::write_id_maps: return "write the sandbox's uid and gid maps";
    case ParentStepKind::connect_veth: return "connect the sandbox by a veth pair";
    case ParentStepKind::start_socket_maker: return "start the helper that makes sockets in the sandbox's network namespace";
    case ParentStepKind::open_idmapped_trees: return "open the idmapped user binds";
    case ParentStepKind::send_go: return "start the sandbox's set-up";
    case ParentStepKind::start_services:
      if (plan.published.empty()) return "start the proxy on the sandbox's listeners";
      return plan.listeners.empty() ? "start serving the published ports"
                                    : "start the proxy on the sandbox's listeners, and serve the published ports";
    case ParentStepKind::receive_refusal_files: return fmt::format("receive the writable end of the sandbox's {}", kDenialLogPath);
    case ParentStepKind::supervise: return "supervise the sandbox";
    case ParentStepKind::check_git_state: return "check the git state the sandbox could change";
    case ParentStepKind::drop_file_privileges: return "drop the setuid bits and file capabilities the sandbox left";
    case ParentStepKind::record_run_end: return "record how the run left the workspace (for checkpoints restore)";
    case ParentStepKind::remove_run_dir: return "remove the run's private HOME and TMPDIR";
    case ParentStepKind::report_usage: return "report what the limits did";
    case ParentStepKind::report_refusals: return "report what was refused";
    case ParentStepKind::stop_services:
      if (plan.published.empty()) return "stop the proxy";
      return plan.listeners.empty() ? "close the published ports" : "stop the proxy and close the published ports";
  }
  return "setup";
}

}  // namespace confine
