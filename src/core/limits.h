// Resource limits (--memory, --memory-swap, --pids, --cpus): parsing docker's notation, and what each limit
// becomes in a cgroup v2 leaf or, with --best-effort and no usable cgroup, in rlimits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sys/result.h"

namespace confine {

// Every sandbox started without --pids still runs at most this many processes and threads at once: enough for a
// parallel build or a browser under test, far below a host's pid_max (32768 by default), so a fork bomb fails
// inside the sandbox rather than starving the host.
inline constexpr std::uint64_t kDefaultPids = 4096;

struct ResourceLimits {
  std::optional<std::uint64_t> memory;       // bytes: memory.max
  std::optional<std::int64_t> memory_swap;   // docker's meaning: memory + swap in bytes; -1 unlimited swap
  std::optional<std::uint64_t> pids;         // pids.max
  std::optional<double> cpus;                // cpu.max quota / period
  [[nodiscard]] bool any() const { return memory || pids || cpus; }
};

// docker's sizes: a number with an optional b, k, m, g or t suffix (powers of 1024; "kb", "mib" also accepted).
sys::Result<std::uint64_t> parse_size(const std::string& flag, const std::string& text);
// What the messages call each limit: its flag, or where a profile set it.
struct LimitNames {
  std::string memory = "--memory", memory_swap = "--memory-swap", pids = "--pids", cpus = "--cpus";
};
sys::Result<ResourceLimits> parse_limits(const std::string& memory, const std::string& memory_swap,
                                         const std::string& pids, const std::string& cpus, const LimitNames& names = {});

// Where a sandbox's cgroup v2 leaf goes (mech/cgroup.h says how each place is found, and in which order).
enum class CgroupPlaceKind {
  root,       // below confine.slice at the cgroup2 mount's root
  delegated,  // below confine's own cgroup, delegated to this user, confine moving into a leaf of its own first
  sibling,    // next to confine's own cgroup, in a parent this user may write
  systemd,    // a delegated scope the user's systemd manager makes, which then is the delegated case
};
const char* cgroup_place_name(CgroupPlaceKind kind);  // "root", "delegated", ...: for explain

struct CgroupPlace {
  CgroupPlaceKind kind = CgroupPlaceKind::root;
  std::string parent;      // absolute directory the leaf is made in (systemd: found once the scope exists)
  std::string supervisor;  // delegated: the leaf confine moves itself into first
};

// Controllers the limits need, as cgroup.controllers names them.
std::vector<std::string> needed_controllers(const ResourceLimits& l);

// The cgroup v2 files of a sandbox leaf and what goes in each, in the order they are written.
struct CgroupSetting {
  std::string file;
  std::string value;
};
std::vector<CgroupSetting> cgroup_settings(const ResourceLimits& l);

// "memory 64.0 MiB, pids 64, cpus 0.5"
std::string describe_limits(const ResourceLimits& l);
std::string format_bytes(std::uint64_t bytes);  // "64.0 MiB"

}  // namespace confine
