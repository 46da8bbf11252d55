#include <catch2/catch.hpp>

#include "core/layers.h"
#include "core/limits.h"
#include "core/seccomp_policy.h"

using namespace confine;

TEST_CASE("sizes take docker's notation", "[limits]") {
  CHECK(parse_size("--memory", "512m").value() == 512ull << 20);
  CHECK(parse_size("--memory", "4g").value() == 4ull << 30);
  CHECK(parse_size("--memory", "4G").value() == 4ull << 30);
  CHECK(parse_size("--memory", "1.5g").value() == 3ull << 29);
  CHECK(parse_size("--memory", "64MiB").value() == 64ull << 20);
  CHECK(parse_size("--memory", "100k").value() == 100ull << 10);
  CHECK(parse_size("--memory", "1048576").value() == 1ull << 20);
  for (const char* bad : {"", "m", "12x", "-5m", "1e400", "nan", "0", "5 m"}) {
    auto r = parse_size("--memory", bad);
    CHECK_FALSE(r.ok());
    if (!r.ok()) CHECK(r.error().what.starts_with("--memory `"));
  }
}

TEST_CASE("limits are checked as a whole, each with a one-line error", "[limits]") {
  CHECK_FALSE(parse_limits("1m", "", "", "").ok());  // below what any command needs
  CHECK_FALSE(parse_limits("", "1g", "", "").ok());  // swap without memory
  CHECK_FALSE(parse_limits("1g", "512m", "", "").ok());  // memory + swap smaller than memory
  CHECK_FALSE(parse_limits("", "", "0", "").ok());
  CHECK_FALSE(parse_limits("", "", "12abc", "").ok());
  CHECK_FALSE(parse_limits("", "", "", "0").ok());
  CHECK_FALSE(parse_limits("", "", "", "half").ok());
  auto none = parse_limits("", "", "", "");
  REQUIRE(none.ok());
  CHECK_FALSE(none->any());
  auto l = parse_limits("64m", "-1", "64", "0.5");
  REQUIRE(l.ok());
  CHECK(*l->memory == 64ull << 20);
  CHECK(*l->memory_swap == -1);
  CHECK(*l->pids == 64);
  CHECK(*l->cpus == 0.5);
  CHECK(describe_limits(*l) == "memory 64.0 MiB + unlimited swap, pids 64, cpus 0.5");
}

TEST_CASE("each limit becomes the cgroup v2 file that enforces it, swap off by default", "[limits]") {
  auto l = parse_limits("64m", "", "100", "1.5");
  REQUIRE(l.ok());
  auto s = cgroup_settings(*l);
  REQUIRE(s.size() == 5);
  CHECK((s[0].file == "memory.max" && s[0].value == "67108864"));
  CHECK((s[1].file == "memory.swap.max" && s[1].value == "0"));
  CHECK((s[2].file == "memory.oom.group" && s[2].value == "1"));
  CHECK((s[3].file == "pids.max" && s[3].value == "100"));
  CHECK((s[4].file == "cpu.max" && s[4].value == "150000 100000"));
  CHECK(needed_controllers(*l) == std::vector<std::string>{"memory", "pids", "cpu"});
  auto swap = parse_limits("1g", "3g", "", "");
  REQUIRE(swap.ok());
  CHECK(cgroup_settings(*swap)[1].value == std::to_string(2ull << 30));
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(100) == "100 B");
}

TEST_CASE("limits without a usable cgroup are refused, or weakened only with --best-effort", "[limits]") {
  RunRequest r;
  r.seccomp_groups = seccomp_rule_groups(builtin_seccomp_policy(), false);
  r.limits.pids = 64;
  KernelFeatures f;
  f.seccomp = true;
  f.landlock_abi = 7;
  f.cgroup_problem = "cgroup v2 here has no pids controller";
  auto refused = decide(r, f, Mode::full);
  CHECK_FALSE(refused.ok());
  CHECK_FALSE(refused.use_cgroup);
  CHECK_FALSE(refused.use_rlimits);
  r.best_effort = true;
  auto weakened = decide(r, f, Mode::full);
  CHECK(weakened.ok());
  CHECK(weakened.use_rlimits);
  REQUIRE_FALSE(weakened.warnings.empty());
  bool named = false;
  for (const auto& w : weakened.warnings) named = named || w.find("RLIMIT_NPROC") != std::string::npos;
  CHECK(named);
  f.cgroup_place = CgroupPlace{CgroupPlaceKind::sibling, "/sys/fs/cgroup/user.slice", ""};
  r.best_effort = false;
  auto kept = decide(r, f, Mode::full);
  CHECK(kept.ok());
  CHECK(kept.use_cgroup);
  CHECK_FALSE(kept.use_rlimits);
}
