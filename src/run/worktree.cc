#include "run/worktree.h"

#include <sys/stat.h>

#include <algorithm>
#include <fmt/format.h>
#include <vector>

#include "run/git.h"
#include "sys/owned_files.h"

namespace confine::run {
namespace {

// No hook, fsmonitor or other program named by the repository runs for confine's own git commands (post-checkout
// would run on `worktree add`): an earlier sandbox could write parts of this repository.
std::vector<std::string> git(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"-C", dir});
  return host_git(std::move(args));
}

// "feature/login" -> "<repo>-feature-login", beside the repository.
std::string worktree_dir(const std::string& top, const std::string& branch) {
  std::string suffix = branch;
  std::replace(suffix.begin(), suffix.end(), '/', '-');
  return top + "-" + suffix;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// An existing directory is reused only if it is this repository's worktree on this branch.
sys::Status check_reusable(const std::string& dir, const std::string& common, const std::string& branch) {
  auto other_common = run_captured(git(dir, {"rev-parse", "--path-format=absolute", "--git-common-dir"}), "/");
  auto head = run_captured(git(dir, {"symbolic-ref", "-q", "HEAD"}), "/");
  if (other_common && *other_common == common && head && *head == "refs/heads/" + branch) return sys::ok_status();
  return sys::plain_error("--worktree " + branch + ": `" + dir + "` exists and is not this repository's worktree of `" +
                          branch + "`; move it away or pick another branch name");
}

}  // namespace

sys::Result<Worktree> prepare_worktree(const std::string& workspace, const std::string& branch) {
  if (auto ok = run_captured(host_git({"check-ref-format", "--branch", branch}), "/"); !ok)
    return sys::plain_error("--worktree `" + branch + "`: not a valid branch name");
  auto top = run_captured(git(workspace, {"rev-parse", "--show-toplevel"}), "/");
  if (!top) return sys::plain_error("--worktree: `" + workspace + "` is not inside a git repository");
  auto common = run_captured(git(*top, {"rev-parse", "--path-format=absolute", "--git-common-dir"}), "/");
  if (!common) return common.error().wrap("--worktree");
  Worktree w{worktree_dir(*top, branch), *top, branch, false};
  if (exists(w.dir)) {
    // The name may have been planted by an earlier run's sandbox (a link to some other directory, to become this
    // run's workspace): only a real directory of the caller's own is reused.
    if (auto dir = sys::make_owned_directory("--worktree", w.dir); !dir) return dir.error();
    if (auto s = check_reusable(w.dir, *common, branch); !s) return s.error();
    return w;
  }
  bool branch_exists = static_cast<bool>(run_captured(git(*top, {"rev-parse", "--verify", "-q", "refs/heads/" + branch}), "/"));
  auto args = branch_exists ? std::vector<std::string>{"worktree", "add", "-q", w.dir, branch}
                            : std::vector<std::string>{"worktree", "add", "-q", "-b", branch, w.dir};
  if (auto r = run_captured(git(*top, args), "/"); !r) return r.error().wrap("--worktree");
  w.created = true;
  return w;
}

std::string worktree_removal_hint(const Worktree& w) {
  return fmt::format("the run's changes are in `{}` on branch `{}`; when done: git -C {} worktree remove {} "
                     "(and `git -C {} branch -D {}` to drop the branch)",
                     w.dir, w.branch, w.repository, w.dir, w.repository, w.branch);
}

}  // namespace confine::run
