#include "core/git_state.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <memory>
#include <string_view>
#include <tuple>

#include "sys/syscalls.h"
#include "sys/unique_fd.h"

namespace confine {
namespace {

// Never through a symlink: a link planted in a tree must not send the walk outside it. O_PATH: a directory with
// search permission only (mode 0311) can still be looked into by name, as git does.
constexpr int kOpenPath = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr std::uint64_t kNoLinks = sys::kResolveBeneath | sys::kResolveNoSymlinks | sys::kResolveNoMagicLinks;

// Inside a git dir, these hold objects, refs and reflogs (large, and nothing git runs) or the hooks, which are
// judged entry by entry instead of walked.
constexpr std::array<std::string_view, 5> kGitDirPartsNotWalked = {"objects", "refs", "logs", "hooks", "lfs"};

// The largest `.git` file, commondir or rebase plan read: git writes a path or a few lines.
constexpr std::size_t kMaxSmallFile = 1 << 20;

struct Entry {
  std::string name;
  unsigned char type;
};

}  // namespace

// `since` is read from the coarse clock the kernel stamps changes with, so anything changed later is stamped at or
// after it. A filesystem with coarse timestamps (whole seconds, or two) truncates the stamp below `since`: a ctime
// with no nanoseconds is compared at that granularity, so a write early in the run cannot hide below the start.
bool changed_since(const struct stat& st, const std::timespec& since) {
  if (st.st_ctim.tv_nsec == 0) return st.st_ctim.tv_sec + 1 >= since.tv_sec;
  return st.st_ctim.tv_sec > since.tv_sec || (st.st_ctim.tv_sec == since.tv_sec && st.st_ctim.tv_nsec >= since.tv_nsec);
}

namespace {

std::string join(const std::string& dir, std::string_view name) {
  return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
}

bool exists_at(int dirfd, const char* name, struct stat& st) { return ::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0; }

// A small file, read whole without following a symlink at its name; empty if it cannot be read.
std::string read_small_at(int dirfd, const char* name) {
  sys::UniqueFd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return {};
  std::string text;
  std::array<char, 4096> chunk;  // these files are a line or a few: no megabyte zeroed for each
  for (ssize_t n; text.size() < kMaxSmallFile && (n = ::read(fd.get(), chunk.data(), chunk.size())) > 0;)
    text.append(chunk.data(), std::min(static_cast<std::size_t>(n), kMaxSmallFile - text.size()));
  return text;
}

// `git rebase --continue` runs the plan's `exec` (`x`) lines.
bool has_exec_line(std::string_view todo) {
  while (!todo.empty()) {
    auto eol = todo.find('\n');
    auto line = todo.substr(0, eol);
    todo = eol == std::string_view::npos ? std::string_view{} : todo.substr(eol + 1);
    line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
    if (line.starts_with("exec ") || line.starts_with("x ") || line.starts_with("exec\t") || line.starts_with("x\t"))
      return true;
  }
  return false;
}

// A redirection to judge once every git dir of the check is known: a `commondir`, or a `.git` file or symlink.
struct Redirect {
  GitFinding finding;
  std::string target;      // absolute, as git would use it; empty: none git could use
  dev_t required_dev = 0;  // commondir: it must lead to this very directory (the git dir owning worktrees/)
  ino_t required_ino = 0;
};

class Walker {
 public:
  explicit Walker(const GitCheckRequest& r) : req_(r) {}

  void check_tree(const GitCheckTree& tree) {
    sys::UniqueFd root(::open(tree.root.c_str(), kOpenPath));
    if (!root.valid()) return;  // gone: nothing of it to check
    root_ = tree.root;
    out_.incomplete = out_.incomplete || tree.incomplete;
    for (const auto& place : tree.places) check_place(root.get(), place);
    // Git enters a directory it cannot list; so does the check, by name, for what git would look for there.
    for (const auto& dir : tree.unreadable) {
      out_.unreadable.push_back(absolute(dir));
      check_place(root.get(), join(dir, ".git"));
      check_place(root.get(), join(dir, "HEAD"));
    }
  }

