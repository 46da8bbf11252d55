#include "mech/container.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "sys/syscalls.h"

namespace confine::mech {
namespace {

bool exists(const char* path) { return ::access(path, F_OK) == 0; }

// The host's own user namespace maps every id to itself; a rootless or user-namespaced container's maps a range.
bool in_host_user_namespace() {
  std::ifstream in("/proc/self/uid_map");
  unsigned long inside = 1, outside = 1, count = 0;
  in >> inside >> outside >> count;
  return inside == 0 && outside == 0 && count == 4294967295UL;
}

constexpr int kProcRefused = 1;
constexpr int kHostnameRefused = 2;
constexpr int kNoNamespaces = 64;

bool write_text(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ::close(fd);
  return ok;
}

// pid 1 of the trial's pid namespace: a proc mount is judged by the mounting task's pid namespace, so it must be
// made from inside one the new user namespace owns.
[[noreturn]] void mount_proc_child() {
  _exit(sys::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0 ? 0 : 1);
}

[[noreturn]] void trial_child(uid_t uid, gid_t gid) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWPID) != 0) _exit(kNoNamespaces);
  if (!write_text("/proc/self/setgroups", "deny") || !write_text("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
      !write_text("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1"))
    _exit(kNoNamespaces);
  // Private first: the trial's proc mount must not reach the container's mount namespace.
  if (sys::make_mounts_private() != 0) _exit(kNoNamespaces);
  int refused = ::sethostname("confine", 7) == 0 ? 0 : kHostnameRefused;
  pid_t pid = ::fork();
  if (pid < 0) _exit(kNoNamespaces);
  if (pid == 0) mount_proc_child();
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) refused |= kProcRefused;
  _exit(refused);
}

// The engine from the marks each leaves (a file or a variable), and whether its container has a user namespace.
void detect_engine(ContainerFacts& c, const CallerEnvironment& caller) {
  const auto& marked = caller.container_mark;
  if (caller.in_kubernetes) c.engine = ContainerEngine::kubernetes;
  else if (exists("/run/.containerenv") || marked == "podman") c.engine = ContainerEngine::podman;
  else if (exists("/.dockerenv") || marked == "docker") c.engine = ContainerEngine::docker;
  else if (!marked.empty()) c.engine = ContainerEngine::other;
  c.rootless = c.engine != ContainerEngine::none && !in_host_user_namespace();
}

// A child that cannot make the namespaces at all leaves the facts as they were (the run's own clone says why).
void try_container_steps(ContainerFacts& facts) {
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  pid_t pid = ::fork();
  if (pid < 0) return;
  if (pid == 0) trial_child(uid, gid);
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return;
  int refused = WEXITSTATUS(status);
  if (refused == kNoNamespaces) return;
  facts.fresh_proc = (refused & kProcRefused) == 0;
  facts.hostname = (refused & kHostnameRefused) == 0;
}

bool root_can_idmap() {
  cap_t caps = ::cap_get_proc();
  cap_flag_value_t admin = CAP_CLEAR;
  if (caps != nullptr) ::cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &admin), ::cap_free(caps);
  return admin == CAP_SET && in_host_user_namespace();
}

}  // namespace

bool container_may_refuse(bool seccomp_filtered) {
  if (seccomp_filtered) return true;
  auto mount_id = [](const char* path) -> std::uint64_t {
    struct statx st {};
    if (::statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &st) != 0 || !(st.stx_mask & STATX_MNT_ID)) return 0;
    return st.stx_mnt_id;
  };
  auto proc = mount_id("/proc");
  // What engines mount over (a kernel without /proc/kcore has nothing there to mask: 0 is not a mask).
  for (const char* masked : {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sys"}) {
    auto id = mount_id(masked);
    if (proc != 0 && id != 0 && id != proc) return true;
  }
  return false;
}

ContainerFacts container_facts(bool try_steps, bool run_by_root, const CallerEnvironment& caller) {
  ContainerFacts c;
  if (try_steps) try_container_steps(c);
  if (run_by_root) c.idmap = root_can_idmap();
  if (!c.fresh_proc || !c.hostname || !c.idmap) detect_engine(c, caller);
  return c;
}

void hide_own_arguments() {
  // /proc/self/stat's fields 48 and 49 are where the kernel reads the command line from: arg_start, arg_end.
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto after_name = stat.rfind(')');  // the name in parentheses may hold spaces
  if (after_name == std::string::npos) return;
  std::istringstream fields(stat.substr(after_name + 2));
  std::string field;
  unsigned long start = 0, end = 0;
  for (int n = 3; n <= 49 && fields >> field; ++n) {
    if (n == 48) start = std::stoul(field);
    if (n == 49) end = std::stoul(field);
  }
  if (start == 0 || end <= start) return;
  auto* first = reinterpret_cast<const char*>(start);
  unsigned long keep = std::strlen(first) + 1;  // argv[0]: "confine" stays, so the process is still recognisable
  if (keep >= end - start) return;
  std::memset(reinterpret_cast<void*>(start + keep), 0, end - start - keep);
}

}  // namespace confine::mech
