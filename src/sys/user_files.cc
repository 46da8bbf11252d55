#include "sys/user_files.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>
#include <vector>

#include "sys/unique_fd.h"

namespace confine::sys {
namespace {

constexpr int kMaxLinks = 40;  // the kernel's own bound on links in one path resolution

// What the reader reports before the bytes: 0, an errno, or one of these.
enum ReadStatus : std::int32_t {
  kSymlink = -1,
  kNotRegular = -2,  // `detail`: the file's type bits
  kTooLarge = -3,
  kNoIdentity = -4,  // `detail`: the errno of taking the owner's ids
};
struct Header {
  std::int32_t status = 0;
  std::uint32_t detail = 0;
};

// ---- who can change what a path names ----

std::string joined(const std::string& dir, const std::string& name) {
  if (name == "..") return dir == "/" ? dir : dir.substr(0, std::max<std::size_t>(dir.rfind('/'), 1));
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// Pushes the components of `path` so that the first is looked up next (the stack's top is its end).
void push_components(std::vector<std::string>& pending, const std::string& path) {
  std::vector<std::string> parts;
  for (std::size_t start = 0; start <= path.size();) {
    auto end = std::min(path.find('/', start), path.size());
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  pending.insert(pending.end(), parts.rbegin(), parts.rend());
}

std::string link_target(int link_fd) {
  std::array<char, 4096> buf{};
  auto n = ::readlinkat(link_fd, "", buf.data(), buf.size());  // "" with an O_PATH fd: the link itself
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

struct Walk {
  PathControl out;

  void owner(uid_t uid, const std::string& name) {
    if (uid == 0 || !out.refusal.empty()) return;
    if (out.reader == 0) {
      out.reader = uid;
      out.reader_because = name;
    } else if (out.reader != uid) {
      out.refusal = fmt::format("`{}` belongs to uid {} and `{}` to uid {}, so either could change what it names",
                                out.reader_because, out.reader, name, uid);
    }
  }

  // Whoever may add, remove or rename an entry of a directory controls what a name in it leads to. With the
  // sticky bit (/tmp) only an entry's own owner may, and every name found is noted with its owner anyway.
  void directory(const struct stat& st, const std::string& name) {
    owner(st.st_uid, name);
    if ((st.st_mode & S_ISVTX) != 0 || !out.refusal.empty()) return;
    if ((st.st_mode & S_IWOTH) != 0)
      out.refusal = fmt::format("`{}` can be changed by anyone (mode {:04o})", name, st.st_mode & 07777);
    else if ((st.st_mode & S_IWGRP) != 0 && st.st_uid == 0)
      out.refusal = fmt::format("`{}` can be changed by every member of group {} (mode {:04o})", name, st.st_gid,
                                st.st_mode & 07777);
  }
};

}  // namespace

// A walk of our own, one name at a time with O_PATH|O_NOFOLLOW and the links spliced in, because lstat on a
// path would follow the links before its last name unseen: /srv/link/config.json, with link -> ~alice/d, must
// count alice, who can turn d into a link to /root.
PathControl who_controls(const std::string& path) {
  Walk w;
  std::vector<std::string> pending;
  push_components(pending, path);
  UniqueFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::string at = "/";
  struct stat st {};
  if (!dir.valid() || ::fstat(dir.get(), &st) != 0) return w.out;
  w.directory(st, at);
  int links = 0;
  // On past a refusal: a file that turns out not to exist is only missing (nothing is read either way).
  while (!pending.empty()) {
    auto name = std::move(pending.back());
    pending.pop_back();
    if (name == ".") continue;
    auto here = joined(at, name);
    UniqueFd next(::openat(dir.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid() || ::fstat(next.get(), &st) != 0) {
      // Nothing further can be judged. A missing name is reported as such (what another user creates there
      // later is not read); any other failure is met again, the same way, by the reader.
      w.out.missing = errno == ENOENT;
      return w.out;
    }
    w.owner(st.st_uid, here);
    bool last = pending.empty();
    if (S_ISLNK(st.st_mode) && !last) {
      if (++links > kMaxLinks) return w.out;  // the reader meets ELOOP
      auto target = link_target(next.get());
      push_components(pending, target);
      if (target.starts_with('/')) {
        dir.reset(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        at = "/";
      }
      continue;
    }
    if (last || !S_ISDIR(st.st_mode)) return w.out;  // the file itself (a link there is refused by the reader)
    w.directory(st, here);
    dir = std::move(next);
    at = std::move(here);
  }
  return w.out;
}

namespace {

// ---- reading ----

// The file itself: O_NOFOLLOW so a link there fails, O_NONBLOCK so a FIFO cannot block the open, O_NOCTTY so
// a terminal does not become ours; then it must be a regular file no larger than the bound.
Header open_regular(const char* path, std::size_t max_bytes, UniqueFd& file) {
  file.reset(::open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat st {};
  if (!file.valid()) {
    int err = errno;
    if (err == ELOOP && ::lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) return {kSymlink, 0};
    return {err, 0};
  }
  if (::fstat(file.get(), &st) != 0) return {errno, 0};
  if (!S_ISREG(st.st_mode)) return {kNotRegular, st.st_mode & S_IFMT};
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return {kTooLarge, 0};
  return {};
}

// Up to max_bytes + 1 bytes (one more says "too large": the file may have grown since fstat). Read straight into
// `out`, growing it as the file turns out longer: a 64 KiB buffer on the stack faulted in 16 pages on every call,
// for files (/proc/PID/stat, a profile) of a few hundred bytes.
Header read_bounded(int fd, std::size_t max_bytes, std::string& out) {
  std::size_t chunk = 4096;
  for (;;) {
    std::size_t used = out.size();
    out.resize(used + chunk);
    ssize_t n = ::read(fd, out.data() + used, chunk);
    out.resize(used + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {errno, 0};
    if (n == 0) return {};
    if (out.size() > max_bytes) return {kTooLarge, 0};
    chunk = std::min<std::size_t>(chunk * 2, std::size_t{1} << 20);
  }
}

bool write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    auto n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::string type_name(std::uint32_t type) {
  switch (type) {
    case S_IFIFO: return "a FIFO";
    case S_IFDIR: return "a directory";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
  }
}

std::string size_name(std::size_t bytes) {
  if (bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes % 1024 == 0) return fmt::format("{} KiB", bytes / 1024);
  return fmt::format("{} bytes", bytes);
}

// The one line for a refusal. `as`: how it was read, when not as the caller (" (read with ...)").
Error failure(const std::string& what, const std::string& path, std::size_t max_bytes, Header h, const std::string& as) {
  auto named = fmt::format("{} `{}`", what, path);
  switch (h.status) {
    case kSymlink:
      return plain_error(named + " is a symbolic link; confine reads this file only at its own name, never "
                                 "through a link");
    case kNotRegular: return plain_error(fmt::format("{} is {}, not a regular file", named, type_name(h.detail)));
    case kTooLarge: return plain_error(fmt::format("{} is larger than {}, the limit for it", named, size_name(max_bytes)));
    case kNoIdentity:
      return plain_error(fmt::format("{}: cannot take the permissions to read it{}: {}", named, as,
                                     std::strerror(static_cast<int>(h.detail))));
    default:
      if (as.empty() || h.status == ENOENT) return Error{named, h.status};
      return plain_error(fmt::format("{}: {}{}", named, std::strerror(h.status), as));
  }
}

Result<std::string> read_here(const std::string& what, const std::string& path, std::size_t max_bytes) {
  UniqueFd file;
  std::string text;
  auto h = open_regular(path.c_str(), max_bytes, file);
  if (h.status == 0) h = read_bounded(file.get(), max_bytes, text);
  if (h.status != 0) return failure(what, path, max_bytes, h, "");
  return text;
}

// The owner's ids as the system knows them: their primary group and supplementary groups. A uid with no
// account gets the group "nogroup" and no others: fewer rights than the user may have, never more.
struct Identity {
  uid_t uid = 0;
  gid_t gid = 65534;
  std::vector<gid_t> groups;
};

Identity identity_of(uid_t uid) {
  Identity id{uid, 65534, {}};
  std::vector<char> buf(16384);
  struct passwd pw {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) return id;
  id.gid = pw.pw_gid;
  int n = 64;
  id.groups.resize(static_cast<std::size_t>(n));
  if (::getgrouplist(pw.pw_name, pw.pw_gid, id.groups.data(), &n) < 0) {
    id.groups.resize(static_cast<std::size_t>(n));
    if (::getgrouplist(pw.pw_name, pw.pw_gid, id.groups.data(), &n) < 0) n = 0;
  }
  id.groups.resize(static_cast<std::size_t>(n));
  return id;
}

// The reader's side, in the forked child: only async-signal-safe calls (confine may have threads), no
// allocation. Groups first, then the gid, then the uid: each later step needs root, which the last one gives up
// for good (saved ids too). The credential change also makes the process non-dumpable, so the owner cannot
// ptrace this copy of confine's memory; they can only kill it, which fails the read.
[[noreturn]] void serve(const char* path, std::size_t max_bytes, const Identity& id, int out) {
  Header h;
  if (::setgroups(id.groups.size(), id.groups.data()) != 0 || ::setresgid(id.gid, id.gid, id.gid) != 0 ||
      ::setresuid(id.uid, id.uid, id.uid) != 0) {
    h = {kNoIdentity, static_cast<std::uint32_t>(errno)};
    write_all(out, &h, sizeof h);
    ::_exit(1);
  }
  UniqueFd file;
  h = open_regular(path, max_bytes, file);
  if (!write_all(out, &h, sizeof h) || h.status != 0) ::_exit(1);
  char buf[65536];
  std::size_t sent = 0;
  for (ssize_t n; sent <= max_bytes && (n = ::read(file.get(), buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || !write_all(out, buf, static_cast<std::size_t>(n))) ::_exit(1);
    sent += static_cast<std::size_t>(n);
  }
  ::_exit(0);
}

// Run by root for a path another user can change: a short-lived child takes that user's ids and sends the
// bytes back through a pipe. A child rather than setfsuid in this process: the supplementary groups (root's
// would otherwise stay and grant group root's reads) can only be changed for the whole process, and nothing
// has to be restored afterwards, whatever fails.
Result<std::string> read_as(const std::string& what, const std::string& path, std::size_t max_bytes,
                            const PathControl& control) {
  auto as = fmt::format(" (read with the permissions of uid {}, who can change `{}`)", control.reader,
                        control.reader_because);
  auto id = identity_of(control.reader);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno_error(fmt::format("{} `{}`: a pipe", what, path));
  UniqueFd in(fds[0]), out(fds[1]);
  pid_t pid = ::fork();
  if (pid < 0) return errno_error(fmt::format("{} `{}`: fork", what, path));
  if (pid == 0) serve(path.c_str(), max_bytes, id, out.get());
  out.reset();
  std::string raw;  // the header, then the file
  auto got = read_bounded(in.get(), sizeof(Header) + max_bytes, raw);
  // Closed before the wait: a child still writing past the bound gets EPIPE instead of blocking forever.
  in.reset();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Header h;
  if (raw.size() >= sizeof h) std::memcpy(&h, raw.data(), sizeof h);
  if (raw.size() >= sizeof h && h.status == 0) h = got;
  if (raw.size() >= sizeof h && h.status != 0) return failure(what, path, max_bytes, h, as);
  // Killed half-way (the owner may signal it): what came may be cut short.
  if (raw.size() < sizeof h || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return plain_error(fmt::format("{} `{}`: the reader{} stopped early", what, path, as));
  return raw.substr(sizeof h);
}

}  // namespace

Result<std::string> read_user_file(const std::string& what, const std::string& given, std::size_t max_bytes) {
  if (given.empty()) return plain_error(fmt::format("{}: empty path", what));
  std::string path;
  if (given.front() != '/') {
    std::array<char, 4096> cwd{};
    if (::getcwd(cwd.data(), cwd.size()) == nullptr) return errno_error(fmt::format("{} `{}`: the current directory", what, given));
    path = cwd.data();
  }
  // Without its `.` and empty names, for the messages; `..` stays: after a link it is not the lexical parent.
  std::vector<std::string> names;
  push_components(names, given);
  for (auto it = names.rbegin(); it != names.rend(); ++it)
    if (*it != ".") path += (path.ends_with('/') ? "" : "/") + *it;
  if (path.empty()) path = "/";
  // Not root: the kernel already checks every step with the caller's own rights.
  if (::geteuid() != 0) return read_here(what, path, max_bytes);
  auto control = who_controls(path);
  if (control.missing) return failure(what, path, max_bytes, {ENOENT, 0}, "");
  if (!control.refusal.empty())
    return plain_error(fmt::format("{} `{}`: {}; run as root, confine reads a file only where at most one user "
                                   "besides root can change it",
                                   what, path, control.refusal));
  // Only root can change any name on the way: what is read is what root's walk saw.
  if (control.reader == 0) return read_here(what, path, max_bytes);
  return read_as(what, path, max_bytes, control);
}

}  // namespace confine::sys
