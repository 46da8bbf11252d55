#include "core/secret_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <ctime>
#include <system_error>
#include <thread>

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
constexpr std::string_view kCacheMagic = "confine-scan-cache 2\n";

template <typename Table>
bool in(const Table& t, std::string_view name) {
  return std::find(t.begin(), t.end(), name) != t.end();
}

std::string join(const std::string& rel, std::string_view name) {
  return rel.empty() ? std::string(name) : rel + "/" + std::string(name);
}

// A directory entry name: never empty, ".", ".." or containing '/', so a record cannot lead the walk elsewhere.
bool is_entry_name(std::string_view s) { return !s.empty() && s != "." && s != ".." && s.find('/') == std::string_view::npos; }

// ---- the cache text: numbers are "<decimal> ", names are "<length> <bytes>" ----

void put_number(std::string& out, std::int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
  out += ' ';
}

void put_name(std::string& out, std::string_view s) {
  put_number(out, static_cast<std::int64_t>(s.size()));
  out += s;
}

void put_names(std::string& out, const std::vector<std::string>& names) {
  put_number(out, static_cast<std::int64_t>(names.size()));
  for (const auto& n : names) put_name(out, n);
}

struct Reader {
  std::string_view text;
  std::size_t pos = 0;

  std::size_t left() const { return text.size() - pos; }

  bool number(std::int64_t& v) {
    auto space = text.find(' ', pos);
    if (space == std::string_view::npos || space == pos || space - pos > 20) return false;
    auto [end, ec] = std::from_chars(text.data() + pos, text.data() + space, v);
    if (ec != std::errc{} || end != text.data() + space) return false;
    pos = space + 1;
    return true;
  }
  // A count of things still to come: each takes at least one byte, so it can never exceed what is left.
  bool count(std::uint32_t& v) {
    std::int64_t n = 0;
    if (!number(n) || n < 0 || static_cast<std::uint64_t>(n) > left()) return false;
    v = static_cast<std::uint32_t>(n);
    return true;
  }
  bool name(TextSpan& s) {
    std::uint32_t len = 0;
    if (!count(len)) return false;
    s = {static_cast<std::uint32_t>(pos), len};
    pos += len;
    return true;
  }
};

bool read_names(Reader& r, std::uint32_t& n, std::vector<TextSpan>& names) {
  if (!r.count(n)) return false;
  for (std::uint32_t i = 0; i < n; ++i) {
    TextSpan s;
    if (!r.name(s) || !is_entry_name(r.text.substr(s.offset, s.size))) return false;
    names.push_back(s);
  }
  return true;
}

bool read_record(Reader& r, ScanCache& out, bool is_root) {
  CachedDir d;
  auto start = r.pos;
  std::int64_t ino = 0, entries = 0;
  if (!r.name(d.name) || is_root != (d.name.size == 0)) return false;
  if (!is_root && !is_entry_name(out.view(d.name))) return false;
  if (!r.number(ino) || !r.number(d.ctime_sec) || !r.number(d.ctime_nsec) || !r.number(entries) || entries < 0) return false;
  d.ino = static_cast<std::uint64_t>(ino);
  d.entries = static_cast<std::uint64_t>(entries);
  d.first_secret = static_cast<std::uint32_t>(out.secrets.size());
  if (!read_names(r, d.files, out.secrets) || !read_names(r, d.dirs, out.secrets)) return false;
  d.record = {static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(r.pos - start)};
  if (!r.count(d.children)) return false;
  out.dirs.push_back(d);
  return true;
}

// ---- listing one directory ----

struct Listing {
  std::uint64_t entries = 0;
  std::vector<std::string> subdirs;  // names to descend into
  std::vector<std::string> files;    // secret file names
  std::vector<std::string> dirs;     // secret directory names
};

unsigned char type_of(int dirfd, const char* name) {
  struct stat st {};
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return DT_UNKNOWN;
  return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
}

