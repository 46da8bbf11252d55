// libFuzzer target for the Docker/OCI seccomp profile reader (built with -Dfuzz=true and clang; see
// tests/fuzz/meson.build): any bytes either fail with a message or give a policy that compiles or fails cleanly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/oci_seccomp.h"
#include "core/seccomp_compile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto policy = confine::parse_oci_seccomp(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz",
                                           "6.1.0-fuzz");
  if (!policy) {
    if (policy.error().what.empty()) __builtin_trap();
    return 0;
  }
  auto prog = confine::compile_seccomp(*policy, false);
  if (prog && prog->code.empty()) __builtin_trap();
  return 0;
}
