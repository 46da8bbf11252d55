#include "sys/private_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

namespace confine::sys {
namespace {

// Deeper trees are left (and said): each level holds one fd, and the walk must not run out of them.
constexpr int kMaxDepth = 128;

std::vector<std::string> names_in(int dir) {
  std::vector<std::string> names;
  int copy = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) return names;
  DIR* d = ::fdopendir(copy);
  if (d == nullptr) {
    ::close(copy);
    return names;
  }
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);
  return names;
}

// The subdirectory `name` of `dir`, opened for reading without following a link (a name swapped for a link
// fails here, ELOOP/ENOTDIR, and is left alone). One the command made unreadable or unwritable (chmod 0) is
// made 0700 first, through its own fd: the caller owns it, or is root.
UniqueFd open_subdirectory(int dir, const std::string& name) {
  UniqueFd path(::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!path.valid()) return path;
  std::string self = "/proc/self/fd/" + std::to_string(path.get());
  [[maybe_unused]] int rc = ::chmod(self.c_str(), 0700);  // the magic link names this very inode
  return UniqueFd(::openat(path.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

// Removes everything in `dir`, depth first. unlinkat removes a link as a name (what it points to is untouched),
// and only a name that unlinkat calls a directory (EISDIR) is entered.
bool empty_directory(int dir, int depth) {
  if (depth > kMaxDepth) return false;
  bool all = true;
  for (const auto& name : names_in(dir)) {
    if (::unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT) continue;
    if (errno != EISDIR) {
      all = false;
      continue;
    }
    auto sub = open_subdirectory(dir, name);
    bool emptied = sub.valid() && empty_directory(sub.get(), depth + 1);
    all = emptied && (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) && all;
  }
  return all;
}

Status make_subdirectory(int dir, const char* name, uid_t uid, gid_t gid, const std::string& path) {
  if (::mkdirat(dir, name, 0700) != 0) return errno_error("creating `" + path + "/" + name + "`");
  if (::fchownat(dir, name, uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
    return errno_error("giving `" + path + "/" + name + "` to the sandbox's user");
  return ok_status();
}

}  // namespace

std::string choose_private_dir(const std::string& base) {
  static constexpr char kLetters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[6] = {};
  // getrandom never fails for so few bytes once the pool is ready; the name is checked again when it is made.
  [[maybe_unused]] auto n = ::getrandom(bytes, sizeof bytes, 0);
  std::string path = base + "/confine-";
  for (unsigned char b : bytes) path += kLetters[b % (sizeof kLetters - 1)];
  return path;
}

Result<PrivateDir> PrivateDir::make(const std::string& path, uid_t uid, gid_t gid) {
  auto slash = path.rfind('/');
  std::string base = slash == 0 ? "/" : path.substr(0, slash), name = path.substr(slash + 1);
  UniqueFd base_fd(::open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!base_fd.valid()) return errno_error("opening `" + base + "` for the sandbox's private home");
  // mkdir fails on any name that exists (a link included): what is made here is confine's, 0700.
  if (::mkdirat(base_fd.get(), name.c_str(), 0700) != 0) return errno_error("creating a private home `" + path + "`");
  UniqueFd dir(::openat(base_fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  PrivateDir made(path, name, std::move(base_fd), std::move(dir));
  if (!made.dir_.valid()) return errno_error("opening the new `" + path + "`");
  // mkdir made it 0700 and ours; anything else under that name was put there by someone else meanwhile.
  struct stat st {};
  if (::fstat(made.dir_.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 07777) != 0700)
    return plain_error("`" + path + "` changed owner or mode as it was made; run confine again");
  // The command's own user may only pass through (root switching to --user's uid): it cannot rename home or
  // tmp away, and confine removes the two by the names it made.
  if (uid != st.st_uid && ::fchmod(made.dir_.get(), 0711) != 0) return errno_error("chmod `" + path + "`");
  for (const char* sub : {"home", "tmp"})
    if (auto s = make_subdirectory(made.dir_.get(), sub, uid, gid, path); !s) return s.error();
  return made;
}

bool PrivateDir::remove() {
  if (!dir_.valid()) return true;
  bool emptied = empty_directory(dir_.get(), 0);
  // The name in base_ must still be the directory made: it is only removed once it is (rmdir removes an empty
  // directory only, but it must be this one).
  struct stat made {}, named {};
  bool same = ::fstat(dir_.get(), &made) == 0 &&
              ::fstatat(base_.get(), name_.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 && made.st_dev == named.st_dev &&
              made.st_ino == named.st_ino;
  dir_.reset();
  return emptied && same && ::unlinkat(base_.get(), name_.c_str(), AT_REMOVEDIR) == 0;
}

}  // namespace confine::sys
