#include <catch2/catch.hpp>

#include "allowlist_of.h"
#include "core/allowlist.h"

using namespace confine;

using test::list;

TEST_CASE("exact hosts default to port 443; other ports only when asked") {
  auto a = list({"api.openai.com", "registry.npmjs.org:80"});
  CHECK(a.check_name("api.openai.com", 443).allowed);
  CHECK_FALSE(a.check_name("api.openai.com", 80).allowed);
  CHECK(a.check_name("registry.npmjs.org", 80).allowed);
  CHECK_FALSE(a.check_name("registry.npmjs.org", 443).allowed);
  CHECK_FALSE(a.check_name("evil.example", 443).allowed);
  CHECK_FALSE(a.check_name("openai.com", 443).allowed);
  CHECK(list({"example.com:*"}).check_name("example.com", 8443).allowed);
}

TEST_CASE("wildcards match subdomains only, never the bare name or a lookalike suffix") {
  auto a = list({"*.npmjs.org"});
  CHECK(a.check_name("registry.npmjs.org", 443).allowed);
  CHECK(a.check_name("a.b.npmjs.org", 443).allowed);
  CHECK_FALSE(a.check_name("npmjs.org", 443).allowed);
  CHECK_FALSE(a.check_name("evilnpmjs.org", 443).allowed);
  CHECK_FALSE(a.check_name("npmjs.org.evil.example", 443).allowed);
}

TEST_CASE("names are case-insensitive, a trailing dot is normalised, IDN becomes punycode") {
  auto a = list({"Example.COM.", "bücher.example"});
  CHECK(a.check_name("EXAMPLE.com", 443).allowed);
  CHECK(a.check_name("example.com.", 443).allowed);
  CHECK(a.check_name("xn--bcher-kva.example", 443).allowed);
  CHECK(a.check_name("BÜCHER.example", 443).allowed);
  CHECK(normalize_host("bücher.example") == "xn--bcher-kva.example");
  CHECK(normalize_host("bad host").empty());
  CHECK(normalize_host("a..b").empty());
}

TEST_CASE("IP-literal destinations need an address entry") {
  auto a = list({"example.com", "127.0.0.1:11434", "[::1]:8080"});
  CHECK_FALSE(a.check_name("93.184.216.34", 443).allowed);
  CHECK(a.check_name("127.0.0.1", 11434).allowed);
  CHECK_FALSE(a.check_name("127.0.0.1", 11435).allowed);
  CHECK(a.check_name("[::1]", 8080).allowed);
  CHECK(a.check_name("0:0:0:0:0:0:0:1", 8080).allowed);  // the same address, spelt differently
}

TEST_CASE("resolved internal addresses are refused unless allowed by address (no SSRF, no rebinding)") {
  auto a = list({"example.com", "10.0.0.5:443"});
  for (const char* internal : {"127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
                               "100.64.0.1", "0.0.0.0", "::1", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "224.0.0.1"}) {
    INFO(internal);
    CHECK(is_internal_address(internal));
    CHECK_FALSE(a.check_address(internal, 443).allowed);
  }
  for (const char* external : {"93.184.216.34", "172.32.0.1", "2606:2800:220:1::1", "8.8.8.8"}) {
    INFO(external);
    CHECK_FALSE(is_internal_address(external));
    CHECK(a.check_address(external, 443).allowed);
  }
  CHECK(a.check_address("10.0.0.5", 443).allowed);
}

TEST_CASE("bad --allow entries are refused with the entry named") {
  for (const char* bad : {"user@host", "http://example.com", "example.com:0", "example.com:99999", "example.com:x",
                          "[::1", "*.", "bad host"}) {
    INFO(bad);
    auto e = parse_allow_entry(bad);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().message().find("--allow") != std::string::npos);
  }
}

TEST_CASE("a URL given to --allow: the message gives the host[:port] instead, never a password") {
  auto message = [](const char* spec) {
    auto e = parse_allow_entry(spec);
    REQUIRE_FALSE(e.ok());
    return e.error().message();
  };
  CHECK(message("https://api.example.com/v1") ==
        "--allow `https://api.example.com/v1`: give a host[:port], not a URL: --allow api.example.com (no `https://`; "
        "no path: a host is allowed whole)");
  CHECK(message("http://example.com") ==
        "--allow `http://example.com`: give a host[:port], not a URL: --allow example.com:80 (no `http://`, its port "
        "instead)");
  CHECK(message("http://example.com:8080/") ==
        "--allow `http://example.com:8080/`: give a host[:port], not a URL: --allow example.com:8080 (no `http://`; "
        "no path: a host is allowed whole)");
  CHECK(message("http://[::1]/x").find("--allow [::1]:80 ") != std::string::npos);
  CHECK(message("example.com/v1") ==
        "--allow `example.com/v1`: give a host[:port], not a URL: --allow example.com (no path: a host is allowed whole)");
  CHECK(message("bob@example.com:8443") ==
        "--allow `bob@example.com:8443`: give a host[:port], not a URL: --allow example.com:8443 (no user name or "
        "password: the proxy sends none)");
  auto with_password = message("https://bob:hunter2@example.com/x");
  CHECK(with_password.find("hunter2") == std::string::npos);
  CHECK(with_password.find("`https://bob:***@example.com/x`") != std::string::npos);
  CHECK(message("example.com:443@evil.example").find("--allow evil.example ") != std::string::npos);
}

