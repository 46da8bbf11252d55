#include "core/host_layout.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <string_view>

namespace confine {
namespace {

// The one list of host paths that appear inside (read-only).
constexpr std::array kSystemPaths = {
    std::string_view{"/usr"},   std::string_view{"/bin"},   std::string_view{"/sbin"}, std::string_view{"/lib"},
    std::string_view{"/lib32"}, std::string_view{"/lib64"}, std::string_view{"/libx32"}, std::string_view{"/etc"},
    std::string_view{"/opt"},   std::string_view{"/var"},   std::string_view{"/srv"},  std::string_view{"/nix"},
};

bool is_kind(const std::string& path, mode_t kind) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

}  // namespace

std::vector<SystemEntry> discover_system_entries() {
  std::vector<SystemEntry> out;
  for (auto p : kSystemPaths) {
    std::string path(p);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char buf[PATH_MAX];
      auto n = ::readlink(path.c_str(), buf, sizeof buf - 1);
      if (n > 0) out.push_back({path, std::string(buf, static_cast<std::size_t>(n))});
    } else if (S_ISDIR(st.st_mode)) {
      out.push_back({path, ""});
    }
  }
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
  return {is_kind(workspace + "/.git", S_IFDIR), is_kind(workspace + "/.git/hooks", S_IFDIR),
          is_kind(workspace + "/.git/config", S_IFREG)};
}

}  // namespace confine
