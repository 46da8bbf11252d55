// libFuzzer target for the workspace scan-cache parser.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/secret_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  confine::ScanCache cache;
  if (!confine::parse_scan_cache(std::string(reinterpret_cast<const char*>(data), size), "/w", cache)) return 0;
  // Every index entry must stay inside the text, every name must be a plain entry name and every subtree must nest.
  for (std::size_t i = 0; i < cache.dirs.size(); ++i) {
    const auto& d = cache.dirs[i];
    if (d.end <= i || d.end > cache.dirs.size()) __builtin_trap();
    if (d.record.offset + d.record.size > cache.text.size()) __builtin_trap();
    auto name = cache.view(d.name);
    if ((i == 0) != name.empty() || name.find('/') != std::string_view::npos) __builtin_trap();
  }
  for (auto s : cache.secrets) {
    auto name = cache.view(s);
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos) __builtin_trap();
  }
  return 0;
}