TEST_CASE("address entries on the host's loopback become forwards") {
  auto a = list({"127.0.0.1:11434", "[::1]:5000", "10.0.0.1:80", "example.com"});
  auto f = a.loopback_forwards();
  REQUIRE(f.size() == 2);
  CHECK(f[0] == std::pair<std::string, std::uint16_t>{"127.0.0.1", 11434});
  CHECK(f[1] == std::pair<std::string, std::uint16_t>{"::1", 5000});
}

TEST_CASE("a name is reached without the proxy on the ports its entries list; `name:*` on web ports only") {
  auto a = list({"github.com", "github.com:22", "*.example.org:8080", "db.example.org:5432", "any.test:*",
                 "127.0.0.1:9000"});
  CHECK(a.transparent_ports("github.com") == std::vector<std::uint16_t>{22, 443});
  CHECK(a.transparent_ports("GitHub.COM.") == std::vector<std::uint16_t>{22, 443});
  CHECK(a.transparent_ports("db.example.org") == std::vector<std::uint16_t>{5432, 8080});
  CHECK(a.transparent_ports("www.example.org") == std::vector<std::uint16_t>{8080});
  CHECK(a.transparent_ports("any.test") == std::vector<std::uint16_t>{80, 443});
  CHECK(a.transparent_ports("example.org").empty());
  CHECK(a.transparent_ports("evil.example").empty());
  CHECK(a.transparent_ports("127.0.0.1").empty());  // addresses are never given out by the DNS stub
}

TEST_CASE("every_name (confine learn): any host name on any port, but addresses keep their rules") {
  auto entries = list({"127.0.0.1:5432", "api.example:8443"}).entries();
  auto a = Allowlist::every_name(entries);
  CHECK(a.check_name("anything.example", 8080).allowed);
  CHECK(a.check_name("anything.example", 8080).reason == "recorded by confine learn");
  CHECK(a.check_name("api.example", 8443).reason == "allowed by api.example:8443");
  CHECK_FALSE(a.check_name("bad host", 443).allowed);
  // An IP literal and an internal address still need an address entry.
  CHECK_FALSE(a.check_name("203.0.113.7", 443).allowed);
  CHECK(a.check_name("127.0.0.1", 5432).allowed);
  CHECK_FALSE(a.check_address("10.0.0.1", 443).allowed);
  CHECK_FALSE(a.check_address("127.0.0.1", 80).allowed);
  CHECK(a.check_address("127.0.0.1", 5432).allowed);
  CHECK(a.check_address("203.0.113.7", 443).allowed);
  // Every name gets an address from the DNS stub, and listeners on the web ports besides its entries'.
  CHECK(a.allows_name_on_some_port("never-listed.example"));
  CHECK_FALSE(a.allows_name_on_some_port("10.0.0.1"));
  CHECK(a.transparent_ports("never-listed.example") == std::vector<std::uint16_t>{80, 443});
  CHECK(a.transparent_ports("api.example") == std::vector<std::uint16_t>{80, 443, 8443});
  // The strict allowlist of the same entries refuses what learn records.
  CHECK_FALSE(Allowlist(entries).check_name("anything.example", 8080).allowed);
}

TEST_CASE("every_name (confine learn): the host's loopback by address, on any port; no other internal address") {
  auto a = Allowlist::every_name({});
  CHECK(a.check_name("127.0.0.1", 8765).allowed);
  CHECK(a.check_name("127.0.0.1", 8765).reason == "recorded by confine learn");
  CHECK(a.check_name("::1", 22).allowed);
  CHECK(a.check_literal("127.0.0.1", 8765).allowed);
  CHECK(a.check_literal("::1", 8765).allowed);
  CHECK_FALSE(a.check_name("10.0.0.1", 80).allowed);
  CHECK_FALSE(a.check_literal("10.0.0.1", 80).allowed);
  CHECK_FALSE(a.check_literal("169.254.169.254", 80).allowed);
  CHECK_FALSE(a.check_name("127.0.0.2", 80).allowed);
  // A name that resolves to the loopback still needs an address entry (no rebinding through a name).
  CHECK_FALSE(a.check_address("127.0.0.1", 80).allowed);
  // The strict allowlist needs the address entry.
  CHECK_FALSE(Allowlist().check_name("127.0.0.1", 8765).allowed);
  CHECK_FALSE(Allowlist().check_literal("127.0.0.1", 8765).allowed);
  CHECK(Allowlist().check_literal("203.0.113.7", 443).allowed);
}
