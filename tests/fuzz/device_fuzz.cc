// libFuzzer target for --device as typed and for CDI spec files (built with -Dfuzz=true and clang; see
// tests/fuzz/meson.build): neither may crash or hang, and what they accept keeps their invariants.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/devices.h"

namespace {

bool absolute(const std::string& p) { return !p.empty() && p.front() == '/'; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto r = confine::parse_device_request(text)) {
    // A path: absolute source and dest, readable (w alone is refused). A CDI name: VENDOR/CLASS and a name.
    if (r->cdi_kind.empty() && (!absolute(r->path) || !absolute(r->dest) || !r->access.read)) __builtin_trap();
    if (!r->cdi_kind.empty() && (r->cdi_kind.find('/') == std::string::npos || r->cdi_name.empty())) __builtin_trap();
  }
  if (auto spec = confine::parse_cdi_spec(text, "fuzz.yaml")) {
    if (spec->kind.find('/') == std::string::npos) __builtin_trap();
    auto all = confine::cdi_edits({*spec}, spec->kind, "all");
    if (all && !spec->devices.empty())
      for (const auto& n : all->nodes)
        if (!absolute(n.path) || !absolute(n.host_path)) __builtin_trap();
  }
  return 0;
}
