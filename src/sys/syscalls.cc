#include "sys/syscalls.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>


namespace confine::sys {

int clone_mount_tree(int dirfd, const char* path, bool recursive) {
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW;
  if (recursive) flags |= AT_RECURSIVE;
  if (path[0] == '\0') flags |= AT_EMPTY_PATH;
  return static_cast<int>(::syscall(SYS_open_tree, dirfd, path, flags));
}

int set_tree_attributes(int tree_fd, std::uint64_t set, std::uint64_t clear, bool recursive, int userns_fd) {
  struct mount_attr attr {};
  attr.attr_set = set;
  attr.attr_clr = clear;
  attr.userns_fd = userns_fd >= 0 ? static_cast<std::uint64_t>(userns_fd) : 0;
  unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0U);
  return static_cast<int>(::syscall(SYS_mount_setattr, tree_fd, "", flags, &attr, sizeof attr));
}

int attach_tree(int tree_fd, int target_fd) {
  return static_cast<int>(
      ::syscall(SYS_move_mount, tree_fd, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
}

namespace {

// Applies one "key=value" or "flag" option to an fs context.
long configure(int fs, const char* option, std::size_t len) {
  char key[64];
  char value[192];
  std::size_t eq = 0;
  while (eq < len && option[eq] != '=') ++eq;
  if (eq >= sizeof key || len - eq > sizeof value) {
    errno = EINVAL;
    return -1;
  }
  for (std::size_t i = 0; i < eq; ++i) key[i] = option[i];
  key[eq] = '\0';
  if (eq == len) return ::syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, key, nullptr, 0);
  std::size_t vlen = len - eq - 1;
  for (std::size_t i = 0; i < vlen; ++i) value[i] = option[eq + 1 + i];
  value[vlen] = '\0';
  return ::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, key, value, 0);
}

}  // namespace

int new_fs_tree(const char* fstype, const char* options, std::uint64_t attrs) {
  int fs = static_cast<int>(::syscall(SYS_fsopen, fstype, FSOPEN_CLOEXEC));
  if (fs < 0) return -1;
  long rc = 0;
  for (const char* p = options; rc == 0 && p != nullptr && *p != '\0';) {
    const char* end = p;
    while (*end != '\0' && *end != ',') ++end;
    rc = configure(fs, p, static_cast<std::size_t>(end - p));
    p = *end == ',' ? end + 1 : end;
  }
  int mnt = -1;
  if (rc == 0 && ::syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0)
    mnt = static_cast<int>(::syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, static_cast<unsigned>(attrs)));
  int saved = errno;
  ::close(fs);
  errno = saved;
  return mnt;
}

int mount(const char* source, const char* target, const char* fstype, unsigned long flags, const void* data) {
  return static_cast<int>(::syscall(SYS_mount, source, target, fstype, flags, data));
}

int umount_detach(const char* target) { return static_cast<int>(::syscall(SYS_umount2, target, 2 /*MNT_DETACH*/)); }

int make_mounts_private() { return mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr); }

int pivot_root(const char* new_root, const char* put_old) {
  return static_cast<int>(::syscall(SYS_pivot_root, new_root, put_old));
}

int openat2(int dirfd, const char* path, std::uint64_t flags, std::uint64_t mode, std::uint64_t resolve) {
  struct open_how how {};
  how.flags = flags;
  how.mode = mode;
  how.resolve = resolve;
  return static_cast<int>(::syscall(SYS_openat2, dirfd, path, &how, sizeof how));
}

int close_fds_from(int first, const int* keep, int keep_count) {
  unsigned lo = static_cast<unsigned>(first);
  for (int i = 0; i < keep_count; ++i) {
    unsigned k = static_cast<unsigned>(keep[i]);
    if (k < lo) continue;
    if (k > lo && ::syscall(SYS_close_range, lo, k - 1, 0) < 0) return -1;
    lo = k + 1;
  }
  return static_cast<int>(::syscall(SYS_close_range, lo, UINT_MAX, 0));
}

int seccomp_action_available(std::uint32_t action) {
  return static_cast<int>(::syscall(SYS_seccomp, 2 /*SECCOMP_GET_ACTION_AVAIL*/, 0, &action));
}

int seccomp_set_filter(const void* sock_fprog, unsigned flags) {
  return static_cast<int>(::syscall(SYS_seccomp, 1 /*SECCOMP_SET_MODE_FILTER*/, flags, sock_fprog));
}

int landlock_create_ruleset(const void* attr, std::size_t size, std::uint32_t flags) {
  return static_cast<int>(::syscall(SYS_landlock_create_ruleset, attr, size, flags));
}

int landlock_add_rule(int ruleset_fd, int rule_type, const void* rule_attr) {
  return static_cast<int>(::syscall(SYS_landlock_add_rule, ruleset_fd, rule_type, rule_attr, 0));
}

int landlock_restrict_self(int ruleset_fd, std::uint32_t flags) {
  return static_cast<int>(::syscall(SYS_landlock_restrict_self, ruleset_fd, flags));
}

pid_t clone_process_into_cgroup(unsigned long flags, int cgroup_fd) {
  // struct clone_args of <linux/sched.h>, spelled out: that header clashes with glibc's <sched.h>.
  struct {
    std::uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup;
  } args{};
  constexpr std::uint64_t kCloneIntoCgroup = 0x200000000ULL;
  args.flags = flags | kCloneIntoCgroup;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<std::uint64_t>(cgroup_fd);
  return static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof args));
}

pid_t clone_process(unsigned long flags) {
  return static_cast<pid_t>(::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

int pidfd_open(pid_t pid, unsigned flags) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, flags)); }

int pidfd_getfd(int pidfd, int fd) { return static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, fd, 0)); }

}  // namespace confine::sys