void classify(Listing& l, int dirfd, const char* name, unsigned char type) {
  std::string_view n(name);
  if (n == "." || n == "..") return;
  ++l.entries;
  if (type == DT_UNKNOWN) type = type_of(dirfd, name);
  if (type == DT_DIR) {
    if (is_secret_dir_name(n)) l.dirs.emplace_back(n);
    else if (!is_skipped_dir_name(n)) l.subdirs.emplace_back(n);
  } else if (type == DT_REG && is_secret_file_name(n)) {
    l.files.emplace_back(n);
  }
}

// Lists an open directory with getdents64: no per-entry stat, d_type says what each entry is.
bool read_dir(int fd, Listing& l) {
  alignas(8) char buf[32768];
  for (;;) {
    auto n = ::getdents64(fd, buf, sizeof buf);
    if (n <= 0) return n == 0;
    for (decltype(n) off = 0; off < n;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + off);
      off += d->d_reclen;
      classify(l, fd, d->d_name, d->d_type);
    }
  }
}

// ---- the walk ----

constexpr std::int64_t kNeverMatches = -1;
// Never through a symlink: a link planted in the workspace must not send the walk outside it.
constexpr int kOpenDir = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

struct DirStat {
  std::uint64_t ino = 0;
  std::int64_t ctime_sec = 0;
  std::int64_t ctime_nsec = 0;
};

// What the stat taken before the walk says of a cached directory. One byte per directory: a warm run's memory is
// page faults, and on a large tree those cost as much as the stats.
enum class DirState : std::uint8_t { gone, unchanged, changed };

