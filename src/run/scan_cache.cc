#include "run/scan_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <functional>
#include <vector>

#include "core/resolve.h"
#include "sys/log.h"
#include "sys/owned_files.h"

namespace confine::run {
namespace {

std::string cache_dir(const std::string& xdg_cache_home, const std::string& home) {
  if (!xdg_cache_home.empty()) return normalize_absolute(xdg_cache_home + "/confine/scan");
  return home.empty() ? std::string() : home + "/.cache/confine/scan";
}

// The cache keeps one file per directory ever scanned; temporary workspaces (a CI runner's day) would leave one
// each for ever. Bounded in age, count and bytes, the least recently written going first.
constexpr std::time_t kCacheMaxAge = 30 * 24 * 3600;
constexpr std::size_t kCacheMaxFiles = 64;
constexpr off_t kCacheMaxBytes = 64 << 20;

// A cache file's name: scan_cache_name's 16 hex digits, or its temporary name (NAME.tmp.PID) left by a killed run.
bool is_cache_file_name(const char* name) {
  std::size_t n = 0;
  while (std::isxdigit(static_cast<unsigned char>(name[n])) != 0) ++n;
  return n == 16 && (name[n] == '\0' || std::strncmp(name + n, ".tmp.", 5) == 0);
}

struct CacheFile {
  std::string name;
  std::time_t written;
  off_t bytes;
};

// The cache files in `dir` (the caller's own directory, opened without links): regular files only, never followed.
std::vector<CacheFile> list_cache_files(int dir) {
  std::vector<CacheFile> files;
  int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = fd >= 0 ? ::fdopendir(fd) : nullptr;
  if (d == nullptr) {
    if (fd >= 0) ::close(fd);
    return files;
  }
  while (auto* e = ::readdir(d)) {
    struct stat st {};
    if (!is_cache_file_name(e->d_name) || ::fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    files.push_back({e->d_name, st.st_mtime, st.st_size});
  }
  ::closedir(d);
  return files;
}

// Whether `name`'s cache is of a directory that no longer exists (a CI job's temporary workspace): from the path in
// its header, read without following a link. Unreadable or not a cache's: not known to be gone.
bool scanned_dir_gone(int dir, const std::string& name) {
  auto fd = sys::open_owned_file_for_reading(dir, name);
  if (!fd.valid()) return false;
  char head[PATH_MAX + 64];
  auto n = ::read(fd.get(), head, sizeof head);
  auto path = n > 0 ? scan_cache_scanned_path(std::string_view(head, static_cast<std::size_t>(n))) : std::nullopt;
  struct stat st {};
  return path && ::lstat(path->c_str(), &st) != 0 && errno == ENOENT;
}

// Removes the caches of directories that are gone and the files beyond the bounds, never `keep` (this run's).
void prune_cache_files(int dir, const std::string& keep) {
  auto files = list_cache_files(dir);
  std::sort(files.begin(), files.end(), [](const CacheFile& a, const CacheFile& b) { return a.written > b.written; });
  std::time_t now = std::time(nullptr);
  std::size_t kept = 0;
  off_t bytes = 0;
  for (const auto& f : files) {
    if (f.name == keep) continue;
    if (f.name.find(".tmp.") != std::string::npos) {
      // Another run may be writing it right now; an hour old, its run was killed.
      if (now - f.written > 3600) ::unlinkat(dir, f.name.c_str(), 0);
      continue;
    }
    bool stays = now - f.written < kCacheMaxAge && kept + 1 < kCacheMaxFiles && bytes + f.bytes <= kCacheMaxBytes &&
                 !scanned_dir_gone(dir, f.name);
    if (stays) ++kept, bytes += f.bytes;
    else ::unlinkat(dir, f.name.c_str(), 0);
  }
}

void warn_cache_not_used(const sys::Error& why) {
  log::warn("{}; the cache is not used (set XDG_CACHE_HOME to a directory of yours without links)", why.message());
}

}  // namespace

std::string scan_cache_name(const std::string& scanned) {
  return fmt::format("{:016x}", std::hash<std::string>{}(scanned));
}

ScanCacheLocation scan_cache_location(const Policy& p) {
  auto dir = cache_dir(p.caller_env.xdg_cache_home, p.fs.home);
  if (dir.empty()) return {};
  // The path has no link on it (the directory is opened that way below), so its lexical form is where it is.
  if (sandbox_can_write(p, dir)) {
    log::warn("the workspace scan cache is not used: `{}` is writable inside the sandbox (set XDG_CACHE_HOME to a "
              "directory outside the workspace and the --rw binds)", dir);
    return {};
  }
  // Opened, not made: gathering what the host is changes nothing (the save makes it).
  auto opened = sys::open_owned_directory("the workspace scan cache", dir);
  if (!opened && opened.error().err == ENOENT) return {sys::UniqueFd(), scan_cache_name(p.fs.workspace), dir};
  if (!opened) {
    warn_cache_not_used(opened.error());
    return {};
  }
  return {std::move(*opened), scan_cache_name(p.fs.workspace)};
}

ScanCacheLocation scan_cache_beside(const ScanCacheLocation& at, const std::string& scanned) {
  if (!at.dir.valid()) return {sys::UniqueFd(), scan_cache_name(scanned), at.to_make};
  return {sys::UniqueFd(::fcntl(at.dir.get(), F_DUPFD_CLOEXEC, 0)), scan_cache_name(scanned)};
}

ScanCachePlace scan_cache_place(const Policy& p) {
  auto dir = cache_dir(p.caller_env.xdg_cache_home, p.fs.home);
  if (dir.empty() || sandbox_can_write(p, dir)) return {};
  return {dir, scan_cache_name(p.fs.workspace)};
}

ScanCacheLocation reopen_scan_cache(const ScanCachePlace& place) {
  if (place.dir.empty()) return {};
  auto opened = sys::make_owned_directory("the workspace scan cache", place.dir);
  if (!opened) return {};
  return {std::move(*opened), place.name};
}

ScanCache load_scan_cache(const ScanCacheLocation& at, const std::string& workspace, const ScanLimits& limits) {
  ScanCache cache;
  if (!at.dir.valid()) return cache;
  auto fd = sys::open_owned_file_for_reading(at.dir.get(), at.name);
  if (!fd.valid()) return cache;
  struct stat st {};
  // A cache past this size is not one confine wrote (400 000 entries make a few MB): ignored, not allocated.
  constexpr off_t kMaxCacheBytes = off_t{64} << 20;
  if (::fstat(fd.get(), &st) != 0 || st.st_size > kMaxCacheBytes) return cache;
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  if (::read(fd.get(), data.data(), data.size()) != static_cast<ssize_t>(data.size())) return cache;
  parse_scan_cache(std::move(data), workspace, cache, limits);
  return cache;
}

void save_scan_cache(const ScanCache& cache, ScanCacheLocation& at) {
  if (!cache.changed) return;
  if (!at.dir.valid() && !at.to_make.empty()) {
    auto made = sys::make_owned_directory("the workspace scan cache", at.to_make);
    if (!made) warn_cache_not_used(made.error());
    else at.dir = std::move(*made);
    at.to_make.clear();  // made, or said once why not
  }
  if (!at.dir.valid()) return;
  auto tmp = at.name + ".tmp." + std::to_string(::getpid());
  int dir = at.dir.get();
  sys::UniqueFd fd(::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return;
  const auto& data = cache.text;
  bool ok = ::write(fd.get(), data.data(), data.size()) == static_cast<ssize_t>(data.size());
  fd.reset();
  // rename() is atomic: a concurrent run reads the old file or the new one, never half of one. Within the one
  // directory opened above, so whatever the names on the way to it become meanwhile, the file lands there.
  if (!ok || ::renameat(dir, tmp.c_str(), dir, at.name.c_str()) != 0) ::unlinkat(dir, tmp.c_str(), 0);
  // Only when a file was written: a run that changed nothing reads no directory.
  prune_cache_files(dir, at.name);
}

}  // namespace confine::run
