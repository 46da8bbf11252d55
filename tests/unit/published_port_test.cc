#include <catch2/catch.hpp>

#include "core/published_port.h"

using namespace confine;

TEST_CASE("published ports take docker's -p syntax", "[publish]") {
  auto plain = parse_published_port("3000:3000");
  REQUIRE(plain.ok());
  CHECK(plain->host_address == "127.0.0.1");  // loopback unless an address is given, never every address
  CHECK_FALSE(plain->host_ipv6);
  CHECK(plain->host_port == 3000);
  CHECK(plain->port == 3000);
  CHECK(plain->host_endpoint() == "127.0.0.1:3000");
  CHECK_FALSE(plain->reachable_from_network());

  auto addressed = parse_published_port("127.0.0.2:8080:80/tcp");
  REQUIRE(addressed.ok());
  CHECK(addressed->host_address == "127.0.0.2");
  CHECK(addressed->host_port == 8080);
  CHECK(addressed->port == 80);

  auto v6 = parse_published_port("[::1]:8080:80");
  REQUIRE(v6.ok());
  CHECK(v6->host_ipv6);
  CHECK(v6->host_address == "::1");
  CHECK(v6->host_endpoint() == "[::1]:8080");
  CHECK_FALSE(v6->reachable_from_network());

  CHECK(parse_published_port("0.0.0.0:80:80")->reachable_from_network());
  CHECK(parse_published_port("[::]:80:80")->reachable_from_network());
  CHECK(parse_published_port("65535:1")->host_port == 65535);
}

TEST_CASE("a bad published port is one line naming the spec", "[publish]") {
  struct Case {
    const char* spec;
    const char* says;
  };
  for (auto [spec, says] : {Case{"70000:1", "host port `70000` is not a number from 1 to 65535"},
                            Case{"x", "expected [HOSTADDR:]HOSTPORT:PORT"},
                            Case{"3000", "expected [HOSTADDR:]HOSTPORT:PORT"},
                            Case{"", "expected [HOSTADDR:]HOSTPORT:PORT"},
                            Case{"1:2/udp", "only TCP ports can be published"},
                            Case{"1:2/sctp", "only TCP ports can be published"},
                            Case{"1:2/xyz", "unknown protocol `xyz`"},
                            Case{"0:80", "host port `0`"},
                            Case{"80:0", "port `0`"},
                            Case{"80:", "port ``"},
                            Case{"8000-8010:8000-8010", "host port `8000-8010`"},
                            Case{"127.0.0.1::80", "host port ``"},
                            Case{"localhost:80:80", "`localhost` is not an IPv4 address"},
                            Case{"::1:80:80", "is not an IPv4 address (an IPv6 one goes in brackets)"},
                            Case{"[::1:80:80", "not an IPv6 address in brackets"},
                            Case{"[1.2.3.4]:80:80", "not an IPv6 address in brackets"},
                            Case{"1.2.3:80:80", "`1.2.3` is not an IPv4 address"},
                            Case{"a:b:c:d", "`a` is not an IPv4 address"},
                            Case{"+80:80", "host port `+80`"},
                            Case{" 80:80", "host port ` 80`"}}) {
    INFO(spec);
    auto r = parse_published_port(spec);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().what.starts_with(std::string("--publish ") + spec + ": "));
    CHECK(r.error().what.find(says) != std::string::npos);
    CHECK(r.error().what.find('\n') == std::string::npos);
  }
  // Found by the fuzz target: inet_pton stops at a NUL, which must not hide text after it.
  using namespace std::string_view_literals;
  CHECK_FALSE(parse_published_port("[::\0junk]:1:2"sv).ok());
  CHECK_FALSE(parse_published_port("127.0.0.1\0junk:1:2"sv).ok());
}