DirState check_dir(int root, const char* rel, const CachedDir& d) {
  struct stat st {};
  if (::fstatat(root, rel, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) return DirState::gone;
  bool same = d.ino == st.st_ino && d.ctime_sec == st.st_ctim.tv_sec && d.ctime_nsec == st.st_ctim.tv_nsec;
  return same ? DirState::unchanged : DirState::changed;
}

// The parent of every cached directory (the root is its own), from the preorder and the subtree ends.
std::vector<std::uint32_t> parent_indices(const ScanCache& c) {
  std::vector<std::uint32_t> parent(c.dirs.size(), 0);
  std::vector<std::uint32_t> ancestors;
  for (std::uint32_t i = 0; i < c.dirs.size(); ++i) {
    while (!ancestors.empty() && c.dirs[ancestors.back()].end <= i) ancestors.pop_back();
    parent[i] = ancestors.empty() ? i : ancestors.back();
    ancestors.push_back(i);
  }
  return parent;
}

// dirs[i]'s path relative to the workspace, built backwards at the end of `buf`; "." for the root, null if too long.
const char* relative_path(const ScanCache& c, const std::vector<std::uint32_t>& parent, std::uint32_t i,
                          std::array<char, PATH_MAX>& buf) {
  std::size_t pos = buf.size() - 1;
  buf[pos] = '\0';
  if (i == 0) return ".";
  for (std::uint32_t j = i; j != 0; j = parent[j]) {
    auto name = c.view(c.dirs[j].name);
    if (name.size() + 1 > pos) return nullptr;
    pos -= name.size();
    std::copy(name.begin(), name.end(), buf.begin() + static_cast<std::ptrdiff_t>(pos));
    if (parent[j] != 0) buf[--pos] = '/';
  }
  return buf.data() + pos;
}

// A warm run's cost is one stat per directory, and nearly all of it is the kernel's path walk: spread the stats of
// the cached directories over a few threads. Each directory is stat-ed before it is listed, as the cache needs.
std::vector<DirState> check_cached_dirs(int root, const ScanCache& c) {
  std::vector<DirState> out(c.dirs.size(), DirState::gone);
  if (c.dirs.empty()) return out;
  auto parent = parent_indices(c);
  auto check_range = [&](std::size_t from, std::size_t to) {
    std::array<char, PATH_MAX> buf;
    for (auto i = from; i < to; ++i) {
      const char* rel = relative_path(c, parent, static_cast<std::uint32_t>(i), buf);
      out[i] = rel == nullptr ? DirState::gone : check_dir(root, rel, c.dirs[i]);
    }
  };
  constexpr std::size_t kDirsPerThread = 512;
  auto threads = std::min<std::size_t>(4, out.size() / kDirsPerThread + 1);
  // Asked only when it matters: hardware_concurrency() reads /sys/devices/system/cpu/online.
  if (threads > 1) threads = std::min<std::size_t>(threads, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> helpers;
  auto chunk = (out.size() + threads - 1) / threads;
  try {
    for (std::size_t t = 1; t < threads; ++t)
      helpers.emplace_back(check_range, t * chunk, std::min(out.size(), (t + 1) * chunk));
  } catch (const std::system_error&) {
    // No thread to be had: the rest is checked here.
    check_range(std::min(out.size(), (helpers.size() + 1) * chunk), out.size());
  }
  check_range(0, std::min(out.size(), chunk));
  for (auto& h : helpers) h.join();
  return out;
}

// The previous walk's record for each subdirectory of a directory that must be re-read. Listings usually come back
// in the same order, so the search starts after the last match.
class ChildFinder {
 public:
  ChildFinder(const ScanCache* cache, const CachedDir* parent) : cache_(cache) {
    if (cache_ == nullptr || parent == nullptr) return;
    first_ = cursor_ = static_cast<std::uint32_t>(parent - cache_->dirs.data()) + 1;
    end_ = parent->end;
  }
  const CachedDir* find(std::string_view name) {
    if (cache_ == nullptr) return nullptr;
    if (auto* d = search(cursor_, end_, name)) return d;
    return search(first_, cursor_, name);
  }

 private:
  const CachedDir* search(std::uint32_t from, std::uint32_t to, std::string_view name) {
    for (auto i = from; i < to; i = cache_->dirs[i].end) {
      if (cache_->view(cache_->dirs[i].name) != name) continue;
      cursor_ = cache_->dirs[i].end;
      return &cache_->dirs[i];
    }
    return nullptr;
  }
  const ScanCache* cache_;
  std::uint32_t first_ = 0, end_ = 0, cursor_ = 0;
};

struct Walker {
  int root;
  std::int64_t now_sec;
  const ScanLimits& limits;
  SecretScan& out;
  const ScanCache* old;  // the previous walk (null or empty: none)
  const std::vector<DirState>& prestat;  // each of old's directories, checked before this walk
  std::string& text;     // this walk, written as the next cache file
  std::string path;      // of the directory being visited, relative to the workspace

  // `parent` is the open parent directory when it was listed in this walk (a short lookup), else -1.
  void walk(std::string_view name, const CachedDir* prev, int depth, int parent) {
    auto mark = path.size();
    if (!name.empty()) path.append(mark == 0 ? "" : "/").append(name);
    visit(name, prev, depth, parent);
    path.resize(mark);
  }

  void visit(std::string_view name, const CachedDir* prev, int depth, int parent) {
    if (depth > limits.max_depth || out.entries_seen > limits.max_entries) {
      out.truncated = true;
      return put_unread(name);
    }
    if (prev != nullptr) {
      auto state = prestat[static_cast<std::size_t>(prev - old->dirs.data())];
      if (state == DirState::gone) return put_unread(name);
      if (state == DirState::unchanged) return reuse(*prev, depth);
    }
    sys::UniqueFd fd(parent >= 0 ? ::openat(parent, std::string(name).c_str(), kOpenDir)
                                 : ::openat(root, path.empty() ? "." : path.c_str(), kOpenDir));
    // Stat before listing: an entry added during the listing changes the ctime after the one recorded here, so
    // the next walk re-reads the directory.
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return put_unread(name);
    read_fresh(name, fd.get(), {st.st_ino, st.st_ctim.tv_sec, st.st_ctim.tv_nsec}, prev, depth);
  }

  // Unchanged since the last walk: its record is copied as it was and its subdirectories are visited in step.
  void reuse(const CachedDir& d, int depth) {
    count_entries(d.entries);
    for (auto i = d.first_secret; i < d.first_secret + d.files; ++i) out.files.push_back(join(path, old->view(old->secrets[i])));
    for (auto i = d.first_secret + d.files; i < d.first_secret + d.files + d.dirs; ++i)
      out.dirs.push_back(join(path, old->view(old->secrets[i])));
    text += old->view(d.record);
    put_number(text, d.children);
    auto child = static_cast<std::uint32_t>(&d - old->dirs.data()) + 1;
    for (std::uint32_t c = 0; c < d.children; ++c) {
      const auto& sub = old->dirs[child];
      walk(old->view(sub.name), &sub, depth + 1, -1);
      child = sub.end;
    }
  }

  void read_fresh(std::string_view name, int fd, const DirStat& st, const CachedDir* prev, int depth) {
    Listing l;
    if (!read_dir(fd, l)) return put_unread(name);
    ++out.dirs_read;
    count_entries(l.entries);
    for (const auto& f : l.files) out.files.push_back(join(path, f));
    for (const auto& d : l.dirs) out.dirs.push_back(join(path, d));
    // git's racy-entry rule: on a filesystem with coarse timestamps, an entry added in the same tick, just after
    // this read, would leave the ctime unchanged. A directory changed moments ago is never trusted from cache.
    bool racy = now_sec - st.ctime_sec < limits.racy_seconds;
    put_name(text, name);
    put_number(text, static_cast<std::int64_t>(st.ino));
    put_number(text, racy ? kNeverMatches : st.ctime_sec);
    put_number(text, st.ctime_nsec);
    put_number(text, static_cast<std::int64_t>(l.entries));
    put_names(text, l.files);
    put_names(text, l.dirs);
    put_number(text, static_cast<std::int64_t>(l.subdirs.size()));
    ChildFinder previous(old, prev);
    for (const auto& sub : l.subdirs) walk(sub, previous.find(sub), depth + 1, fd);
  }

  // Not listed (too deep, past the entry budget, unreadable or gone): a record that never matches, so the next
  // walk tries again.
  void put_unread(std::string_view name) {
    put_name(text, name);
    text += "0 -1 -1 0 0 0 0 ";
  }

  void count_entries(std::uint64_t n) {
    out.entries_seen += n;
    if (out.entries_seen > limits.max_entries) out.truncated = true;
  }
};

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
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  std::string text(kCacheMagic);
  put_name(text, workspace);
  const ScanCache* old = cache != nullptr && !cache->dirs.empty() ? cache : nullptr;
  if (cache != nullptr) text.reserve(cache->text.size() + 4096);
  auto prestat = old != nullptr ? check_cached_dirs(root.get(), *old) : std::vector<DirState>{};
  Walker{root.get(), now.tv_sec, limits, out, old, prestat, text, {}}.walk("", old != nullptr ? &old->dirs[0] : nullptr, 0, -1);
  if (cache != nullptr) {
    // Unchanged text: the index already describes it. Otherwise index the new text (our own output, so valid).
    bool changed = text != cache->text;
    if (changed) parse_scan_cache(std::move(text), workspace, *cache);
    cache->changed = changed;
  }
  std::sort(out.files.begin(), out.files.end());
  std::sort(out.dirs.begin(), out.dirs.end());
  return out;
}

bool parse_scan_cache(std::string text, const std::string& workspace, ScanCache& out) {
  out = {};
  out.text = std::move(text);
  Reader r{out.text};
  TextSpan ws;
  bool ok = out.text.size() < UINT32_MAX && std::string_view(out.text).starts_with(kCacheMagic);
  r.pos = kCacheMagic.size();
  out.dirs.reserve(out.text.size() / 17);  // no record is shorter than "1 a0 0 0 0 0 0 0 ": never reallocated
  ok = ok && r.name(ws) && out.view(ws) == workspace && read_record(r, out, true);
  // Records come in preorder: a stack of (record, children still to read) closes each subtree where it ends.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> open;
  if (ok) open.emplace_back(0, out.dirs[0].children);
  while (ok && !open.empty()) {
    auto& [index, remaining] = open.back();
    if (remaining == 0) {
      out.dirs[index].end = static_cast<std::uint32_t>(out.dirs.size());
      open.pop_back();
      continue;
    }
    --remaining;
    ok = read_record(r, out, false);
    if (ok) open.emplace_back(static_cast<std::uint32_t>(out.dirs.size() - 1), out.dirs.back().children);
  }
  if (!ok || r.left() != 0) {
    out = {};
    return false;
  }
  return true;
}

}  // namespace confine
