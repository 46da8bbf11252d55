// The compiled filter's verdict (core/seccomp_verdict) for any syscall and arguments, without installing it;
// throws on a program the kernel would not load.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <vector>

namespace confine::test {

struct SeccompData {
  int nr = 0;
  std::uint32_t arch = 0;
  std::uint64_t ip = 0;
  std::uint64_t args[6] = {};
};

// Returns the filter's return value (SECCOMP_RET_* | data); throws on a malformed program.
std::uint32_t run_bpf(const std::vector<struct sock_filter>& prog, const SeccompData& data);

}  // namespace confine::test
