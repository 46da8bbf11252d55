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

// A request over TLS (a broker): only the host decides.
RequestDestination over_tls(const std::string& host) { return {host, 443, true, {}}; }
// Plain HTTP written to `address`:`port`.
RequestDestination in_clear(const std::string& host, std::uint16_t port, const std::string& address) {
  return {host, port, false, address};
}

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
  for (const char* bad : {"http://", "http://a.example:", "http://a.example:0", "http://a.example:x",
                          "http://a.example/v1", "http://u@a.example:80", "http://a.example:80:81", "ftp://a.example",
                          "http://[::1", "http://[::1]8080", "http://bad host:80", "a.example,http://"})
    CHECK_FALSE(parse_secret("K", bad));
  CHECK(parse_secret("K", "https://a.example").error().message() ==
        "--secret K --for `https://a.example`: give the host alone (HTTPS to it goes through a --broker, which puts "
        "the value in)");
  CHECK(parse_secret("K", "a.example:8080").error().message().find("or http://HOST:PORT for a port that speaks only "
                                                                   "plain HTTP") != std::string::npos);
}

TEST_CASE("--for http://HOST:PORT: the host, and plain HTTP on that port wherever the host is") {
  auto s = parse_secret("K", "api.example,http://Plain.Example:8080,http://plain.example:8081/");
  REQUIRE(s);
  CHECK(s->hosts == std::vector<std::string>{"api.example", "plain.example"});
  CHECK(s->plain_http == std::vector<PlainHttpPort>{{"plain.example", 8080}, {"plain.example", 8081}});
  auto default_port = parse_secret("K", "HTTP://a.example");
  REQUIRE(default_port);
  CHECK(default_port->hosts == std::vector<std::string>{"a.example"});
  CHECK(default_port->plain_http == std::vector<PlainHttpPort>{{"a.example", 80}});
  auto v6 = parse_secret("K", "http://[2001:db8::1]:8080");
  REQUIRE(v6);
  CHECK(v6->plain_http == std::vector<PlainHttpPort>{{"2001:db8::1", 8080}});
  // Given twice, kept once.
  auto twice = parse_secret("K", "a.example,http://a.example:80,http://a.example");
  REQUIRE(twice);
  CHECK(twice->hosts == std::vector<std::string>{"a.example"});
  CHECK(twice->plain_http.size() == 1);
}

