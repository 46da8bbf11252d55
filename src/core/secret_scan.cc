#include "core/secret_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <ctime>

#include "sys/unique_fd.h"

namespace confine {
namespace {

constexpr std::array kSecretFileNames = {std::string_view{".env"}, std::string_view{".netrc"},
                                         std::string_view{".pgpass"}};
constexpr std::array kSecretFilePrefixes = {std::string_view{".env."}, std::string_view{"id_rsa"},
                                            std::string_view{"id_dsa"}, std::string_view{"id_ecdsa"},
                                            std::string_view{"id_ed25519"}};
constexpr std::array kSecretFileSuffixes = {std::string_view{".pem"}};
constexpr std::array kSecretDirNames = {std::string_view{"secrets"}};
constexpr std::array kSkippedDirNames = {
    std::string_view{".git"},         std::string_view{"node_modules"}, std::string_view{".venv"},
    std::string_view{"venv"},         std::string_view{"__pycache__"},  std::string_view{".tox"},
    std::string_view{".mypy_cache"},  std::string_view{".pytest_cache"}, std::string_view{".gradle"},
    std::string_view{".cache"},       std::string_view{"target"},       std::string_view{".next"},
    std::string_view{"bower_components"}, std::string_view{".hg"},     std::string_view{".svn"},
};
constexpr std::string_view kCacheMagic = "confine-scan-cache 1\n";

template <typename Table>
bool in(const Table& t, std::string_view name) {
  return std::find(t.begin(), t.end(), name) != t.end();
}

std::string join(const std::string& rel, std::string_view name) {
  return rel.empty() ? std::string(name) : rel + "/" + std::string(name);
}

unsigned char type_of(int dirfd, const char* name) {
  struct stat st {};
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return DT_UNKNOWN;
  return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
}

void classify(DirRecord& r, int dirfd, const char* name, unsigned char type) {
  std::string_view n(name);
  if (n == "." || n == "..") return;
  ++r.entries;
  if (type == DT_UNKNOWN) type = type_of(dirfd, name);
  if (type == DT_DIR) {
    if (is_secret_dir_name(n)) r.dirs.emplace_back(n);
    else if (!is_skipped_dir_name(n)) r.subdirs.emplace_back(n);
  } else if (type == DT_REG && is_secret_file_name(n)) {
    r.files.emplace_back(n);
  }
}

// Lists one directory with getdents64: no per-entry stat, d_type says what each entry is.
bool read_dir(int root, const std::string& rel, DirRecord& r) {
  sys::UniqueFd fd(::openat(root, rel.empty() ? "." : rel.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return false;
  alignas(8) char buf[32768];
  for (;;) {
    auto n = ::getdents64(fd.get(), buf, sizeof buf);
    if (n <= 0) return n == 0;
    for (decltype(n) off = 0; off < n;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + off);
      off += d->d_reclen;
      classify(r, fd.get(), d->d_name, d->d_type);
    }
  }
}

constexpr std::int64_t kNeverMatches = -1;

struct Walker {
  std::int64_t now_sec;
  int root;
  const ScanLimits& limits;
  SecretScan& out;
  ScanCache* old_cache;
  ScanCache* new_cache;

  void walk(const std::string& rel, int depth) {
    struct stat st {};
    if (::fstatat(root, rel.empty() ? "." : rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) return;
    DirRecord* record = cached(rel, st);
    DirRecord fresh;
    if (record == nullptr) {
      fresh.ino = st.st_ino;
      fresh.ctime_sec = st.st_ctim.tv_sec;
      fresh.ctime_nsec = st.st_ctim.tv_nsec;
      // git's racy-entry rule: on a filesystem with coarse timestamps, an entry added in the same tick, just after
      // this read, would leave the ctime unchanged. A directory changed moments ago is never trusted from cache.
      if (now_sec - st.st_ctim.tv_sec < limits.racy_seconds) fresh.ctime_sec = kNeverMatches;
      if (!read_dir(root, rel, fresh)) return;
      ++out.dirs_read;
      record = &fresh;
      if (new_cache != nullptr) new_cache->changed = true;
    }
    out.entries_seen += record->entries;
    if (out.entries_seen > limits.max_entries) {
      out.truncated = true;
      return;
    }
    for (const auto& f : record->files) out.files.push_back(join(rel, f));
    for (const auto& d : record->dirs) out.dirs.push_back(join(rel, d));
    // Records move into the new cache (the old one is replaced): no copy of unchanged directories.
    if (new_cache != nullptr) new_cache->dirs[rel] = std::move(*record);
    const DirRecord& kept = new_cache != nullptr ? new_cache->dirs[rel] : *record;
    for (const auto& sub : kept.subdirs) {
      if (depth >= limits.max_depth) {
        out.truncated = true;
        continue;
      }
      walk(join(rel, sub), depth + 1);
    }
  }

  DirRecord* cached(const std::string& rel, const struct stat& st) const {
    if (old_cache == nullptr) return nullptr;
    auto it = old_cache->dirs.find(rel);
    if (it == old_cache->dirs.end()) return nullptr;
    auto& r = it->second;
    bool same = r.ino == st.st_ino && r.ctime_sec == st.st_ctim.tv_sec && r.ctime_nsec == st.st_ctim.tv_nsec;
    return same ? &r : nullptr;
  }
};

// Reads "<decimal> " then that many bytes.
bool take_field(std::string_view& in, std::string& out) {
  auto space = in.find(' ');
  if (space == std::string_view::npos || space == 0 || space > 12) return false;
  std::size_t len = 0;
  auto [end, ec] = std::from_chars(in.data(), in.data() + space, len);
  if (ec != std::errc{} || end != in.data() + space || len > in.size() - space - 1) return false;
  out.assign(in.substr(space + 1, len));
  in.remove_prefix(space + 1 + len);
  return true;
}

bool take_number(std::string_view& in, std::int64_t& out) {
  std::string field;
  if (!take_field(in, field)) return false;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  return ec == std::errc{} && end == field.data() + field.size();
}

void put_field(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ' ';
  out += s;
}

void put_list(std::string& out, const std::vector<std::string>& v) {
  put_field(out, std::to_string(v.size()));
  for (const auto& s : v) put_field(out, s);
}

// A directory entry name: never empty, ".", ".." or containing '/', so a record cannot lead the walk elsewhere.
bool is_entry_name(const std::string& s) { return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos; }

bool take_list(std::string_view& in, std::vector<std::string>& v) {
  std::int64_t n = 0;
  if (!take_number(in, n) || n < 0 || static_cast<std::size_t>(n) > in.size()) return false;
  v.resize(static_cast<std::size_t>(n));
  for (auto& s : v)
    if (!take_field(in, s) || !is_entry_name(s)) return false;
  return true;
}

}  // namespace

bool is_secret_file_name(std::string_view name) {
  auto starts = [&](std::string_view p) { return name.starts_with(p); };
  auto ends = [&](std::string_view s) { return name.size() > s.size() && name.ends_with(s); };
  return in(kSecretFileNames, name) ||
         std::any_of(kSecretFilePrefixes.begin(), kSecretFilePrefixes.end(), starts) ||
         std::any_of(kSecretFileSuffixes.begin(), kSecretFileSuffixes.end(), ends);
}

bool is_secret_dir_name(std::string_view name) { return in(kSecretDirNames, name); }
bool is_skipped_dir_name(std::string_view name) { return in(kSkippedDirNames, name); }

SecretScan scan_workspace_secrets(const std::string& workspace, const ScanLimits& limits, ScanCache* cache) {
  SecretScan out;
  sys::UniqueFd root(::open(workspace.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return out;
  ScanCache fresh;
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  Walker{now.tv_sec, root.get(), limits, out, cache, cache != nullptr ? &fresh : nullptr}.walk("", 0);
  if (cache != nullptr) {
    fresh.changed = fresh.changed || fresh.dirs.size() != cache->dirs.size();
    *cache = std::move(fresh);
  }
  std::sort(out.files.begin(), out.files.end());
  std::sort(out.dirs.begin(), out.dirs.end());
  return out;
}

std::string serialize_scan_cache(const ScanCache& cache, const std::string& workspace) {
  std::string out(kCacheMagic);
  put_field(out, workspace);
  for (const auto& [rel, r] : cache.dirs) {
    put_field(out, rel);
    for (std::int64_t v : {static_cast<std::int64_t>(r.ino), r.ctime_sec, r.ctime_nsec, static_cast<std::int64_t>(r.entries)})
      put_field(out, std::to_string(v));
    put_list(out, r.subdirs);
    put_list(out, r.files);
    put_list(out, r.dirs);
  }
  return out;
}

bool parse_scan_cache(std::string_view in, const std::string& workspace, ScanCache& out) {
  out = {};
  std::string ws;
  if (!in.starts_with(kCacheMagic)) return false;
  in.remove_prefix(kCacheMagic.size());
  if (!take_field(in, ws) || ws != workspace) return false;
  while (!in.empty()) {
    std::string rel;
    DirRecord r;
    std::int64_t ino = 0, entries = 0;
    if (!take_field(in, rel) || !take_number(in, ino) || !take_number(in, r.ctime_sec) || !take_number(in, r.ctime_nsec) ||
        !take_number(in, entries) || !take_list(in, r.subdirs) || !take_list(in, r.files) || !take_list(in, r.dirs))
      return false;
    r.ino = static_cast<std::uint64_t>(ino);
    r.entries = static_cast<std::uint64_t>(entries);
    out.dirs[std::move(rel)] = std::move(r);
  }
  return true;
}

}  // namespace confine
