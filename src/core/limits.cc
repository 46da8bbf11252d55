#include "core/limits.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

namespace confine {
namespace {

constexpr std::uint64_t kCpuPeriodUs = 100000;  // cpu.max's default period: 100 ms

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The multiplier a suffix stands for, or 0 if it is not one.
std::uint64_t unit_of(const std::string& suffix) {
  static const std::pair<const char*, std::uint64_t> units[] = {
      {"", 1}, {"b", 1}, {"k", 1ull << 10}, {"kb", 1ull << 10}, {"kib", 1ull << 10}, {"m", 1ull << 20},
      {"mb", 1ull << 20}, {"mib", 1ull << 20}, {"g", 1ull << 30}, {"gb", 1ull << 30}, {"gib", 1ull << 30},
      {"t", 1ull << 40}, {"tb", 1ull << 40}, {"tib", 1ull << 40}};
  for (const auto& [name, mult] : units)
    if (suffix == name) return mult;
  return 0;
}

sys::Result<double> parse_number(const std::string& flag, const std::string& text, std::size_t& used) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  used = static_cast<std::size_t>(end - text.data());
  if (ec != std::errc{} || used == 0 || !std::isfinite(v) || v < 0)
    return sys::plain_error(flag + " `" + text + "`: expected a positive number");
  return v;
}

}  // namespace

sys::Result<std::uint64_t> parse_size(const std::string& flag, const std::string& text) {
  auto t = lower(text);
  std::size_t used = 0;
  auto v = parse_number(flag, t, used);
  if (!v) return sys::plain_error(flag + " `" + text + "`: expected a size such as 512m or 4g");
  auto mult = unit_of(t.substr(used));
  if (mult == 0) return sys::plain_error(flag + " `" + text + "`: unknown unit (use b, k, m, g or t)");
  double bytes = std::floor(*v * static_cast<double>(mult));
  if (bytes < 1 || bytes > 9.0e18) return sys::plain_error(flag + " `" + text + "`: out of range");
  return static_cast<std::uint64_t>(bytes);
}

sys::Result<ResourceLimits> parse_limits(const std::string& memory, const std::string& memory_swap,
                                         const std::string& pids, const std::string& cpus, const LimitNames& names) {
  ResourceLimits l;
  if (!memory.empty()) {
    auto m = parse_size(names.memory, memory);
    if (!m) return m.error();
    // Below this the command cannot even start (the kernel charges page tables, the binary, the stack).
    if (*m < (4u << 20)) return sys::plain_error(names.memory + " `" + memory + "`: at least 4m");
    l.memory = *m;
  }
  if (!memory_swap.empty()) {
    if (!l.memory) return sys::plain_error(names.memory_swap + " needs " + names.memory + " (it is memory plus swap, as in docker)");
    if (memory_swap == "-1") {
      l.memory_swap = -1;
    } else {
      auto s = parse_size(names.memory_swap, memory_swap);
      if (!s) return s.error();
      if (*s < *l.memory) return sys::plain_error(names.memory_swap + " `" + memory_swap + "`: must be at least " + names.memory + " (it is memory plus swap)");
      l.memory_swap = static_cast<std::int64_t>(*s);
    }
  }
  if (!pids.empty()) {
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(pids.data(), pids.data() + pids.size(), n);
    if (ec != std::errc{} || end != pids.data() + pids.size() || n == 0 || n > (1u << 22))
      return sys::plain_error(names.pids + " `" + pids + "`: expected a whole number from 1 to 4194304");
    l.pids = n;
  }
  if (!cpus.empty()) {
    std::size_t used = 0;
    auto c = parse_number(names.cpus, cpus, used);
    if (!c || used != cpus.size() || *c < 0.01 || *c > 4096)
      return sys::plain_error(names.cpus + " `" + cpus + "`: expected a number of CPUs from 0.01 up, such as 0.5 or 2");
    l.cpus = *c;
  }
  return l;
}

std::vector<std::string> needed_controllers(const ResourceLimits& l) {
  std::vector<std::string> out;
  if (l.memory) out.emplace_back("memory");
  if (l.pids) out.emplace_back("pids");
  if (l.cpus) out.emplace_back("cpu");
  return out;
}

std::vector<CgroupSetting> cgroup_settings(const ResourceLimits& l) {
  std::vector<CgroupSetting> s;
  if (l.memory) {
    s.push_back({"memory.max", std::to_string(*l.memory)});
    // Swap is off unless asked for: a limit the kernel can satisfy by swapping is no limit on a laptop.
    std::string swap = "0";
    if (l.memory_swap) swap = *l.memory_swap < 0 ? "max" : std::to_string(static_cast<std::uint64_t>(*l.memory_swap) - *l.memory);
    s.push_back({"memory.swap.max", swap});
    // The whole sandbox goes when the limit is hit, rather than one process picked at random inside.
    s.push_back({"memory.oom.group", "1"});
  }
  if (l.pids) s.push_back({"pids.max", std::to_string(*l.pids)});
  if (l.cpus) {
    auto quota = static_cast<std::uint64_t>(std::llround(*l.cpus * static_cast<double>(kCpuPeriodUs)));
    s.push_back({"cpu.max", fmt::format("{} {}", std::max<std::uint64_t>(quota, 1000), kCpuPeriodUs)});
  }
  return s;
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string describe_limits(const ResourceLimits& l) {
  std::vector<std::string> parts;
  if (l.memory) {
    std::string m = "memory " + format_bytes(*l.memory);
    if (l.memory_swap) m += *l.memory_swap < 0 ? " + unlimited swap" : " + " + format_bytes(static_cast<std::uint64_t>(*l.memory_swap) - *l.memory) + " swap";
    parts.push_back(m);
  }
  if (l.pids) parts.push_back(fmt::format("pids {}", *l.pids));
  if (l.cpus) parts.push_back(fmt::format("cpus {:g}", *l.cpus));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

const char* cgroup_place_name(CgroupPlaceKind kind) {
  switch (kind) {
    case CgroupPlaceKind::root: return "root";
    case CgroupPlaceKind::delegated: return "delegated";
    case CgroupPlaceKind::sibling: return "sibling";
    case CgroupPlaceKind::systemd: return "systemd";
  }
  return "?";
}

}  // namespace confine
