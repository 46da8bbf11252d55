#include "run/scan_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fmt/format.h>
#include <functional>

#include "core/resolve.h"
#include "sys/log.h"
#include "sys/owned_files.h"

namespace confine::run {
namespace {

std::string cache_dir(const std::string& xdg_cache_home, const std::string& home) {
  if (!xdg_cache_home.empty()) return normalize_absolute(xdg_cache_home + "/confine/scan");
  return home.empty() ? std::string() : home + "/.cache/confine/scan";
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
  auto opened = sys::make_owned_directory("the workspace scan cache", dir);
  if (!opened) {
    log::warn("{}; the cache is not used (set XDG_CACHE_HOME to a directory of yours without links)",
              opened.error().message());
    return {};
  }
  return {std::move(*opened), scan_cache_name(p.fs.workspace)};
}

ScanCacheLocation scan_cache_beside(const ScanCacheLocation& at, const std::string& scanned) {
  if (!at.dir.valid()) return {};
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

void save_scan_cache(const ScanCache& cache, const ScanCacheLocation& at) {
  if (!at.dir.valid() || !cache.changed) return;
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
}

}  // namespace confine::run
