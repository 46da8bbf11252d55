#include "core/git_state.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <string_view>
#include <tuple>

#include "sys/syscalls.h"
#include "sys/unique_fd.h"

namespace confine {
namespace {

// Never through a symlink: a link planted in a tree must not send the walk outside it.
constexpr int kOpenDir = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Inside a git dir, these hold objects, refs and reflogs (large, and nothing git runs) or the hooks, which are
// judged entry by entry instead of walked.
constexpr std::array<std::string_view, 5> kGitDirPartsNotWalked = {"objects", "refs", "logs", "hooks", "lfs"};

struct Entry {
  std::string name;
  unsigned char type;
};

// `since` is read from the coarse clock the kernel stamps changes with, so anything changed later is stamped at or
// after it. A filesystem with coarse timestamps (whole seconds, or two) truncates the stamp below `since`: a ctime
// with no nanoseconds is compared at that granularity, so a write early in the run cannot hide below the start.
bool changed_since(const struct stat& st, const std::timespec& since) {
  if (st.st_ctim.tv_nsec == 0) return st.st_ctim.tv_sec + 1 >= since.tv_sec;
  return st.st_ctim.tv_sec > since.tv_sec || (st.st_ctim.tv_sec == since.tv_sec && st.st_ctim.tv_nsec >= since.tv_nsec);
}

std::string join(const std::string& dir, std::string_view name) {
  return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
}

// The first line of a small file, read without following a symlink at its name; empty if it cannot be read.
std::string first_line_at(int dirfd, const char* name) {
  sys::UniqueFd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return {};
  std::string text(PATH_MAX + 16, '\0');
  auto n = ::read(fd.get(), text.data(), text.size());
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text.substr(0, text.find('\n'));
}

// A redirection to judge once every git dir of the check is known: a `commondir`, or a `.git` file or symlink.
struct Redirect {
  GitFinding finding;
  std::string target;     // absolute, as git would use it
  dev_t required_dev = 0;  // commondir: it must lead to this very directory (the git dir owning worktrees/)
  ino_t required_ino = 0;
};

class Walker {
 public:
  explicit Walker(const GitCheckRequest& r) : req_(r) {}

  void walk_root(const std::string& root) {
    sys::UniqueFd fd(::open(root.c_str(), kOpenDir));
    if (!fd.valid()) return;  // gone: nothing of it to check
    root_ = root;
    walk(fd.get(), "", std::string_view(root).substr(root.rfind('/') + 1), 0);
  }

