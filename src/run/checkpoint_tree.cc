#include "run/checkpoint_tree.h"

#include <dirent.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <string_view>

#include "core/limits.h"
#include "sys/file_copy.h"
#include "sys/log.h"
#include "sys/unique_fd.h"

namespace confine::run {
namespace {

std::string child_path(const std::string& rel, const char* name) { return rel == "." ? name : rel + "/" + name; }

TreeEntry entry_of(const struct stat& st) {
  TreeEntry e;
  e.kind = S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : S_ISLNK(st.st_mode) ? 'l' : 'o';
  e.mode = st.st_mode & 07777;
  e.uid = st.st_uid;
  e.gid = st.st_gid;
  e.size = static_cast<std::uint64_t>(st.st_size);
  e.ino = st.st_ino;
  e.mtime = st.st_mtim;
  e.ctime = st.st_ctim;
  return e;
}

bool same_time(const std::timespec& a, const std::timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

// A directory below `parent`, never through a link at `name`.
sys::UniqueFd open_dir(int parent, const char* name) {
  return sys::UniqueFd(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

}  // namespace

std::string parent_path(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Sorted, so that what is saved, and reported, does not depend on the order the filesystem lists them in. Read
// with getdents64 on `dir` itself (from its start): no second descriptor to open, check and close for each of a
// workspace's directories, which every walk of it lists.
sys::Result<std::vector<std::string>> names_in(int dir) {
  if (::lseek(dir, 0, SEEK_SET) != 0) return sys::errno_error("list");
  std::vector<std::string> names;
  alignas(dirent64) char buf[32768];
  for (;;) {
    ssize_t n = ::getdents64(dir, buf, sizeof buf);
    if (n < 0) return sys::errno_error("list");
    if (n == 0) break;
    for (ssize_t pos = 0; pos < n;) {
      const auto* ent = reinterpret_cast<const dirent64*>(buf + pos);
      if (std::strcmp(ent->d_name, ".") != 0 && std::strcmp(ent->d_name, "..") != 0) names.emplace_back(ent->d_name);
      pos += ent->d_reclen;
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

sys::Result<std::string> read_link(int dir, const char* name) {
  std::string target(256, '\0');
  for (;;) {
    ssize_t n = ::readlinkat(dir, name, target.data(), target.size());
    if (n < 0) return sys::errno_error("readlink");
    if (static_cast<std::size_t>(n) < target.size()) {
      target.resize(static_cast<std::size_t>(n));
      return target;
    }
    target.resize(target.size() * 2);
  }
}

// The first of the shell patterns `exclude` that `name` matches, or empty.
std::string excluded_by(const std::vector<std::string>& exclude, const std::string& name) {
  for (const auto& pattern : exclude)
    if (::fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0) return pattern;
  return {};
}

// Walks below `dir`, calling `visit(path, entry)` for each name that matches no pattern of `exclude` and
// `skip(path, pattern)` for each that does (not entered).
template <typename Visit, typename Skip>
void walk(int dir, const std::string& rel, const std::vector<std::string>& exclude, Progress* progress, const Visit& visit,
          const Skip& skip) {
  auto names = names_in(dir);
  if (!names) return;
  for (const auto& name : *names) {
    auto path = child_path(rel, name.c_str());
    if (auto pattern = excluded_by(exclude, name); !pattern.empty()) {
      skip(std::move(path), std::move(pattern));
      continue;
    }
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (progress != nullptr) progress->step();
    visit(path, entry_of(st));
    if (!S_ISDIR(st.st_mode)) continue;
    if (auto sub = open_dir(dir, name.c_str()); sub.valid()) walk(sub.get(), path, exclude, progress, visit, skip);
  }
}

// The entries of `m` below `path`, once `path` itself is taken out: the range of names that begin with "path/"
// ('0' follows '/' in every character set), or all that is left for "." (of which "-x" sorts before "."). Never
// from `path` on: "path-2" and "path.txt" sort between "path" and "path/".
std::pair<Manifest::iterator, Manifest::iterator> below(Manifest& m, const std::string& path) {
  if (path == ".") return {m.begin(), m.end()};
  return {m.lower_bound(path + "/"), m.lower_bound(path + "0")};
}

const char* kind_name(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    default: return "not a file, directory or link";
  }
}

// Copies one workspace into the store (save_tree). Errors reading the workspace make a name "not saved" (with
// why); errors writing the store fail the checkpoint.
class Saver {
 public:
  // `scanned`: the workspace as the walk before the save found it; `same`: its directories unchanged since the
  // previous checkpoint.
  Saver(const PreviousTree& previous, const std::vector<std::string>& exclude, Manifest& scanned,
        const std::set<std::string>& same, Progress& progress)
      : previous_(previous), exclude_(exclude), scanned_(scanned), same_(same), progress_(progress) {}

  // `prev`: the same directory in the previous checkpoint's tree, or -1 if it has none.
  sys::Status contents(int from, int to, int prev, const std::string& rel) {
    auto names = names_in(from);
    if (!names) {
      skip(rel, std::strerror(names.error().err));
      return sys::ok_status();
    }
    for (const auto& name : *names) {
      auto path = child_path(rel, name.c_str());
      struct stat st {};
      if (!excluded_by(exclude_, name).empty()) continue;  // listed by the scan
      if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        // Gone meanwhile, or out of reach (a directory that can be listed but not entered): said, so that a restore
        // leaves it alone instead of removing what it never saved.
        if (errno != ENOENT) skip(path, std::strerror(errno));
        continue;
      }
      progress_.again();
      sys::Status s = sys::ok_status();
      if (S_ISDIR(st.st_mode)) s = directory(from, to, prev, path, name.c_str());
      else if (S_ISREG(st.st_mode) && share(entry_of(st), path, prev, to, name.c_str())) continue;
      else if (S_ISREG(st.st_mode)) s = file(from, to, path, name.c_str());
      else if (S_ISLNK(st.st_mode)) s = link(from, to, path, name.c_str(), st);
      else skip(path, std::string(kind_name(st.st_mode)) + ": only files, directories and links are saved");
      if (!s) return s;
    }
    return sys::ok_status();
  }

  // A directory unchanged since the previous checkpoint, at `path` and below: not stored again, but referred to
  // (in the previous checkpoint's store, or where that one refers to), with what the scan saw in the manifest.
  void share_directory(const std::string& path) {
    out.shared_directories[path] = previous_.id;
    out.manifest.insert(scanned_.extract(path));
    auto [it, last] = below(scanned_, path);
    while (it != last) {
      if (it->second.kind == 'f') ++out.files, ++out.shared;
      out.manifest.insert(scanned_.extract(it++));
    }
  }

  SavedTree out;

 private:
  void skip(const std::string& path, std::string why) { out.skipped.push_back({path, std::move(why)}); }

  sys::Error store_error(const std::string& path) const {
    return sys::errno_error(fmt::format("--checkpoint: storing `{}`", printable(path)));
  }

  sys::Status directory(int from, int to, int prev, const std::string& path, const char* name) {
    if (same_.contains(path)) {
      share_directory(path);
      return sys::ok_status();
    }
    auto src = open_dir(from, name);
    struct stat st {};
    if (!src.valid() || ::fstat(src.get(), &st) != 0) {
      skip(path, std::strerror(errno));
      return sys::ok_status();
    }
    if (::mkdirat(to, name, 0700) != 0) return store_error(path);
    auto dst = open_dir(to, name);
    if (!dst.valid()) return store_error(path);
    out.manifest[path] = entry_of(st);
    // Where the previous checkpoint keeps this directory: in its own tree, or (unchanged there too) in an older one's.
    auto prev_sub = prev < 0 ? sys::UniqueFd() : open_dir(prev, name);
    if (!prev_sub.valid() && previous_.manifest != nullptr) prev_sub = previous_.open(path);
    return contents(src.get(), dst.get(), prev_sub.valid() ? prev_sub.get() : -1, path);
  }

  // Unchanged since the previous checkpoint (by what fstatat saw, before any open: an unchanged file costs a
  // link, no copy): stored once, under both. A link joins two store files, never a store file and a workspace
  // one, so nothing the sandbox writes later reaches a checkpoint (the store's files are never written).
  bool share(const TreeEntry& e, const std::string& path, int prev, int to, const char* name) {
    if (prev < 0) return false;
    auto it = previous_.manifest->find(path);
    if (it == previous_.manifest->end() || !unchanged(it->second, e) || ::linkat(prev, name, to, name, 0) != 0) return false;
    out.manifest[path] = e;
    ++out.files;
    ++out.shared;
    return true;
  }

  sys::Status file(int from, int to, const std::string& path, const char* name) {
    // O_NONBLOCK: a FIFO swapped in since the fstatat must not hang the start; fstat tells.
    sys::UniqueFd src(::openat(from, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct stat st {};
    if (!src.valid() || ::fstat(src.get(), &st) != 0) {
      skip(path, std::strerror(errno));
      return sys::ok_status();
    }
    if (!S_ISREG(st.st_mode)) {
      skip(path, "replaced while it was being saved");
      return sys::ok_status();
    }
    auto e = entry_of(st);
    sys::UniqueFd dst(::openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!dst.valid()) return store_error(path);
    // A clone costs no bytes, so it is tried before the budget is asked.
    bool cloned = sys::clone_contents(src.get(), dst.get());
    if (!cloned) {
      if (auto why = over_budget(sys::data_bytes(st)); !why.empty()) {
        ::unlinkat(to, name, 0);
        skip(path, why);
        return sys::ok_status();
      }
      auto copied = sys::copy_data(src.get(), dst.get(), st.st_size);
      if (!copied) return copied.error().wrap(fmt::format("--checkpoint: storing `{}`", printable(path)));
      out.copied += *copied;
      left_ -= std::min(left_, *copied);
      progress_.copied(*copied);
    }
    out.cloned += cloned ? 1 : 0;
    out.manifest[path] = e;
    ++out.files;
    return sys::ok_status();
  }

  // Why a file with `cost` bytes of data is not copied, or empty if it is.
  std::string over_budget(std::uint64_t cost) const {
    if (cost > kFileBudget)
      return fmt::format("{} of data, more than the {} a checkpoint copies of one file", format_bytes(cost), format_bytes(kFileBudget));
    if (cost > left_)
      return fmt::format("{} of data, past the {} a checkpoint copies in all", format_bytes(cost), format_bytes(kTotalBudget));
    return {};
  }

  sys::Status link(int from, int to, const std::string& path, const char* name, const struct stat& st) {
    auto target = read_link(from, name);
    if (!target) {
      skip(path, std::strerror(target.error().err));
      return sys::ok_status();
    }
    if (::symlinkat(target->c_str(), to, name) != 0) return store_error(path);
    out.manifest[path] = entry_of(st);
    return sys::ok_status();
  }

  const PreviousTree& previous_;
  const std::vector<std::string>& exclude_;
  Manifest& scanned_;  // what a shared directory takes its entries from (moved, not copied)
  const std::set<std::string>& same_;
  Progress& progress_;
  std::uint64_t left_ = kTotalBudget;
};

// Puts a stored tree back into the workspace (restore_tree), in two passes: `clear` removes what the checkpoint
// does not hold as it is, then `put` writes the rest. Each name is opened below its directory's fd, O_NOFOLLOW:
// a link the sandbox planted is removed like any other name, never entered.
class Restorer {
 public:
  Restorer(const Manifest& manifest, const OpenStored& stored, const std::set<std::string>& keep, Progress& progress)
      : manifest_(manifest), stored_(stored), keep_(keep), progress_(progress) {
    // The names in each directory, from the manifest: a directory the checkpoint refers to in an older one is not
    // in its own stored tree.
    for (const auto& [path, e] : manifest_)
      if (path != ".") children_[parent_path(path)].push_back(path.substr(path.rfind('/') + 1));
  }

  sys::Status clear(int dir, const std::string& rel) {
    auto names = names_in(dir);
    if (!names) return failure("reading", rel, names.error().err);
    for (const auto& name : *names) {
      auto path = child_path(rel, name.c_str());
      struct stat st {};
      if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      progress_.step();
      // Not saved, so nothing is written there: left as it is, whatever it is now.
      if (keep_.contains(path)) continue;
      auto saved = manifest_.find(path);
      char saved_kind = saved == manifest_.end() ? 0 : saved->second.kind;
      if (S_ISDIR(st.st_mode)) {
        auto sub = open_dir(dir, name.c_str());
        if (!sub.valid()) return failure("opening", path, errno);
        // Its entries can be removed only if it is writable (a read-only directory, as Go's module cache makes).
        if ((st.st_mode & 0700) != 0700 && st.st_uid == ::geteuid()) ::fchmod(sub.get(), st.st_mode | 0700);
        if (auto s = clear(sub.get(), path); !s) return s;
        if (saved_kind == 'd') continue;  // kept; its owner, mode and times are put back after its entries
        if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0) return failure("removing", path, errno);
        continue;
      }
      if (S_ISREG(st.st_mode) && saved_kind == 'f' && unchanged(saved->second, entry_of(st))) continue;
      if (::unlinkat(dir, name.c_str(), 0) != 0) return failure("removing", path, errno);
    }
    return sys::ok_status();
  }

  // Writes the names the checkpoint has in the directory `rel`, whose stored copy is `from`.
  sys::Status put(int from, int to, const std::string& rel) {
    auto names = children_.find(rel);
    if (names == children_.end()) return sys::ok_status();
    for (const auto& name : names->second) {
      auto path = child_path(rel, name.c_str());
      const auto& saved = manifest_.at(path);
      progress_.step();
      sys::Status s = sys::ok_status();
      switch (saved.kind) {
        case 'd': s = put_directory(from, to, path, name.c_str(), saved); break;
        case 'f': s = put_file(from, to, path, name.c_str(), saved); break;
        case 'l': s = put_link(from, to, path, name.c_str(), saved); break;
        default: return sys::plain_error(fmt::format("the checkpoint is damaged: `{}` has no kind", printable(path)));
      }
      if (!s) return s;
    }
    return sys::ok_status();
  }

  // Owner (only root may give a file away), then mode (a chown clears set-id bits), then times (last: every
  // change above moves them). A file never gets a set-user-ID or set-group-ID bit back: a restore must not be a
  // way to make a privileged program, whatever the store holds (a directory's set-group-ID bit grants nothing).
  sys::Status apply(int fd, const std::string& path, const TreeEntry& e) const {
    const std::timespec times[2] = {{0, UTIME_OMIT}, e.mtime};
    mode_t mode = e.kind == 'd' ? e.mode : e.mode & ~mode_t{S_ISUID | S_ISGID};
    if ((as_root_ && ::fchown(fd, e.uid, e.gid) != 0) || ::fchmod(fd, mode) != 0 || ::futimens(fd, times) != 0)
      return failure("setting the owner, mode and times of", path, errno);
    return sys::ok_status();
  }

 private:
  static sys::Error failure(const char* doing, const std::string& path, int err) {
    return sys::Error{fmt::format("{} `{}`", doing, printable(path)), err};
  }

  sys::Status put_directory(int from, int to, const std::string& path, const char* name, const TreeEntry& e) {
    // It may be there already: kept by `clear` because the checkpoint has a directory at this name.
    if (::mkdirat(to, name, 0700) != 0 && errno != EEXIST) return failure("making", path, errno);
    auto dst = open_dir(to, name);
    if (!dst.valid()) return failure("opening", path, errno);
    // In this checkpoint's tree, or in the older checkpoint's it refers to.
    auto src = open_dir(from, name);
    if (!src.valid() && errno == ENOENT) src = stored_(path);
    if (!src.valid()) return failure("opening the stored", path, errno);
    if (auto s = put(src.get(), dst.get(), path); !s) return s;
    return apply(dst.get(), path, e);
  }

  sys::Status put_file(int from, int to, const std::string& path, const char* name, const TreeEntry& e) {
    sys::UniqueFd dst(::openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!dst.valid()) {
      struct stat st {};
      // Kept by `clear`: unchanged since the checkpoint, so already what it holds.
      if (errno == EEXIST && ::fstatat(to, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && unchanged(e, entry_of(st)))
        return sys::ok_status();
      return failure("creating", path, errno);
    }
    sys::UniqueFd src(::openat(from, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!src.valid()) return failure("opening the stored", path, errno);
    if (auto c = sys::copy_contents(src.get(), dst.get(), static_cast<off_t>(e.size)); !c)
      return c.error().wrap(fmt::format("writing `{}`", printable(path)));
    return apply(dst.get(), path, e);
  }

  sys::Status put_link(int from, int to, const std::string& path, const char* name, const TreeEntry& e) const {
    auto target = read_link(from, name);
    if (!target) return failure("reading the stored", path, target.error().err);
    if (::symlinkat(target->c_str(), to, name) != 0) return failure("making the link", path, errno);
    const std::timespec times[2] = {{0, UTIME_OMIT}, e.mtime};
    if ((as_root_ && ::fchownat(to, name, e.uid, e.gid, AT_SYMLINK_NOFOLLOW) != 0) ||
        ::utimensat(to, name, times, AT_SYMLINK_NOFOLLOW) != 0)
      return failure("setting the owner and times of", path, errno);
    return sys::ok_status();
  }

  const Manifest& manifest_;
  const OpenStored& stored_;
  const std::set<std::string>& keep_;
  Progress& progress_;
  std::map<std::string, std::vector<std::string>> children_;
  bool as_root_ = ::geteuid() == 0;
};

}  // namespace

bool unchanged(const TreeEntry& a, const TreeEntry& b) {
  if (a.kind != b.kind || a.mode != b.mode || a.uid != b.uid || a.gid != b.gid) return false;
  return a.kind == 'd' || (a.ino == b.ino && a.size == b.size && same_time(a.mtime, b.mtime) && same_time(a.ctime, b.ctime));
}

namespace {

// "PATH\0f 644 1000 1000 3 42 1700000000 5 1700000000 5\0": kind, mode (octal), owner, group, size, inode, mtime
// and ctime (seconds and nanoseconds). Written with to_chars into one buffer: the walk at a run's end writes
// 300 000 of these for a large workspace.
void append_entry(std::string& out, const std::string& path, const TreeEntry& e) {
  char fields[256];
  char* p = fields;
  char* const end = fields + sizeof fields;
  *p++ = e.kind;
  auto number = [&](auto value, int base = 10) {
    *p++ = ' ';
    p = std::to_chars(p, end, value, base).ptr;
  };
  number(static_cast<unsigned>(e.mode), 8);
  number(e.uid);
  number(e.gid);
  number(e.size);
  number(e.ino);
  number(static_cast<long long>(e.mtime.tv_sec));
  number(static_cast<long long>(e.mtime.tv_nsec));
  number(static_cast<long long>(e.ctime.tv_sec));
  number(static_cast<long long>(e.ctime.tv_nsec));
  out.append(path).append(1, '\0').append(fields, p).append(1, '\0');
}

// The fields of one entry ("f 644 1000 1000 3 42 1700000000 5 1700000000 5"), read with from_chars: a manifest
// of 300 000 names is read at every checkpoint.
bool parse_fields(std::string_view f, TreeEntry& e) {
  if (f.size() < 2 || f[1] != ' ' || std::string_view("dflo").find(f[0]) == std::string_view::npos) return false;
  e.kind = f[0];
  const char* p = f.data() + 2;
  const char* end = f.data() + f.size();
  auto number = [&](auto& value, int base = 10) {
    if (p >= end) return false;
    auto [next, ec] = std::from_chars(p, end, value, base);
    if (ec != std::errc() || (next != end && *next != ' ')) return false;
    p = next + (next != end ? 1 : 0);
    return true;
  };
  unsigned mode = 0, uid = 0, gid = 0;
  long long mtime_ns = 0, ctime_ns = 0, mtime_s = 0, ctime_s = 0;
  if (!number(mode, 8) || !number(uid) || !number(gid) || !number(e.size) || !number(e.ino) || !number(mtime_s) ||
      !number(mtime_ns) || !number(ctime_s) || !number(ctime_ns) || p != end)
    return false;
  e.mode = mode;
  e.uid = uid;
  e.gid = gid;
  e.mtime = {static_cast<std::time_t>(mtime_s), static_cast<long>(mtime_ns)};
  e.ctime = {static_cast<std::time_t>(ctime_s), static_cast<long>(ctime_ns)};
  return true;
}

}  // namespace

std::string serialize(const Manifest& m) {
  std::string out;
  for (const auto& [path, e] : m) append_entry(out, path, e);
  return out;
}

sys::Result<Manifest> parse_manifest(const std::string& bytes) {
  Manifest m;
  for (std::size_t pos = 0; pos < bytes.size();) {
    auto path_end = bytes.find('\0', pos);
    auto fields_end = path_end == std::string::npos ? path_end : bytes.find('\0', path_end + 1);
    if (fields_end == std::string::npos) return sys::plain_error("a damaged list of files");
    TreeEntry e;
    if (!parse_fields(std::string_view(bytes).substr(path_end + 1, fields_end - path_end - 1), e))
      return sys::plain_error("a damaged list of files");
    // Written in order, so each name goes at the end: no search.
    m.insert_or_assign(m.end(), bytes.substr(pos, path_end - pos), e);
    pos = fields_end + 1;
  }
  return m;
}

Scan scan(int root, const std::vector<std::string>& exclude, Progress* progress) {
  Scan out;
  struct stat st {};
  if (::fstat(root, &st) == 0) out.manifest["."] = entry_of(st);
  walk(
      root, ".", exclude, progress, [&](const std::string& path, const TreeEntry& e) { out.manifest.emplace(path, e); },
      [&](std::string path, std::string pattern) { out.excluded.push_back({std::move(path), std::move(pattern)}); });
  return out;
}

sys::Status write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return sys::errno_error("write");
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return sys::ok_status();
}

namespace {

// Entries appended to a buffer written out when it is full.
class EntryWriter {
 public:
  explicit EntryWriter(int fd) : fd_(fd) { buffer_.reserve(kSize + 4096); }
  void add(const std::string& path, const TreeEntry& e) {
    append_entry(buffer_, path, e);
    if (buffer_.size() >= kSize) flush();
  }
  sys::Status finish() {
    flush();
    return status_;
  }

 private:
  static constexpr std::size_t kSize = 1 << 16;
  void flush() {
    if (status_) status_ = write_all(fd_, buffer_);
    buffer_.clear();
  }
  int fd_;
  std::string buffer_;
  sys::Status status_ = sys::ok_status();
};

}  // namespace

sys::Status write_snapshot(int root, int fd) {
  EntryWriter out(fd);
  struct stat st {};
  if (::fstat(root, &st) == 0) out.add(".", entry_of(st));
  walk(
      root, ".", {}, nullptr, [&](const std::string& path, const TreeEntry& e) { out.add(path, e); },
      [](std::string, std::string) {});
  return out.finish();
}

sys::Status write_manifest(const Manifest& m, int fd) {
  EntryWriter out(fd);
  for (const auto& [path, e] : m) out.add(path, e);
  return out.finish();
}

// One merged pass over the two sorted manifests: a name added, removed or changed marks its directory, and every
// one above it, as changed.
std::set<std::string> unchanged_directories(const Manifest& now, const Manifest& before,
                                            const std::vector<std::string>& not_saved_before) {
  std::set<std::string> changed;
  auto mark = [&](std::string path) {
    while (changed.insert(path).second && path != ".") path = parent_path(path);
  };
  for (const auto& path : not_saved_before) mark(path);
  auto a = now.begin(), b = before.begin();
  while (a != now.end() || b != before.end()) {
    if (b == before.end() || (a != now.end() && a->first < b->first)) {
      mark(a->first);  // added
      ++a;
    } else if (a == now.end() || b->first < a->first) {
      mark(b->first);  // removed
      ++b;
    } else {
      if (!unchanged(b->second, a->second)) mark(a->first);
      ++a, ++b;
    }
  }
  std::set<std::string> same;
  for (const auto& [path, e] : now)
    if (e.kind == 'd' && !changed.contains(path)) same.insert(same.end(), path);
  return same;
}

sys::Result<SavedTree> save_tree(int from, int to, const PreviousTree& previous, const std::vector<std::string>& exclude,
                                 Progress& progress) {
  // The walk first: what has not changed since the previous checkpoint is known before anything is stored.
  auto scanned = scan(from, exclude, &progress);
  auto root = scanned.manifest.find(".");
  if (root == scanned.manifest.end()) return sys::errno_error("--checkpoint: the workspace");
  const auto same = previous.manifest != nullptr ? unchanged_directories(scanned.manifest, *previous.manifest, previous.not_saved)
                                                  : std::set<std::string>{};
  const auto root_entry = root->second;
  Saver saver(previous, exclude, scanned.manifest, same, progress);
  saver.out.excluded = std::move(scanned.excluded);
  if (same.contains(".")) {
    saver.share_directory(".");
    return std::move(saver.out);
  }
  saver.out.manifest["."] = root_entry;
  auto prev = previous.manifest != nullptr ? previous.open(".") : sys::UniqueFd();
  if (auto s = saver.contents(from, to, prev.valid() ? prev.get() : -1, "."); !s) return s.error();
  return std::move(saver.out);
}

sys::Status restore_tree(const OpenStored& stored, int to, const Manifest& manifest, const std::set<std::string>& keep,
                         Progress& progress) {
  auto root = manifest.find(".");
  if (root == manifest.end()) return sys::plain_error("the checkpoint is damaged: it has no workspace");
  auto from = stored(".");
  if (!from.valid()) return sys::errno_error("the checkpoint's stored workspace");
  Restorer r(manifest, stored, keep, progress);
  // Removing first: a name the run made a directory where the checkpoint has a file (or the reverse) must be
  // gone before the stored one is written.
  if (auto s = r.clear(to, "."); !s) return s;
  if (auto s = r.put(from.get(), to, "."); !s) return s;
  return r.apply(to, ".", root->second);
}

sys::Status empty_directory(int dir) {
  const Manifest nothing;
  const OpenStored none_stored = [](const std::string&) { return sys::UniqueFd(); };
  const std::set<std::string> none;
  Progress silent("");
  return Restorer(nothing, none_stored, none, silent).clear(dir, ".");
}

namespace {

long long now_ms() {
  std::timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<long long>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

// After this long a save or restore shows its progress. A test build may shorten it, to see the lines without
// a workspace that takes seconds.
long long first_line_after_ms() {
#ifdef CONFINE_TEST_HOOKS
  if (const char* ms = std::getenv("CONFINE_TEST_PROGRESS_AFTER_MS")) return std::atoll(ms);
#endif
  return 1000;
}

}  // namespace

Progress::Progress(std::string doing)
    : doing_(log::level() >= log::Level::normal ? std::move(doing) : std::string()),
      terminal_(::isatty(STDERR_FILENO) != 0),
      start_ms_(now_ms()),
      next_ms_(start_ms_ + first_line_after_ms()) {}

Progress::~Progress() {
  if (shown_ && terminal_) [[maybe_unused]] auto n = ::write(STDERR_FILENO, "\n", 1);
}

void Progress::show_if_due() {
  auto now = now_ms();
  if (now < next_ms_) return;
  auto text = fmt::format("{}: {} names{}, {} s", doing_, names_, bytes_ > 0 ? fmt::format(", {} copied", format_bytes(bytes_)) : "",
                          (now - start_ms_) / 1000);
  // On a terminal the line is rewritten in place ("\r", then erase to its end); elsewhere (a log) one a second.
  auto line = terminal_ ? fmt::format("\rconfine: {}\x1b[K", text) : fmt::format("confine: {}\n", text);
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, line.data(), line.size());
  shown_ = true;
  next_ms_ = now + (terminal_ ? 200 : 1000);
}

std::string printable(const std::string& path) {
  std::string out = path;
  for (auto& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

}  // namespace confine::run
