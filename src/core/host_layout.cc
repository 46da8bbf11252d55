#include "core/host_layout.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <string_view>

namespace confine {
namespace {

// The one table of the host's system directories.
constexpr SystemDir shown(std::string_view path) { return {path, true, false, {}}; }
constexpr SystemDir hidden(std::string_view path) { return {path, false, false, {}}; }
constexpr std::array kSystemDirs = {
    shown("/usr"),  shown("/bin"), shown("/sbin"), shown("/lib"), shown("/lib32"), shown("/lib64"), shown("/libx32"),
    shown("/etc"),  shown("/opt"),
    SystemDir{"/var", true, false, "/var/tmp"},
    SystemDir{"/srv", true, true, {}},
    shown("/nix"),
    hidden("/boot"), hidden("/proc"), hidden("/sys"), hidden("/dev"), hidden("/run"),
};

bool is_kind(const std::string& path, mode_t kind) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

// The first line of a small file, without its newline; empty if unreadable or not a regular file.
std::string first_line(const std::string& path) {
  if (!is_kind(path, S_IFREG)) return {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return {};
  char buf[PATH_MAX + 16];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return {};
  std::string text(buf, static_cast<std::size_t>(n));
  return text.substr(0, text.find('\n'));
}

std::string canonical(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) == nullptr ? std::string() : std::string(buf);
}

// `path` as written in a git file: absolute, or relative to the directory holding that file.
std::string resolve_from(const std::string& dir, const std::string& path) {
  return path.empty() ? std::string() : canonical(path.starts_with("/") ? path : dir + "/" + path);
}

// <workspace>/.git reads `gitdir: DIR`, DIR/commondir leads to the repository's git dir COMMON, and the
// repository must vouch for the worktree: DIR is COMMON/worktrees/<name> and DIR/gitdir names <workspace>/.git
// back. Everything in the workspace is the agent's to write, so nothing there may vouch for itself: a DIR
// planted in the workspace is not under the other repository's worktrees/.
std::string linked_worktree_repository(const std::string& workspace) {
  auto line = first_line(workspace + "/.git");
  if (!line.starts_with("gitdir: ")) return {};
  std::string dir = resolve_from(workspace, line.substr(8));
  if (dir.empty()) return {};
  std::string common = resolve_from(dir, first_line(dir + "/commondir"));
  if (common.empty() || dir.substr(0, dir.rfind('/')) != common + "/worktrees") return {};
  if (resolve_from(dir, first_line(dir + "/gitdir")) != workspace + "/.git") return {};
  bool repository = is_kind(common + "/objects", S_IFDIR) && is_kind(common + "/HEAD", S_IFREG);
  return repository ? common : std::string();
}

}  // namespace

std::span<const SystemDir> system_dirs() { return kSystemDirs; }

std::vector<SystemEntry> discover_system_entries() {
  std::vector<SystemEntry> out;
  for (const auto& dir : kSystemDirs) {
    if (!dir.shown_inside) continue;
    std::string path(dir.path);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char buf[PATH_MAX];
      auto n = ::readlink(path.c_str(), buf, sizeof buf - 1);
      if (n > 0) out.push_back({path, std::string(buf, static_cast<std::size_t>(n)), path});
    } else if (S_ISDIR(st.st_mode)) {
      out.push_back({path, "", path});
    }
  }
  return out;
}

std::vector<SystemEntry> discover_image_entries(const std::string& rootfs) {
  constexpr std::array kMadeBySandbox = {std::string_view{"dev"}, std::string_view{"proc"}, std::string_view{"sys"},
                                         std::string_view{"tmp"}, std::string_view{"run"}};
  std::vector<SystemEntry> out;
  DIR* dir = ::opendir(rootfs.c_str());
  if (dir == nullptr) return out;
  while (const dirent* e = ::readdir(dir)) {
    std::string_view name = e->d_name;
    if (name == "." || name == ".." || std::find(kMadeBySandbox.begin(), kMadeBySandbox.end(), name) != kMadeBySandbox.end())
      continue;
    std::string source = rootfs + "/" + std::string(name);
    struct stat st {};
    if (::lstat(source.c_str(), &st) != 0) continue;
    char buf[PATH_MAX];
    ssize_t n = S_ISLNK(st.st_mode) ? ::readlink(source.c_str(), buf, sizeof buf - 1) : 0;
    // A link is recreated inside, so it resolves inside the image (an absolute one never reaches the host).
    if (n > 0) out.push_back({"/" + std::string(name), std::string(buf, static_cast<std::size_t>(n)), source});
    else if (S_ISDIR(st.st_mode)) out.push_back({"/" + std::string(name), "", source});
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end(), [](const SystemEntry& a, const SystemEntry& b) { return a.path < b.path; });
  return out;
}

std::string discover_resolver_dir() {
  char buf[PATH_MAX];
  if (::realpath("/etc/resolv.conf", buf) == nullptr) return {};
  std::string target(buf);
  if (!target.starts_with("/run/")) return {};
  return target.substr(0, target.rfind('/'));
}

std::string discover_terminal() {
  for (int fd = 0; fd <= 2; ++fd) {
    struct stat by_fd {}, by_path {};
    if (::isatty(fd) == 0 || ::fstat(fd, &by_fd) != 0) continue;
    char link[PATH_MAX];
    auto n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), link, sizeof link - 1);
    if (n <= 0) continue;
    std::string path(link, static_cast<std::size_t>(n));
    // Only a node we can name on the host and that is the very device we hold.
    if (path.starts_with("/dev/") && ::stat(path.c_str(), &by_path) == 0 && by_path.st_rdev == by_fd.st_rdev) return path;
  }
  return {};
}

GitLayout discover_git_layout(const std::string& workspace) {
  GitLayout g{is_kind(workspace + "/.git", S_IFDIR), is_kind(workspace + "/.git/hooks", S_IFDIR),
              is_kind(workspace + "/.git/config", S_IFREG), is_kind(workspace + "/.git", S_IFREG), {}};
  if (g.file) g.common_dir = linked_worktree_repository(workspace);
  struct stat st {};
  if (!g.common_dir.empty()) {
    g.common_hooks = ::lstat((g.common_dir + "/hooks").c_str(), &st) == 0;
    g.common_config = ::lstat((g.common_dir + "/config").c_str(), &st) == 0;
  }
  return g;
}

}  // namespace confine
