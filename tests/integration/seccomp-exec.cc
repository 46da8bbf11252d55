// confine-test-seccomp-exec PROFILE.json CMD [ARGS...]: installs a Docker/OCI seccomp profile on itself, as a
// container runtime does before it starts a container's process, then execs CMD. With moby's default profile
// (tests/fixtures/docker-default-seccomp.json) CMD runs as it would in a `docker run` container without
// CAP_SYS_ADMIN: unshare, setns, mount and namespace flags of clone are refused, clone3 answers ENOSYS.
// The profile is read with confine's own parser, whose fidelity to Docker's semantics the unit tests check.
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/oci_seccomp.h"
#include "core/seccomp_compile.h"

namespace {

int die(const std::string& what) {
  std::fprintf(stderr, "confine-test-seccomp-exec: %s\n", what.c_str());
  return 126;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return die("usage: confine-test-seccomp-exec PROFILE.json CMD [ARGS...]");
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return die(std::string("cannot read ") + argv[1]);
  struct utsname uts {};
  ::uname(&uts);
  auto policy = confine::parse_oci_seccomp(text.str(), argv[1], uts.release);
  if (!policy) return die(policy.error().message());
  auto program = confine::compile_seccomp(*policy, false);
  if (!program) return die(program.error().message());

  // An unprivileged process may install a filter only with no_new_privs (as Kubernetes'
  // allowPrivilegeEscalation: false and Docker's no-new-privileges set it).
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return die("PR_SET_NO_NEW_PRIVS failed");
  struct sock_fprog prog {};
  prog.len = static_cast<unsigned short>(program->code.size());
  prog.filter = program->code.data();
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return die("installing the filter failed");
  ::execvp(argv[2], argv + 2);
  return die(std::string("cannot run ") + argv[2]);
}