  // The places the workspace's scan found, then the gitlinks of every index written during the run, until no new
  // place turns up. Each place is reached from the workspace without following a symlink.
  void check_places(const std::string& workspace, std::vector<std::string> places) {
    sys::UniqueFd ws(::open(workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!ws.valid()) return;
    root_ = workspace;
    std::vector<std::string> seen;
    while (!places.empty()) {
      auto place = std::move(places.back());
      places.pop_back();
      if (std::find(seen.begin(), seen.end(), place) != seen.end()) continue;
      seen.push_back(place);
      check_place(ws.get(), place, places);
    }
  }

  GitStateCheck finish() {
    for (auto& r : redirects_)
      if (!leads_to_checked_git_dir(r)) out_.untrusted.push_back(std::move(r.finding));
    // A place can be reached twice (a nested repository inside a bare one the walk also enters): one finding each.
    auto key = [](const GitFinding& f) { return std::tie(f.hazard, f.root, f.rel); };
    std::sort(out_.untrusted.begin(), out_.untrusted.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    out_.untrusted.erase(std::unique(out_.untrusted.begin(), out_.untrusted.end(),
                                     [&](const auto& a, const auto& b) { return key(a) == key(b); }),
                         out_.untrusted.end());
    return std::move(out_);
  }

 private:
  const GitCheckRequest& req_;
  GitStateCheck out_;
  std::string root_;
  std::vector<std::pair<dev_t, ino_t>> git_dirs_;  // every git dir whose own files this check judged
  std::vector<Redirect> redirects_;
  std::size_t entries_ = 0;
  std::vector<char> buf_ = std::vector<char>(32768);

  bool changed(const struct stat& st) const { return changed_since(st, req_.since); }

  // "sub/.git" (a git dir, or a .git file or link) or "proj/HEAD" (proj is shaped like a git dir).
  void check_place(int ws, const std::string& place, std::vector<std::string>& more) {
    auto slash = place.rfind('/');
    std::string dir = slash == std::string::npos ? "" : place.substr(0, slash);
    std::string_view leaf = std::string_view(place).substr(slash == std::string::npos ? 0 : slash + 1);
    sys::UniqueFd parent(sys::openat2(ws, dir.empty() ? "." : dir.c_str(), kOpenDir, 0,
                                      sys::kResolveBeneath | sys::kResolveNoSymlinks | sys::kResolveNoMagicLinks));
    if (!parent.valid()) return;  // gone, or a symlink now: git reaches nothing there through this place
    if (leaf == "HEAD") {
      walk(parent.get(), dir, std::string_view(dir).substr(dir.rfind('/') + 1), 0);
      return;
    }
    if (leaf != ".git") return;
    struct stat st {};
    if (::fstatat(parent.get(), ".git", &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    std::string git_dir;
    if (S_ISDIR(st.st_mode)) {
      sys::UniqueFd g(::openat(parent.get(), ".git", kOpenDir));
      if (!g.valid()) return;
      walk(g.get(), place, ".git", 0);
      git_dir = absolute(place);
    } else {
      git_dir = check_git_link(parent.get(), dir);
    }
    follow_gitlinks(git_dir, dir, more);
  }

  // An index written during the run may hold gitlinks the agent added: each populated one is a place too.
  void follow_gitlinks(const std::string& git_dir, const std::string& work_tree, std::vector<std::string>& more) {
    struct stat index {};
    if (!req_.gitlinks || git_dir.empty() || ::stat((git_dir + "/index").c_str(), &index) != 0 || !changed(index)) return;
    for (const auto& link : req_.gitlinks(git_dir, absolute(work_tree)))
      if (!link.empty() && link.front() != '/') more.push_back(join(join(work_tree, link), ".git"));
  }
  bool read_only(const std::string& rel) const {
    auto path = absolute(rel);
    return std::find(req_.read_only.begin(), req_.read_only.end(), path) != req_.read_only.end();
  }
  void untrusted(const std::string& rel, GitHazard h) { out_.untrusted.push_back({root_, rel, h}); }
  std::string absolute(const std::string& rel) const { return rel.empty() ? root_ : root_ + "/" + rel; }

  // getdents64 into a buffer shared by every level: a directory is listed whole before the walk goes deeper.
  bool list(int fd, std::vector<Entry>& entries) {
    for (;;) {
      auto n = ::getdents64(fd, buf_.data(), buf_.size());
      if (n <= 0) return n == 0;
      for (decltype(n) off = 0; off < n;) {
        auto* d = reinterpret_cast<struct dirent64*>(buf_.data() + off);
        off += d->d_reclen;
        std::string_view name(d->d_name);
        if (name == "." || name == "..") continue;
        if (++entries_ > req_.max_entries) return out_.incomplete = true, true;
        unsigned char type = d->d_type;
        if (type == DT_UNKNOWN) {
          struct stat st {};
          if (::fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
        }
        entries.push_back({std::string(name), type});
      }
    }
  }

  void walk(int fd, const std::string& rel, std::string_view name, int depth) {
    if (depth > req_.max_depth) {
      out_.incomplete = true;
      return;
    }
    std::vector<Entry> entries;
    if (!list(fd, entries)) return;  // unreadable: git cannot read it either
    ++out_.dirs_read;
    auto has = [&](std::string_view n, bool dir) {
      return std::any_of(entries.begin(), entries.end(),
                         [&](const Entry& e) { return e.name == n && (!dir || e.type == DT_DIR); });
    };
    // What git itself takes for a git dir (HEAD, and objects/ or a commondir), or any directory named .git: its
    // files are judged even before it is complete.
    bool git_dir = name == ".git" || (has("HEAD", false) && (has("objects", true) || has("commondir", false)));
    if (git_dir) check_git_dir(fd, rel);
    for (const auto& e : entries) {
      if (e.name == ".git" && e.type != DT_DIR) check_git_link(fd, rel);
      if (e.type != DT_DIR) continue;
      if (git_dir && std::find(kGitDirPartsNotWalked.begin(), kGitDirPartsNotWalked.end(), e.name) !=
                         kGitDirPartsNotWalked.end())
        continue;
      sys::UniqueFd sub(::openat(fd, e.name.c_str(), kOpenDir));
      if (sub.valid()) walk(sub.get(), join(rel, e.name), e.name, depth + 1);
    }
  }

  // The files that decide what git runs for this git dir: its config, its hooks, and where its commondir leads.
  void check_git_dir(int fd, const std::string& rel) {
    struct stat self {};
    if (::fstat(fd, &self) == 0) git_dirs_.emplace_back(self.st_dev, self.st_ino);
    for (const char* config : {"config", "config.worktree"}) {
      struct stat st {};
      auto path = join(rel, config);
      if (::fstatat(fd, config, &st, AT_SYMLINK_NOFOLLOW) == 0 && changed(st) && !read_only(path))
        untrusted(path, GitHazard::config);
    }
    check_commondir(fd, rel);
    check_hooks(fd, join(rel, "hooks"));
  }

  // git writes a commondir only into a linked worktree's entry, COMMON/worktrees/NAME, and it leads to COMMON.
  void check_commondir(int fd, const std::string& rel) {
    struct stat st {};
    if (::fstatat(fd, "commondir", &st, AT_SYMLINK_NOFOLLOW) != 0 || !changed(st)) return;
    Redirect r{{root_, join(rel, "commondir"), GitHazard::commondir}, {}, 0, 0};
    auto slash = rel.rfind('/');
    std::string_view parent = slash == std::string::npos ? std::string_view{} : std::string_view(rel).substr(0, slash);
    struct stat owner {};
    if (S_ISREG(st.st_mode) && (parent == "worktrees" || parent.ends_with("/worktrees")) &&
        ::fstatat(fd, "../..", &owner, 0) == 0) {
      r.required_dev = owner.st_dev;
      r.required_ino = owner.st_ino;
      auto line = first_line_at(fd, "commondir");
      if (!line.empty()) r.target = line.front() == '/' ? line : absolute(rel) + "/" + line;
    }
    redirects_.push_back(std::move(r));
  }

  void check_hooks(int fd, const std::string& rel) {
    struct stat st {};
    if (::fstatat(fd, "hooks", &st, AT_SYMLINK_NOFOLLOW) != 0 || read_only(rel)) return;
    if (!S_ISDIR(st.st_mode)) {
      if (changed(st)) untrusted(rel, GitHazard::hook);
      return;
    }
    sys::UniqueFd hooks(::openat(fd, "hooks", kOpenDir));
    std::vector<Entry> entries;
    if (!hooks.valid() || !list(hooks.get(), entries)) return;
    // A hooks directory that changed (an entry added, removed or renamed, or the directory itself moved here)
    // vouches for none of its hooks: a hook moved in keeps its old ctime. *.sample files never run.
    bool whole_dir_changed = changed(st);
    for (const auto& e : entries) {
      if (e.name.ends_with(".sample") && e.type == DT_REG) continue;
      struct stat hook {};
      if (whole_dir_changed || (::fstatat(hooks.get(), e.name.c_str(), &hook, AT_SYMLINK_NOFOLLOW) == 0 && changed(hook)))
        untrusted(join(rel, e.name), GitHazard::hook);
    }
  }

  // A `.git` that is not a directory makes its directory a checkout of the git dir it names (a `gitdir: DIR`
  // file, or a symlink): trusted only if it leads to a git dir this check judged.
  // Returns the git dir it names (absolute), judged or not.
  std::string check_git_link(int fd, const std::string& rel) {
    struct stat st {};
    if (::fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
    auto path = join(rel, ".git");
    Redirect r{{root_, path, GitHazard::git_link}, {}, 0, 0};
    std::string target;
    if (S_ISLNK(st.st_mode)) {
      std::string buf(PATH_MAX, '\0');
      auto n = ::readlinkat(fd, ".git", buf.data(), buf.size());
      if (n > 0) target = buf.substr(0, static_cast<std::size_t>(n));
    } else if (S_ISREG(st.st_mode)) {
      auto line = first_line_at(fd, ".git");
      if (line.starts_with("gitdir: ")) target = line.substr(8);
    }
    if (!target.empty()) r.target = target.front() == '/' ? target : absolute(rel) + "/" + target;
    auto git_dir = r.target;
    if (changed(st) && !read_only(path)) redirects_.push_back(std::move(r));
    return git_dir;
  }

  bool leads_to_checked_git_dir(const Redirect& r) const {
    struct stat st {};
    if (r.target.empty() || ::stat(r.target.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    if (r.required_ino != 0) return st.st_dev == r.required_dev && st.st_ino == r.required_ino &&
                                     std::find(git_dirs_.begin(), git_dirs_.end(), std::pair{st.st_dev, st.st_ino}) != git_dirs_.end();
    return std::find(git_dirs_.begin(), git_dirs_.end(), std::pair{st.st_dev, st.st_ino}) != git_dirs_.end();
  }
};

}  // namespace

GitStateCheck find_untrusted_git_state(const GitCheckRequest& request) {
  Walker w(request);
  if (!request.workspace.empty()) w.check_places(request.workspace, request.places);
  for (const auto& t : request.trees) w.walk_root(t);
  for (const auto& g : request.git_dirs) w.walk_root(g);
  return w.finish();
}

const char* describe(GitHazard hazard) {
  switch (hazard) {
    case GitHazard::config: return "a repository config written during the run (its settings can run programs)";
    case GitHazard::hook: return "a git hook written during the run";
    case GitHazard::commondir: return "a commondir written during the run that sends git to another repository's config and hooks";
    case GitHazard::git_link: return "a .git file or link written during the run that leads outside the checked repositories";
  }
  return "";
}

}  // namespace confine
