// The egress proxy's answers for allowed destinations it could not reach, and the bounded tables behind the exit
// summary.
#include <catch2/catch.hpp>
#include <cerrno>
#include <set>
#include <string>

#include "core/proxy_outcome.h"

using namespace confine;

TEST_CASE("classify_connect_error: each connect error is one failure") {
  CHECK(classify_connect_error(ECONNREFUSED, false) == ConnectFailure::refused);
  CHECK(classify_connect_error(ECONNRESET, false) == ConnectFailure::refused);
  CHECK(classify_connect_error(ETIMEDOUT, false) == ConnectFailure::timeout);
  CHECK(classify_connect_error(ENETUNREACH, false) == ConnectFailure::unreachable);
  CHECK(classify_connect_error(EHOSTUNREACH, false) == ConnectFailure::unreachable);
  CHECK(classify_connect_error(EADDRNOTAVAIL, false) == ConnectFailure::unreachable);
  CHECK(classify_connect_error(0, false) == ConnectFailure::unreachable);  // not a system error
}

TEST_CASE("classify_connect_error: the proxy's own timer is a timeout, whatever the aborted connect said") {
  CHECK(classify_connect_error(ECANCELED, true) == ConnectFailure::timeout);
  CHECK(classify_connect_error(EBADF, true) == ConnectFailure::timeout);
  CHECK(classify_connect_error(0, true) == ConnectFailure::timeout);
  CHECK(classify_connect_error(ECONNREFUSED, true) == ConnectFailure::timeout);
}

TEST_CASE("failure_reason and http_answer: one word each, 504 only for a timeout") {
  std::set<std::string> words;
  for (auto f : {ConnectFailure::unresolvable, ConnectFailure::refused, ConnectFailure::unreachable,
                 ConnectFailure::timeout})
    words.insert(std::string(failure_reason(f)));
  CHECK(words == std::set<std::string>{"unresolvable", "refused", "unreachable", "timeout"});

  CHECK(http_answer(ConnectFailure::timeout).code == 504);
  CHECK(http_answer(ConnectFailure::timeout).status == "Gateway Timeout");
  for (auto f : {ConnectFailure::unresolvable, ConnectFailure::refused, ConnectFailure::unreachable}) {
    CHECK(http_answer(f).code == 502);
    CHECK(http_answer(f).status == "Bad Gateway");
  }
}

TEST_CASE("TargetTally: the most counted first, ties by name, the rest counted") {
  TargetTally t(1000);
  CHECK(t.total() == 0);
  CHECK(t.top_list(5).empty());
  for (const char* name : {"b:443", "a:443", "c:80", "b:443", "d:1", "e:2", "f:3", "b:443", "c:80"}) t.add(name);
  CHECK(t.total() == 9);
  CHECK(t.top_list(5) == "b:443 ×3, c:80 ×2, a:443 ×1, d:1 ×1, e:2 ×1 and 1 more");
  CHECK(t.top_list(2) == "b:443 ×3, c:80 ×2 and 4 more");
  CHECK(t.top_list(10) == "b:443 ×3, c:80 ×2, a:443 ×1, d:1 ×1, e:2 ×1, f:3 ×1");
}

TEST_CASE("TargetTally: past its bound, new names are only counted; names it holds still count") {
  TargetTally t(2);
  t.add("a");
  t.add("b");
  for (int i = 0; i < 1000; ++i) t.add("new" + std::to_string(i));
  t.add("b");
  CHECK(t.total() == 1003);
  CHECK(t.top_list(5) == "b ×2, a ×1 and 1000 more");
  TargetTally none(0);
  none.add("x");
  CHECK(none.top_list(5) == "1 more");
}
