// What a run uses of each layer (core/decisions.h), decided without running anything.
#include <algorithm>
#include <catch2/catch.hpp>

#include "core/decisions.h"
#include "core/seccomp_policy.h"
#include "sys/landlock_abi.h"

using namespace confine;

namespace {

Policy workspace_policy() {
  Policy p;
  p.fs.workspace = "/srv/project";
  p.fs.workspace_inside = p.fs.workspace;
  p.fs.home = "/home/alice";
  p.proc.argv = {"true"};
  return p;
}

Enforcement with_layers(Mode mode) {
  Enforcement e;
  e.mode = mode;
  e.use_landlock = true;
  e.landlock_abi = 7;
  e.use_seccomp = true;
  return e;
}

bool has_rule_for(const LandlockPlan& plan, const std::string& path) {
  return std::any_of(plan.rules.begin(), plan.rules.end(), [&](const LandlockRule& r) { return r.path == path; });
}

}  // namespace

TEST_CASE("the mode is full unless the user opted out or the kernel has no user namespaces") {
  auto p = workspace_policy();
  KernelFeatures f;
  CHECK(mode_for(p, f) == Mode::full);
  f.userns = false;
  CHECK(mode_for(p, f) == Mode::fallback);
  f.userns = true;
  p.protection.request.no_namespaces = true;
  CHECK(mode_for(p, f) == Mode::fallback);
}

TEST_CASE("Landlock: the workspace is a rule in both modes, TCP is handled only without a network namespace") {
  auto p = workspace_policy();
  PlanInputs in;
  auto full = landlock_for(p, with_layers(Mode::full), in);
  CHECK(full.abi == 7);
  CHECK(has_rule_for(full, "/srv/project"));
  CHECK(full.handled_net == 0);
  in.run_dir = "/tmp/confine-run.x";
  auto fallback = landlock_for(p, with_layers(Mode::fallback), in);
  CHECK(has_rule_for(fallback, "/srv/project"));
  CHECK(fallback.handled_net != 0);
  auto off = with_layers(Mode::full);
  off.use_landlock = false;
  CHECK(landlock_for(p, off, in).abi == 0);
}

TEST_CASE("Landlock ABI 9 and 10: socket files and UDP are refused in fallback mode only") {
  namespace ll = sys::landlock;
  auto p = workspace_policy();
  PlanInputs in;
  in.run_dir = "/tmp/confine-run.x";
  auto e = with_layers(Mode::fallback);
  e.landlock_abi = 10;
  auto fallback = landlock_for(p, e, in);
  CHECK((fallback.handled_fs & ll::kFsResolveUnix) != 0);
  CHECK((fallback.handled_net & (ll::kNetBindUdp | ll::kNetConnectSendUdp)) == (ll::kNetBindUdp | ll::kNetConnectSendUdp));
  // --net host opens the network, not the host's socket files.
  p.net = NetMode::host;
  auto host = landlock_for(p, e, in);
  CHECK(host.handled_net == 0);
  CHECK((host.handled_fs & ll::kFsResolveUnix) != 0);
  p.net = NetMode::none;
  e.mode = Mode::full;
  auto full = landlock_for(p, e, in);
  CHECK((full.handled_fs & ll::kFsResolveUnix) == 0);
  CHECK(full.handled_net == 0);
}

TEST_CASE("Landlock under --allow-nested handles no filesystem right in full mode, and keeps them in fallback") {
  auto p = workspace_policy();
  p.protection.allow_nested = true;
  CHECK(landlock_for(p, with_layers(Mode::full), PlanInputs{}).handled_fs == 0);
  PlanInputs in;
  in.run_dir = "/tmp/confine-run.x";
  CHECK(landlock_for(p, with_layers(Mode::fallback), in).handled_fs != 0);
}

TEST_CASE("seccomp: the built-in program has no second filter; a --seccomp policy gets confine's floor beside it") {
  auto p = workspace_policy();
  auto builtin = seccomp_for(p, with_layers(Mode::full));
  REQUIRE(builtin);
  CHECK_FALSE(builtin->code.empty());
  CHECK(builtin->floor.empty());
  auto allow_all = parse_seccomp_policy("format = \"confine-seccomp/1\"\ndefault = \"allow\"\n", "allow-all.toml");
  REQUIRE(allow_all);
  p.protection.custom_seccomp = *allow_all;
  auto custom = seccomp_for(p, with_layers(Mode::full));
  REQUIRE(custom);
  CHECK_FALSE(custom->floor.empty());
  auto off = with_layers(Mode::full);
  off.use_seccomp = false;
  CHECK(seccomp_for(p, off)->code.empty());
}

TEST_CASE("the cgroup leaf is planned only where the ladder uses one") {
  auto p = workspace_policy();
  p.limits.pids = 64;
  KernelFeatures f;
  auto e = with_layers(Mode::full);
  CHECK_FALSE(cgroup_for(p, e, f));
  e.use_cgroup = true;
  CHECK_FALSE(cgroup_for(p, e, f));  // nowhere to put it: decide() never says use_cgroup then
  f.cgroup_place = CgroupPlace{CgroupPlaceKind::sibling, "/sys/fs/cgroup/user.slice", ""};
  auto leaf = cgroup_for(p, e, f);
  REQUIRE(leaf);
  CHECK(leaf->place.kind == CgroupPlaceKind::sibling);
  CHECK(leaf->limits.pids == 64u);
}
