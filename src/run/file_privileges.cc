#include "run/file_privileges.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "core/git_state.h"
#include "core/report.h"
#include "core/secret_scan.h"
#include "run/git_check.h"
#include "sys/held_path.h"
#include "sys/log.h"
#include "sys/unique_fd.h"

namespace confine::run {
namespace {

// Never through a symlink: a link planted in a tree must not send the walk outside it.
constexpr int kOpenDir = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// The capability is read by the file's descriptor: an O_PATH one opens even a file no one may read, and the
// kernel reads xattrs through it only by its /proc name.
bool has_file_capability(int fd) {
  auto proc = fmt::format("/proc/self/fd/{}", fd);
  return ::getxattr(proc.c_str(), "security.capability", nullptr, 0) >= 0;
}

// What of the file grants privilege to whoever runs it, for messages ("the setuid bit and file capability");
// empty: nothing. setgid without group execute marks a file for mandatory locking and grants nothing.
std::string privileges_of(int fd, const struct stat& st) {
  std::string out;
  auto add = [&out](const char* what) { out += (out.empty() ? "the " : " and ") + std::string(what); };
  if ((st.st_mode & S_ISUID) != 0) add("setuid bit");
  if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) add("setgid bit");
  if (has_file_capability(fd)) add("file capability");
  return out;
}

struct Walk {
  const std::timespec& since;
  ScanLimits limits;  // the scans' depth and entry limits: a place the secret scan reaches is reached here too
  std::size_t entries = 0;
  FilePrivilegesDropped out;
};

void judge_file(Walk& w, int dir, const char* name, const std::string& path) {
  struct stat st {};
  // The cheap look first: most files are older than the run.
  if (::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || !changed_since(st, w.since)) return;
  // Judged and changed through one descriptor, so both are about the same file whatever happens to the name.
  sys::UniqueFd fd(::openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  auto what = privileges_of(fd.get(), st);
  if (what.empty()) return;
  // A chown that keeps the owner and group: the kernel drops the setuid and setgid bits and the file capability
  // for any caller allowed to chown the file (its owner too), and changes nothing else but the ctime.
  if (::fchownat(fd.get(), "", static_cast<uid_t>(-1), static_cast<gid_t>(-1), AT_EMPTY_PATH) != 0) {
    w.out.not_dropped.push_back(fmt::format("{} of {}: {}", what, path, std::strerror(errno)));
    return;
  }
  if (::fstat(fd.get(), &st) != 0 || !privileges_of(fd.get(), st).empty()) {
    w.out.not_dropped.push_back(fmt::format("{} of {}: the kernel kept them", what, path));
    return;
  }
  w.out.dropped.push_back({path, std::move(what)});
}

unsigned char type_of(int dir, const dirent& e) {
  struct stat st {};
  if (e.d_type != DT_UNKNOWN) return e.d_type;
  if (::fstatat(dir, e.d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) return DT_UNKNOWN;
  return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
}

void walk(Walk& w, sys::UniqueFd dir, const std::string& path, int depth) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(dir.valid() ? ::fdopendir(dir.get()) : nullptr, ::closedir);
  if (!d) {
    w.out.unreadable.push_back(path);
    return;
  }
  [[maybe_unused]] int owned_by_dir = dir.release();  // closedir closes it
  while (auto* e = ::readdir(d.get())) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (++w.entries > w.limits.max_entries) {
      w.out.incomplete = true;
      return;
    }
    auto child = path + "/" + e->d_name;
    auto type = type_of(::dirfd(d.get()), *e);
    if (type == DT_REG) judge_file(w, ::dirfd(d.get()), e->d_name, child);
    if (type != DT_DIR) continue;
    if (depth >= w.limits.max_depth) w.out.incomplete = true;
    else walk(w, sys::UniqueFd(::openat(::dirfd(d.get()), e->d_name, kOpenDir)), child, depth + 1);
  }
}

}  // namespace

FilePrivilegesDropped drop_file_privileges(const std::vector<std::string>& trees, const std::timespec& since) {
  Walk w{since, {}, 0, {}};
  for (const auto& tree : trees) {
    // The tree's owner may have renamed a directory on its path since the run began: resolve it afresh, by the
    // rule of the start (sys/held_path.h), and walk what that gives.
    auto held = sys::hold_path("setuid and file capability check", tree, sys::caller_trust());
    if (!held) {
      log::warn("{}", held.error().message());
      w.out.unreadable.push_back(tree);
      continue;
    }
    walk(w, sys::UniqueFd(::openat(held->fd->get(), ".", kOpenDir)), held->path, 0);
  }
  return std::move(w.out);
}

std::string report_file_privileges(const FilePrivilegesDropped& outcome) {
  for (const auto& d : outcome.dropped) log::warn("dropped {} the run gave {}", d.what, d.path);
  for (const auto& what : outcome.not_dropped) log::error("could not drop {}: do not run it", what);
  warn_unreadable(outcome.unreadable, "a file below it may keep a setuid/setgid bit or file capability the run gave "
                                     "it; look there before you run anything below it");
  if (outcome.incomplete) {
    ScanLimits limits;
    log::warn("the check for setuid/setgid files and file capabilities written during the run stopped at a limit "
              "({} levels, {} entries): look for them yourself (find -perm /6000, getcap -r)",
              limits.max_depth, limits.max_entries);
  }
  if (outcome.dropped.empty() && outcome.not_dropped.empty() && outcome.unreadable.empty() && !outcome.incomplete)
    return {};
  auto list = [](const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ",") + json_string(item);
    return out;
  };
  std::vector<std::string> dropped;
  for (const auto& d : outcome.dropped) dropped.push_back(d.path);
  return fmt::format(R"({{"event":"file-privileges","dropped":[{}],"not_dropped":[{}],"unreadable":[{}],"incomplete":{}}})" "\n",
                     list(dropped), list(outcome.not_dropped), list(outcome.unreadable), outcome.incomplete);
}

}  // namespace confine::run
