// What a run left behind that git on the host would later run or follow: a repository's config or hooks, a rebase
// plan with commands in it, or a redirection to another git dir (`commondir`, a `.git` file or symlink), written
// while the sandbox ran. Found after the run in every tree the sandbox could write, judged by the kernel's change
// time (ctime): every write, rename, link or chmod sets it to "now", and no one can set it back, so whatever
// changed during the run says so — no list of the tree is needed from before it.
#pragma once

#include <sys/stat.h>

#include <ctime>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

// One tree the sandbox could write (the workspace, a --rw bind), and where in it git would find a repository: the
// places a scan of every directory found (SecretScan::git: "sub/.git", "proj/HEAD"). Each place is judged with
// what lies in its git dir.
struct GitCheckTree {
  std::string root;  // absolute
  std::vector<std::string> places;
  std::vector<std::string> unreadable;  // directories the scan could not list: places there are unknown
  bool incomplete = false;              // the scan stopped at a limit
};

struct GitCheckRequest {
  std::vector<GitCheckTree> trees;
  std::vector<std::string> git_dirs;   // absolute: repositories outside the trees the sandbox could write (a linked
                                       // worktree's), walked as git dirs
  std::vector<std::string> configs;    // absolute: git's global configs (~/.gitconfig …) inside a writable tree
  std::vector<std::string> read_only;  // absolute paths the sandbox saw read-only (.git/config, .git/hooks): the
                                       // host may change them during a run, the sandbox could not
  std::timespec since{};               // the run's start, on the clock the kernel stamps file changes with
  int max_depth = 64;                  // inside a git dir (worktrees/, modules/)
};

// What each set-aside thing is; the order is the report's.
enum class GitHazard {
  config,     // a repository's `config` or `config.worktree`, or a global git config: settings can name programs
  hook,       // an entry of a `hooks` directory (or the directory, as a symlink)
  commondir,  // a git dir's `commondir` that does not lead to the repository its `worktrees/` entry belongs to
  git_link,   // a `.git` file or symlink that does not lead to a git dir found in the same check
  todo,       // a rebase plan (`rebase-merge/git-rebase-todo`) with `exec` lines: `git rebase --continue` runs them
};

struct GitFinding {
  std::string root;  // the tree or git dir it was found in (absolute)
  std::string rel;   // its path below `root`
  GitHazard hazard;
};

struct GitStateCheck {
  std::vector<GitFinding> untrusted;
  std::vector<std::string> unreadable;  // absolute: directories nothing could be checked in (the caller says so)
  bool incomplete = false;              // a limit was hit: what was not reached is not checked
};

// Read-only: lists and stats, never changes anything, never runs anything. Never follows a symlink while walking,
// nor a magic link (/proc/self/…) when it resolves where a redirection leads.
GitStateCheck find_untrusted_git_state(const GitCheckRequest& request);

// Whether the file `st` describes changed at or after `since` (its ctime): set by every write, rename, link, chmod
// or xattr change, and by no one back.
bool changed_since(const struct stat& st, const std::timespec& since);

// "a repository config" … for messages.
const char* describe(GitHazard hazard);

// How git reads a `.git` file or a `commondir`: the whole file, trailing newlines and carriage returns dropped
// (so a second line is part of the path). Empty when `text` is no such file ("gitdir: " for a .git file).
std::string git_file_target(std::string_view text, std::string_view prefix);

// The name a finding is renamed to, beside the original, before a random part: git reads no file or hook of it.
inline constexpr const char* kSetAsideSuffix = ".confine-untrusted";

}  // namespace confine
