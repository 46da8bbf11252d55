// The `process` section of an OCI bundle's config.json (confine run BUNDLE).
#include <catch2/catch.hpp>

#include "core/oci_bundle.h"

using namespace confine;

TEST_CASE("oci bundle: process args, env, cwd and user") {
  auto p = parse_bundle_config(R"({"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "hooks": {},
    "process": {"terminal": true, "args": ["sh", "-c", "x"], "env": ["PATH=/bin", "A=b=c"], "cwd": "/srv",
                "user": {"uid": 1000, "gid": 0}}})", "config.json");
  REQUIRE(p);
  CHECK(p->args == std::vector<std::string>{"sh", "-c", "x"});
  CHECK(p->env == std::vector<std::string>{"PATH=/bin", "A=b=c"});
  CHECK(p->cwd == "/srv");
  REQUIRE(p->user);
  CHECK(p->user->first == 1000);
  CHECK(p->user->second == 0);
}

TEST_CASE("oci bundle: no process, or empty parts, give no defaults") {
  for (const char* text : {R"({})", R"({"process": null})", R"({"process": {}})", R"({"process": {"env": null}})"}) {
    auto p = parse_bundle_config(text, "c.json");
    REQUIRE(p);
    CHECK(p->args.empty());
    CHECK(p->env.empty());
    CHECK(p->cwd.empty());
    CHECK_FALSE(p->user);
  }
}

TEST_CASE("oci bundle: each malformed part is one error naming where") {
  const std::pair<const char*, const char*> cases[] = {
      {R"([])", "c.json: top level: must be an object"},
      {R"({"process": []})", "c.json: process: must be an object"},
      {R"({"process": {"args": "sh"}})", "c.json: process.args: must be an array of strings"},
      {R"({"process": {"args": ["sh", 1]}})", "c.json: process.args: must be an array of strings"},
      {R"({"process": {"env": ["NOEQUALS"]}})", "c.json: process.env[0]: expected NAME=VALUE"},
      {R"({"process": {"env": ["A=1", "=x"]}})", "c.json: process.env[1]: expected NAME=VALUE"},
      {R"({"process": {"cwd": "relative"}})", "c.json: process.cwd: must be an absolute path"},
      {R"({"process": {"cwd": 7}})", "c.json: process.cwd: must be an absolute path"},
      {R"({"process": {"user": {"uid": -1, "gid": 0}}})", "c.json: process.user.uid: must be a user id (a number below 4294967295)"},
      {R"({"process": {"user": {"uid": 0, "gid": 4294967295}}})", "c.json: process.user.gid: must be a user id (a number below 4294967295)"},
      {R"({"process": {"user": {"uid": 1.5, "gid": 0}}})", "c.json: process.user.uid: must be a user id (a number below 4294967295)"},
      {R"({"process": {"user": {"gid": 0}}})", "c.json: process.user.uid: must be a user id (a number below 4294967295)"},
  };
  for (const auto& [text, want] : cases) {
    INFO(text);
    auto p = parse_bundle_config(text, "c.json");
    REQUIRE_FALSE(p);
    CHECK(p.error().message() == want);
  }
}

TEST_CASE("oci bundle: malformed JSON, deep nesting and size are refused") {
  auto broken = parse_bundle_config(R"({"process": {"args": ["sh")", "c.json");
  REQUIRE_FALSE(broken);
  CHECK(broken.error().message().starts_with("c.json: invalid JSON: parse error at line 1"));
  auto deep = parse_bundle_config(std::string(40, '[') + std::string(40, ']'), "c.json");
  REQUIRE_FALSE(deep);
  CHECK(deep.error().message() == "c.json: file: nested more than 32 levels deep");
  auto big = parse_bundle_config("{\"x\": \"" + std::string(std::size_t{1} << 20, 'a') + "\"}", "c.json");
  REQUIRE_FALSE(big);
  CHECK(big.error().message() == "c.json: file: larger than 1 MiB");
}
