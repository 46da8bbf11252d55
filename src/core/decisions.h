// What a run uses of each layer, decided from the Policy, the kernel's features and the ladder's Enforcement:
// which mode, which Landlock rules, which seccomp program, which cgroup leaf. Pure (the built-in data is parsed or
// was compiled at build time), so unit tests reach every decision; session.cc only carries them out.
#pragma once

#include <optional>

#include "core/layers.h"
#include "core/plan.h"
#include "core/policy.h"
#include "sys/result.h"

namespace confine {

// Namespaces unless the user opted out or the kernel has none to give (the ladder's first rung).
Mode mode_for(const Policy& policy, const KernelFeatures& features);

// Whether the sandbox's own connections go through confine's gate (the one door: see docs/design.md): with
// `--net proxy` in full mode, when confine holds the command's seccomp listener (not with --allow-nested or a
// --seccomp policy) and Landlock has TCP rules (ABI 4), which keep the kernel from redoing a call the gate read.
bool gates_network(const Policy& policy, const Enforcement& enforcement);

// The Landlock rules for this run (abi 0: none). Reads the host facts the rules depend on from `inputs`: the
// system entries (an image's directories), the git layout (a linked worktree's common directory) and the run
// directory (fallback mode's private $HOME and $TMPDIR).
LandlockPlan landlock_for(const Policy& policy, const Enforcement& enforcement, const PlanInputs& inputs);

// The seccomp program(s) for this run (empty: none): the built-in policy compiled at build time, or --seccomp's
// compiled now with confine's floor as a second filter.
sys::Result<SeccompProgram> seccomp_for(const Policy& policy, const Enforcement& enforcement);

// The cgroup leaf the sandbox is born in, when the ladder uses one for the limits (none: no cgroup).
std::optional<CgroupPlan> cgroup_for(const Policy& policy, const Enforcement& enforcement, const KernelFeatures& features);

// git's global configs, where it looks for them (git-config(1), FILES): a writable bind over one of them lets the
// sandbox make every git on the host run a program.
std::vector<std::string> global_git_configs(const std::string& home, const std::string& xdg_config_home);

// The directories a run makes on the host before it starts (Plan::host_dirs): a profile's missing binds, and in
// full mode git's hooks directories that the read-only binds need (the workspace's when missing or not a
// directory, which the step then refuses, and a linked worktree's repository's).
// `git` becomes the layout once they are made: what the mounts and the git check are planned from.
std::vector<HostDirectory> host_directories_to_make(const Policy& p, Mode mode, GitLayout& git);

// The trees the sandbox can write that stay on the host after it: the workspace (unless read-only) and every
// writable bind of a directory, but a profile's private one (only sandboxes use it).
std::vector<std::string> writable_trees(const Policy& p);

// What the check after the run looks at: the trees the sandbox could write, git's global configs among them, and
// (`mounts`: full mode) exactly the git files make_plan binds read-only, which it does not judge.
GitCheckScope git_check_scope(const Policy& p, const GitLayout& git, const std::string& cache_dir, bool mounts);

}  // namespace confine
