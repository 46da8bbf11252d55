#include "core/secret_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "sys/syscalls.h"
#include "sys/unique_fd.h"

namespace confine {
namespace {

constexpr std::string_view kCacheMagic = "confine-scan-cache 6\n";

// What a directory's secret names count for: every walk lists every directory but `.git` (git finds a repository
// wherever it is, so the check after a run needs them all, and it reuses this walk's records), and its place
// decides what of that is a secret to mask. Everything, in an ordinary directory; key names only, in a skipped
// directory or below one; nothing, below a secret directory (masked whole).
enum class Look : std::uint8_t { all, keys, none };

Look look_below(Look parent, std::string_view name, const SecretNames& names) {
  if (parent != Look::all) return parent;
  if (names.is_secret_dir(name)) return Look::none;
  return names.is_skipped_dir(name) ? Look::keys : Look::all;
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
  if (!read_names(r, d.files, out.secrets) || !read_names(r, d.dirs, out.secrets) || !read_names(r, d.git, out.secrets) ||
      !read_names(r, d.links, out.secrets))
    return false;
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
  std::vector<std::string> git;      // ".git" (of any type), and "HEAD" when the directory is shaped like a git dir
  std::vector<std::string> links;    // symlinks with a secret file name
  bool head = false, objects = false, commondir = false;
  const SecretNames* names = nullptr;  // ScanLimits::names: kept by clear()

  void clear() {  // keeps the vectors' capacity: a reader reuses one Listing for every directory
    entries = 0;
    subdirs.clear();
    files.clear();
    dirs.clear();
    git.clear();
    links.clear();
    head = objects = commondir = false;
  }
  // What git itself takes for a git dir: a HEAD, and objects/ or a commondir (a linked worktree's entry).
  void finish() {
    if (head && (objects || commondir)) git.emplace_back("HEAD");
  }
};

unsigned char type_of(int dirfd, const char* name) {
  struct stat st {};
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return DT_UNKNOWN;
  return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
}

void classify(Listing& l, int dirfd, const char* name, unsigned char type) {
  std::string_view n(name);
  if (n == "." || n == "..") return;
  ++l.entries;
  if (type == DT_UNKNOWN) type = type_of(dirfd, name);
  if (n == ".git") l.git.emplace_back(n);
  // git's own test (is_git_directory) follows symlinks: a HEAD or objects/ that is a link counts.
  l.head = l.head || (n == "HEAD" && type != DT_DIR);
  l.objects = l.objects || (n == "objects" && (type == DT_DIR || type == DT_LNK));
  l.commondir = l.commondir || (n == "commondir" && type != DT_DIR);
  if (type == DT_DIR) {
    if (l.names->is_secret_dir(n)) l.dirs.emplace_back(n);
    if (n != ".git") l.subdirs.emplace_back(n);  // skipped and secret ones too (see Look)
  } else if (type == DT_REG && l.names->is_secret_file(n)) {
    l.files.emplace_back(n);
  } else if (type == DT_LNK && l.names->is_secret_file(n)) {
    l.links.emplace_back(n);  // a second name: masked itself, and what it leads to (resolve_masks)
  }
}

// Lists an open directory with getdents64: no per-entry stat, d_type says what each entry is.
bool read_dir(int fd, Listing& l) {
  alignas(8) char buf[32768];
  for (;;) {
    auto n = ::getdents64(fd, buf, sizeof buf);
    if (n == 0) l.finish();
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

// Opens a directory by its path below the workspace root ("" is the root itself). No component may be a symlink
// or lead out of the root: the tree can change under a walk that trusted an earlier look at it.
int open_beneath(int root, const std::string& rel) {
  return sys::openat2(root, rel.empty() ? "." : rel.c_str(), kOpenDir, 0,
                      sys::kResolveBeneath | sys::kResolveNoSymlinks | sys::kResolveNoMagicLinks);
}

struct DirStat {
  std::uint64_t ino = 0;
  std::int64_t ctime_sec = 0;
  std::int64_t ctime_nsec = 0;
};

// What listing one directory gave: `moving` when the directory changed while it was read.
enum class ListResult : std::uint8_t { failed, listed, moving };

// Lists an open directory, stat-ing it before and after. Before: an entry added during the listing changes the
// ctime after the one recorded here, so the next walk re-reads the directory. After: an entry renamed within the
// directory during the listing may be missed under both its names (getdents promises nothing for entries that
// change), so a ctime that moved means the listing cannot be trusted to hold every secret.
ListResult stat_and_list(int fd, DirStat& st, Listing& l) {
  struct stat before {}, after {};
  if (fd < 0 || ::fstat(fd, &before) != 0) return ListResult::failed;
  st = {before.st_ino, before.st_ctim.tv_sec, before.st_ctim.tv_nsec};
  if (!read_dir(fd, l) || ::fstat(fd, &after) != 0) return ListResult::failed;
  bool still = after.st_ctim.tv_sec == before.st_ctim.tv_sec && after.st_ctim.tv_nsec == before.st_ctim.tv_nsec;
  return still ? ListResult::listed : ListResult::moving;
}

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

unsigned reader_threads(const ScanLimits& limits) {
  if (limits.readers != 0) return limits.readers;
  // Asked only when it matters: hardware_concurrency() reads /sys/devices/system/cpu/online.
  return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

// A warm run's cost is one stat per directory, and nearly all of it is the kernel's path walk: spread the stats of
// the cached directories over a few threads. Each directory is stat-ed before it is listed, as the cache needs.
std::vector<DirState> check_cached_dirs(int root, const ScanCache& c, const ScanLimits& limits) {
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
  if (threads > 1) threads = std::min<std::size_t>(threads, reader_threads(limits));
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

// ---- reading ahead: many directories to list (a first run, a branch switch) are listed on a few threads ----

// Where a directory listed ahead was written: which reader's log, and where in it.
struct Slot {
  static constexpr std::uint32_t kEmpty = UINT32_MAX;  // not listed ahead: the walk reads it itself
  std::uint32_t reader = kEmpty;
  std::uint32_t offset = 0;
};

// One reader's output: its listings back to back, in a compact binary form (a first run of a large tree would
// otherwise spend more on fresh memory pages than on the listings), and the slots of their subdirectories.
struct ReadAheadLog {
  std::string bytes;
  std::deque<Slot> slots;  // a deque: a slot's address is handed to another reader while this one appends
};

void put_raw(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

void put_raw_names(std::string& out, const std::vector<std::string>& names) {
  for (const auto& n : names) {
    put_raw(out, n.size());
    out += n;
  }
}

struct RawReader {
  const std::string& bytes;
  std::size_t pos;
  std::uint64_t number() {
    std::uint64_t v;
    std::memcpy(&v, bytes.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  void names(std::uint64_t n, std::vector<std::string>& out) {
    out.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
      auto len = number();
      out.emplace_back(bytes, pos, len);
      pos += len;
    }
  }
};

// What was listed ahead, read by the walk once every reader is done.
class ReadAhead {
 public:
  // A listing: its stat, its entries, and the slots of its subdirectories (in Listing::subdirs order).
  struct Found {
    DirStat st;
    Listing listing;
    const std::deque<Slot>* child_slots = nullptr;
    std::uint64_t first_child = 0;
  };

  std::vector<ReadAheadLog> logs;
  Slot root;                                            // a first run: the workspace root
  std::vector<std::pair<std::uint32_t, Slot>> changed;  // a warm run: by index in the previous walk, ascending

  const Slot* slot_of_changed(std::uint32_t index) const {
    auto it = std::lower_bound(changed.begin(), changed.end(), index, [](const auto& e, auto i) { return e.first < i; });
    return it != changed.end() && it->first == index ? &it->second : nullptr;
  }

  // Decodes a filled slot: `found` is filled when the directory was listed.
  ListResult decode(const Slot& slot, Found& f) const {
    const auto& log = logs[slot.reader];
    RawReader r{log.bytes, slot.offset};
    auto result = static_cast<ListResult>(r.number());
    if (result != ListResult::listed) return result;
    f.st.ino = r.number();
    f.st.ctime_sec = static_cast<std::int64_t>(r.number());
    f.st.ctime_nsec = static_cast<std::int64_t>(r.number());
    f.listing.entries = r.number();
    auto files = r.number(), dirs = r.number(), git = r.number(), links = r.number(), subdirs = r.number();
    f.first_child = r.number();
    f.child_slots = &log.slots;
    r.names(files, f.listing.files);
    r.names(dirs, f.listing.dirs);
    r.names(git, f.listing.git);
    r.names(links, f.listing.links);
    r.names(subdirs, f.listing.subdirs);
    return result;
  }

  static void encode(std::string& out, ListResult result, const DirStat& st, const Listing& l, std::uint64_t first_child) {
    put_raw(out, static_cast<std::uint64_t>(result));
    if (result != ListResult::listed) return;
    put_raw(out, st.ino);
    put_raw(out, static_cast<std::uint64_t>(st.ctime_sec));
    put_raw(out, static_cast<std::uint64_t>(st.ctime_nsec));
    put_raw(out, l.entries);
    put_raw(out, l.files.size());
    put_raw(out, l.dirs.size());
    put_raw(out, l.git.size());
    put_raw(out, l.links.size());
    put_raw(out, l.subdirs.size());
    put_raw(out, first_child);
    put_raw_names(out, l.files);
    put_raw_names(out, l.dirs);
    put_raw_names(out, l.git);
    put_raw_names(out, l.links);
    put_raw_names(out, l.subdirs);
  }
};

// Lists, in parallel, every directory the walk will have to read: the seeds, and below them every subdirectory
// the previous walk did not know (a known one is either unchanged, or changed and a seed itself). The walk then
// takes the listings in its own order, so the cache text and the results are exactly a serial walk's.
// Each reader keeps its own stack, depth first, and hands its oldest task to the shared one when a reader idles.
class ReadAheadPool {
 public:
  struct Task {
    std::string path;                             // relative to the workspace
    std::shared_ptr<const sys::UniqueFd> parent;  // the open parent, when listed in this pass: a short lookup
    const CachedDir* prev = nullptr;              // the previous walk's record, to tell known subdirectories
    int depth = 0;
    Slot* slot = nullptr;                         // where to say where the listing went
  };

  ReadAheadPool(int root, const ScanLimits& limits, const ScanCache* old, ReadAhead& out)
      : root_(root), limits_(limits), old_(old), out_(out) {}

  void seed(Task t) { shared_.push_back(std::move(t)); }

  // Reads on this thread and up to `threads - 1` helpers, started only once there is work to share (a small
  // workspace is done before a thread would have been).
  void run(unsigned threads) {
    out_.logs.resize(threads);
    for (auto& log : out_.logs) log.bytes.reserve(kLogReserve);
    busy_ = 1;
    std::vector<std::thread> helpers;
    auto start_helpers = [&] {
      for (unsigned t = 1; t < threads; ++t) {
        add_busy(1);
        try {
          helpers.emplace_back([this, t] { work(t); });
        } catch (const std::system_error&) {
          add_busy(-1);  // no thread to be had: fewer readers
          break;
        }
      }
    };
    work(0, threads > 1 ? start_helpers : std::function<void()>{});
    for (auto& h : helpers) h.join();
  }

 private:
  // Address space only: pages are touched as the log fills, and it is never copied to grow on a usual tree.
  static constexpr std::size_t kLogReserve = std::size_t{1} << 20;

  void work(unsigned reader, std::function<void()> start_helpers = {}) {
    std::vector<Task> mine;
    Listing l;  // reused: its vectors keep their capacity
    l.names = limits_.names;
    while (take(mine)) {
      while (!mine.empty()) {
        if (mine.size() > 1 && start_helpers) std::exchange(start_helpers, {})();
        if (mine.size() > 1 && idle_.load(std::memory_order_relaxed) > 0) give(mine);
        auto t = std::move(mine.back());
        mine.pop_back();
        read(reader, t, l, mine);
      }
    }
  }

  void add_busy(int n) {
    std::lock_guard lock(mutex_);
    busy_ = static_cast<unsigned>(static_cast<int>(busy_) + n);
  }

  // Waits for a shared task; false when there is none and no reader can make more.
  bool take(std::vector<Task>& mine) {
    std::unique_lock lock(mutex_);
    --busy_;
    ++idle_;
    wake_.wait(lock, [this] { return !shared_.empty() || busy_ == 0; });
    --idle_;
    if (shared_.empty()) {
      wake_.notify_all();
      return false;
    }
    mine.push_back(std::move(shared_.back()));
    shared_.pop_back();
    ++busy_;
    return true;
  }

  // The oldest task is the nearest the root: the largest share of work to hand over.
  void give(std::vector<Task>& mine) {
    {
      std::lock_guard lock(mutex_);
      shared_.push_back(std::move(mine.front()));
    }
    mine.erase(mine.begin());
    wake_.notify_one();
  }

  void read(unsigned reader, Task& t, Listing& l, std::vector<Task>& mine) {
    if (entries_.load(std::memory_order_relaxed) > limits_.max_entries) return;  // the walk stops there too
    auto name = t.path.substr(t.path.rfind('/') + 1);
    auto dir = std::make_shared<const sys::UniqueFd>(t.parent ? ::openat(t.parent->get(), name.c_str(), kOpenDir)
                                                              : open_beneath(root_, t.path));
    l.clear();
    DirStat st;
    auto result = stat_and_list(dir->get(), st, l);
    bool ok = result == ListResult::listed;
    entries_.fetch_add(l.entries, std::memory_order_relaxed);
    auto& log = out_.logs[reader];
    auto first_child = log.slots.size();
    if (ok) log.slots.resize(first_child + l.subdirs.size());
    *t.slot = {reader, static_cast<std::uint32_t>(log.bytes.size())};
    ReadAhead::encode(log.bytes, result, st, l, first_child);
    if (!ok || t.depth >= limits_.max_depth) return;
    ChildFinder known(old_, t.prev);
    for (std::size_t i = 0; i < l.subdirs.size(); ++i)
      if (known.find(l.subdirs[i]) == nullptr)
        mine.push_back({join(t.path, l.subdirs[i]), dir, nullptr, t.depth + 1, &log.slots[first_child + i]});
  }

  int root_;
  const ScanLimits& limits_;
  const ScanCache* old_;
  ReadAhead& out_;
  std::atomic<std::size_t> entries_{0};
  std::atomic<unsigned> idle_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Task> shared_;  // guarded by mutex_
  unsigned busy_ = 0;         // guarded by mutex_: readers holding or reading tasks
};

// Lists ahead, on threads, the directories this walk must read when there are enough of them: all of them on a
// first run; after a large change (a branch switch), the changed ones and whatever is new below them. A handful
// of changed directories is read by the walk itself.
void read_ahead(int root, const ScanLimits& limits, const ScanCache* old, const std::vector<DirState>& prestat,
                ReadAhead& out) {
  constexpr std::ptrdiff_t kChangedWorthThreads = 32;
  if (limits.readers == 1) return;
  ReadAheadPool pool(root, limits, old, out);
  if (old == nullptr) {
    pool.seed({"", nullptr, nullptr, 0, &out.root});
  } else {
    auto changed = std::count(prestat.begin(), prestat.end(), DirState::changed);
    if (changed < kChangedWorthThreads) return;
    out.changed.reserve(static_cast<std::size_t>(changed));  // never reallocated: seeds point into it
    auto parent = parent_indices(*old);
    std::array<char, PATH_MAX> buf;
    for (std::uint32_t i = 0; i < prestat.size(); ++i) {
      if (prestat[i] != DirState::changed) continue;
      int depth = 0;
      for (auto j = i; j != 0; j = parent[j]) ++depth;
      const char* rel = relative_path(*old, parent, i, buf);
      if (rel == nullptr || depth > limits.max_depth) continue;
      auto& slot = out.changed.emplace_back(i, Slot{}).second;
      pool.seed({i == 0 ? "" : rel, nullptr, &old->dirs[i], depth, &slot});
    }
  }
  pool.run(reader_threads(limits));
}

// Names in the previous walk's records, as views into its text: a range for Walker::report, with no copy on the
// warm path.
struct CachedNames {
  const ScanCache* cache;
  const TextSpan* first;
  std::uint32_t count;

  struct Iterator {
    const ScanCache* cache;
    const TextSpan* at;
    std::string_view operator*() const { return cache->view(*at); }
    Iterator& operator++() {
      ++at;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return at != other.at; }
  };
  Iterator begin() const { return {cache, first}; }
  Iterator end() const { return {cache, first + count}; }
};

struct Walker {
  int root;
  std::int64_t now_sec;
  const ScanLimits& limits;
  SecretScan& out;
  const ScanCache* old;  // the previous walk (null or empty: none)
  const std::vector<DirState>& prestat;  // each of old's directories, checked before this walk
  const ReadAhead& ahead;                // directories already listed for this walk
  std::string& text;     // this walk, written as the next cache file
  std::string path;      // of the directory being visited, relative to the workspace

  // `parent` is the open parent directory when it was listed in this walk (a short lookup), else -1; `slot` is
  // where the directory was listed ahead, if it was.
  // `look` is what the directory is looked at for (everything, or keys below a skipped directory).
  void walk(std::string_view name, const CachedDir* prev, int depth, int parent, const Slot* slot, Look look) {
    auto mark = path.size();
    if (!name.empty()) path.append(mark == 0 ? "" : "/").append(name);
    visit(name, prev, depth, parent, slot, look);
    path.resize(mark);
  }

  void visit(std::string_view name, const CachedDir* prev, int depth, int parent, const Slot* slot, Look look) {
    if (depth > limits.max_depth || out.entries_seen > limits.max_entries) {
      out.truncated = true;
      return put_unread(name);
    }
    if (prev != nullptr) {
      auto index = static_cast<std::uint32_t>(prev - old->dirs.data());
      // A directory gone when checked before the walk but named by its parent's listing moved meanwhile: it is
      // read as it is now (no slot: it was not listed ahead), and reported if it is gone again.
      if (prestat[index] == DirState::unchanged) return reuse(*prev, depth, look);
      slot = ahead.slot_of_changed(index);
    }
    if (slot != nullptr && slot->reader != Slot::kEmpty) {
      ReadAhead::Found found;
      auto result = ahead.decode(*slot, found);
      if (result != ListResult::listed) return put_not_listed(name, result);
      return put_listing(name, found.st, found.listing, prev, depth, -1, &found, look);
    }
    sys::UniqueFd fd(parent >= 0 ? ::openat(parent, std::string(name).c_str(), kOpenDir) : open_beneath(root, path));
    DirStat st;
    Listing l;
    l.names = limits.names;
    auto result = stat_and_list(fd.get(), st, l);
    if (result != ListResult::listed) return put_not_listed(name, result);
    put_listing(name, st, l, prev, depth, fd.get(), nullptr, look);
  }

  // Unchanged since the last walk: its record is copied as it was and its subdirectories are visited in step.
  void reuse(const CachedDir& d, int depth, Look look) {
    count_entries(d.entries);
    auto names = [this](std::uint32_t from, std::uint32_t n) { return CachedNames{old, old->secrets.data() + from, n}; };
    auto first = d.first_secret;
    report(look, names(first, d.files), names(first + d.files, d.dirs), names(first + d.files + d.dirs, d.git),
           names(first + d.files + d.dirs + d.git, d.links));
    text += old->view(d.record);
    put_number(text, d.children);
    auto child = static_cast<std::uint32_t>(&d - old->dirs.data()) + 1;
    for (std::uint32_t c = 0; c < d.children; ++c) {
      const auto& sub = old->dirs[child];
      walk(old->view(sub.name), &sub, depth + 1, -1, nullptr, look_below(look, old->view(sub.name), *limits.names));
      child = sub.end;
    }
  }

  // Listed in this walk: `fd` is the directory, or -1 when it was read ahead (`found`: its subdirectories' slots).
  void put_listing(std::string_view name, const DirStat& st, const Listing& l, const CachedDir* prev, int depth, int fd,
                   const ReadAhead::Found* found, Look look) {
    ++out.dirs_read;
    count_entries(l.entries);
    report(look, l.files, l.dirs, l.git, l.links);
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
    put_names(text, l.git);
    put_names(text, l.links);
    put_number(text, static_cast<std::int64_t>(l.subdirs.size()));
    ChildFinder previous(old, prev);
    for (std::size_t i = 0; i < l.subdirs.size(); ++i) {
      const Slot* child = found != nullptr ? &(*found->child_slots)[found->first_child + i] : nullptr;
      walk(l.subdirs[i], previous.find(l.subdirs[i]), depth + 1, fd, child, look_below(look, l.subdirs[i], *limits.names));
    }
  }

  // What one directory's secret names count for, by its place (see Look). Git entries count everywhere: the check
  // after a run looks for repositories in every directory.
  template <typename Names>
  void report(Look look, const Names& files, const Names& dirs, const Names& git, const Names& links) {
    for (const auto& g : git) out.git.push_back(join(path, g));
    if (look == Look::none) return;
    for (const auto& f : files)
      if (look == Look::all || limits.names->is_key(f)) out.files.push_back(join(path, f));
    if (look == Look::keys) return;
    for (const auto& d : dirs) out.dirs.push_back(join(path, d));
    for (const auto& k : links) out.links.push_back(join(path, k));
  }

  // Not listed (too deep, past the entry budget, unreadable or gone): a record that never matches, so the next
  // walk tries again.
  // A listing that failed: a directory that is still there could not be read (git can still enter it with
  // search permission alone), so the caller is told.
  // A directory named by its parent's listing that is no longer there moved during the walk: reported, so the
  // caller walks again rather than miss what it holds under its new name.
  void put_unreadable(std::string_view name) {
    struct stat st {};
    if (::fstatat(root, path.empty() ? "." : path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
      out.unreadable.push_back(path);
    else
      out.vanished.push_back(path);
    put_unread(name);
  }

  void put_not_listed(std::string_view name, ListResult result) {
    if (result != ListResult::moving) return put_unreadable(name);
    out.vanished.push_back(path);
    put_unread(name);
  }

  void put_unread(std::string_view name) {
    put_name(text, name);
    text += "0 -1 -1 0 0 0 0 0 0 ";
  }

  void count_entries(std::uint64_t n) {
    out.entries_seen += n;
    if (out.entries_seen > limits.max_entries) out.truncated = true;
  }
};

// ---- from what the walk found to what the sandbox masks ----

constexpr std::uint64_t kBeneathNoLinks = sys::kResolveBeneath | sys::kResolveNoSymlinks | sys::kResolveNoMagicLinks;

// The name as it is now, through no symlink (a final one is the link itself).
bool stat_beneath(int root, const std::string& rel, struct stat& st) {
  sys::UniqueFd fd(sys::openat2(root, rel.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, kBeneathNoLinks));
  return fd.valid() && ::fstat(fd.get(), &st) == 0;
}

std::string fd_path(int fd) {
  char link[32], path[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  auto n = ::readlink(link, path, sizeof path);
  return n > 0 && static_cast<std::size_t>(n) < sizeof path ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

std::string parent_of(const std::string& rel) {
  auto slash = rel.rfind('/');
  return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}

// Where the secret-named symlink `link` leads, relative to root, when that is a file or a directory inside root;
// empty otherwise (dangling, or leading out: the sandbox does not see the host there). The kernel follows the
// chain beneath root, so no link can lead the lookup out; an absolute target inside the scanned directory is made
// relative to it first, as the sandbox sees the workspace at the same place.
std::string link_destination(int root, const std::string& workspace, const std::string& link, struct stat& st) {
  sys::UniqueFd self(sys::openat2(root, link.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, kBeneathNoLinks));
  char target[PATH_MAX];
  auto n = self.valid() ? ::readlinkat(self.get(), "", target, sizeof target) : -1;
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof target) return {};
  std::string to(target, static_cast<std::size_t>(n));
  if (to.starts_with('/')) {
    if (!to.starts_with(workspace + "/")) return {};
    to = to.substr(workspace.size() + 1);
  } else {
    to = join(parent_of(link), to);
  }
  sys::UniqueFd dest(sys::openat2(root, to.c_str(), O_PATH | O_CLOEXEC, 0, sys::kResolveBeneath | sys::kResolveNoMagicLinks));
  if (!dest.valid() || ::fstat(dest.get(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) return {};
  // The path the chain ended at, without links: the mount then opens it refusing every symlink.
  auto base = fd_path(root), at = fd_path(dest.get());
  if (base.empty() || !at.starts_with(base == "/" ? base : base + "/")) return {};
  return at.substr(base == "/" ? 1 : base.size() + 1);
}

// A secret file with more than one name: the inode, and how many of its names the second walk found.
struct Linked {
  std::uint64_t dev = 0, ino = 0, links = 0, found = 0;
  std::string path;
};

// The second walk, only for hard-linked secrets: every directory below root (.git, dependency trees and secret
// directories too: an earlier run could plant a name anywhere), matching entries by the inode number getdents
// gives, each match confirmed by a stat. Bounded like the first walk: names past the bounds count as not found.
struct NameFinder {
  std::vector<Linked>& wanted;
  const ScanLimits& limits;
  std::vector<MaskTarget>& out;
  std::size_t entries = 0;

  void walk(int dirfd, const std::string& path, int depth) {
    alignas(8) char buf[32768];
    std::vector<std::string> subdirs;
    for (;;) {
      auto n = ::getdents64(dirfd, buf, sizeof buf);
      if (n <= 0) break;
      for (decltype(n) off = 0; off < n;) {
        auto* d = reinterpret_cast<struct dirent64*>(buf + off);
        off += d->d_reclen;
        std::string_view name(d->d_name);
        if (name == "." || name == ".." || ++entries > limits.max_entries) continue;
        auto type = d->d_type == DT_UNKNOWN ? type_of(dirfd, d->d_name) : d->d_type;
        if (type == DT_DIR) subdirs.emplace_back(name);
        else if (type == DT_REG) match(dirfd, d->d_name, d->d_ino, path);
      }
    }
    if (depth >= limits.max_depth) return;
    for (const auto& sub : subdirs) {
      sys::UniqueFd fd(::openat(dirfd, sub.c_str(), kOpenDir));
      if (fd.valid()) walk(fd.get(), join(path, sub), depth + 1);
    }
  }

  void match(int dirfd, const char* name, std::uint64_t ino, const std::string& path) {
    for (auto& w : wanted) {
      struct stat st {};
      if (w.ino != ino || ::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (st.st_dev != w.dev || st.st_ino != w.ino) continue;
      ++w.found;
      out.push_back({join(path, name), st.st_ino, S_IFREG});
    }
  }
};

bool is_below(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/';
}

// One mask per name, none below a masked directory (it is hidden whole, and the name would be gone at mount time).
void tidy_masks(std::vector<MaskTarget>& masks) {
  std::sort(masks.begin(), masks.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  masks.erase(std::unique(masks.begin(), masks.end(), [](const auto& a, const auto& b) { return a.path == b.path; }), masks.end());
  std::vector<std::string> dirs;
  for (const auto& m : masks)
    if (m.type == S_IFDIR) dirs.push_back(m.path);
  std::erase_if(masks, [&](const MaskTarget& m) {
    return std::any_of(dirs.begin(), dirs.end(), [&](const std::string& d) { return is_below(m.path, d); });
  });
}

}  // namespace

void resolve_masks(int root, const std::string& workspace, SecretScan& scan, const ScanLimits& limits) {
  std::vector<Linked> linked;
  auto add = [&](const std::string& rel, const struct stat& st) {
    scan.masks.push_back({rel, st.st_ino, st.st_mode & S_IFMT});
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) linked.push_back({st.st_dev, st.st_ino, st.st_nlink, 0, rel});
  };
  // Each as the walk saw it, or the tree changed since: reported, for the caller to walk again.
  auto take = [&](const std::string& rel, mode_t type) {
    struct stat st {};
    if (stat_beneath(root, rel, st) && (st.st_mode & S_IFMT) == type) add(rel, st);
    else scan.vanished.push_back(rel);
  };
  for (const auto& f : scan.files) take(f, S_IFREG);
  for (const auto& d : scan.dirs) take(d, S_IFDIR);
  for (const auto& d : scan.unreadable)
    if (!d.empty()) take(d, S_IFDIR);
  for (const auto& l : scan.links) {
    take(l, S_IFLNK);
    struct stat st {};
    auto dest = link_destination(root, workspace, l, st);
    if (!dest.empty()) add(dest, st);
  }
  // Linked twice from the secret names themselves (a link and its target, two secret names): one entry each.
  std::sort(linked.begin(), linked.end(), [](const auto& a, const auto& b) { return a.ino < b.ino; });
  linked.erase(std::unique(linked.begin(), linked.end(), [](const auto& a, const auto& b) { return a.ino == b.ino && a.dev == b.dev; }),
               linked.end());
  if (!linked.empty()) {
    sys::UniqueFd top(::openat(root, ".", kOpenDir));
    if (top.valid()) NameFinder{linked, limits, scan.masks}.walk(top.get(), "", 0);
    for (const auto& l : linked)
      if (l.found < l.links) scan.linked_outside.push_back({l.path, l.links, l.found});
  }
  tidy_masks(scan.masks);
  std::sort(scan.vanished.begin(), scan.vanished.end());
}

SecretScan scan_workspace_secrets(const std::string& workspace, const ScanLimits& limits, ScanCache* cache, int held) {
  SecretScan out;
  sys::UniqueFd root(held >= 0 ? ::openat(held, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                               : ::open(workspace.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return out;
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  std::string text(kCacheMagic);
  put_name(text, workspace);
  put_name(text, limits.names->fingerprint());
  const ScanCache* old = cache != nullptr && !cache->dirs.empty() ? cache : nullptr;
  if (cache != nullptr) text.reserve(cache->text.size() + 4096);
  auto prestat = old != nullptr ? check_cached_dirs(root.get(), *old, limits) : std::vector<DirState>{};
  ReadAhead ahead;
  read_ahead(root.get(), limits, old, prestat, ahead);
  Walker{root.get(), now.tv_sec, limits, out, old, prestat, ahead, text, {}}.walk(
      "", old != nullptr ? &old->dirs[0] : nullptr, 0, -1, &ahead.root, Look::all);
  if (cache != nullptr) {
    // Unchanged text: the index already describes it. Otherwise index the new text (our own output, so valid).
    bool changed = text != cache->text;
    if (changed) parse_scan_cache(std::move(text), workspace, *cache, limits);
    cache->changed = changed;
  }
  std::sort(out.files.begin(), out.files.end());
  std::sort(out.dirs.begin(), out.dirs.end());
  std::sort(out.git.begin(), out.git.end());
  std::sort(out.unreadable.begin(), out.unreadable.end());
  std::sort(out.links.begin(), out.links.end());
  std::sort(out.vanished.begin(), out.vanished.end());
  return out;
}

std::optional<std::string> scan_cache_scanned_path(std::string_view head) {
  if (!head.starts_with(kCacheMagic)) return std::nullopt;
  Reader r{head, kCacheMagic.size()};
  TextSpan path;
  if (!r.name(path) || path.size == 0 || head[path.offset] != '/') return std::nullopt;
  auto text = head.substr(path.offset, path.size);
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  return std::string(text);
}

bool parse_scan_cache(std::string text, const std::string& workspace, ScanCache& out, const ScanLimits& limits) {
  out = {};
  out.text = std::move(text);
  Reader r{out.text};
  TextSpan ws, names;
  auto magic = kCacheMagic;
  bool ok = out.text.size() < UINT32_MAX && std::string_view(out.text).starts_with(magic);
  r.pos = magic.size();
  out.dirs.reserve(out.text.size() / 21);  // no record is shorter than "1 a0 0 0 0 0 0 0 0 0 ": never reallocated
  ok = ok && r.name(ws) && out.view(ws) == workspace && r.name(names) && out.view(names) == limits.names->fingerprint() &&
       read_record(r, out, true);
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
