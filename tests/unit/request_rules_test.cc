#include <catch2/catch.hpp>

#include "core/request_rules.h"

using namespace confine;

namespace {

RequestRules rules(std::initializer_list<const char*> specs) {
  std::vector<RequestRule> out;
  for (const char* s : specs) {
    auto r = parse_request_rule(s);
    REQUIRE(r);
    out.push_back(*r);
  }
  return RequestRules(std::move(out));
}

}  // namespace

TEST_CASE("request rules: METHOD HOST[:PORT]/PATH, a /* prefix, * for any method") {
  auto r = parse_request_rule("POST API.openai.com/v1/responses");
  REQUIRE(r);
  CHECK(r->method == "POST");
  CHECK(r->host == "api.openai.com");
  CHECK(r->port == 443);
  CHECK(r->path == "/v1/responses");
  CHECK_FALSE(r->prefix);
  auto p = parse_request_rule("* example.com:80/v1/*");
  REQUIRE(p);
  CHECK(p->port == 80);
  CHECK(p->path == "/v1/");
  CHECK(p->prefix);
  CHECK(is_request_rule("GET a.example/x"));
  CHECK_FALSE(is_request_rule("a.example:443"));
}

TEST_CASE("request rules: bad specs name the problem") {
  for (const char* bad : {"get a.example/x", "POST a.example", "POST *.example/x", "POST a.example:*/x",
                          "POST a.example/x?y=1", "POST a.example/../x", "POST a.example/%2e%2e/x", "POST a.example/a*b",
                          "POST a.example/v1/*/x", "POST bad host/x", "POST  a.example/x"})
    CHECK_FALSE(parse_request_rule(bad));
  CHECK_THAT(parse_request_rule("POST a.example").error().message(), Catch::Contains("a path is missing"));
}

TEST_CASE("request rules: only matching requests pass on a host that has rules") {
  auto r = rules({"POST api.example/v1/responses", "GET api.example/v1/models/*"});
  CHECK(r.refusal("POST", "api.example", 443, "/v1/responses").empty());
  CHECK(r.refusal("POST", "api.example", 443, "/v1/responses?stream=1").empty());
  CHECK(r.refusal("GET", "api.example", 443, "/v1/models/gpt").empty());
  CHECK(r.refusal("GET", "other.example", 443, "/anything").empty());  // no rules there
  CHECK(r.refusal("GET", "api.example", 80, "/anything").empty());     // nor on another port
  auto no = r.refusal("GET", "api.example", 443, "/v1/responses");
  CHECK_THAT(no, Catch::Contains("--allow 'GET api.example/v1/responses' would allow it"));
  CHECK_FALSE(r.refusal("POST", "api.example", 443, "/v1/responses/x").empty());
  CHECK_FALSE(r.refusal("GET", "api.example", 443, "/v1/models").empty());
  CHECK_FALSE(r.refusal("post", "api.example", 443, "/v1/responses").empty());
  CHECK(r.restricts("api.example", 443));
  CHECK_FALSE(r.restricts("api.example", 80));
}

TEST_CASE("request rules: dot segments and encoded separators are refused, not matched") {
  auto r = rules({"GET api.example/v1/models/*"});
  for (const char* sneaky : {"/v1/models/../../admin", "/v1/models/%2e%2e/admin", "/v1/models/%2E%2E/admin",
                             "/v1/models/..%2fadmin", "/v1/models/x%5c..", "/v1/models/./x", "v1/models/x",
                             "/v1/models/a\\..\\..\\b"})
    CHECK_THAT(r.refusal("GET", "api.example", 443, sneaky), Catch::Contains("refused") || Catch::Contains("not allowed"));
}

namespace {

// The problem normalize_request_path names for `path`; empty when it accepts it.
std::string problem(std::string_view path) {
  auto n = normalize_request_path(path);
  return n ? std::string() : n.error().message();
}

}  // namespace

TEST_CASE("request paths: every spelling a server reads as another path is refused, each naming its problem") {
  CHECK_THAT(problem("/v1/../admin"), Catch::Contains("a dot segment (`..`)"));
  CHECK_THAT(problem("/v1/./admin"), Catch::Contains("a dot segment (`.`)"));
  CHECK_THAT(problem("/v1/.."), Catch::Contains("a dot segment"));
  CHECK_THAT(problem("/v1/%2e%2e/admin"), Catch::Contains("a dot segment (`%2e%2e`, `..` once decoded)"));
  CHECK_THAT(problem("/v1/.%2E/admin"), Catch::Contains("a dot segment"));
  CHECK_THAT(problem("/v1/..;/admin"), Catch::Contains("a ; parameter in a segment (`..;`)"));
  CHECK_THAT(problem("/v1/x;jsessionid=1"), Catch::Contains("a ; parameter"));
  CHECK_THAT(problem("/v1/..%3b/admin"), Catch::Contains("a ; parameter in a segment (`..%3b`, `..;` once decoded)"));
  CHECK_THAT(problem("/v1/%252e%252e/admin"), Catch::Contains("an encoded % (`%25`): double encoding"));
  CHECK_THAT(problem("/v1/%c0%ae%c0%ae/admin"), Catch::Contains("an encoded byte above 0x7f (`%c0`)"));
  CHECK_THAT(problem("/v1/%C3%A9"), Catch::Contains("an encoded byte above 0x7f (`%C3`)"));
  CHECK_THAT(problem("/v1/..%2fadmin"), Catch::Contains("an encoded / (`%2f`)"));
  CHECK_THAT(problem("/v1/..%5Cadmin"), Catch::Contains("an encoded \\ (`%5C`)"));
  CHECK_THAT(problem("/v1/a%00"), Catch::Contains("an encoded control byte (`%00`)"));
  CHECK_THAT(problem("/v1/a%zz"), Catch::Contains("a malformed % escape (`%zz`)"));
  CHECK_THAT(problem("/v1/a%2"), Catch::Contains("a malformed % escape (`%2`)"));
  CHECK_THAT(problem("/v1/100%"), Catch::Contains("a malformed % escape (`%`)"));
  CHECK_THAT(problem("/v1/a\\..\\admin"), Catch::Contains("a \\ (some servers read it as /)"));
  CHECK_THAT(problem("/v1/\xc0\xae\xc0\xae/admin"), Catch::Contains("a byte outside printable ASCII (\\xc0)"));
  CHECK_THAT(problem("/v1/a b"), Catch::Contains("a byte outside printable ASCII (\\x20)"));
  CHECK_THAT(problem("v1/models"), Catch::Contains("does not start with /"));
  CHECK_THAT(problem(""), Catch::Contains("does not start with /"));
}

