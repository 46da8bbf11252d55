#include "sys/held_path.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <vector>

namespace confine::sys {
namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit on symbolic links in one lookup

// One directory or link crossed on the way, remembered for the ownership rule and for naming it in a refusal.
struct Crossed {
  std::string path;
  uid_t owner;
  bool link;
};

std::deque<std::string> split_components(const std::string& path) {
  std::deque<std::string> parts;
  std::size_t i = 0;
  while (i <= path.size()) {
    std::size_t j = std::min(path.find('/', i), path.size());
    if (j > i) parts.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

// "workspace `/a/b/c`", and where the walk stopped when that is not the end: "workspace `/a/b/c` (at `/a/b`)".
std::string naming(const std::string& what, const std::string& path, const std::string& at) {
  return at == path ? fmt::format("{} `{}`", what, path) : fmt::format("{} `{}` (at `{}`)", what, path, at);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += "/" + n;
  return out.empty() ? "/" : out;
}

Result<std::string> read_link(int link_fd, const std::string& name) {
  char buf[PATH_MAX];
  ssize_t n = ::readlinkat(link_fd, "", buf, sizeof buf);
  if (n < 0) return errno_error(name);
  if (n == static_cast<ssize_t>(sizeof buf)) return plain_error(name + ": symbolic link too long");
  return std::string(buf, static_cast<std::size_t>(n));
}

// Run by root: a directory or link that belongs to neither root nor the final owner is one its owner could swap.
Status check_owners(const std::string& what, const std::string& asked, const HeldPath& held,
                    const std::vector<Crossed>& crossed) {
  for (const auto& c : crossed) {
    if (c.owner == 0 || c.owner == held.st.st_uid) continue;
    auto remedy = held.st.st_uid == 0
                      ? fmt::format("use a root-owned directory that only root can rename or replace (or give `{}` to "
                                    "uid {})", held.path, c.owner)
                      : fmt::format("run confine as uid {}, the owner", held.st.st_uid);
    return plain_error(fmt::format("{} `{}` leads through `{}`, {} owned by uid {}, to `{}`, owned by uid {}: run by "
                                   "root, confine refuses a path that another user could redirect; {}",
                                   what, asked, c.path, c.link ? "a symbolic link" : "a directory", c.owner, held.path,
                                   held.st.st_uid, remedy));
  }
  return ok_status();
}

}  // namespace

Result<HeldPath> hold_path(const std::string& what, const std::string& path, PathTrust trust) {
  if (path.empty() || path.front() != '/') return plain_error(fmt::format("{} `{}`: not an absolute path", what, path));
  // Every step is an openat of one name below a descriptor already held, with O_NOFOLLOW: a rename elsewhere on
  // the path after that step cannot change where the walk is.
  std::vector<UniqueFd> fds;
  std::vector<std::string> names;
  fds.emplace_back(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fds.back().valid()) return errno_error("open `/`");
  std::vector<Crossed> crossed;
  auto pending = split_components(path);
  int links = 0;
  while (!pending.empty()) {
    std::string name = std::move(pending.front());
    pending.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      if (!names.empty()) {
        names.pop_back();
        fds.pop_back();
      }
      continue;
    }
    std::string at = join(names) == "/" ? "/" + name : join(names) + "/" + name;
    UniqueFd fd(::openat(fds.back().get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return errno_error(naming(what, path, at));
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxLinks) return Error{fmt::format("{} `{}`", what, path), ELOOP};
      auto target = read_link(fd.get(), naming(what, path, at));
      if (!target) return target.error();
      crossed.push_back({at, st.st_uid, true});
      if (target->starts_with("/")) {
        fds.resize(1);
        names.clear();
      }
      auto parts = split_components(*target);
      pending.insert(pending.begin(), parts.begin(), parts.end());
      continue;
    }
    if (!pending.empty() && !S_ISDIR(st.st_mode)) return Error{naming(what, path, at), ENOTDIR};
    crossed.push_back({at, st.st_uid, false});
    fds.push_back(std::move(fd));
    names.push_back(std::move(name));
  }
  HeldPath held;
  held.path = join(names);
  if (::fstat(fds.back().get(), &held.st) != 0) return errno_error(fmt::format("{} `{}`", what, held.path));
  held.fd = std::make_shared<const UniqueFd>(std::move(fds.back()));
  if (trust == PathTrust::owners_checked)
    if (auto s = check_owners(what, path, held, crossed); !s) return s.error();
  return held;
}

PathTrust caller_trust() { return ::geteuid() == 0 ? PathTrust::owners_checked : PathTrust::follow_links; }

}  // namespace confine::sys
