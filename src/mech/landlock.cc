#include "mech/landlock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "sys/landlock_abi.h"
#include "sys/syscalls.h"

namespace confine::mech {
namespace {

namespace ll = sys::landlock;

// Rights that make sense on a file (the kernel refuses directory rights in a rule on a non-directory).
constexpr std::uint64_t kFileRights =
    ll::kFsExecute | ll::kFsWriteFile | ll::kFsReadFile | ll::kFsTruncate | ll::kFsIoctlDev | ll::kFsResolveUnix;

int add_path_rule(int ruleset, int fd, std::uint64_t access) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) access &= kFileRights;
  if (access == 0) return 0;
  ll::PathBeneathAttr attr{access, fd};
  return sys::landlock_add_rule(ruleset, ll::kRulePathBeneath, &attr);
}

// The terminal the command was started on is reachable again through /dev/stdin, /proc/self/fd/N or /dev/tty:
// grant device access to exactly that inode.
int grant_std_terminals(int ruleset, const LandlockPlan& plan) {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::isatty(fd) == 0) continue;
    // Only rights the ruleset handles may appear in a rule (the kernel refuses others with EINVAL).
    if (add_path_rule(ruleset, fd, class_rights(AccessClass::dev, plan.abi) & plan.handled_fs) != 0) return -1;
  }
  return 0;
}

}  // namespace

int probe_landlock_abi(const char** reason) {
  int abi = sys::landlock_create_ruleset(nullptr, 0, ll::kCreateRulesetVersion);
  if (abi >= 0) return abi;
  if (reason != nullptr)
    *reason = errno == EOPNOTSUPP ? "Landlock is built into the kernel but not enabled (add `landlock` to the lsm= boot parameter)"
                                  : "this kernel has no Landlock (Linux >= 5.13 with CONFIG_SECURITY_LANDLOCK)";
  return 0;
}

int apply_landlock(const LandlockPlan& plan) {
  if (plan.abi <= 0) return 0;
  ll::RulesetAttr attr{plan.handled_fs, plan.handled_net, plan.scoped};
  // Older kernels reject unknown trailing fields: pass only the part of the struct the ABI knows.
  std::size_t size = plan.abi >= 6 ? sizeof attr : plan.abi >= 4 ? 2 * sizeof(std::uint64_t) : sizeof(std::uint64_t);
  int ruleset = sys::landlock_create_ruleset(&attr, size, 0);
  if (ruleset < 0) return -1;
  int rc = 0;
  for (const auto& rule : plan.rules) {
    int fd = ::open(rule.path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT && rule.optional) continue;
      rc = -1;
      break;
    }
    rc = add_path_rule(ruleset, fd, rule.access);
    int saved = errno;
    ::close(fd);
    errno = saved;
    if (rc != 0) break;
  }
  if (rc == 0 && plan.grant_std_terminals) rc = grant_std_terminals(ruleset, plan);
  // The command is a process of one thread here (cloned, before its execve): restricting this thread restricts it
  // all, so ABI 8's TSYNC has nothing to add.
  if (rc == 0) rc = sys::landlock_restrict_self(ruleset, plan.restrict_flags);
  int saved = errno;
  ::close(ruleset);
  errno = saved;
  return rc;
}

}  // namespace confine::mech
