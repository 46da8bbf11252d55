// libFuzzer target for the docker --env-file parser (built with -Dfuzz=true and clang; see tests/fuzz/meson.build).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/env_scrub.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto r = confine::parse_env_file(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.env");
  if (!r) return 0;
  // Every accepted entry has a non-empty name without blanks; a set entry carries its `=`.
  for (const auto& e : r->set)
    if (e.empty() || e.front() == '=' || e.find('=') == std::string::npos) __builtin_trap();
  for (const auto& name : r->pass)
    if (name.empty() || name.find_first_of(" \t=") != std::string::npos) __builtin_trap();
  return 0;
}
