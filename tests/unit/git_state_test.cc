#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/git_state.h"
#include "core/secret_scan.h"
#include "temp_dir.h"

using namespace confine;

namespace {

// A tree to check: what is written before `start()` existed before the run, what is written after was written
// during it.
struct Tree : testing::TempDir {
  std::timespec since{};
  void file(const std::string& rel, const std::string& text = "x\n") const { testing::TempDir::file(rel, text); }
  // A git dir's shape: HEAD, objects/, refs/.
  void git_dir(const std::string& rel) {
    file(rel + "/HEAD", "ref: refs/heads/main\n");
    mkdir(rel + "/objects");
    mkdir(rel + "/refs");
  }
  // The run starts: a fresh stamp on the coarse clock, later than every change so far.
  void start() {
    ::usleep(20'000);
    ::clock_gettime(CLOCK_REALTIME_COARSE, &since);
    ::usleep(20'000);
  }
  // The check as a run does it: the places come from a scan of every directory.
  GitStateCheck check(std::vector<std::string> read_only = {}, ScanLimits limits = {}) {
    auto scan = scan_workspace_secrets(root, limits);
    GitCheckRequest r;
    r.trees = {{root, scan.git, scan.unreadable, scan.truncated}};
    r.since = since;
    for (auto& p : read_only) p = root + "/" + p;
    r.read_only = read_only;
    return find_untrusted_git_state(r);
  }
};

std::vector<std::string> found(const GitStateCheck& c) {
  std::vector<std::string> out;
  for (const auto& f : c.untrusted) out.push_back(f.rel);
  return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("git state that existed before the run is not judged") {
  Tree t;
  t.git_dir(".git");
  t.file(".git/config", "[core]\n\tfsmonitor = x\n");
  t.file(".git/hooks/pre-commit");
  t.git_dir("vendor/lib/.git");
  t.file("vendor/lib/.git/config");
  t.file("sub/.git", "gitdir: /elsewhere\n");
  t.start();
  t.file("src/main.c");
  auto c = t.check();
  CHECK(found(c).empty());
  CHECK_FALSE(c.incomplete);
}

TEST_CASE("a config, config.worktree and hooks written during the run are found, samples and read-only binds are not") {
  Tree t;
  t.git_dir(".git");
  t.file(".git/config");
  t.mkdir(".git/hooks");
  t.start();
  t.file(".git/config.worktree");
  t.file(".git/hooks/post-commit");
  t.file(".git/hooks/pre-push.sample");
  t.git_dir("new/.git");
  t.file("new/.git/config");
  t.file("new/.git/hooks/pre-commit.sample");
  CHECK(found(t.check({".git/hooks"})) == V{".git/config.worktree", "new/.git/config"});
  CHECK(found(t.check()) == V{".git/config.worktree", "new/.git/config", ".git/hooks/post-commit"});
}

TEST_CASE("a hooks directory moved in during the run vouches for none of its old hooks") {
  Tree t;
  t.git_dir("nested/.git");
  t.file("tools/post-commit");
  t.file("tools/other.sample");
  t.start();
  REQUIRE(::rename((t.root + "/tools").c_str(), (t.root + "/nested/.git/hooks").c_str()) == 0);
  CHECK(found(t.check()) == V{"nested/.git/hooks/post-commit"});
}

TEST_CASE("a bare repository anywhere in the tree is a git dir") {
  Tree t;
  t.start();
  t.git_dir("proj");
  t.file("proj/config", "[core]\n\tworktree = ..\n");
  t.file("not-git/config");  // no HEAD: not a git dir
  CHECK(found(t.check()) == V{"proj/config"});
}

TEST_CASE("a commondir is trusted only where git writes one: worktrees/NAME leading to its own repository") {
  Tree t;
  t.git_dir(".git");
  t.start();
  t.git_dir(".git/info/c");
  t.file(".git/commondir", "info/c\n");             // the main git dir redirected
  t.file(".git/worktrees/good/HEAD", "ref: refs/heads/x\n");
  t.file(".git/worktrees/good/commondir", "../..\n");  // what `git worktree add` writes
  t.file(".git/worktrees/bad/HEAD", "ref: refs/heads/x\n");
  t.file(".git/worktrees/bad/commondir", "../../info/c\n");
  auto c = t.check();
  CHECK(found(c) == V{".git/commondir", ".git/worktrees/bad/commondir"});
}

TEST_CASE("a .git file or symlink must lead to a git dir this check judged") {
  Tree t;
  t.git_dir(".git");
  t.start();
  t.git_dir(".git/modules/m");
  t.file("m/.git", "gitdir: ../.git/modules/m\n");  // a submodule: judged, and its config with it
  t.file("out/.git", "gitdir: /tmp\n");              // somewhere never checked
  t.git_dir(".git/objects/ab/hidden");
  t.file("hid/.git", "gitdir: ../.git/objects/ab/hidden\n");  // below objects/, which is not walked
  t.file("junk/.git", "not a gitfile\n");
  t.mkdir("link");
  REQUIRE(::symlink("/tmp", (t.root + "/link/.git").c_str()) == 0);
  CHECK(found(t.check()) == V{"hid/.git", "junk/.git", "link/.git", "out/.git"});
}

TEST_CASE("the walk never follows a symlinked directory and says when it stopped early") {
  Tree t;
  t.start();
  t.git_dir("real/.git");
  t.file("real/.git/config");
  REQUIRE(::symlink((t.root + "/real").c_str(), (t.root + "/alias").c_str()) == 0);
  CHECK(found(t.check()) == V{"real/.git/config"});

  ScanLimits few;
  few.max_entries = 2;
  CHECK(t.check({}, few).incomplete);
  ScanLimits shallow;
  shallow.max_depth = 0;
  CHECK(t.check({}, shallow).incomplete);
}

TEST_CASE("repositories in dependency and secret directories are found: git finds them there too") {
  Tree t;
  t.git_dir(".git");
  t.start();
  t.git_dir("node_modules/dep/.git");
  t.file("node_modules/dep/.git/config");
  t.git_dir("target/lib/.git");
  t.file("target/lib/.git/config");
  t.git_dir("secrets/x/.git");
  t.file("secrets/x/.git/config");
  CHECK(found(t.check()) == V{"node_modules/dep/.git/config", "secrets/x/.git/config", "target/lib/.git/config"});
}

TEST_CASE("a .git file or commondir is read as git reads it: the whole file, not its first line") {
  CHECK(git_file_target("gitdir: ../x\n", "gitdir: ") == "../x");
  CHECK(git_file_target("gitdir: ../x\r\n\n", "gitdir: ") == "../x");
  CHECK(git_file_target("gitdir: x\nz/../evil/.git\n", "gitdir: ").empty());  // git would use both lines
  CHECK(git_file_target("../..\n", "") == "../..");
  CHECK(git_file_target("gitdir:x", "gitdir: ").empty());
  Tree t;
  t.git_dir(".git");
  t.start();
  t.git_dir("sub/x");
  t.file("sub/.git", "gitdir: x\nz/../../evil/.git\n");
  t.file(".git/worktrees/lt/HEAD", "ref: refs/heads/x\n");
  t.file(".git/worktrees/lt/commondir", "../..\nq/../../../evil\n");
  CHECK(found(t.check()) == V{".git/worktrees/lt/commondir", "sub/.git"});
}

TEST_CASE("a redirection through a magic link is not trusted: it names something else in git's process") {
  Tree t;
  t.git_dir(".git");
  t.start();
  t.git_dir("x");
  t.file("sub/.git", "gitdir: /proc/self/cwd/x\n");
  REQUIRE(::symlink("/proc/self/cwd/x", (t.root + "/sub2/.git").c_str()) != 0);
  t.mkdir("sub2");
  REQUIRE(::symlink("/proc/self/cwd/x", (t.root + "/sub2/.git").c_str()) == 0);
  REQUIRE(::chdir(t.root.c_str()) == 0);  // so that /proc/self/cwd/x is the checked x in this process
  auto c = t.check();
  REQUIRE(::chdir("/") == 0);
  CHECK(found(c) == V{"sub/.git", "sub2/.git"});
}

TEST_CASE("a git dir whose objects/ is a symlink is still a git dir, as git's own test follows it") {
  Tree t;
  t.start();
  t.file("mirror.git/HEAD", "ref: refs/heads/main\n");
  t.mkdir("store/objects");
  t.mkdir("mirror.git/refs");
  REQUIRE(::symlink((t.root + "/store/objects").c_str(), (t.root + "/mirror.git/objects").c_str()) == 0);
  t.file("mirror.git/config", "[core]\n\tpager = x\n");
  CHECK(found(t.check()) == V{"mirror.git/config"});
}

TEST_CASE("a rebase plan written during the run is set aside only when it holds commands") {
  Tree t;
  t.git_dir(".git");
  t.file("n/.git/rebase-merge/git-rebase-todo", "pick 1234 a\nexec touch /tmp/x\n");
  t.git_dir("n/.git");
  t.start();
  t.file(".git/rebase-merge/git-rebase-todo", "pick 1234 a\n  x touch /tmp/x\n");
  t.git_dir("m/.git");
  t.file("m/.git/rebase-merge/git-rebase-todo", "pick 1234 a\nedit 5678 b\n");
  CHECK(found(t.check()) == V{".git/rebase-merge/git-rebase-todo"});  // n's predates the run, m's runs nothing
}

TEST_CASE("git's global configs in a writable tree are judged like a repository's") {
  Tree t;
  t.file("old/.gitconfig");
  t.start();
  t.file("home/.config/git/config", "[core]\n\tfsmonitor = x\n");
  GitCheckRequest r;
  r.since = t.since;
  r.configs = {t.root + "/home/.config/git/config", t.root + "/old/.gitconfig", t.root + "/home/.gitconfig"};
  auto c = find_untrusted_git_state(r);
  REQUIRE(c.untrusted.size() == 1);
  CHECK(c.untrusted[0].root == t.root + "/home/.config/git");
  CHECK(c.untrusted[0].rel == "config");
}
