// Plan: the ordered list of steps that builds one sandbox, made from a Policy by a pure function.
// The child only performs these steps; it makes no decisions. Every string is built here, before clone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_layout.h"
#include "core/landlock_rules.h"
#include "core/layers.h"
#include "core/listener_service.h"
#include "core/policy.h"
#include "core/seccomp_compile.h"
#include "core/secret_scan.h"
#include "sys/result.h"

namespace confine {

enum class MountKind {
  bind,       // a host path (cloned before the new root hides it), attached at dest
  tmpfs,      // a new tmpfs (options in fs_options)
  proc,       // a fresh procfs for the sandbox's pid namespace
  sysfs,      // a fresh read-only sysfs (optional: not a security layer)
  devpts,     // a private devpts instance with its own ptmx
  directory,  // only ensure dest exists (e.g. an empty /home)
  symlink,    // dest -> source
  mask,       // hide dest: an empty read-only directory over a directory, an empty read-only file over anything else
  rebind,     // re-bind dest onto itself (read-only if read_only): pins it as a mount point, e.g. .git
  overlay,    // an image directory (source) with a writable layer on the layers tmpfs; writes vanish at exit
  copy,       // a new file at dest holding `content` (a profile's private copy of a host file); changes stay inside
  file,       // a read-only file holding `content` mounted over dest (a file or a symlink), e.g. /etc/resolv.conf
};

struct MountOp {
  MountKind kind = MountKind::bind;
  std::string source;      // host path (bind) or link target (symlink)
  std::string dest;        // absolute inside the sandbox, or relative to `beneath`
  std::string fs_options;  // "mode=1777,size=..." for tmpfs and devpts
  std::string content;     // copy: the bytes of the host file, read before clone; file: what the file holds
  bool read_only = false;
  bool recursive = true;            // binds: include submounts
  bool dest_is_file = false;        // the mount point to create is a file
  bool devices = false;             // keep device nodes usable (the /dev binds); everything else is nodev
  // An inside directory (the workspace, a scanned bind) that dest is relative to: resolved inside it, refusing any
  // symlink on the way. Empty: dest is absolute.
  std::string beneath;
  bool skip_if_missing = false;     // a missing dest (or source) is not an error
  // A mask the scan found: dest must still be this inode of this type (S_IFREG, S_IFDIR, S_IFLNK), or the tree
  // changed since the scan and the mount fails (ESTALE) rather than mask something else. 0: whatever is there.
  std::uint64_t expect_ino = 0;
  std::uint32_t expect_type = 0;
  bool from_parent = false;         // the tree is made by the parent (run by root: an idmapped mount)
  int source_fd = -1;  // the source as resolved, held by the Policy (see sys/held_path.h); -1: resolve `source`
  // A bind at /dev/pts/N in the sandbox's own devpts (the caller's terminal at its own name): that name exists only
  // while the devpts's pty N is open, so pid 1 opens and holds it before binding over it. -1: not one.
  int devpts_index = -1;
  // A `file` mount confine keeps writing while the run goes on (the denial log): pid 1 hands confine a writable
  // descriptor of its content, reached through a mount of its own that is never made read-only.
  bool written_by_confine = false;
};

// Run by the sandbox's pid 1, in order (init_steps_for in plan.cc says why each is where it is).
enum class InitStepKind {
  set_ids,
  check_ids,  // right after set_ids: the kernel left no other id (and root no group) behind
  make_mounts_private,
  clone_source,  // mount index: a bind's detached copy, or an overlay's lower directory (opened)
  create_root,
  create_layers,  // the tmpfs that holds the overlays' writable layers, at kLayersDir in the new root
  attach,  // mount index
  pivot_root,
  seal_root,
  set_hostname,
  loopback_up,
  open_listeners,  // the Listeners placed on the sandbox's loopback: after loopback is up, before capabilities go
  hand_over_refusal_files,  // the writable end of the sandbox's denial log, to confine: before inherited fds close
  close_inherited_fds,
  drop_capabilities,
  no_new_privs,
  not_dumpable,
};

struct InitStep {
  InitStepKind kind;
  std::size_t mount = 0;  // for clone_source and attach
};

// Run by the command's process after pid 1 forks it, in order.
enum class CommandStepKind {
  reset_signals,
  change_directory,
  set_rlimits,  // the default process bound; --best-effort stand-ins for cgroup limits
  apply_landlock,
  apply_seccomp,  // always the last step before exec
  exec,
};

struct CommandStep {
  CommandStepKind kind;
};

// Run by confine itself, around the sandbox, in order (parent_steps_for in plan.cc says why each is where it is).
enum class ParentStepKind {
  listen_published,     // --publish: confine's listening sockets on the host, before anything else exists
  make_cgroup,          // start making the cgroup leaf and its limits, on a thread: joined by join_cgroup
  save_checkpoint,      // --checkpoint: the workspace as it is before the run
  finish_interrupted_checks,  // the git checks of earlier runs that ended before theirs (confine killed)
  make_host_dirs,       // the directories the plan needs on the host (git's hooks, a profile's state): undone on failure
  make_run_dir,         // fallback mode: the command's private $HOME and $TMPDIR, at the name the plan chose
  save_scan_caches,     // what the scans for secret files learned, for the next run's scans
  record_git_check,     // note on disk that the workspace's git state is checked after the run
  join_cgroup,          // take the cgroup leaf once it is made (make_cgroup)
  block_signals,        // the signals confine forwards, and SIGCHLD, into a signalfd
  shed_groups,          // run by root: drop root's supplementary groups
  clone_sandbox,        // pid 1, in its new namespaces (and in the cgroup leaf)
  write_id_maps,        // the user namespace's uid and gid maps
  connect_veth,         // --net veth: the pair, its far end in confine's namespace, and the proxy's socket there
  start_socket_maker,   // confine's helper that makes sockets in the sandbox's network namespace (mech/sandbox_sockets.h)
  open_idmapped_trees,  // run by root: the user binds, idmapped through the sandbox's user namespace
  send_go,              // pid 1 starts its steps, with the idmapped trees
  start_services,       // the proxy on the Listeners (pid 1 hands over those it opened)
  receive_refusal_files,   // the writable end of the file the sandbox reads its refusals in (pid 1 hands it over)
  supervise,            // forward signals, read pid 1's report, wait for its exit
  check_git_state,      // after the run: set aside what git would run that the sandbox changed
  drop_file_privileges,  // --allow-nested, after the run: the setuid bits and file capabilities it left (run/file_privileges.h)
  record_run_end,       // --checkpoint: how the run left the workspace, so a restore knows what is the run's
  remove_run_dir,       // fallback mode: the run's private $HOME and $TMPDIR
  report_usage,         // what the limits did (an OOM kill sets the exit code)
  stop_services,        // the proxy, and its summary of what it refused
  report_refusals,      // the summary of every other refusal, and their counts in --report
};

struct ParentStep {
  ParentStepKind kind;
  // Run even when an earlier step failed: it checks or removes what the run may have left, or reports on it.
  bool always = false;
};

// A directory confine makes on the host before a run if it is missing (make_host_dirs).
struct HostDirectory {
  enum class Purpose {
    git_hooks,  // git's hooks directory, so that it can be bound read-only (none would let the sandbox make one)
    profile,    // a profile's state or cache directory, so that what the sandbox writes there is kept
  };
  Purpose purpose;
  std::string path;
  std::string owned_like;  // made by root: the new directories get this one's owner ($HOME for a profile's; for
                           // hooks, the git dir, which the step holds open)
};

// A socket confine listens on for the sandbox (--net proxy, --net veth): where it is opened, and what is served.
struct Listener {
  enum class Place {
    sandbox_loopback,  // opened by pid 1 on the sandbox's loopback (open_listeners) and handed to confine
    veth,              // opened by confine on its end of the veth pair (connect_veth), at kVethProxyAddress
  };
  using Service = ListenerService;
  Place place = Place::sandbox_loopback;
  bool ipv6 = false;  // sandbox_loopback: on ::1 instead of 127.0.0.1
  std::uint16_t port = 0;
  Service service = Service::http_proxy;
  std::string forward_host;  // forward: the host's loopback address and port it reaches; broker: the TLS host
  std::uint16_t forward_port = 0;
};

// The cgroup v2 leaf the sandbox is born in (--memory, --pids, --cpus): where, and what it bounds.
struct CgroupPlan {
  CgroupPlace place;
  ResourceLimits limits;
  CallerEnvironment caller;  // the systemd place: how the user's manager is reached (mech/cgroup.h)
};

// What one run could write, and since when (`since`, set when the check is recorded): all the check after the run
// needs (run/git_check.h), so a run that ended before its check (confine killed) can be checked by a later confine.
struct GitCheckScope {
  std::vector<std::string> trees;      // the workspace (unless read-only) and every writable bind
  std::string cache_dir;               // where the scans keep their caches (PlanInputs::scan_cache_dir; empty: none)
  std::string common_dir;              // a linked worktree's repository
  std::vector<std::string> configs;    // git's global configs inside a writable bind
  std::vector<std::string> read_only;  // git files the sandbox saw read-only (bound so): not judged
  std::timespec since{};
  std::string workspace;  // the workspace on the host, which the records name the read-only files relative to
};

// What a run says once its command runs (the supervise step): decided before the run, from the Enforcement and the
// scans (start_report, core/report.h).
struct StartReport {
  std::size_t masked_files = 0;  // the names the scans mask, counted (-v lists them)
  std::size_t masked_dirs = 0;
  std::string status_mode;                  // the status line's (--status-fd, --report): the mode,
  std::vector<std::string> status_layers;   // the layers applied,
  int landlock_abi = 0;                     // the Landlock ABI used (0: none),
  std::vector<std::string> status_lost;     // the promises lost
};

struct Plan {
  Mode mode = Mode::full;  // fallback: no namespaces, no mounts; Landlock and seccomp are the walls
  std::vector<MountOp> mounts;
  std::vector<ParentStep> parent_steps;
  std::vector<HostDirectory> host_dirs;  // made by make_host_dirs; the mounts and the git check count them as there
  std::vector<InitStep> init_steps;
  std::vector<CommandStep> command_steps;
  Identity ids;
  bool new_netns = true;
  std::string hostname = "confine";
  bool keep_hostname = false;  // the container refuses sethostname: no set_hostname step
  std::string workspace;
  std::string workdir;
  std::string layers_options;  // the tmpfs that holds an image's writable layers (create_layers)
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::vector<int> keep_fds;  // preserved for the command (sorted)
  std::vector<Listener> listeners;
  // confine makes sockets in the sandbox's network namespace while it runs (start_socket_maker): the listeners
  // for the names the DNS stub gives addresses to, the connections to published ports.
  bool sandbox_sockets = false;
  // The sandbox reads what confine refused it in kDenialLogPath (full mode: a mount of confine's, read-only).
  bool denial_log = false;
  std::vector<PublishedPort> published;  // listened on by confine at the host (listen_published), served inside
  std::optional<CgroupPlan> cgroup;  // none: no limits in a cgroup
  bool save_scan_caches = false;     // the scans have a cache place (outside the sandbox's reach) to keep it in
  std::string pending_checks_dir;    // where runs note their git checks until done (finish_interrupted_checks)
  ReportPolicy report;               // what the run reports, and where (--report, --status-fd, --log)
  StartReport start_report;          // and what it says once the command runs
  NetPolicy proxy;                   // what the proxy and the brokers let through, and how much --net-log takes
  std::size_t dropped_env = 0;       // variables the scrub kept out of the command's environment (said as a count)
  // What the check after the run looks at (record_git_check, check_git_state); none: the git state is not checked.
  std::optional<GitCheckScope> git_check;
  // --allow-nested in full mode: the trees where the run may leave a file that grants privilege (drop_file_privileges).
  std::vector<std::string> file_privilege_trees;
  // --checkpoint: the workspace saved before the run (save_checkpoint), with what the save needs; none when an
  // attempt before this one saved it already (a run that fell back to fallback mode saves once).
  struct CheckpointSave {
    std::string workspace;  // on the host
    std::string data_home;  // the checkpoint store's (checkpoints_data_home)
    std::vector<std::string> exclude;  // name patterns
    std::vector<std::string> argv;     // the command, which the checkpoint's list names
  };
  std::optional<CheckpointSave> checkpoint_save;
  // --checkpoint: where the run ends by recording how it left the workspace (record_run_end).
  struct RunEndRecord {
    std::string workspace;  // on the host
    std::string data_home;  // the checkpoint store's (checkpoints_data_home)
  };
  std::optional<RunEndRecord> run_end_record;
  // Fallback mode: the directory of the command's private $HOME and $TMPDIR (made by make_run_dir, removed by
  // remove_run_dir), and whom it is for: the command's uid and gid.
  struct RunDir {
    std::string path;
    uid_t uid = 0;
    gid_t gid = 0;
  };
  std::optional<RunDir> run_dir;
  std::vector<std::pair<int, std::uint64_t>> rlimits;  // (RLIMIT_*, value), set on the command before exec
  bool switch_user = false;       // fallback mode, root with --user: set_ids switches to ids.inside_*
  bool drop_bounding_set = true;  // needs CAP_SETPCAP: in the user namespace, or as root
  LandlockPlan landlock;          // abi 0: not applied
  SeccompProgram seccomp;         // empty: not applied
};

struct PlanInputs {
  Mode mode = Mode::full;
  std::string scan_cache_dir;  // where the scans keep their caches (run/scan_cache.h ScanCachePlace::dir; empty: none)
  std::string pending_checks_dir;  // the same place, in every mode: where runs note their git checks until done
  LandlockPlan landlock;
  SeccompProgram seccomp;
  std::vector<SystemEntry> system;
  SecretScan secrets;
  // What the scan found in each directory bound from the command line, masked like the workspace's.
  struct BindSecrets {
    std::string dest;  // where the bind is inside
    SecretScan scan;
  };
  std::vector<BindSecrets> bind_secrets;
  GitLayout git;
  std::string resolver_dir;  // see discover_resolver_dir(); used with --net host only
  std::string terminal;      // see discover_terminal()
  std::vector<std::pair<std::string, std::string>> copies;  // (path, content) of the policy's copies that exist
  bool rlimit_stand_ins = false;  // no cgroup for the limits, --best-effort: set rlimits instead
  bool checkpoint_saved = false;  // an attempt before this one saved the --checkpoint
  // Variables of the policy's environment whose value is a --secret's real value (variables_holding_secrets): the
  // command never gets them, under any name.
  std::vector<std::string> env_holding_secrets;
  std::string run_dir;  // fallback mode: where the command's private $HOME and $TMPDIR are to be (not made yet)
  std::optional<CgroupPlan> cgroup;  // see cgroup_for() (core/decisions.h)
  StandIns stand_ins;  // what the full sandbox does where a container refuses a step (core/layers.h)
};

Plan make_plan(const Policy& policy, const PlanInputs& inputs);

// Whether `path` is one of the names confine makes in the sandbox's /dev (its null, tty, pts/, shm/, ...), or below
// one: a --device there would share the rights confine grants that name.
bool in_confines_dev(std::string_view path);

// A mount point below a read-only system directory cannot be created inside: it must already exist on the host.
// Checked before clone so the user gets a clear error instead of a failed setup step.
sys::Status check_mount_points(const Policy& policy, const std::vector<SystemEntry>& system);

// One line naming a step, for error messages: "bind-mount /usr read-only", "pivot_root into the new root".
std::string describe(const Plan& plan, const InitStep& step);
std::string describe(const Plan& plan, const CommandStep& step);
std::string describe(const Plan& plan, const ParentStep& step);

// The highest pty index + 1 at which the caller's terminal also appears at its own name inside (pid 1 opens that
// many ptys of the sandbox's devpts to reach it); above it, the terminal is at /dev/console only.
inline constexpr int kMaxDevptsIndex = 256;
// Where the new root is assembled before pivot_root; inside the child's private mount namespace only.
inline constexpr const char* kStagingDir = "/tmp";
// Where a `file` mount's content (and each file mask's empty one) is written in the new root, cloned as a mount,
// and removed at seal_root.
inline constexpr const char* kContentFileName = ".confine-content";
// Where the sandbox reads the refusals of its run, one JSON line each (named to the command by kDenialLogVariable).
inline constexpr const char* kDenialLogPath = "/run/confine/denials.jsonl";
inline constexpr const char* kDenialLogVariable = "CONFINE_DENIALS";
// How many writable tmpfs mounts confine checks for fullness after the run: the first ones, in plan order.
inline constexpr int kMaxWatchedTmpfs = 16;
// The overlays' writable layers (upper and work directories, one pair per overlay, named by mount index): a tmpfs
// attached in the new root only while the overlays are made, then detached (each overlay keeps its own reference).
inline constexpr const char* kLayersDir = "/.confine-layers";

}  // namespace confine
