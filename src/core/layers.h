// The degradation ladder: which kernel layers exist here, which promises each mode keeps, and whether a run
// may go ahead. Pure: the features are probed elsewhere (mech/probe).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/limits.h"
#include "core/net_mode.h"

namespace confine {

enum class Layer { namespaces, landlock, seccomp };
const char* layer_name(Layer layer);
bool parse_layer(const std::string& name, Layer& out);

// The container confine runs in, if any, and which steps of the full sandbox it allows. Container engines mask
// parts of their /proc (so the kernel refuses a new proc mount in a user namespace), filter sethostname, and
// withhold CAP_SYS_ADMIN (so root cannot make an idmapped mount). Tried where a container is likely (mech/container).
enum class ContainerEngine { none, podman, docker, kubernetes, other };
const char* container_engine_name(ContainerEngine engine);

struct ContainerFacts {
  ContainerEngine engine = ContainerEngine::none;
  bool rootless = false;    // the container has a user namespace of its own (rootless podman): its root is not the host's
  bool fresh_proc = true;   // a new /proc mounts in a new user and pid namespace
  bool hostname = true;     // the hostname can be set in a new UTS namespace
  bool idmap = true;        // root can bind the workspace as an idmapped mount
};

struct KernelFeatures {
  bool userns = true;         // assumed until clone proves otherwise (a trial costs a clone)
  std::string userns_problem; // why not, and how to fix it
  std::string refused_step;   // the namespaces worked but a step of the full sandbox was refused: which
  int landlock_abi = 0;
  std::string landlock_problem;
  bool seccomp = false;
  std::string seccomp_problem;
  bool seccomp_filtered = false;  // a filter is on confine itself (a container's, probably)
  std::optional<CgroupPlace> cgroup_place;  // where a limited cgroup leaf can go; none: nowhere
  std::string cgroup_problem;   // why nowhere, and what to do (probed only when limits are asked for)
  ContainerFacts container;
};

// A test build pins the kernel features so `explain` reads the same on every machine:
// CONFINE_TEST_FEATURES="landlock=6,seccomp=1,userns=1" (any subset; 0 switches a layer off).
struct FeatureOverride {
  std::optional<int> landlock_abi;
  std::optional<bool> seccomp;
  std::optional<bool> userns;
  std::optional<bool> fresh_proc;  // proc=0: as in a container that masks its /proc
  std::optional<bool> hostname;    // hostname=0
  std::optional<bool> idmap;       // idmap=0: as root without CAP_SYS_ADMIN
};
std::optional<FeatureOverride> parse_feature_override(const std::string& spec);  // none: empty spec
void apply_feature_override(KernelFeatures& features, const FeatureOverride& pinned);

enum class Mode { full, fallback };
const char* mode_name(Mode mode);

// Each promise confine makes, named once: `promise_id_name` gives the id explain --json and --report show.
enum class PromiseId {
  abstract_sockets,
  device_access,
  environment,
  git,
  git_after_run,
  homes,
  kernel_surface,
  lifetime,
  limits,
  metadata,
  network,
  own_writes,
  private_tmp,
  privilege,
  process_count,
  process_list,
  processes,
  profile_copies,
  proxy,
  root_files,
  setuid_files,
  socket_files,
  workspace_readonly,
  workspace_secrets,
  writes,  // the last (a unit test walks them all)
};
const char* promise_id_name(PromiseId id);

// What keeps a promise: one of the kernel's mechanisms, or one of confine's own.
enum class Mechanism {
  user_namespace,
  mount_namespace,
  pid_namespace,
  network_namespace,
  landlock,
  seccomp,
  cgroup,
  nproc_limit,
  capabilities,
  no_new_privs,
  parent_death_signal,
  own_uid,       // the caller's uid: confine gains no privilege
  switched_uid,  // root switched to --user's
  confine,
  proxy,  // the last (a unit test walks them all)
};
const char* mechanism_name(Mechanism m);

struct Enforcer {
  Mechanism by;
  std::string what = {};  // which part of it, or how: said after its name ("(read-only binds)", "TCP rules")
};
std::string enforcer_text(const Enforcer& e);  // "mount namespace (read-only binds)"

struct Promise {
  PromiseId id;
  std::string text;
  std::vector<Enforcer> enforced_by;  // strongest first; empty: not kept
  std::string note;                      // why not kept, or a caveat
  bool requested = true;                 // false: the user opted out (e.g. --net host)
  [[nodiscard]] bool kept() const { return !enforced_by.empty(); }
};

struct RunRequest {
  NetMode net = NetMode::none;  // none or proxy: the sandbox has its own network namespace; proxy: egress through
                                // confine's allowlist proxy; host: the host's network
  bool protect_git = true;
  bool best_effort = false;
  bool no_namespaces = false;
  bool run_by_root = false;
  bool inside_root = false;     // the sandbox's user is uid 0 (root's workspace owned by root, or --user 0)
  bool switch_user = false;     // --user given: in fallback mode, root switches to that uid/gid
  std::vector<Layer> required;  // --require
  ResourceLimits limits;        // --memory/--pids/--cpus (none: .any() is false)
  bool default_process_bound = false;  // no --pids: the sandbox gets kDefaultPids (core/limits.h) where it can
  bool workspace_readonly = false;    // profile read-only
  std::string needs_mounts;  // what of the request only a mount namespace can do ("--rw binds"); empty: nothing
  bool publishes = false;    // --publish: only the sandbox's own network namespace has ports to publish
  bool custom_seccomp = false;      // --seccomp FILE: the user's policy replaces the built-in one
  bool allow_nested = false;        // --allow-nested: new namespaces are permitted inside
  // The groups of the seccomp rules this run compiles (its policy and confine's floor): what the seccomp promises
  // are judged by.
  std::vector<std::string> seccomp_groups;
  bool profile_own_copies = false;  // the profile gives the sandbox its own copies of config files or caches
  bool read_only_devices = false;   // a --device with PERMS r
};

// Where a container refuses a step of the full sandbox, what confine does instead (decide() says which promise
// that costs).
struct StandIns {
  bool container_proc = false;  // bind the container's /proc (its masks kept) instead of mounting a fresh one
  bool keep_hostname = false;   // the sandbox keeps the container's hostname
  bool owner_identity = false;  // root: the sandbox runs as the workspace's owner instead of an idmapped bind
};

struct Enforcement {
  Mode mode = Mode::full;
  StandIns stand_ins;
  std::vector<std::string> notes;     // said with -v only: what changed that no promise depends on
  std::vector<Promise> promises;
  std::vector<std::string> problems;  // why the run may not go ahead (empty: it may)
  std::size_t given_up = 0;  // --no-namespaces without --best-effort: promises only namespaces keep (refused too)
  std::vector<std::string> warnings;  // said at start, never silent
  bool use_landlock = false;
  bool use_seccomp = false;
  bool use_cgroup = false;    // limits in a cgroup v2 leaf
  bool use_rlimits = false;   // --best-effort without a usable cgroup: the weaker rlimit stand-ins
  [[nodiscard]] bool ok() const { return problems.empty() && given_up == 0; }
  [[nodiscard]] std::vector<std::string> lost() const;
  [[nodiscard]] std::vector<std::string> layers_applied() const;
  int landlock_abi = 0;
};

std::vector<Promise> evaluate_promises(const RunRequest& request, const KernelFeatures& features, Mode mode);
Enforcement decide(const RunRequest& request, const KernelFeatures& features, Mode mode);

}  // namespace confine
