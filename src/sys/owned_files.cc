#include "sys/owned_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>

#include "sys/syscalls.h"

namespace confine::sys {
namespace {

constexpr std::uint64_t kNoLinks = kResolveNoSymlinks | kResolveNoMagicLinks;

// The first component of `path` that is a symbolic link, to name it in the refusal; empty if there is none.
std::string first_symlink(const std::string& path) {
  for (auto end = path.find('/', 1);; end = path.find('/', end + 1)) {
    auto prefix = path.substr(0, end);
    struct stat st {};
    if (::lstat(prefix.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return prefix;
    if (end == std::string::npos) return {};
  }
}

Error refusal(const std::string& what, const std::string& path, const std::string& reason) {
  return plain_error(fmt::format("{} `{}`: {}", what, path, reason));
}

// Why `path` could not be opened, in the user's terms: a link on the way, or not a regular file (a directory),
// or errno. `reached`: the part of `path` whose opening failed.
Error open_failure(const std::string& what, const std::string& path, mode_t kind, const std::string& reached) {
  int err = errno;
  if (err == ELOOP) {
    auto link = first_symlink(path);
    if (link == path) return refusal(what, path, "is a symbolic link; confine never writes through one (remove it)");
    if (!link.empty())
      return refusal(what, path, fmt::format("`{}` is a symbolic link; confine never writes through one (name the "
                                             "path without links)", link));
  }
  struct stat st {};
  if (::lstat(reached.c_str(), &st) == 0 && (st.st_mode & S_IFMT) != kind) {
    auto reason = kind == S_IFREG ? "is not a regular file" : "is not a directory";
    return refusal(what, path, reached == path ? reason : fmt::format("`{}` {}", reached, reason));
  }
  errno = err;
  return errno_error(fmt::format("{} `{}`", what, path));
}

// What confine writes to is its caller's own, and a file has no other name: a hard link planted beside a host
// file (ws/report.json = /etc/shadow) passes every path check, but not this one.
Status check_owned(const std::string& what, const std::string& path, int fd, mode_t kind) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_error(fmt::format("{} `{}`", what, path));
  if ((st.st_mode & S_IFMT) != kind)
    return refusal(what, path, kind == S_IFREG ? "is not a regular file" : "is not a directory");
  if (st.st_uid != ::geteuid())
    return refusal(what, path, fmt::format("is owned by uid {}, not by you (uid {}); confine writes only to its own "
                                           "files (remove it, or name another)", st.st_uid, ::geteuid()));
  if (kind == S_IFREG && st.st_nlink != 1)
    return refusal(what, path, fmt::format("has {} names (hard links), so it may be another file's; confine writes "
                                           "only to a file with one name (remove it)", st.st_nlink));
  return ok_status();
}

Result<UniqueFd> walk_directories(const std::string& what, const std::string& path, bool create) {
  if (path.empty() || path.front() != '/') return plain_error(fmt::format("{} `{}`: not an absolute path", what, path));
  UniqueFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  for (std::size_t start = 1; start < path.size();) {
    auto end = std::min(path.find('/', start), path.size());
    auto name = path.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    if (name == "." || name == "..") return plain_error(fmt::format("{} `{}`: not a normalised path", what, path));
    auto open_one = [&] {
      return openat2(dir.get(), name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0, kNoLinks | kResolveBeneath);
    };
    int fd = open_one();
    // A missing directory is made here, then opened like one that was there: whoever made it, it must pass.
    if (fd < 0 && errno == ENOENT && create && (::mkdirat(dir.get(), name.c_str(), 0700) == 0 || errno == EEXIST))
      fd = open_one();
    if (fd < 0) return open_failure(what, path, S_IFDIR, path.substr(0, end));
    dir.reset(fd);
  }
  if (!dir.valid()) return errno_error(fmt::format("{} `{}`", what, path));
  return dir;
}

}  // namespace

Result<UniqueFd> open_owned_file(const std::string& what, const std::string& path, FileWrite how, mode_t create_mode) {
  if (path.empty() || path.front() != '/') return plain_error(fmt::format("{} `{}`: not an absolute path", what, path));
  // O_NONBLOCK: a FIFO planted under the name must not block the open forever (it fails the checks below).
  constexpr int kFlags = O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  UniqueFd fd(openat2(AT_FDCWD, path.c_str(), kFlags, create_mode, kNoLinks));
  if (!fd.valid()) return open_failure(what, path, S_IFREG, path);
  if (auto s = check_owned(what, path, fd.get(), S_IFREG); !s) return s.error();
  // Only now, known to be the caller's own single-named file, may it be emptied.
  if (::fcntl(fd.get(), F_SETFL, O_APPEND) != 0 || (how == FileWrite::truncate && ::ftruncate(fd.get(), 0) != 0))
    return errno_error(fmt::format("{} `{}`", what, path));
  return fd;
}

UniqueFd open_owned_file_for_reading(int dir, const std::string& name) {
  UniqueFd fd(openat2(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, kNoLinks | kResolveBeneath));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return {};
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    errno = EPERM;
    return {};
  }
  return fd;
}

namespace {

Result<UniqueFd> owned_directory(const std::string& what, const std::string& path, bool create) {
  auto dir = walk_directories(what, path, create);
  if (!dir) return dir;
  if (auto s = check_owned(what, path, dir->get(), S_IFDIR); !s) return s.error();
  return dir;
}

}  // namespace

Result<UniqueFd> make_owned_directory(const std::string& what, const std::string& path) {
  return owned_directory(what, path, true);
}

Result<UniqueFd> open_owned_directory(const std::string& what, const std::string& path) {
  return owned_directory(what, path, false);
}

Result<UniqueFd> open_real_directory(const std::string& what, const std::string& path) {
  return walk_directories(what, path, false);
}

}  // namespace confine::sys
