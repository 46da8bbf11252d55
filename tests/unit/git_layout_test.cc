// discover_git_layout on hand-made directory trees (no git needed): a linked worktree's repository is found only
// when that repository's worktrees/<name> entry names this very workspace back; anything else finds nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/host_layout.h"

using namespace confine;
namespace fs = std::filesystem;

namespace {

// <root>/repo/.git (objects/, HEAD, worktrees/w/{gitdir,commondir}) and <root>/ws/.git -> worktrees/w: a
// worktree as `git worktree add` leaves it. Each test then breaks one part.
struct Layout {
  std::string root, ws, common, entry;
  Layout() {
    char tmpl[] = "/tmp/confine-gitlayout-XXXXXX";
    char* made = ::mkdtemp(tmpl);
    REQUIRE(made != nullptr);
    char real[PATH_MAX];
    REQUIRE(::realpath(made, real) != nullptr);  // the workspace confine passes is canonical
    root = real;
    ws = root + "/ws";
    common = root + "/repo/.git";
    entry = common + "/worktrees/w";
    fs::create_directories(ws);
    fs::create_directories(common + "/objects");
    fs::create_directories(entry);
    write(common + "/HEAD", "ref: refs/heads/main\n");
    write(entry + "/gitdir", ws + "/.git\n");
    write(entry + "/commondir", "../..\n");
    write(entry + "/HEAD", "ref: refs/heads/w\n");
    write(ws + "/.git", "gitdir: " + entry + "\n");
  }
  ~Layout() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    REQUIRE(out.good());
  }
  GitLayout discover() const { return discover_git_layout(ws); }
};

// Runs the body with the process's working directory at `dir`, restoring it afterwards.
struct Cwd {
  std::string saved = fs::current_path().string();
  explicit Cwd(const std::string& dir) { fs::current_path(dir); }
  ~Cwd() { fs::current_path(saved); }
};

}  // namespace

TEST_CASE("git layout: a back-linked linked worktree finds its repository") {
  Layout l;
  auto g = l.discover();
  CHECK(g.file);
  CHECK_FALSE(g.dir);
  CHECK_FALSE(g.hooks);
  CHECK_FALSE(g.config);
  CHECK(g.common_dir == l.common);

  SECTION("an absolute commondir") {
    Layout::write(l.entry + "/commondir", l.common + "\n");
    CHECK(l.discover().common_dir == l.common);
  }
  SECTION("no trailing newlines") {
    Layout::write(l.ws + "/.git", "gitdir: " + l.entry);
    Layout::write(l.entry + "/gitdir", l.ws + "/.git");
    Layout::write(l.entry + "/commondir", "../..");
    CHECK(l.discover().common_dir == l.common);
  }
  SECTION("a gitdir relative to the workspace, as git allows in a .git file") {
    Layout::write(l.ws + "/.git", "gitdir: ../repo/.git/worktrees/w\n");
    CHECK(l.discover().common_dir == l.common);
  }
  SECTION("the repository reached through a symlinked path: the canonical git dir") {
    fs::create_directory_symlink(l.root + "/repo", l.root + "/repo-link");
    Layout::write(l.ws + "/.git", "gitdir: " + l.root + "/repo-link/.git/worktrees/w\n");
    CHECK(l.discover().common_dir == l.common);
  }
}

TEST_CASE("git layout: no repository without a valid back-link") {
  Layout l;
  SECTION("the worktree entry has no gitdir file") {
    fs::remove(l.entry + "/gitdir");
  }
  SECTION("the back-link names another workspace") {
    fs::create_directories(l.root + "/other");
    Layout::write(l.entry + "/gitdir", l.root + "/other/.git\n");
  }
  SECTION("the back-link names a path that does not exist") {
    Layout::write(l.entry + "/gitdir", l.root + "/gone/.git\n");
  }
  SECTION("the back-link names the workspace itself, not its .git") {
    Layout::write(l.entry + "/gitdir", l.ws + "\n");
  }
  SECTION("a relative back-link") {
    Layout::write(l.entry + "/gitdir", "ws/.git\n");
  }
  SECTION("the back-link is a directory") {
    fs::remove(l.entry + "/gitdir");
    fs::create_directories(l.entry + "/gitdir");
  }
  SECTION("the back-link is a symlink to a file naming the workspace") {
    Layout::write(l.root + "/backlink", l.ws + "/.git\n");
    fs::remove(l.entry + "/gitdir");
    fs::create_symlink(l.root + "/backlink", l.entry + "/gitdir");
  }
  CHECK(l.discover().file);
  CHECK(l.discover().common_dir.empty());
}

