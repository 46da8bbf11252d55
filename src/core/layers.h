// The degradation ladder: which kernel layers exist here, which promises each mode keeps, and whether a run
// may go ahead. Pure: the features are probed elsewhere (mech/probe).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/limits.h"

namespace confine {

enum class Layer { namespaces, landlock, seccomp };
const char* layer_name(Layer layer);
bool parse_layer(const std::string& name, Layer& out);

struct KernelFeatures {
  bool userns = true;         // assumed until clone proves otherwise (a trial costs a clone)
  std::string userns_problem; // why not, and how to fix it
  int landlock_abi = 0;
  std::string landlock_problem;
  bool seccomp = false;
  std::string seccomp_problem;
  std::optional<CgroupPlace> cgroup_place;  // where a limited cgroup leaf can go; none: nowhere
  std::string cgroup_problem;   // why nowhere, and what to do (probed only when limits are asked for)
};

// A test build pins the kernel features so `explain` reads the same on every machine:
// CONFINE_TEST_FEATURES="landlock=6,seccomp=1,userns=1" (any subset; 0 switches a layer off).
struct FeatureOverride {
  std::optional<int> landlock_abi;
  std::optional<bool> seccomp;
  std::optional<bool> userns;
};
std::optional<FeatureOverride> parse_feature_override(const std::string& spec);  // none: empty spec
void apply_feature_override(KernelFeatures& features, const FeatureOverride& pinned);

enum class Mode { full, fallback };
const char* mode_name(Mode mode);

struct Promise {
  std::string id;
  std::string text;
  std::vector<std::string> enforced_by;  // layers, strongest first; empty: not kept
  std::string note;                      // why not kept, or a caveat
  bool requested = true;                 // false: the user opted out (e.g. --net host)
  [[nodiscard]] bool kept() const { return !enforced_by.empty(); }
};

struct RunRequest {
  bool net_none = true;    // none or proxy: the sandbox has its own network namespace
  bool net_proxy = false;  // egress through confine's allowlist proxy
  bool protect_git = true;
  bool best_effort = false;
  bool no_namespaces = false;
  bool run_by_root = false;
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
};

struct Enforcement {
  Mode mode = Mode::full;
  std::vector<Promise> promises;
  std::vector<std::string> problems;  // why the run may not go ahead (empty: it may)
  std::vector<std::string> warnings;  // said at start, never silent
  bool use_landlock = false;
  bool use_seccomp = false;
  bool use_cgroup = false;    // limits in a cgroup v2 leaf
  bool use_rlimits = false;   // --best-effort without a usable cgroup: the weaker rlimit stand-ins
  [[nodiscard]] bool ok() const { return problems.empty(); }
  [[nodiscard]] std::vector<std::string> lost() const;
  [[nodiscard]] std::vector<std::string> layers_applied() const;
  int landlock_abi = 0;
};

std::vector<Promise> evaluate_promises(const RunRequest& request, const KernelFeatures& features, Mode mode);
Enforcement decide(const RunRequest& request, const KernelFeatures& features, Mode mode);

}  // namespace confine