  void check_git_dir_root(const std::string& git_dir) {
    sys::UniqueFd fd(::open(git_dir.c_str(), kOpenPath));
    if (!fd.valid()) return;
    root_ = git_dir;
    walk_git_dir(fd.get(), "", 0);
  }

  void check_config_file(const std::string& path) {
    struct stat st {};
    auto slash = path.rfind('/');
    if (slash == std::string::npos || ::lstat(path.c_str(), &st) != 0 || !changed(st)) return;
    out_.untrusted.push_back({path.substr(0, slash), path.substr(slash + 1), GitHazard::config});
  }

  GitStateCheck finish() {
    for (auto& r : redirects_)
      if (!leads_to_checked_git_dir(r)) out_.untrusted.push_back(std::move(r.finding));
    // A place can be reached twice (a git dir named by the scan and reached from another): one finding each.
    auto key = [](const GitFinding& f) { return std::tie(f.hazard, f.root, f.rel); };
    std::sort(out_.untrusted.begin(), out_.untrusted.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    out_.untrusted.erase(std::unique(out_.untrusted.begin(), out_.untrusted.end(),
                                     [&](const auto& a, const auto& b) { return key(a) == key(b); }),
                         out_.untrusted.end());
    std::sort(out_.unreadable.begin(), out_.unreadable.end());
    out_.unreadable.erase(std::unique(out_.unreadable.begin(), out_.unreadable.end()), out_.unreadable.end());
    return std::move(out_);
  }

 private:
  const GitCheckRequest& req_;
  GitStateCheck out_;
  std::string root_;
  std::vector<std::pair<dev_t, ino_t>> git_dirs_;  // every git dir whose own files this check judged
  std::vector<Redirect> redirects_;
  // Made at the first listing and left uninitialised: a run with no git dir to list (an empty workspace) touches
  // none of it, and getdents64 writes only what it fills (a zeroed buffer faulted in 8 pages on every run).
  static constexpr std::size_t kListBytes = 32768;
  std::unique_ptr<char[]> buf_;

  bool changed(const struct stat& st) const { return changed_since(st, req_.since); }
  std::string absolute(const std::string& rel) const { return rel.empty() ? root_ : root_ + "/" + rel; }
  bool read_only(const std::string& rel) const {
    return std::find(req_.read_only.begin(), req_.read_only.end(), absolute(rel)) != req_.read_only.end();
  }
  void untrusted(const std::string& rel, GitHazard h) { out_.untrusted.push_back({root_, rel, h}); }

  // "sub/.git" (a git dir, or a .git file or link) or "proj/HEAD" (proj is shaped like a git dir), reached from
  // the tree's root without following any link.
  void check_place(int root, const std::string& place) {
    auto slash = place.rfind('/');
    std::string dir = slash == std::string::npos ? "" : place.substr(0, slash);
    std::string_view leaf = std::string_view(place).substr(slash == std::string::npos ? 0 : slash + 1);
    sys::UniqueFd parent(sys::openat2(root, dir.empty() ? "." : dir.c_str(), kOpenPath, 0, kNoLinks));
    struct stat st {};
    if (!parent.valid() || !exists_at(parent.get(), std::string(leaf).c_str(), st)) return;
    if (leaf == "HEAD") return walk_git_dir(parent.get(), dir, 0);
    if (leaf != ".git") return;
    if (!S_ISDIR(st.st_mode)) return check_git_link(parent.get(), dir);
    sys::UniqueFd git(::openat(parent.get(), ".git", kOpenPath));
    if (git.valid()) walk_git_dir(git.get(), place, 0);
  }

  // getdents64 into a buffer shared by every level: a directory is listed whole before the walk goes deeper.
  bool list(int path_fd, std::vector<Entry>& entries) {
    sys::UniqueFd fd(::openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) return false;
    if (!buf_) buf_.reset(new char[kListBytes]);
    for (;;) {
      auto n = ::getdents64(fd.get(), buf_.get(), kListBytes);
      if (n <= 0) return n == 0;
      for (decltype(n) off = 0; off < n;) {
        auto* d = reinterpret_cast<struct dirent64*>(buf_.get() + off);
        off += d->d_reclen;
        std::string_view name(d->d_name);
        if (name == "." || name == "..") continue;
        unsigned char type = d->d_type;
        struct stat st {};
        if (type == DT_UNKNOWN && exists_at(fd.get(), d->d_name, st))
          type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
        entries.push_back({std::string(name), type});
      }
    }
  }

  // A git dir, and the git dirs below it (worktrees/NAME, modules/PATH, nested ones).
  void walk_git_dir(int fd, const std::string& rel, int depth) {
    check_git_dir(fd, rel);
    walk_below(fd, rel, depth);
  }

  void walk_below(int fd, const std::string& rel, int depth) {
    if (depth >= req_.max_depth) {
      out_.incomplete = true;
      return;
    }
    std::vector<Entry> entries;
    if (!list(fd, entries)) {
      out_.unreadable.push_back(absolute(rel));
      return;
    }
    for (const auto& e : entries) {
      if (e.type != DT_DIR || std::find(kGitDirPartsNotWalked.begin(), kGitDirPartsNotWalked.end(), e.name) !=
                                  kGitDirPartsNotWalked.end())
        continue;
      sys::UniqueFd sub(::openat(fd, e.name.c_str(), kOpenPath));
      if (!sub.valid()) continue;
      struct stat st {};
      bool git_dir = e.name == ".git" || (exists_at(sub.get(), "HEAD", st) &&
                                           (exists_at(sub.get(), "objects", st) || exists_at(sub.get(), "commondir", st)));
      if (git_dir) walk_git_dir(sub.get(), join(rel, e.name), depth + 1);
      else walk_below(sub.get(), join(rel, e.name), depth + 1);
    }
  }

  // The files that decide what git runs for this git dir: its config, its hooks, a rebase plan, and where its
  // commondir leads.
  void check_git_dir(int fd, const std::string& rel) {
    struct stat self {};
    if (::fstat(fd, &self) == 0) git_dirs_.emplace_back(self.st_dev, self.st_ino);
    for (const char* config : {"config", "config.worktree"}) {
      struct stat st {};
      auto path = join(rel, config);
      if (exists_at(fd, config, st) && changed(st) && !read_only(path)) untrusted(path, GitHazard::config);
    }
    check_commondir(fd, rel);
    check_hooks(fd, join(rel, "hooks"));
    struct stat todo {};
    if (exists_at(fd, "rebase-merge/git-rebase-todo", todo) && changed(todo) &&
        has_exec_line(read_small_at(fd, "rebase-merge/git-rebase-todo")))
      untrusted(join(rel, "rebase-merge/git-rebase-todo"), GitHazard::todo);
  }

  // git writes a commondir only into a linked worktree's entry, COMMON/worktrees/NAME, and it leads to COMMON.
  void check_commondir(int fd, const std::string& rel) {
    struct stat st {};
    if (!exists_at(fd, "commondir", st) || !changed(st)) return;
    Redirect r{{root_, join(rel, "commondir"), GitHazard::commondir}, {}, 0, 0};
    auto slash = rel.rfind('/');
    std::string_view parent = slash == std::string::npos ? std::string_view{} : std::string_view(rel).substr(0, slash);
    struct stat owner {};
    if (S_ISREG(st.st_mode) && (parent == "worktrees" || parent.ends_with("/worktrees")) &&
        ::fstatat(fd, "../..", &owner, 0) == 0) {
      r.required_dev = owner.st_dev;
      r.required_ino = owner.st_ino;
      auto target = git_file_target(read_small_at(fd, "commondir"), "");
      if (!target.empty()) r.target = target.front() == '/' ? target : absolute(rel) + "/" + target;
    }
    redirects_.push_back(std::move(r));
  }

  void check_hooks(int fd, const std::string& rel) {
    struct stat st {};
    if (!exists_at(fd, "hooks", st) || read_only(rel)) return;
    if (!S_ISDIR(st.st_mode)) {
      if (changed(st)) untrusted(rel, GitHazard::hook);
      return;
    }
    sys::UniqueFd hooks(::openat(fd, "hooks", kOpenPath));
    std::vector<Entry> entries;
    if (!hooks.valid() || !list(hooks.get(), entries)) {
      // Unlistable: a hook in it could still run. Set the whole directory aside if it changed, else say so.
      if (changed(st)) untrusted(rel, GitHazard::hook);
      else out_.unreadable.push_back(absolute(rel));
      return;
    }
    // A hooks directory that changed (an entry added, removed or renamed, or the directory itself moved here)
    // vouches for none of its hooks: a hook moved in keeps its old ctime. *.sample files never run.
    bool whole_dir_changed = changed(st);
    for (const auto& e : entries) {
      if (e.name.ends_with(".sample") && e.type == DT_REG) continue;
      struct stat hook {};
      if (whole_dir_changed || (exists_at(hooks.get(), e.name.c_str(), hook) && changed(hook)))
        untrusted(join(rel, e.name), GitHazard::hook);
    }
  }

  // A `.git` that is not a directory makes its directory a checkout of the git dir it names (a `gitdir: DIR`
  // file, or a symlink): trusted only if it leads to a git dir this check judged.
  void check_git_link(int fd, const std::string& rel) {
    struct stat st {};
    auto path = join(rel, ".git");
    if (!exists_at(fd, ".git", st) || !changed(st) || read_only(path)) return;
    Redirect r{{root_, path, GitHazard::git_link}, {}, 0, 0};
    std::string target;
    if (S_ISLNK(st.st_mode)) {
      std::string buf(PATH_MAX, '\0');
      auto n = ::readlinkat(fd, ".git", buf.data(), buf.size());
      if (n > 0) target = git_file_target(buf.substr(0, static_cast<std::size_t>(n)), "");
    } else if (S_ISREG(st.st_mode)) {
      target = git_file_target(read_small_at(fd, ".git"), "gitdir: ");
    }
    if (!target.empty()) r.target = target.front() == '/' ? target : absolute(rel) + "/" + target;
    redirects_.push_back(std::move(r));
  }

  // Resolved as git will, later, in another process: so never through a magic link (/proc/self/cwd, /dev/fd/N),
  // which would name something else there.
  bool leads_to_checked_git_dir(const Redirect& r) const {
    if (r.target.empty()) return false;
    sys::UniqueFd fd(sys::openat2(AT_FDCWD, r.target.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                                  sys::kResolveNoMagicLinks));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return false;
    if (r.required_ino != 0 && (st.st_dev != r.required_dev || st.st_ino != r.required_ino)) return false;
    return std::find(git_dirs_.begin(), git_dirs_.end(), std::pair{st.st_dev, st.st_ino}) != git_dirs_.end();
  }
};

}  // namespace

std::string git_file_target(std::string_view text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return {};
  text.remove_prefix(prefix.size());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  // A path with a newline or another control character left in it is no path a git wrote: nothing is trusted.
  if (text.empty() || std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
    return {};
  return std::string(text);
}

GitStateCheck find_untrusted_git_state(const GitCheckRequest& request) {
  Walker w(request);
  for (const auto& t : request.trees) w.check_tree(t);
  for (const auto& g : request.git_dirs) w.check_git_dir_root(g);
  for (const auto& c : request.configs) w.check_config_file(c);
  return w.finish();
}

const char* describe(GitHazard hazard) {
  switch (hazard) {
    case GitHazard::config: return "a git config written during the run (its settings can run programs)";
    case GitHazard::hook: return "a git hook written during the run";
    case GitHazard::commondir: return "a commondir written during the run that sends git to another repository's config and hooks";
    case GitHazard::git_link: return "a .git file or link written during the run that leads outside the checked repositories";
    case GitHazard::todo: return "a rebase plan written during the run with commands that `git rebase --continue` runs";
  }
  return "";
}

}  // namespace confine
