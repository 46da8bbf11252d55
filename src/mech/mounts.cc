#include "mech/mounts.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/syscalls.h"

namespace confine::mech {
namespace {

using namespace confine::sys;

// Closes an fd on scope exit while preserving errno (child-safe RAII).
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) {
      int saved = errno;
      ::close(fd);
      errno = saved;
    }
  }
};

constexpr std::uint64_t kInRoot = kResolveInRoot | kResolveNoMagicLinks;

// Opens `path` (absolute inside the sandbox) relative to the new root; symlinks resolve inside the new root
// only, so no link in the workspace can point a mount at the host.
int open_in_root(int root_fd, const char* path, int flags) {
  return openat2(root_fd, path, static_cast<std::uint64_t>(O_PATH | O_CLOEXEC | flags), 0, kInRoot);
}

// Opens `rel` below the inside directory `dir` (the workspace, a scanned bind), refusing every symlink and any
// escape: the target is exactly what the parent's scan saw, or the call fails.
int open_beneath(int root_fd, const char* dir, const char* rel) {
  int d = open_in_root(root_fd, dir, O_DIRECTORY);
  if (d < 0) return -1;
  FdGuard guard{d};
  return openat2(d, rel, O_PATH | O_CLOEXEC | O_NOFOLLOW, 0, kResolveBeneath | kResolveNoSymlinks | kResolveNoMagicLinks);
}

