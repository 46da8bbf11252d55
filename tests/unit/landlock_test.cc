#include <catch2/catch.hpp>

#include "core/landlock_rules.h"
#include "sys/landlock_abi.h"

using namespace confine;
namespace ll = confine::sys::landlock;

TEST_CASE("every right an ABI knows is handled, and none it does not") {
  CHECK(handled_fs_rights(0) == 0);
  CHECK(handled_fs_rights(1) == 0x1fff);
  CHECK((handled_fs_rights(2) & ll::kFsRefer) != 0);
  CHECK((handled_fs_rights(2) & ll::kFsTruncate) == 0);
  CHECK((handled_fs_rights(3) & ll::kFsTruncate) != 0);
  CHECK((handled_fs_rights(4) & ll::kFsIoctlDev) == 0);
  CHECK((handled_fs_rights(5) & ll::kFsIoctlDev) != 0);
  CHECK(handled_fs_rights(8) == handled_fs_rights(5));
  CHECK(handled_fs_rights(9) == (handled_fs_rights(8) | ll::kFsResolveUnix));
  CHECK(handled_fs_rights(10) == handled_fs_rights(9));
}

TEST_CASE("access classes grant what they say, within the ABI") {
  CHECK(class_rights(AccessClass::ro, 7) == (ll::kFsReadFile | ll::kFsReadDir));
  CHECK((class_rights(AccessClass::rx, 7) & ll::kFsExecute) != 0);
  CHECK((class_rights(AccessClass::rw, 7) & ll::kFsMakeReg) != 0);
  CHECK((class_rights(AccessClass::rw, 2) & ll::kFsTruncate) == 0);
  CHECK((class_rights(AccessClass::dev, 5) & ll::kFsIoctlDev) != 0);
  CHECK((class_rights(AccessClass::dev, 4) & ll::kFsIoctlDev) == 0);
  // Socket files are reachable only where the sandbox may write.
  CHECK((class_rights(AccessClass::rw, 9) & ll::kFsResolveUnix) != 0);
  CHECK((class_rights(AccessClass::rw, 8) & ll::kFsResolveUnix) == 0);
  for (auto c : {AccessClass::ro, AccessClass::rx, AccessClass::dev}) CHECK((class_rights(c, 10) & ll::kFsResolveUnix) == 0);
}

TEST_CASE("the rights an old ABI lacks are named, for the mode that would use them") {
  for (bool fallback : {false, true}) CHECK(landlock_rights_missing(10, fallback).empty());
  // Full mode's namespaces keep what ABI 9 and 10 add.
  CHECK(landlock_rights_missing(6, false).empty());
  CHECK(landlock_rights_missing(8, true) ==
        std::vector<std::string>{"connecting to unix socket files (ABI 9, Linux 7.1)", "UDP bind/connect/send (ABI 10, Linux 7.2)"});
  CHECK(landlock_rights_missing(9, true) == std::vector<std::string>{"UDP bind/connect/send (ABI 10, Linux 7.2)"});
  auto missing = landlock_rights_missing(2, false);
  CHECK(missing.size() == 4);
  CHECK(missing[0] == "truncate (ABI 3, Linux 6.2)");
  CHECK(landlock_rights_missing(2, true).size() == 6);
  CHECK(landlock_rights_missing(0, false).size() == 1);
  auto gaps = landlock_gaps(7);
  REQUIRE(gaps.size() == 2);
  CHECK(gaps[0].fallback_only);
}

namespace {

LandlockRequest fallback_request(int abi) {
  LandlockRequest req;
  req.abi = abi;
  req.paths = {{"$WORKSPACE", AccessClass::rw, false}, {"/usr", AccessClass::rx, false}, {"/etc", AccessClass::ro, false}};
  req.workspace = "/w";
  req.deny_tcp = true;
  req.deny_udp = true;
  req.socket_files = true;
  return req;
}

}  // namespace

TEST_CASE("the ABI ladder: each fallback restriction from the ABI that brought it, and none before") {
  for (int abi : {6, 7, 8, 9, 10}) {
    INFO("ABI " << abi);
    auto plan = make_landlock_plan(fallback_request(abi));
    CHECK(plan.abi == abi);
    CHECK(plan.scoped == (ll::kScopeAbstractUnixSocket | ll::kScopeSignal));
    CHECK(((plan.handled_fs & ll::kFsResolveUnix) != 0) == (abi >= 9));
    CHECK(plan.handled_net == (abi >= 10 ? ll::kNetBindTcp | ll::kNetConnectTcp | ll::kNetBindUdp | ll::kNetConnectSendUdp
                                         : ll::kNetBindTcp | ll::kNetConnectTcp));
    // Only the writable workspace may hold a socket file the command can reach.
    REQUIRE(plan.rules.size() == 3);
    CHECK(((plan.rules[0].access & ll::kFsResolveUnix) != 0) == (abi >= 9));
    CHECK((plan.rules[1].access & ll::kFsResolveUnix) == 0);
    CHECK((plan.rules[2].access & ll::kFsResolveUnix) == 0);
    // Confine's own expected refusals before the command's execve stay out of the audit log from ABI 7.
    CHECK(plan.restrict_flags == (abi >= 7 ? ll::kRestrictSelfLogSameExecOff : 0U));
  }
}

TEST_CASE("full mode handles neither socket files nor UDP, whatever the ABI") {
  auto req = fallback_request(10);
  req.socket_files = false;
  req.deny_udp = false;
  req.deny_tcp = false;
  req.writes_only = true;
  auto plan = make_landlock_plan(req);
  CHECK((plan.handled_fs & ll::kFsResolveUnix) == 0);
  CHECK(plan.handled_net == 0);
  for (const auto& rule : plan.rules) CHECK((rule.access & ll::kFsResolveUnix) == 0);
}

TEST_CASE("a plan expands variables and handles TCP and scopes only where asked and known") {
  LandlockRequest req;
  req.abi = 6;
  req.paths = {{"$WORKSPACE", AccessClass::rw, false}, {"$HOME", AccessClass::rw, true}, {"/usr", AccessClass::rx, false}};
  req.workspace = "/w";
  req.home = "";
  req.deny_tcp = true;
  auto plan = make_landlock_plan(req);
  REQUIRE(plan.rules.size() == 2);  // an unset $HOME is skipped
  CHECK(plan.rules[0].path == "/w");
  CHECK(plan.handled_net == (ll::kNetBindTcp | ll::kNetConnectTcp));
  CHECK(plan.scoped == (ll::kScopeAbstractUnixSocket | ll::kScopeSignal));
  req.abi = 3;
  plan = make_landlock_plan(req);
  CHECK(plan.handled_net == 0);
  CHECK(plan.scoped == 0);
  req.abi = 0;
  CHECK(make_landlock_plan(req).rules.empty());
}

TEST_CASE("full mode's Landlock leaves reads and truncate to the mount view") {
  LandlockRequest req;
  req.abi = 7;
  req.paths = {{"/", AccessClass::ro, false}, {"/usr", AccessClass::rx, false}, {"$WORKSPACE", AccessClass::rw, false}};
  // (a read-only rule grants nothing that is handled here, so it is dropped)
  req.workspace = "/w";
  req.writes_only = true;
  auto plan = make_landlock_plan(req);
  CHECK((plan.handled_fs & (ll::kFsReadFile | ll::kFsReadDir | ll::kFsTruncate)) == 0);
  CHECK((plan.handled_fs & ll::kFsWriteFile) != 0);
  REQUIRE(plan.rules.size() == 2);  // the read-only rule on / grants nothing handled: dropped
  CHECK(plan.rules[0].access == ll::kFsExecute);
}
