#include "mech/seccomp.h"

#include <linux/seccomp.h>

#include "sys/syscalls.h"

namespace confine::mech {

int install_seccomp(const SeccompProgram& program) {
  struct sock_fprog prog {};
  prog.len = static_cast<unsigned short>(program.code.size());
  prog.filter = const_cast<struct sock_filter*>(program.code.data());
  return sys::seccomp_set_filter(&prog, program.log_denials ? SECCOMP_FILTER_FLAG_LOG : 0U);
}

}  // namespace confine::mech
