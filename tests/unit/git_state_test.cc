#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/git_state.h"

using namespace confine;

namespace {

// A tree to check: what is written before `start()` existed before the run, what is written after was written
// during it.
struct Tree {
  std::string root;
  std::timespec since{};
  Tree() {
    char tmpl[] = "/tmp/confine-git-state-XXXXXX";
    root = ::mkdtemp(tmpl);
  }
  ~Tree() { [[maybe_unused]] int rc = std::system(("rm -rf " + root).c_str()); }
  void mkdir(const std::string& rel) { [[maybe_unused]] int rc = std::system(("mkdir -p " + root + "/" + rel).c_str()); }
  void file(const std::string& rel, const std::string& text = "x\n") {
    auto path = root + "/" + rel;
    mkdir(path.substr(root.size() + 1, path.rfind('/') - root.size() - 1));
    std::ofstream(path) << text;
  }
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
  GitStateCheck check(std::vector<std::string> read_only = {}) {
    GitCheckRequest r;
    r.trees = {root};
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

  GitCheckRequest r;
  r.trees = {t.root};
  r.since = t.since;
  r.max_entries = 2;
  CHECK(find_untrusted_git_state(r).incomplete);
  r.max_entries = 1000;
  r.max_depth = 1;
  CHECK(find_untrusted_git_state(r).incomplete);
}

TEST_CASE("places from the scan are judged with their git dirs, and gitlinks of a changed index are followed") {
  Tree t;
  t.git_dir(".git");
  t.file(".git/index");
  t.git_dir("old/.git");
  t.file("old/.git/config");
  t.start();
  t.file(".git/index", "changed\n");
  t.git_dir(".git/modules/m");
  t.file(".git/modules/m/config");
  t.file("m/.git", "gitdir: ../.git/modules/m\n");
  t.git_dir("skipped/dep/.git");
  t.file("skipped/dep/.git/config");
  t.git_dir("unlinked/.git");  // neither a place nor a gitlink: this check does not look there
  t.file("unlinked/.git/config");

  std::vector<std::pair<std::string, std::string>> asked;
  GitCheckRequest r;
  r.workspace = t.root;
  r.places = {".git", "m/.git", "old/.git"};
  r.since = t.since;
  r.gitlinks = [&](const std::string& git_dir, const std::string& work_tree) {
    asked.emplace_back(git_dir, work_tree);
    return std::vector<std::string>{"skipped/dep", "/abs", "m"};
  };
  auto c = find_untrusted_git_state(r);
  CHECK(found(c) == V{".git/modules/m/config", "skipped/dep/.git/config"});
  // Only the index written during the run is read (old/.git has none; m's git dir has none).
  CHECK(asked == std::vector<std::pair<std::string, std::string>>{{t.root + "/.git", t.root}});
}
