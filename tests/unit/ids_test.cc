#include <catch2/catch.hpp>

#include "core/ids.h"

using namespace confine;

TEST_CASE("ids: every id from 0 to 2^32-2, as decimal digits only", "[ids]") {
  CHECK(parse_id("0") == 0u);
  CHECK(parse_id("1000") == 1000u);
  CHECK(parse_id("65534") == 65534u);  // nobody, the kernel's overflow id: an ordinary id
  CHECK(parse_id("4294967294") == 4294967294u);
  // (uid_t)-1 means "leave unchanged" to setresuid: never an id, nor anything that wraps to it.
  for (const char* bad : {"4294967295", "4294967296", "18446744073709551615", "99999999999999999999", "-1", "+1",
                          " 1", "1 ", "", "1a", "0x10", "1:2"}) {
    INFO(bad);
    CHECK_FALSE(parse_id(bad));
  }
}

TEST_CASE("ids: --user UID[:GID], the gid defaulting to the uid", "[ids]") {
  auto both = parse_user_spec("1000:100", "--user");
  REQUIRE(both);
  CHECK(both->uid == 1000u);
  CHECK(both->gid == 100u);
  auto uid_only = parse_user_spec("1000", "--user");
  REQUIRE(uid_only);
  CHECK(uid_only->gid == 1000u);
  for (const char* bad : {"4294967295", "0:4294967295", "4294967295:0", "-1", "0:-1", "1000:", ":1000", "a:b", "",
                          "1:2:3"}) {
    INFO(bad);
    auto r = parse_user_spec(bad, "--user");
    REQUIRE_FALSE(r);
    CHECK(r.error().what.starts_with("--user `" + std::string(bad) + "`: expected numeric UID[:GID]"));
    CHECK(r.error().what.find('\n') == std::string::npos);
  }
}
