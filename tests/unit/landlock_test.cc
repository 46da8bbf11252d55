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
  CHECK(handled_fs_rights(7) == handled_fs_rights(5));
}

TEST_CASE("access classes grant what they say, within the ABI") {
  CHECK(class_rights(AccessClass::ro, 7) == (ll::kFsReadFile | ll::kFsReadDir));
  CHECK((class_rights(AccessClass::rx, 7) & ll::kFsExecute) != 0);
  CHECK((class_rights(AccessClass::rw, 7) & ll::kFsMakeReg) != 0);
  CHECK((class_rights(AccessClass::rw, 2) & ll::kFsTruncate) == 0);
  CHECK((class_rights(AccessClass::dev, 5) & ll::kFsIoctlDev) != 0);
  CHECK((class_rights(AccessClass::dev, 4) & ll::kFsIoctlDev) == 0);
}

TEST_CASE("the rights an old ABI lacks are named") {
  CHECK(landlock_rights_missing(7).empty());
  CHECK(landlock_rights_missing(6).empty());
  auto missing = landlock_rights_missing(2);
  CHECK(missing.size() == 4);
  CHECK(missing[0].find("truncate") != std::string::npos);
  CHECK(landlock_rights_missing(0).size() == 1);
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
