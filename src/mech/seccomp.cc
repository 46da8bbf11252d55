#include "mech/seccomp.h"

#include <linux/seccomp.h>

#include <cerrno>

#include "sys/syscalls.h"

namespace confine::mech {

namespace {

int install_filter(const std::vector<struct sock_filter>& code, unsigned flags) {
  struct sock_fprog prog {};
  prog.len = static_cast<unsigned short>(code.size());
  prog.filter = const_cast<struct sock_filter*>(code.data());
  return sys::seccomp_set_filter(&prog, flags);
}

}  // namespace

int install_seccomp(const SeccompProgram& program, int* listener) {
  *listener = -1;
  const unsigned log = program.log_denials ? SECCOMP_FILTER_FLAG_LOG : 0U;
  // The floor first: it allows seccomp(2) itself, so the policy can still be installed after it.
  if (!program.floor.empty() && install_filter(program.floor, log) != 0) return -1;
  if (program.notifying.empty()) return install_filter(program.code, log);
  int fd = install_filter(program.notifying, log | SECCOMP_FILTER_FLAG_NEW_LISTENER);
  if (fd >= 0) {
    *listener = fd;
    return 0;
  }
  // One listener per chain of filters: under another sandbox's listener, the plain program refuses by itself.
  // Not when the network waits on confine's listener: without it no connection could be made at all.
  return errno == EBUSY && !program.gates_network ? install_filter(program.code, log) : -1;
}

}  // namespace confine::mech
