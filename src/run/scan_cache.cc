#include "run/scan_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fmt/format.h>
#include <functional>

#include "sys/unique_fd.h"

namespace confine::run {
namespace {

std::string cache_dir(const std::string& home) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/confine/scan";
  return home.empty() ? std::string() : home + "/.cache/confine/scan";
}

std::string cache_file(const std::string& workspace, const std::string& home) {
  auto dir = cache_dir(home);
  return dir.empty() ? dir : fmt::format("{}/{:016x}", dir, std::hash<std::string>{}(workspace));
}

void make_dirs(const std::string& path) {
  for (std::size_t pos = 1; pos != std::string::npos; pos = path.find('/', pos + 1))
    ::mkdir(path.substr(0, pos).c_str(), 0700);
  ::mkdir(path.c_str(), 0700);
}

}  // namespace

ScanCache load_scan_cache(const std::string& workspace, const std::string& home) {
  ScanCache cache;
  auto file = cache_file(workspace, home);
  if (file.empty()) return cache;
  sys::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return cache;
  struct stat st {};
  // A cache past this size is not one confine wrote (400 000 entries make a few MB): ignored, not allocated.
  constexpr off_t kMaxCacheBytes = off_t{64} << 20;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxCacheBytes) return cache;
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  if (::read(fd.get(), data.data(), data.size()) != static_cast<ssize_t>(data.size())) return cache;
  parse_scan_cache(std::move(data), workspace, cache);
  return cache;
}

void save_scan_cache(const ScanCache& cache, const std::string& workspace, const std::string& home) {
  auto file = cache_file(workspace, home);
  if (file.empty() || !cache.changed) return;
  make_dirs(cache_dir(home));
  auto tmp = file + ".tmp." + std::to_string(::getpid());
  sys::UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return;
  const auto& data = cache.text;
  bool ok = ::write(fd.get(), data.data(), data.size()) == static_cast<ssize_t>(data.size());
  fd.reset();
  // rename() is atomic: a concurrent run reads the old file or the new one, never half of one.
  if (!ok || ::rename(tmp.c_str(), file.c_str()) != 0) ::unlink(tmp.c_str());
}

}  // namespace confine::run
