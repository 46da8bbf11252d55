// What a run left behind that git on the host would later run or follow: a repository's config or hooks, or a
// redirection to another git dir (`commondir`, a `.git` file or symlink), written while the sandbox ran. Found
// after the run by a walk of every tree the sandbox could write, judged by the kernel's change time (ctime): every
// write, rename, link or chmod sets it to "now", and no one can set it back, so whatever changed during the run
// says so — no list of the tree is needed from before it.
#pragma once

#include <ctime>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace confine {

struct GitCheckRequest {
  // The workspace, and where in it git would find a repository (SecretScan::git: "sub/.git", "proj/HEAD"): each is
  // judged with what lies in its git dir. The scan's cache keeps this cheap: only directories changed since the
  // last scan are read again.
  std::string workspace;
  std::vector<std::string> places;
  bool places_incomplete = false;  // the scan stopped early: places below where it stopped are not known
  // The gitlinks (paths relative to the work tree) in a git dir's index, for each index written during the run:
  // `git status` at the top runs git inside every populated gitlink, wherever it is (even in directories the scan
  // skips). Unset: gitlinks are not followed.
  std::function<std::vector<std::string>(const std::string& git_dir, const std::string& work_tree)> gitlinks;
  std::vector<std::string> trees;      // absolute: walked whole (every writable bind)
  std::vector<std::string> git_dirs;   // absolute: repositories outside them the sandbox could write (a linked
                                       // worktree's), walked as git dirs
  std::vector<std::string> read_only;  // absolute paths the sandbox saw read-only (.git/config, .git/hooks): the
                                       // host may change them during a run, the sandbox could not
  std::timespec since{};               // the run's start, on the clock the kernel stamps file changes with
  std::size_t max_entries = 2'000'000;
  int max_depth = 256;
};

// What each set-aside thing is; the order is the report's.
enum class GitHazard {
  config,     // a repository's `config` or `config.worktree`: its settings can name programs git runs
  hook,       // an entry of a `hooks` directory (or the directory, as a symlink)
  commondir,  // a git dir's `commondir` that does not lead to the repository its `worktrees/` entry belongs to
  git_link,   // a `.git` file or symlink that does not lead to a git dir found in the same check
};

struct GitFinding {
  std::string root;  // the tree or git dir it was found in (absolute)
  std::string rel;   // its path below `root`
  GitHazard hazard;
};

struct GitStateCheck {
  std::vector<GitFinding> untrusted;
  std::size_t dirs_read = 0;
  bool incomplete = false;  // a limit was hit: what the walk did not reach is not checked (the caller says so)
};

// Read-only: lists and stats, never changes anything. Never follows a symlink while walking.
GitStateCheck find_untrusted_git_state(const GitCheckRequest& request);

// "a repository config" … for messages.
const char* describe(GitHazard hazard);

// The name a finding is renamed to, beside the original: git reads no file or hook of that name.
inline constexpr const char* kSetAsideSuffix = ".confine-untrusted";

}  // namespace confine