TEST_CASE("git layout: no repository when the gitdir or common dir is not one") {
  Layout l;
  SECTION("commondir missing") {
    fs::remove(l.entry + "/commondir");
  }
  SECTION("commondir empty") {
    Layout::write(l.entry + "/commondir", "");
  }
  SECTION("commondir leads nowhere") {
    Layout::write(l.entry + "/commondir", l.root + "/nowhere\n");
  }
  SECTION("the common dir has no objects/") {
    fs::remove(l.common + "/objects");
  }
  SECTION("the common dir's objects is a file") {
    fs::remove(l.common + "/objects");
    Layout::write(l.common + "/objects", "x");
  }
  SECTION("the common dir has no HEAD") {
    fs::remove(l.common + "/HEAD");
  }
  SECTION("the common dir's HEAD is a directory") {
    fs::remove(l.common + "/HEAD");
    fs::create_directories(l.common + "/HEAD");
  }
  SECTION("commondir points at a directory holding secrets, not a repository") {
    fs::create_directories(l.root + "/home/.ssh");
    Layout::write(l.root + "/home/.ssh/id_rsa", "secret");
    Layout::write(l.entry + "/commondir", l.root + "/home/.ssh\n");
  }
  SECTION("the .git file names a directory that does not exist") {
    Layout::write(l.ws + "/.git", "gitdir: " + l.root + "/missing\n");
  }
  SECTION("the .git file has no gitdir: line") {
    Layout::write(l.ws + "/.git", l.entry + "\n");
  }
  SECTION("the .git file has an empty gitdir") {
    Layout::write(l.ws + "/.git", "gitdir: \n");
  }
  SECTION("the .git file is empty") {
    Layout::write(l.ws + "/.git", "");
  }
  CHECK(l.discover().file);
  CHECK(l.discover().common_dir.empty());
}

TEST_CASE("git layout: a .git that is a symlink is neither a file nor a directory") {
  Layout l;
  fs::rename(l.ws + "/.git", l.root + "/dotgit-file");
  SECTION("a symlink to a valid .git file") {
    fs::create_symlink(l.root + "/dotgit-file", l.ws + "/.git");
  }
  SECTION("a symlink to the worktree entry") {
    fs::create_directory_symlink(l.entry, l.ws + "/.git");
  }
  SECTION("a symlink to the repository's git dir") {
    fs::create_directory_symlink(l.common, l.ws + "/.git");
  }
  auto g = l.discover();
  CHECK_FALSE(g.file);
  CHECK_FALSE(g.dir);
  CHECK_FALSE(g.hooks);
  CHECK_FALSE(g.config);
  CHECK(g.common_dir.empty());
}

TEST_CASE("git layout: a plain .git directory, and no .git at all") {
  Layout l;
  SECTION("a .git directory with hooks/ and config") {
    fs::remove(l.ws + "/.git");
    fs::create_directories(l.ws + "/.git/hooks");
    Layout::write(l.ws + "/.git/config", "[core]\n");
    auto g = l.discover();
    CHECK(g.dir);
    CHECK(g.hooks);
    CHECK(g.config);
    CHECK_FALSE(g.file);
    CHECK(g.common_dir.empty());
  }
  SECTION("no .git") {
    fs::remove(l.ws + "/.git");
    auto g = l.discover();
    CHECK_FALSE(g.dir);
    CHECK_FALSE(g.file);
    CHECK(g.common_dir.empty());
  }
}

// The back-link only proves something when the worktree entry lies in the repository's own worktrees/
// directory, out of the sandbox's reach.
TEST_CASE("git layout: a worktree entry planted inside the workspace vouches for nothing") {
  Layout l;
  // Everything the check reads is written by whoever controls the workspace: .git -> .evil, .evil/gitdir names
  // the workspace, .evil/commondir leads to any repository on the host, which would be bound read-write.
  fs::create_directories(l.ws + "/.evil");
  Layout::write(l.ws + "/.git", "gitdir: .evil\n");
  Layout::write(l.ws + "/.evil/gitdir", l.ws + "/.git\n");
  Layout::write(l.ws + "/.evil/commondir", l.common + "\n");
  CHECK(l.discover().common_dir.empty());
}

TEST_CASE("git layout: a relative back-link is not resolved against the process's cwd") {
  Layout l;
  Layout::write(l.entry + "/gitdir", l.ws.substr(1) + "/.git\n");  // "tmp/…/ws/.git": right only from "/"
  Cwd at("/");
  CHECK(l.discover().common_dir.empty());
}
