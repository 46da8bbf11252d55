// cgroup v2 limits for the sandbox (--memory, --pids, --cpus): where a leaf can be made, making it, and
// removing it on every exit path.
//
// Where the leaf goes, tried in order:
//   root:      <cgroup2 mount>/confine.slice/confine-<pid> (controllers enabled down from the root);
//   delegated: this process's own cgroup, if this user may write it and confine is alone in it (a
//              `systemd-run --user --scope -p Delegate=yes` scope): confine moves into a `supervisor` leaf
//              first, because a cgroup with processes cannot hand controllers to children;
//   sibling:   next to this process's cgroup, if this user may write the parent (a delegated subtree whose
//              leaf confine runs in, as CI runners and containers set it up);
//   systemd:   the user's systemd manager, over D-Bus, makes a delegated transient scope for confine (what
//              `systemd-run --user --scope -p Delegate=yes` does), which is then the "delegated" case.
// A leaf is named after confine's pid, so a later run can recognise and remove one a crash left behind.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/limits.h"
#include "core/policy.h"
#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::mech {

// This process's cgroup v2 path ("/user.slice/..."), from /proc/self/cgroup; empty if it is in none.
std::string own_cgroup();

// Where a leaf with these controllers could go, or why nowhere (with what to do about it). `caller`: how the
// user's systemd manager is reached.
sys::Result<CgroupPlace> find_cgroup_place(const std::vector<std::string>& controllers, const CallerEnvironment& caller);

// Which controllers of confine's limits a run here could have (a leaf would be found for each, as --memory,
// --pids or --cpus look for one), and why not the others. Reads only: nothing is made or moved.
struct CgroupControllers {
  std::string mount;                 // where cgroup v2 is mounted; empty: nowhere
  std::vector<std::string> usable;
  std::vector<std::string> missing;
  std::string problem;               // why `missing` are not usable (what a run asking for them says)
};
CgroupControllers usable_cgroup_controllers(const CallerEnvironment& caller);

struct CgroupUsage {
  std::uint64_t oom_kills = 0;      // memory.events oom_kill
  std::uint64_t memory_peak = 0;    // memory.peak (0: not available)
  std::uint64_t pids_denied = 0;    // pids.events max: forks refused at the limit
  std::uint64_t pids_peak = 0;      // pids.peak (0: not available, kernels before 6.13)
  std::uint64_t cpu_usec = 0;       // cpu.stat usage_usec
};

// The sandbox's leaf: made and limited before clone, joined at clone (CLONE_INTO_CGROUP), killed and removed
// when this object goes.
class SandboxCgroup {
 public:
  static sys::Result<SandboxCgroup> create(const CgroupPlace& place, const ResourceLimits& limits, const CallerEnvironment& caller);
  SandboxCgroup(SandboxCgroup&& other) noexcept;
  SandboxCgroup& operator=(SandboxCgroup&&) = delete;
  SandboxCgroup(const SandboxCgroup&) = delete;
  ~SandboxCgroup();

  [[nodiscard]] int dir_fd() const { return dir_.get(); }
  [[nodiscard]] const std::string& path() const { return path_; }
  // What the limits did; the OOM and fork counts always, the rest (peaks, CPU time) only if `full`.
  [[nodiscard]] CgroupUsage usage(bool full) const;

 private:
  SandboxCgroup(std::string path, sys::UniqueFd dir) : path_(std::move(path)), dir_(std::move(dir)) {}
  std::string path_;
  sys::UniqueFd dir_;
};

}  // namespace confine::mech