// Splits "/a/b/c" at its last slash: parent "/a/b" into `parent`, returns a pointer to "c".
const char* split_parent(const char* path, char (&parent)[PATH_MAX]) {
  std::size_t len = std::strlen(path);
  if (len >= PATH_MAX) {
    errno = ENAMETOOLONG;
    return nullptr;
  }
  std::memcpy(parent, path, len + 1);
  char* slash = std::strrchr(parent, '/');
  if (slash == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  if (slash == parent)
    parent[1] = '\0';
  else
    *slash = '\0';
  return path + (slash - parent) + 1;
}

// Makes sure `path` exists in the new root (creating missing directories, and the last component as a file
// if is_file), then returns an O_PATH fd to it.
int ensure_path(int root_fd, const char* path, bool is_file) {
  int fd = open_in_root(root_fd, path, 0);
  if (fd >= 0 || errno != ENOENT) return fd;
  char parent[PATH_MAX];
  const char* leaf = split_parent(path, parent);
  if (leaf == nullptr) return -1;
  int pfd = ensure_path(root_fd, parent, false);
  if (pfd < 0) return -1;
  FdGuard guard{pfd};
  if (is_file) {
    int f = ::openat(pfd, leaf, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (f < 0) return -1;
    ::close(f);
  } else if (::mkdirat(pfd, leaf, 0755) != 0 && errno != EEXIST) {
    return -1;
  }
  return open_in_root(root_fd, path, 0);
}

int attach_at(int tree, int root_fd, const MountOp& op) {
  FdGuard t{tree};
  int target = ensure_path(root_fd, op.dest.c_str(), op.dest_is_file);
  if (target < 0) return -1;
  FdGuard g{target};
  return attach_tree(tree, target);
}

int attach_new_fs(const char* fstype, const MountOp& op, std::uint64_t attrs, int root_fd) {
  int tree = new_fs_tree(fstype, op.fs_options.c_str(), attrs | (op.read_only ? kAttrReadOnly : 0));
  if (tree < 0) return -1;
  return attach_at(tree, root_fd, op);
}

// A writable tmpfs is also kept open for confine (the first kMaxWatchedTmpfs, in plan order), which looks at how
// full each is after the run.
int attach_tmpfs(const MountOp& op, MountState& state) {
  int tree = new_fs_tree("tmpfs", op.fs_options.c_str(), kAttrNoSuid | kAttrNoDev | (op.read_only ? kAttrReadOnly : 0));
  if (tree < 0) return -1;
  if (!op.read_only && state.tmpfs_count < kMaxWatchedTmpfs) {
    int kept = ::fcntl(tree, F_DUPFD_CLOEXEC, 3);
    if (kept < 0) {
      int saved = errno;
      ::close(tree);
      errno = saved;
      return -1;
    }
    state.tmpfs_roots[state.tmpfs_count++] = kept;
  }
  return attach_at(tree, state.root_fd, op);
}

// The directory that is to hold op.dest, made as needed and resolved safely (ensure_path), and the name in it.
int open_dest_parent(int root_fd, const MountOp& op, char (&parent)[PATH_MAX], const char*& leaf) {
  leaf = split_parent(op.dest.c_str(), parent);
  return leaf == nullptr ? -1 : ensure_path(root_fd, parent, false);
}

int make_symlink(int root_fd, const MountOp& op) {
  char parent[PATH_MAX];
  const char* leaf = nullptr;
  int pfd = open_dest_parent(root_fd, op, parent, leaf);
  if (pfd < 0) return -1;
  FdGuard g{pfd};
  // The parent is resolved safely above; symlinkat on an O_PATH directory fd is allowed.
  return ::symlinkat(op.source.c_str(), pfd, leaf);
}

// A bounded string builder for the child (no allocation): overflow is reported as ENAMETOOLONG.
struct Text {
  char buf[512];
  std::size_t len = 0;
  bool ok = true;
  Text& add(const char* s) {
    std::size_t n = std::strlen(s);
    if (len + n >= sizeof buf) ok = false;
    else std::memcpy(buf + len, s, n + 1), len += n;
    return *this;
  }
  Text& add(std::size_t v) {
    char digits[24];
    int i = sizeof digits - 1;
    digits[i] = '\0';
    do digits[--i] = static_cast<char>('0' + v % 10); while ((v /= 10) != 0 && i > 0);
    return add(digits + i);
  }
};

// The name of the n-th `file` mount's content in the new root.
Text content_file_name(std::size_t n) {
  Text name;
  name.add(kContentFileName).add("-").add(n);
  return name;
}

// Writes `content` to a new file in the new root and returns it cloned as a detached read-only mount. The file
// keeps its name until the root is sealed: the kernel attaches nothing to, or over, a file that has no name left.
int content_tree(MountState& state, std::string_view content) {
  auto name = content_file_name(state.content_files++);
  if (!name.ok) return errno = ENAMETOOLONG, -1;
  int fd = ::openat(state.root_fd, name.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0) return -1;
  FdGuard f{fd};
  for (std::size_t done = 0; done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    done += static_cast<std::size_t>(n);
  }
  int tree = clone_mount_tree(state.root_fd, name.buf, false);
  if (tree >= 0 && set_tree_attributes(tree, kAttrReadOnly | kAttrNoSuid | kAttrNoDev | kAttrNoExec, 0) != 0) {
    int saved = errno;
    ::close(tree);
    errno = saved;
    return -1;
  }
  return tree;
}

// Adds the mask's root (a file, or a directory's tmpfs) to the watch confine reads: an open of a masked name is a
// secret read as empty, which the denial log records.
int watch_mask(MountState& state, int tree) {
  if (state.mask_watch < 0) state.mask_watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (state.mask_watch < 0) return -1;
  Text path;
  path.add("/proc/self/fd/").add(static_cast<std::size_t>(tree));
  if (!path.ok) return errno = ENAMETOOLONG, -1;
  return ::inotify_add_watch(state.mask_watch, path.buf, IN_OPEN) < 0 ? -1 : 0;
}

// Hides what `target` is: a directory gets an empty read-only tmpfs, a regular file an empty read-only file, and
// so does a symlink (the kernel mounts a file over a link): reading or writing through it then reaches the empty
// file, and it cannot be removed or pointed elsewhere while the sandbox runs. A scan's mask (op.expect_ino) must
// find what the scan saw: a name now holding another inode or type was replaced since, and masking the newcomer
// would leave the secret readable wherever it went.
int mask_target(int target, MountState& state, const MountOp& op) {
  struct stat st {};
  if (::fstat(target, &st) != 0) return -1;
  if (op.expect_ino != 0 && (st.st_ino != op.expect_ino || (st.st_mode & S_IFMT) != op.expect_type)) {
    errno = ESTALE;
    return -1;
  }
  int tree = -1;
  if (S_ISDIR(st.st_mode)) {
    tree = new_fs_tree("tmpfs", "mode=0555,size=4k,nr_inodes=4", kAttrReadOnly | kAttrNoSuid | kAttrNoDev | kAttrNoExec);
  } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
    // An empty content file of its own: each masked file has its own inode, so an open says which mask it was.
    tree = content_tree(state, "");
  } else {
    errno = EINVAL;
    return -1;
  }
  if (tree < 0) return -1;
  FdGuard t{tree};
  // Watched before it is attached, so the n-th mask of the plan is the n-th watch (confine reads the opens).
  if (watch_mask(state, tree) != 0) return -1;
  return attach_tree(tree, target);
}

int open_op_target(const MountOp& op, int root_fd) {
  return op.beneath.empty() ? open_in_root(root_fd, op.dest.c_str(), 0)
                            : open_beneath(root_fd, op.beneath.c_str(), op.dest.c_str());
}

int mask(const MountOp& op, MountState& state) {
  int target = open_op_target(op, state.root_fd);
  if (target < 0) return (errno == ENOENT && op.skip_if_missing) ? 0 : -1;
  FdGuard g{target};
  return mask_target(target, state, op);
}

int rebind(const MountOp& op, int root_fd) {
  int target = open_op_target(op, root_fd);
  if (target < 0) return (errno == ENOENT && op.skip_if_missing) ? 0 : -1;
  FdGuard g{target};
  int tree = clone_mount_tree(target, "", true);
  if (tree < 0) return -1;
  FdGuard t{tree};
  if (set_tree_attributes(tree, bind_attributes(op), 0) != 0) return -1;
  return attach_tree(tree, target);
}


// Makes <layers>/<index>/{upper,work} for one overlay.
int make_layer_dirs(int root_fd, std::size_t index) {
  int layers = open_in_root(root_fd, kLayersDir, O_DIRECTORY);
  if (layers < 0) return -1;
  FdGuard g{layers};
  Text name;
  name.add(index);
  if (::mkdirat(layers, name.buf, 0700) != 0) return -1;
  int dir = ::openat(layers, name.buf, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return -1;
  FdGuard d{dir};
  return (::mkdirat(dir, "upper", 0755) == 0 && ::mkdirat(dir, "work", 0700) == 0) ? 0 : -1;
}

// The image directory (held open since before the new root hid its path) under a writable layer on the layers
// tmpfs. `userxattr`: overlayfs keeps its metadata in user.* xattrs, the only ones a user namespace may write.
int attach_overlay(const MountOp& op, std::size_t index, MountState& state) {
  int lower = state.tree_fds[index];
  state.tree_fds[index] = -1;
  if (lower < 0) return errno = EBADF, -1;
  FdGuard l{lower};
  if (make_layer_dirs(state.root_fd, index) != 0) return -1;
  Text layer;
  layer.add(kStagingDir).add(kLayersDir).add("/").add(index);
  Text options;
  options.add("lowerdir=/proc/self/fd/").add(static_cast<std::size_t>(lower));
  options.add(",upperdir=").add(layer.buf).add("/upper,workdir=").add(layer.buf).add("/work,userxattr");
  if (!layer.ok || !options.ok) return errno = ENAMETOOLONG, -1;
  int tree = new_fs_tree("overlay", options.buf, kAttrNoSuid | kAttrNoDev);
  if (tree < 0) return -1;
  return attach_at(tree, state.root_fd, op);
}

// A profile's private copy: a new file in the sandbox's own home holding the host file's bytes. O_EXCL and
// O_NOFOLLOW: it is a fresh file on the tmpfs, never something already there.
int write_copy(int root_fd, const MountOp& op) {
  char parent[PATH_MAX];
  const char* leaf = nullptr;
  int pfd = open_dest_parent(root_fd, op, parent, leaf);
  if (pfd < 0) return -1;
  FdGuard g{pfd};
  int fd = ::openat(pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  FdGuard f{fd};
  for (std::size_t done = 0; done < op.content.size();) {
    ssize_t n = ::write(fd, op.content.data() + done, op.content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// The writable end of a content file, for confine. It is opened through a clone of the root tmpfs's mount made for
// it alone: seal_root makes the root's own mount read-only, which the kernel refuses (EBUSY) while a file is open
// for writing through it; the clone stays writable, and nothing inside can reach it.
int open_for_confine(MountState& state, const Text& name) {
  if (!name.ok) return errno = ENAMETOOLONG, -1;
  int clone = clone_mount_tree(state.root_fd, "", false);
  if (clone < 0) return -1;
  FdGuard c{clone};
  state.confine_writes = ::openat(clone, name.buf, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  return state.confine_writes < 0 ? -1 : 0;
}

// A read-only file holding op.content over op.dest. Over a symlink the kernel mounts the file on the link itself,
// so the name reads the content wherever the link pointed. A missing dest is made first, where it can be.
int attach_content(MountState& state, const MountOp& op) {
  int target = open_in_root(state.root_fd, op.dest.c_str(), O_NOFOLLOW);
  if (target < 0 && errno == ENOENT) target = ensure_path(state.root_fd, op.dest.c_str(), true);
  if (target < 0) return (op.skip_if_missing && (errno == ENOENT || errno == EROFS)) ? 0 : -1;
  FdGuard g{target};
  int tree = content_tree(state, op.content);
  if (tree < 0) return -1;
  FdGuard t{tree};
  if (op.written_by_confine && open_for_confine(state, content_file_name(state.content_files - 1)) != 0) return -1;
  return attach_tree(tree, target);
}

}  // namespace

unsigned long long bind_attributes(const MountOp& op) {
  std::uint64_t a = kAttrNoSuid | (op.devices ? kAttrNoExec : kAttrNoDev);
  return op.read_only ? (a | kAttrReadOnly) : a;
}

int clone_bind_source(const MountOp& op, int* tree_fd) {
  if (op.kind == MountKind::overlay) {
    // The lower directory stays where it is (overlayfs needs it in this mount namespace); the fd reaches it
    // after the new root hides its path.
    *tree_fd = ::open(op.source.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    return *tree_fd < 0 ? -1 : 0;
  }
  int tree = clone_mount_tree(AT_FDCWD, op.source.c_str(), op.recursive);
  if (tree < 0) return (errno == ENOENT && op.skip_if_missing) ? 0 : -1;
  if (set_tree_attributes(tree, bind_attributes(op), 0) != 0) {
    int saved = errno;
    ::close(tree);
    errno = saved;
    return -1;
  }
  *tree_fd = tree;
  return 0;
}

int create_root(MountState& state) {
  int root = new_fs_tree("tmpfs", "mode=0755", kAttrNoSuid | kAttrNoDev);
  if (root < 0) return -1;
  int staging = ::open(kStagingDir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (staging < 0 || attach_tree(root, staging) != 0) {
    int saved = errno;
    ::close(root);
    if (staging >= 0) ::close(staging);
    errno = saved;
    return -1;
  }
  ::close(staging);
  state.root_fd = root;
  return 0;
}

int create_layers(MountState& state, const char* tmpfs_options) {
  int tree = new_fs_tree("tmpfs", tmpfs_options, kAttrNoSuid | kAttrNoDev);
  if (tree < 0) return -1;
  FdGuard t{tree};
  int target = ensure_path(state.root_fd, kLayersDir, false);
  if (target < 0) return -1;
  FdGuard g{target};
  if (attach_tree(tree, target) != 0) return -1;
  state.layers = true;
  return 0;
}

// Opens the sandbox's devpts's pty `index` and keeps it in state.held_pty, so that its name /dev/pts/INDEX exists
// to bind over. A new devpts gives out the lowest free index, so the ptys below it are opened on the way and
// closed again; the sandbox's own ptys then get every index but this one. An index it does not reach (the
// sandbox's devpts is new, so only a kernel's pty limit) leaves the name missing: the bind is then skipped.
int hold_devpts_index(int root_fd, int index, MountState& state) {
  int below[kMaxDevptsIndex];
  int opened = 0;
  int held = -1;
  while (opened <= index && opened < kMaxDevptsIndex) {
    int fd = openat2(root_fd, "/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC, 0, kInRoot);
    unsigned int got = 0;
    if (fd < 0 || ::ioctl(fd, TIOCGPTN, &got) != 0) {
      if (fd >= 0) ::close(fd);
      break;
    }
    if (got == static_cast<unsigned int>(index)) {
      held = fd;
      break;
    }
    below[opened++] = fd;
  }
  int saved = errno;
  for (int i = 0; i < opened; ++i) ::close(below[i]);
  errno = saved;
  state.held_pty = held;
  return held;
}

int attach_mount(const Plan& plan, std::size_t index, MountState& state) {
  const MountOp& op = plan.mounts[index];
  const int root = state.root_fd;
  switch (op.kind) {
    case MountKind::bind: {
      int tree = state.tree_fds[index];
      state.tree_fds[index] = -1;
      if (tree < 0) return op.skip_if_missing ? 0 : (errno = EBADF, -1);
      if (op.devpts_index >= 0 && hold_devpts_index(root, op.devpts_index, state) < 0) {
        ::close(tree);
        return 0;  // the terminal keeps its other name, /dev/console
      }
      return attach_at(tree, root, op);
    }
    case MountKind::tmpfs: return attach_tmpfs(op, state);
    case MountKind::proc: return attach_new_fs("proc", op, kAttrNoSuid | kAttrNoDev | kAttrNoExec, root);
    case MountKind::devpts: return attach_new_fs("devpts", op, kAttrNoSuid | kAttrNoExec, root);
    case MountKind::sysfs: {
      // Not a security layer (it only hides host details), so a kernel that refuses it is not an error.
      int rc = attach_new_fs("sysfs", op, kAttrNoSuid | kAttrNoDev | kAttrNoExec, root);
      return rc != 0 && op.skip_if_missing ? 0 : rc;
    }
    case MountKind::directory: {
      int fd = ensure_path(root, op.dest.c_str(), false);
      if (fd < 0) return -1;
      ::close(fd);
      return 0;
    }
    case MountKind::symlink: return make_symlink(root, op);
    case MountKind::mask: return mask(op, state);
    case MountKind::rebind: return rebind(op, root);
    case MountKind::overlay: return attach_overlay(op, index, state);
    case MountKind::copy: return write_copy(root, op);
    case MountKind::file: return attach_content(state, op);
  }
  errno = EINVAL;
  return -1;
}

int pivot_into_root(MountState& state) {
  // pivot_root(".", ".") stacks the old root under the new one; detaching "." then drops it entirely,
  // so no path inside leads back to the host's root.
  if (::fchdir(state.root_fd) != 0) return -1;
  if (pivot_root(".", ".") != 0) return -1;
  if (umount_detach(".") != 0) return -1;
  ::close(state.root_fd);
  state.root_fd = -1;
  return ::chdir("/");
}

int seal_root(const MountState& state) {
  int root = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return -1;
  FdGuard g{root};
  // Every mount is made: the `file` mounts and the masks keep their contents, and the names leave the sandbox's view.
  for (std::size_t i = 0; i < state.content_files; ++i)
    if (::unlinkat(root, content_file_name(i).buf, 0) != 0) return -1;
  // Each overlay holds its own reference to its layer: the layers tmpfs leaves the sandbox's view.
  if (state.layers && (umount_detach(kLayersDir) != 0 || ::unlinkat(root, kLayersDir + 1, AT_REMOVEDIR) != 0)) return -1;
  return set_tree_attributes(root, kAttrReadOnly, 0, false);
}

}  // namespace confine::mech
