// libFuzzer target for the method/path rules: parsing an --allow rule, and checking a request's method and
// target (untrusted bytes from the sandbox) against rules (built with -Dfuzz=true and clang).
#include <cstddef>
#include <cstdint>
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)confine::parse_request_rule(text);
  static const confine::RequestRules rules = [] {
    auto models = confine::parse_request_rule("GET api.example/v1/models/*");
    auto responses = confine::parse_request_rule("POST api.example/v1/responses");
    return confine::RequestRules({*models, *responses});
  }();
  auto refusal = rules.refusal("GET", "api.example", 443, text);
  // What passes must lie below the allowed prefix, its path with no dot segment.
  auto path = text.substr(0, text.find_first_of("?#"));
  if (refusal.empty() && (!path.starts_with("/v1/models/") || has_dot_segment(path)))
    __builtin_trap();
  if (!rules.refusal("GET", "other.example", 443, text).empty()) __builtin_trap();
  return 0;
}
