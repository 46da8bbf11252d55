#include <catch2/catch.hpp>

#include "core/secrets.h"

using namespace confine;

namespace {

LoadedSecret loaded(const std::string& spec, const std::string& hosts, const std::string& placeholder,
                    const std::string& value) {
  auto s = parse_secret(spec, hosts);
  REQUIRE(s);
  s->placeholder = placeholder;
  return {*s, value};
}

const std::string kKeyPlaceholder = "confine-placeholder-0001";
const std::string kTokenPlaceholder = "confine-placeholder-0002";

SecretSet two_secrets() {
  return SecretSet({loaded("OPENAI_API_KEY", "api.openai.com", kKeyPlaceholder, "sk-real"),
                    loaded("GH_TOKEN=env:MY_GH", "api.github.com,uploads.github.com", kTokenPlaceholder, "ghp-real")});
}

}  // namespace

TEST_CASE("--secret: the source defaults to the caller's variable of the same name") {
  auto s = parse_secret("OPENAI_API_KEY", "API.OpenAI.com.");
  REQUIRE(s);
  CHECK(s->name == "OPENAI_API_KEY");
  CHECK(s->source.kind == SecretSource::Kind::environment);
  CHECK(s->source.where == "OPENAI_API_KEY");
  CHECK(s->hosts == std::vector<std::string>{"api.openai.com"});
}

TEST_CASE("--secret: env:, file: and cmd: sources; several hosts") {
  auto e = parse_secret("K=env:OTHER", "a.example,b.example");
  REQUIRE(e);
  CHECK(e->source.where == "OTHER");
  CHECK(e->hosts == std::vector<std::string>{"a.example", "b.example"});
  auto f = parse_secret("K=file:~/.keys/k", "a.example");
  REQUIRE(f);
  CHECK(f->source.kind == SecretSource::Kind::file);
  CHECK(f->source.where == "~/.keys/k");
  auto c = parse_secret("K=cmd:pass show api/key", "a.example");
  REQUIRE(c);
  CHECK(c->source.kind == SecretSource::Kind::command);
  CHECK(c->source.where == "pass show api/key");
}

TEST_CASE("--secret: bad input is one line naming the problem") {
  CHECK_FALSE(parse_secret("", "a.example"));
  CHECK_FALSE(parse_secret("1KEY", "a.example"));
  CHECK_FALSE(parse_secret("K-Y", "a.example"));
  CHECK(parse_secret("K=sk-literal", "a.example").error().message().find("expected env:VAR, file:PATH or cmd:COMMAND") !=
        std::string::npos);
  CHECK_FALSE(parse_secret("K=env:", "a.example"));
  CHECK_FALSE(parse_secret("K=env:A B", "a.example"));
  CHECK_FALSE(parse_secret("K=file:", "a.example"));
  CHECK_FALSE(parse_secret("K=cmd: ", "a.example"));
  CHECK_FALSE(parse_secret("K", ""));
  CHECK_FALSE(parse_secret("K", "a.example,"));
  CHECK_FALSE(parse_secret("K", "a.example:443"));
  CHECK_FALSE(parse_secret("K", "a.example/v1"));
  CHECK_FALSE(parse_secret("K", "user@a.example"));
  CHECK_FALSE(parse_secret("K", "bad host"));
}

TEST_CASE("placeholders: a fixed prefix and 64 hex digits") {
  unsigned char random[32];
  for (int i = 0; i < 32; ++i) random[i] = static_cast<unsigned char>(i * 8 + 1);
  auto p = placeholder_from_random(random);
  CHECK(p.starts_with("confine-placeholder-"));
  CHECK(p.size() == std::string("confine-placeholder-").size() + 64);
  CHECK(p.ends_with("f9"));
}

TEST_CASE("--broker PORT=https://HOST[:PORT]") {
  auto b = parse_broker("14000=https://API.openai.com");
  REQUIRE(b);
  CHECK(b->local_port == 14000);
  CHECK(b->host == "api.openai.com");
  CHECK(b->port == 443);
  auto p = parse_broker("8443=https://127.0.0.1:9443/");
  REQUIRE(p);
  CHECK(p->host == "127.0.0.1");
  CHECK(p->port == 9443);
  for (const char* bad : {"", "14000", "=https://a.example", "0=https://a.example", "70000=https://a.example",
                          "14000=http://a.example", "14000=https://", "14000=https://a.example/v1",
                          "14000=https://u@a.example", "14000=https://a.example:0", "14000=https://a.example:x",
                          "14000=https://[::1]:443", "x=https://a.example"})
    CHECK_FALSE(parse_broker(bad));
}

TEST_CASE("substitution: a listed host's header gets the real value") {
  auto set = two_secrets();
  auto r = set.substitute_header("Authorization", "Bearer " + kKeyPlaceholder, "api.openai.com");
  CHECK(r.value == "Bearer sk-real");
  CHECK(r.substituted == std::vector<std::string>{"OPENAI_API_KEY"});
  CHECK(r.withheld.empty());
  auto both = set.substitute_header("X-Keys", kTokenPlaceholder + "," + kTokenPlaceholder, "uploads.github.com");
  CHECK(both.value == "ghp-real,ghp-real");
}

TEST_CASE("substitution: another host gets the placeholder as is, and the attempt is named") {
  auto set = two_secrets();
  auto r = set.substitute_header("Authorization", "Bearer " + kKeyPlaceholder, "gist.github.com");
  CHECK(r.value == "Bearer " + kKeyPlaceholder);
  CHECK(r.substituted.empty());
  CHECK(r.withheld == std::vector<std::string>{"OPENAI_API_KEY"});
  // One secret's host does not get another secret's value.
  auto cross = set.substitute_header("Authorization", kKeyPlaceholder + kTokenPlaceholder, "api.github.com");
  CHECK(cross.value == kKeyPlaceholder + "ghp-real");
  CHECK(cross.withheld == std::vector<std::string>{"OPENAI_API_KEY"});
  CHECK(cross.substituted == std::vector<std::string>{"GH_TOKEN"});
}

TEST_CASE("substitution: never in the Host header; values without a placeholder pass untouched") {
  auto set = two_secrets();
  auto host = set.substitute_header("host", kKeyPlaceholder + ".api.openai.com", "api.openai.com");
  CHECK(host.value == kKeyPlaceholder + ".api.openai.com");
  CHECK(host.withheld == std::vector<std::string>{"OPENAI_API_KEY"});
  auto plain = set.substitute_header("Accept", "text/event-stream", "api.openai.com");
  CHECK(plain.value == "text/event-stream");
  CHECK(plain.substituted.empty());
  CHECK(plain.withheld.empty());
  // A near miss (a truncated placeholder) is no placeholder.
  auto near = set.substitute_header("Authorization", kKeyPlaceholder.substr(0, 20), "api.openai.com");
  CHECK(near.substituted.empty());
}

TEST_CASE("any_value_in: a real value anywhere in a text; a short one only alone") {
  SecretSet set({loaded("K", "a.example", kKeyPlaceholder, "sk-real-long-value"), loaded("S", "a.example", kTokenPlaceholder, "abc")});
  CHECK(set.any_value_in("Bearer sk-real-long-value"));
  CHECK(set.any_value_in("abc"));
  CHECK_FALSE(set.any_value_in("abcdef"));
  CHECK_FALSE(set.any_value_in(kKeyPlaceholder));
}