TEST_CASE("may_substitute_in_clear: loopback, or a port named plain HTTP for that host") {
  auto s = parse_secret("K", "api.example,http://plain.example:8080");
  REQUIRE(s);
  for (const char* local : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1"})
    CHECK(may_substitute_in_clear(local, 443, "api.example", *s));
  for (const char* remote : {"10.0.0.1", "192.0.2.7", "2001:db8::1", "::ffff:10.0.0.1", "::", "0.0.0.0", "", "localhost",
                             "fe80::1%eth0"})
    CHECK_FALSE(may_substitute_in_clear(remote, 443, "api.example", *s));
  CHECK(may_substitute_in_clear("192.0.2.7", 8080, "plain.example", *s));
  CHECK(may_substitute_in_clear("", 8080, "plain.example", *s));  // behind an upstream proxy too: the user said so
  CHECK_FALSE(may_substitute_in_clear("192.0.2.7", 80, "plain.example", *s));
  CHECK_FALSE(may_substitute_in_clear("192.0.2.7", 8080, "api.example", *s));
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

TEST_CASE("an endpoint URL the user chose: https://HOST[:PORT][/PATH], and http:// told apart") {
  auto e = parse_endpoint_url("https://GW.example:8443/api/v1/", "ANTHROPIC_BASE_URL");
  REQUIRE(e);
  CHECK(e->tls);
  CHECK(e->host == "gw.example");
  CHECK(e->port == 8443);
  CHECK(e->path == "/api/v1");
  auto plain = parse_endpoint_url("http://127.0.0.1:8080", "X");
  REQUIRE(plain);
  CHECK_FALSE(plain->tls);
  CHECK(plain->port == 8080);
  CHECK(plain->path.empty());
  auto bare = parse_endpoint_url("https://api.example", "X");
  REQUIRE(bare);
  CHECK(bare->port == 443);
  for (const char* bad : {"", "api.example", "ftp://a.example", "https://", "https://u@a.example", "https://a.example:0",
                          "https://a.example:x", "https://[::1]:443", "https://a.example/v1?x=1", "https://a.example/#f",
                          "https://a.example/a b", "https://a.example/\x7f"})
    CHECK_FALSE(parse_endpoint_url(bad, "X"));
  auto err = parse_endpoint_url("https://u@a.example", "ANTHROPIC_BASE_URL");
  REQUIRE_FALSE(err);
  CHECK(err.error().message() == "ANTHROPIC_BASE_URL `https://u@a.example`: expected https://HOST[:PORT][/PATH]");
}

TEST_CASE("substitution: a listed host's header gets the real value") {
  auto set = two_secrets();
  auto r = set.substitute_header("Authorization", "Bearer " + kKeyPlaceholder, over_tls("api.openai.com"));
  CHECK(r.value == "Bearer sk-real");
  CHECK(r.substituted == std::vector<std::string>{"OPENAI_API_KEY"});
  CHECK(r.withheld.empty());
  auto both = set.substitute_header("X-Keys", kTokenPlaceholder + "," + kTokenPlaceholder, over_tls("uploads.github.com"));
  CHECK(both.value == "ghp-real,ghp-real");
}

TEST_CASE("substitution: another host gets the placeholder as is, and the attempt is named") {
  auto set = two_secrets();
  auto r = set.substitute_header("Authorization", "Bearer " + kKeyPlaceholder, over_tls("gist.github.com"));
  CHECK(r.value == "Bearer " + kKeyPlaceholder);
  CHECK(r.substituted.empty());
  CHECK(r.withheld == std::vector<std::string>{"OPENAI_API_KEY"});
  // One secret's host does not get another secret's value.
  auto cross = set.substitute_header("Authorization", kKeyPlaceholder + kTokenPlaceholder, over_tls("api.github.com"));
  CHECK(cross.value == kKeyPlaceholder + "ghp-real");
  CHECK(cross.withheld == std::vector<std::string>{"OPENAI_API_KEY"});
  CHECK(cross.substituted == std::vector<std::string>{"GH_TOKEN"});
}

TEST_CASE("substitution: never in the Host header; values without a placeholder pass untouched") {
  auto set = two_secrets();
  auto host = set.substitute_header("host", kKeyPlaceholder + ".api.openai.com", over_tls("api.openai.com"));
  CHECK(host.value == kKeyPlaceholder + ".api.openai.com");
  CHECK(host.withheld == std::vector<std::string>{"OPENAI_API_KEY"});
  auto plain = set.substitute_header("Accept", "text/event-stream", over_tls("api.openai.com"));
  CHECK(plain.value == "text/event-stream");
  CHECK(plain.substituted.empty());
  CHECK(plain.withheld.empty());
  // A near miss (a truncated placeholder) is no placeholder.
  auto near = set.substitute_header("Authorization", kKeyPlaceholder.substr(0, 20), over_tls("api.openai.com"));
  CHECK(near.substituted.empty());
}

TEST_CASE("substitution in clear text: only to loopback or a port named plain HTTP; else refused, placeholder kept") {
  SecretSet set({loaded("K", "api.example,http://plain.example:8080", kKeyPlaceholder, "sk-real"),
                 loaded("T", "other.example", kTokenPlaceholder, "t-real")});
  auto remote = set.substitute_header("Authorization", "Bearer " + kKeyPlaceholder, in_clear("api.example", 443, "192.0.2.7"));
  CHECK(remote.value == "Bearer " + kKeyPlaceholder);
  CHECK(remote.substituted.empty());
  CHECK(remote.refused == std::vector<std::string>{"K"});
  CHECK(remote.withheld.empty());
  auto upstream = set.substitute_header("Authorization", kKeyPlaceholder, in_clear("api.example", 80, ""));
  CHECK(upstream.refused == std::vector<std::string>{"K"});
  auto local = set.substitute_header("Authorization", kKeyPlaceholder, in_clear("api.example", 8000, "127.0.0.1"));
  CHECK(local.value == "sk-real");
  CHECK(local.refused.empty());
  auto named = set.substitute_header("Authorization", kKeyPlaceholder, in_clear("plain.example", 8080, "192.0.2.7"));
  CHECK(named.value == "sk-real");
  auto other_port = set.substitute_header("Authorization", kKeyPlaceholder, in_clear("plain.example", 80, "192.0.2.7"));
  CHECK(other_port.refused == std::vector<std::string>{"K"});
  // Another secret's placeholder to a host not listed for it is withheld as always, not refused.
  auto mixed = set.substitute_header("X", kKeyPlaceholder + kTokenPlaceholder, in_clear("api.example", 80, "192.0.2.7"));
  CHECK(mixed.value == kKeyPlaceholder + kTokenPlaceholder);
  CHECK(mixed.refused == std::vector<std::string>{"K"});
  CHECK(mixed.withheld == std::vector<std::string>{"T"});
  // No placeholder: nothing to refuse.
  CHECK(set.substitute_header("Accept", "*/*", in_clear("api.example", 80, "192.0.2.7")).refused.empty());
  CHECK(set.lists("api.example"));
  CHECK(set.lists("plain.example"));
  CHECK_FALSE(set.lists("gist.example"));
}

TEST_CASE("classify_request_start: an HTTP/1 request line, surely something else, or too few bytes") {
  for (const char* http : {"GET / HTTP/1.1\r\n", "POST /v1/messages?x=1 HTTP/1.1\r\nHost: a\r\n", "GET / HTTP/1.0\n",
                           "OPTIONS * HTTP/1.1\r\n", "GET http://a.example/ HTTP/1.1\r\n"})
    CHECK(classify_request_start(http) == RequestStart::http);
  for (const char* more : {"", "G", "GET", "GET ", "GET /v1", "GET / ", "GET / HTTP/", "GET / HTTP/1.1", "GET / HTTP/1.1\r"})
    CHECK(classify_request_start(more) == RequestStart::need_more);
  for (std::string_view other : {std::string_view("\x16\x03\x01\x02\x00", 5), std::string_view("\0\0\0\x08", 4),
                                 std::string_view("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"), std::string_view("PRI * HTTP/2.0\r\n"),
                                 std::string_view("get / HTTP/1.1\r\n"), std::string_view("GET  / HTTP/1.1\r\n"),
                                 std::string_view("GET / HTTP/1.1 \r\n"), std::string_view("GET / HTTP/1.2\r\n"),
                                 std::string_view("GET / HTTP/1.1\rX"), std::string_view("PING\r\n"),
                                 std::string_view("GET key\r\n"), std::string_view("ABCDEFGHIJKLMNOPQRSTU / HTTP/1.1\r\n"),
                                 std::string_view("GET /\x80 HTTP/1.1\r\n")})
    CHECK(classify_request_start(other) == RequestStart::other);
}

TEST_CASE("any_value_in: a real value anywhere in a text; a short one only alone") {
  SecretSet set({loaded("K", "a.example", kKeyPlaceholder, "sk-real-long-value"), loaded("S", "a.example", kTokenPlaceholder, "abc")});
  CHECK(set.any_value_in("Bearer sk-real-long-value"));
  CHECK(set.any_value_in("abc"));
  CHECK_FALSE(set.any_value_in("abcdef"));
  CHECK_FALSE(set.any_value_in(kKeyPlaceholder));
}

TEST_CASE("the variables that hold a secret's real value, under whatever name") {
  SecretSet set({loaded("K", "a.example", kKeyPlaceholder, "sk-real-long-value"), loaded("S", "a.example", kTokenPlaceholder, "abc")});
  std::vector<std::string> env = {"MY_REAL_KEY=sk-real-long-value", "AUTH=Bearer sk-real-long-value", "SHORT=abc",
                                  "LONGER=abcdef", "K=" + std::string(kKeyPlaceholder), "PATH=/usr/bin", "NOVALUE"};
  CHECK(variables_holding_secrets(env, set) == std::vector<std::string>{"MY_REAL_KEY", "AUTH", "SHORT"});
  CHECK(variables_holding_secrets(env, SecretSet()).empty());
}
