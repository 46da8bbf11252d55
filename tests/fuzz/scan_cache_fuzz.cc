// libFuzzer target for the workspace scan-cache parser and the header pruning reads.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/secret_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The header alone, as pruning reads it: a path, absolute, that lies inside the bytes given.
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto path = confine::scan_cache_scanned_path(bytes)) {
    if (path->empty() || path->front() != '/' || path->size() > size || bytes.find(*path) == std::string_view::npos)
      __builtin_trap();
  }
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
