// Thin wrappers over the raw syscalls confine needs that older glibc lacks (new mount API, pivot_root,
// openat2, close_range). Every raw syscall(__NR_...) in confine lives in syscalls.cc. All are
// async-signal-safe: the child calls them between clone and execve. Each returns -1 with errno set on error.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace confine::sys {

// Mount attribute bits (linux/mount.h), re-exported so callers need not include kernel headers.
inline constexpr std::uint64_t kAttrReadOnly = 0x00000001;
inline constexpr std::uint64_t kAttrNoSuid = 0x00000002;
inline constexpr std::uint64_t kAttrNoDev = 0x00000004;
inline constexpr std::uint64_t kAttrNoExec = 0x00000008;
inline constexpr std::uint64_t kAttrIdmap = 0x00100000;

// A detached copy of the mount tree at `path` (recursive): open_tree(OPEN_TREE_CLONE|AT_RECURSIVE).
int clone_mount_tree(int dirfd, const char* path, bool recursive);
// Sets (and clears) attributes on a mount (and, if recursive, every mount below it); userns_fd goes with kAttrIdmap.
int set_tree_attributes(int tree_fd, std::uint64_t set, std::uint64_t clear, bool recursive = true, int userns_fd = -1);
// Attaches a detached tree on top of the object `target_fd` refers to (an O_PATH fd), so the mount lands
// exactly on what was opened, whatever a racing rename or symlink does to the path afterwards.
int attach_tree(int tree_fd, int target_fd);
// A new, detached filesystem mount (fsopen/fsconfig/fsmount); options are comma-separated "key=value" or "flag".
int new_fs_tree(const char* fstype, const char* options, std::uint64_t attrs);

int mount(const char* source, const char* target, const char* fstype, unsigned long flags, const void* data);
int umount_detach(const char* target);
// Marks every mount in this namespace private (MS_REC|MS_PRIVATE).
int make_mounts_private();
int pivot_root(const char* new_root, const char* put_old);

// openat2 with RESOLVE_* flags (linux/openat2.h).
inline constexpr std::uint64_t kResolveNoMagicLinks = 0x02;
inline constexpr std::uint64_t kResolveNoSymlinks = 0x04;
inline constexpr std::uint64_t kResolveBeneath = 0x08;
inline constexpr std::uint64_t kResolveInRoot = 0x10;
int openat2(int dirfd, const char* path, std::uint64_t flags, std::uint64_t mode, std::uint64_t resolve);

// Closes every fd >= first except those listed (sorted ascending).
int close_fds_from(int first, const int* keep, int keep_count);

pid_t clone_process(unsigned long flags);
// The same with clone3, the child born in the cgroup v2 directory `cgroup_fd` (Linux 5.7).
pid_t clone_process_into_cgroup(unsigned long flags, int cgroup_fd);

// seccomp(SECCOMP_GET_ACTION_AVAIL): 0 when the kernel supports `action`.
int seccomp_action_available(std::uint32_t action);
// seccomp(SECCOMP_SET_MODE_FILTER, flags, prog).
int seccomp_set_filter(const void* sock_fprog, unsigned flags);

// Landlock (linux/landlock.h); the structs are declared in sys/landlock_abi.h.
int landlock_create_ruleset(const void* attr, std::size_t size, std::uint32_t flags);
int landlock_add_rule(int ruleset_fd, int rule_type, const void* rule_attr);
int landlock_restrict_self(int ruleset_fd, std::uint32_t flags);

// A pidfd for `pid` (pidfd_open, Linux 5.3; flags: PIDFD_THREAD for one thread, 6.9), and a duplicate of its
// descriptor `fd` (pidfd_getfd, 5.6; needs ptrace access to it).
int pidfd_open(pid_t pid, unsigned flags);
int pidfd_getfd(int pidfd, int fd);

}  // namespace confine::sys
