#include <catch2/catch.hpp>

#include "core/env_scrub.h"

using namespace confine;

TEST_CASE("credential variable names are recognised") {
  for (const char* name : {"AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "GITHUB_TOKEN", "GH_TOKEN", "MY_API_KEY",
                           "PGPASSWORD", "npm_config_auth", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS",
                           "KUBECONFIG", "DOCKER_HOST", "SESSION_COOKIE", "db_passwd", "OPENAI_API_KEY"})
    CHECK(is_credential_variable(name));
  for (const char* name : {"PATH", "HOME", "LANG", "TERM", "USER", "EDITOR", "PWD", "SHELL"})
    CHECK_FALSE(is_credential_variable(name));
}

TEST_CASE("scrubbing drops credentials, keeps the rest, honours pass and set") {
  auto out = scrub_environment({"PATH=/bin", "GITHUB_TOKEN=t", "MY_API_KEY=k", "FOO=bar"}, {"MY_API_KEY"},
                               {"FOO=baz", "NEW=1"});
  CHECK(out.kept == std::vector<std::string>{"PATH=/bin", "MY_API_KEY=k", "FOO=baz", "NEW=1"});
  CHECK(out.dropped_names == std::vector<std::string>{"GITHUB_TOKEN"});
}
