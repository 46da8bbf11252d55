// libFuzzer target for the method/path rules: parsing an --allow rule, normalising a request path, and checking a
// request's method and target (untrusted bytes from the sandbox) against rules (built with -Dfuzz=true and clang).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/request_rules.h"

namespace {

// A segment that is exactly "." or "..": what a server would resolve to another path (a name like "..ms" is none).
bool has_dot_segment(std::string_view path) {
  for (std::size_t start = 0;;) {
    auto end = path.find('/', start);
    auto segment = path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (segment == "." || segment == "..") return true;
    if (end == std::string_view::npos) return false;
    start = end + 1;
  }
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The path as a server decodes it once: every %XX its byte, anything else as it is (this oracle's own decoder).
std::string decode_once(std::string_view path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && hex(path[i + 1]) >= 0 && hex(path[i + 2]) >= 0) {
      out += static_cast<char>(hex(path[i + 1]) * 16 + hex(path[i + 2]));
      i += 2;
    } else {
      out += path[i];
    }
  }
  return out;
}

// What a server reads from an accepted path: no dot segment and no ';' once decoded, and nothing a second decoding,
// a '\' or a lenient UTF-8 decoder could make into another path.
void check_reads_alike(std::string_view path) {
  auto plain = decode_once(path);
  if (has_dot_segment(plain) || plain.find_first_of(";%\\") != std::string::npos) __builtin_trap();
  for (unsigned char c : plain)
    if (c >= 0x80 || c < 0x20 || c == 0x7f) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // A rule that parses has its path in normal form already.
  if (auto rule = confine::parse_request_rule(text)) {
    auto again = confine::normalize_request_path(rule->path);
    if (!again || *again != rule->path) __builtin_trap();
  }
  // What the normaliser accepts reads alike to every server, means what the raw path meant, and is its own normal
  // form (normalising is idempotent).
  auto path = text.substr(0, text.find_first_of("?#"));
  if (auto normal = confine::normalize_request_path(path)) {
    check_reads_alike(path);
    check_reads_alike(*normal);
    if (decode_once(*normal) != decode_once(path)) __builtin_trap();
    auto twice = confine::normalize_request_path(*normal);
    if (!twice || *twice != *normal) __builtin_trap();
  }
  static const confine::RequestRules rules = [] {
    auto models = confine::parse_request_rule("GET api.example/v1/models/*");
    auto responses = confine::parse_request_rule("POST api.example/v1/responses");
    return confine::RequestRules({*models, *responses});
  }();
  // What passes must lie below the allowed prefix once normalised, and read alike.
  if (rules.refusal("GET", "api.example", 443, text).empty()) {
    auto normal = confine::normalize_request_path(path);
    if (!normal || !normal->starts_with("/v1/models/")) __builtin_trap();
    check_reads_alike(path);
  }
  if (!rules.refusal("GET", "other.example", 443, text).empty()) __builtin_trap();
  return 0;
}
