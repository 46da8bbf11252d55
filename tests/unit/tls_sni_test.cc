#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "core/tls_sni.h"

using namespace confine;

namespace {

std::string u16(std::size_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v & 0xff)}; }
std::string u24(std::size_t v) { return std::string(1, static_cast<char>(v >> 16)) + u16(v & 0xffff); }

// A minimal, well-formed TLS 1.2-style ClientHello, split into records of at most `record_size` bytes.
std::string client_hello(const std::string& sni, std::size_t record_size = 16384) {
  std::string ext;
  if (!sni.empty()) {
    std::string entry = std::string(1, '\0') + u16(sni.size()) + sni;
    std::string list = u16(entry.size()) + entry;
    ext += u16(0x0000) + u16(list.size()) + list;
  }
  ext += u16(0x000b) + u16(2) + std::string("\x01\x00", 2);  // ec_point_formats, so SNI is not alone
  std::string body = std::string("\x03\x03", 2) + std::string(32, 'r') + std::string(1, '\0') + u16(2) +
                     std::string("\x13\x01", 2) + std::string("\x01\x00", 2) + u16(ext.size()) + ext;
  std::string hs = std::string(1, '\x01') + u24(body.size()) + body;
  std::string out;
  for (std::size_t off = 0; off < hs.size(); off += record_size) {
    auto part = hs.substr(off, record_size);
    out += std::string("\x16\x03\x01", 3) + u16(part.size()) + part;
  }
  return out;
}

}  // namespace

TEST_CASE("the SNI is read from a ClientHello, even one split across records") {
  auto r = parse_client_hello_sni(client_hello("api.openai.com"));
  REQUIRE(r.kind == SniResult::Kind::found);
  CHECK(r.name == "api.openai.com");
  auto split = parse_client_hello_sni(client_hello("registry.npmjs.org", 7));
  REQUIRE(split.kind == SniResult::Kind::found);
  CHECK(split.name == "registry.npmjs.org");
}

TEST_CASE("a ClientHello cut short asks for more; one without SNI says so; other bytes are not TLS") {
  auto hello = client_hello("example.com");
  for (std::size_t n : {0UL, 3UL, 5UL, 9UL, hello.size() - 1})
    CHECK(parse_client_hello_sni(hello.substr(0, n)).kind == SniResult::Kind::need_more);
  CHECK(parse_client_hello_sni(client_hello("")).kind == SniResult::Kind::no_sni);
  CHECK(parse_client_hello_sni("GET / HTTP/1.1\r\n\r\n").kind == SniResult::Kind::not_tls);
  CHECK(parse_client_hello_sni(std::string("\x16\x03\x01\x00\x00", 5)).kind == SniResult::Kind::not_tls);
}

TEST_CASE("mangled ClientHellos never crash or read out of bounds, and never invent a name") {
  const auto hello = client_hello("allowed.example");
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    auto m = hello;
    for (int e = 0, n = 1 + static_cast<int>(rng() % 6); e < n; ++e) {
      auto pos = rng() % m.size();
      switch (rng() % 3) {
        case 0: m[pos] = static_cast<char>(rng()); break;
        case 1: m.erase(pos, 1 + rng() % 5); break;
        default: m.insert(pos, 1 + rng() % 5, static_cast<char>(rng())); break;
      }
      if (m.empty()) m = "x";
    }
    auto r = parse_client_hello_sni(m);
    if (r.kind == SniResult::Kind::found) CHECK(m.find(r.name) != std::string::npos);
  }
}
