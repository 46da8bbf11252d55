#include <catch2/catch.hpp>

#include "core/env_scrub.h"

using namespace confine;

TEST_CASE("credential variable names are recognised") {
  for (const char* name : {"AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "GITHUB_TOKEN", "GH_TOKEN", "MY_API_KEY",
                           "PGPASSWORD", "npm_config_auth", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS",
                           "KUBECONFIG", "DOCKER_HOST", "SESSION_COOKIE", "db_passwd", "OPENAI_API_KEY",
                           "MYSQL_PWD", "SSHPASS", "SENTRY_DSN", "SMTP_PASSWORD", "APP_SECRET", "GIT_CREDENTIALS"})
    CHECK(is_credential_variable(name));
  for (const char* name : {"PATH", "HOME", "LANG", "TERM", "USER", "EDITOR", "PWD", "OLDPWD", "SHELL", "PASSAGE_DIR"})
    CHECK_FALSE(is_credential_variable(name));
}

TEST_CASE("scrubbing drops credentials, keeps the rest, honours pass and set") {
  auto out = scrub_environment({"PATH=/bin", "GITHUB_TOKEN=t", "MY_API_KEY=k", "FOO=bar"}, {"MY_API_KEY"},
                               {"FOO=baz", "NEW=1"});
  CHECK(out.kept == std::vector<std::string>{"PATH=/bin", "MY_API_KEY=k", "FOO=baz", "NEW=1"});
  CHECK(out.dropped_names == std::vector<std::string>{"GITHUB_TOKEN"});
}

TEST_CASE("a URL with a password in its userinfo is a credential, whatever its variable's name") {
  for (const char* v : {"redis://:pw@cache:6379/0", "postgres://u:pw@db/app", "http://user:pw@proxy:3128",
                        "https://a:b@host"})
    CHECK(is_url_with_password(v));
  for (const char* v : {"https://host/path", "http://user@host", "postgres://db/app?x=a:b@c", "a:b@c", "://:x@y",
                        "http://host/a:b@c", ""})
    CHECK_FALSE(is_url_with_password(v));
  auto out = scrub_environment({"REDIS_URL=redis://:pw@cache", "HOMEPAGE=https://example.com", "UPSTREAM=http://u:p@x"},
                               {"UPSTREAM"}, {});
  CHECK(out.kept == std::vector<std::string>{"HOMEPAGE=https://example.com", "UPSTREAM=http://u:p@x"});
  CHECK(out.dropped_names == std::vector<std::string>{"REDIS_URL"});
}
