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
