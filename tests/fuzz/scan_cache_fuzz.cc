// libFuzzer target for the workspace scan-cache parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/secret_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  confine::ScanCache cache;
  confine::parse_scan_cache(std::string_view(reinterpret_cast<const char*>(data), size), "/w", cache);
  for (const auto& [rel, r] : cache.dirs)
    for (const auto* list : {&r.subdirs, &r.files, &r.dirs})
      for (const auto& name : *list)
        if (name.empty() || name.find('/') != std::string::npos) __builtin_trap();
  return 0;
}