TEST_CASE("request paths: the controls, one for each check, are accepted and normalised") {
  auto normal = [](std::string_view path) {
    auto n = normalize_request_path(path);
    REQUIRE(n);
    return *n;
  };
  CHECK(normal("/v1/models") == "/v1/models");
  CHECK(normal("/") == "/");
  CHECK(normal("/v1/") == "/v1/");
  CHECK(normal("/v1//x") == "/v1//x");
  CHECK(normal("/v1/a%20b") == "/v1/a%20b");        // an escape of a reserved or other byte stays one
  CHECK(normal("/v1/a%3fb%2c") == "/v1/a%3Fb%2C");  // in upper case
  CHECK(normal("/v1/%7Euser/%41%2d") == "/v1/~user/A-");  // unreserved ones are decoded
  CHECK(normal("/v1/...") == "/v1/...");            // not a dot segment: a name
  CHECK(normal("/v1/..x/.well-known") == "/v1/..x/.well-known");
  CHECK(normal("/v1/%2e%2e%2e") == "/v1/...");
  CHECK(normal("/v1/a%2ejson") == "/v1/a.json");    // an encoded . in a name is that name
  CHECK(normal("/v1/a=b,c:d@e") == "/v1/a=b,c:d@e");  // sub-delims other than ; are plain
  for (const char* path : {"/v1/a%20b", "/v1/a%3fb%2c", "/v1/%7Euser/%41%2d", "/v1/%2e%2e%2e", "/v1/%22%7b%7d"})
    CHECK(normal(normal(path)) == normal(path));  // idempotent
}

TEST_CASE("request rules: the path a server reads is checked; the query is not") {
  auto r = rules({"GET api.example:80/v1/*", "GET api.example:80/admin"});
  auto refused = [&](std::string_view target) { return r.refusal("GET", "api.example", 80, target); };
  // The five spellings of /admin below /v1/: each refused, naming its problem.
  const std::string holds = "is refused on a host with method/path rules: its path holds ";
  CHECK_THAT(refused("/v1/../admin"), Catch::Contains(holds + "a dot segment (`..`)"));
  CHECK_THAT(refused("/v1/%2e%2e/admin"), Catch::Contains(holds + "a dot segment"));
  CHECK_THAT(refused("/v1/..;/admin"), Catch::Contains(holds + "a ; parameter"));
  CHECK_THAT(refused("/v1/%252e%252e/admin"), Catch::Contains(holds + "an encoded % (`%25`)"));
  CHECK_THAT(refused("/v1/%c0%ae%c0%ae/admin"), Catch::Contains(holds + "an encoded byte above 0x7f"));
  CHECK_THAT(refused("/v1/\xff"), Catch::Contains("GET api.example:80/v1/\\xff is refused"));  // one line, as text
  // One line each.
  CHECK(refused("/v1/..;/admin").find('\n') == std::string::npos);
  // Controls: allowed paths still pass, no check refusing more than its problem (the query is not checked).
  CHECK(refused("/v1/models").empty());
  CHECK(refused("/v1/a%20b").empty());
  CHECK(refused("/v1/x?y=..;").empty());
  CHECK(refused("/v1/x?y=%252e%c0/../..;").empty());
  CHECK(refused("/v1/%7euser").empty());
  CHECK(refused("/v1/a%2ejson").empty());
  CHECK(refused("/v1/...").empty());
  CHECK(refused("/admin").empty());
  // Normalised before matching: another spelling of an allowed path is that path; the --allow offered is normal.
  CHECK(refused("/%61dmin").empty());
  CHECK_THAT(refused("/v1%2fx"), Catch::Contains("an encoded /"));
  CHECK_THAT(refused("/v2/x"), Catch::Contains("--allow 'GET api.example:80/v2/x' would allow it"));
  CHECK_THAT(refused("/v%32/%78"), Catch::Contains("--allow 'GET api.example:80/v2/x' would allow it"));
}

TEST_CASE("request rules: a rule's path is normalised the same way, and refused for the same problems") {
  auto r = parse_request_rule("GET a.example/v1/%7euser/%2a");
  REQUIRE(r);
  CHECK(r->path == "/v1/~user/%2A");
  auto p = parse_request_rule("GET a.example/v1/a%20b/*");
  REQUIRE(p);
  CHECK(p->path == "/v1/a%20b/");
  CHECK(p->prefix);
  for (const char* bad : {"GET a.example/v1/..;/x", "GET a.example/v1/%252e/x", "GET a.example/v1/%c0%ae",
                          "GET a.example/v1%2f/*", "GET a.example/v1/%zz"})
    CHECK_THAT(parse_request_rule(bad).error().message(), Catch::Contains("the path holds"));
  CHECK_THAT(parse_request_rule("GET a.example/v1/..;/x").error().message(), Catch::Contains("a ; parameter"));
}
