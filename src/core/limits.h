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
sys::Result<ResourceLimits> parse_limits(const std::string& memory, const std::string& memory_swap,
                                         const std::string& pids, const std::string& cpus);

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
