#include "mech/seccomp.h"

#include <linux/seccomp.h>

#include "sys/syscalls.h"

namespace confine::mech {

namespace {

int install_filter(const std::vector<struct sock_filter>& code, bool log_denials) {
  struct sock_fprog prog {};
  prog.len = static_cast<unsigned short>(code.size());
  prog.filter = const_cast<struct sock_filter*>(code.data());
  return sys::seccomp_set_filter(&prog, log_denials ? SECCOMP_FILTER_FLAG_LOG : 0U);
}

}  // namespace

int install_seccomp(const SeccompProgram& program) {
  // The floor first: it allows seccomp(2) itself, so the policy can still be installed after it.
  if (!program.floor.empty() && install_filter(program.floor, program.log_denials) != 0) return -1;
  return install_filter(program.code, program.log_denials);
}

}  // namespace confine::mech
