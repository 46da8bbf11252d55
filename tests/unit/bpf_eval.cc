#include "bpf_eval.h"

#include <cstring>
#include <stdexcept>

#include "core/seccomp_verdict.h"

namespace confine::test {

std::uint32_t run_bpf(const std::vector<struct sock_filter>& prog, const SeccompData& d) {
  SeccompCall call;
  call.nr = d.nr;
  call.arch = d.arch;
  call.ip = d.ip;
  std::memcpy(call.args, d.args, sizeof call.args);
  auto verdict = seccomp_verdict(prog, call);
  if (!verdict) throw std::runtime_error("a program the kernel would not load");
  return *verdict;
}

}  // namespace confine::test
