#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "sys/held_path.h"
#include "temp_dir.h"

using namespace confine;
using sys::PathTrust;

namespace {

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir(0755) {}
};

std::string real(const std::string& path) {
  char buf[PATH_MAX];
  REQUIRE(::realpath(path.c_str(), buf) != nullptr);
  return buf;
}

}  // namespace

TEST_CASE("a held path resolves links as realpath does, and holds what it named") {
  TempDir t;
  REQUIRE(::mkdir((t.root + "/a").c_str(), 0755) == 0);
  REQUIRE(::mkdir((t.root + "/a/b").c_str(), 0755) == 0);
  REQUIRE(::symlink("a/b", (t.root + "/rel").c_str()) == 0);
  REQUIRE(::symlink((t.root + "/a").c_str(), (t.root + "/abs").c_str()) == 0);
  REQUIRE(::symlink("../b/./..", (t.root + "/a/b/up").c_str()) == 0);
  for (const char* name : {"/rel", "/abs/b", "/a/b/up", "/abs/../a/b"}) {
    auto held = sys::hold_path("test", t.root + name, PathTrust::follow_links);
    REQUIRE(held);
    CHECK(held->path == real(t.root + name));
  }
  // The descriptor stays on what was named when the name moves away.
  auto held = sys::hold_path("test", t.root + "/a/b", PathTrust::follow_links);
  REQUIRE(held);
  REQUIRE(::rename((t.root + "/a/b").c_str(), (t.root + "/moved").c_str()) == 0);
  REQUIRE(::symlink("/", (t.root + "/a/b").c_str()) == 0);
  struct stat by_fd {}, moved {};
  REQUIRE(::fstat(held->fd->get(), &by_fd) == 0);
  REQUIRE(::stat((t.root + "/moved").c_str(), &moved) == 0);
  CHECK(by_fd.st_ino == moved.st_ino);
}

TEST_CASE("a held path reports loops, missing names and files in the middle") {
  TempDir t;
  REQUIRE(::symlink("loop", (t.root + "/loop").c_str()) == 0);
  int fd = ::open((t.root + "/file").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  ::close(fd);
  CHECK(sys::hold_path("test", t.root + "/loop", PathTrust::follow_links).error().err == ELOOP);
  CHECK(sys::hold_path("test", t.root + "/missing", PathTrust::follow_links).error().err == ENOENT);
  CHECK(sys::hold_path("test", t.root + "/file/x", PathTrust::follow_links).error().err == ENOTDIR);
  CHECK(!sys::hold_path("test", "relative/path", PathTrust::follow_links));
}

TEST_CASE("run by root, a path another user could redirect is refused") {
  if (::geteuid() != 0) {
    WARN("not root: the ownership rule needs chown");
    return;
  }
  TempDir t;
  constexpr uid_t kAlice = 65534;
  std::string home = t.root + "/alice";
  REQUIRE(::mkdir(home.c_str(), 0755) == 0);
  REQUIRE(::mkdir((home + "/proj").c_str(), 0755) == 0);
  REQUIRE(::mkdir((t.root + "/rootdir").c_str(), 0755) == 0);
  REQUIRE(::mkdir((home + "/rootmade").c_str(), 0755) == 0);  // root's, in alice's home
  REQUIRE(::symlink((t.root + "/rootdir").c_str(), (home + "/to-root").c_str()) == 0);
  REQUIRE(::symlink("proj", (home + "/to-own").c_str()) == 0);
  for (const char* name : {"", "/proj", "/to-root", "/to-own"})
    REQUIRE(::lchown((home + name).c_str(), kAlice, kAlice) == 0);

  // Alice's own project, directly or through her own link: what it leads to is hers.
  for (const char* name : {"/proj", "/to-own"}) {
    auto held = sys::hold_path("workspace", home + name, PathTrust::owners_checked);
    REQUIRE(held);
    CHECK(held->st.st_uid == kAlice);
  }
  // Root's directory reached through alice's: hers to swap, so refused; by its own path it is fine.
  for (const char* name : {"/to-root", "/rootmade"}) {
    auto held = sys::hold_path("workspace", home + name, PathTrust::owners_checked);
    REQUIRE(!held);
    CHECK_THAT(held.error().what, Catch::Contains("another user could redirect"));
    CHECK(sys::hold_path("workspace", home + name, PathTrust::follow_links));
  }
  CHECK(sys::hold_path("workspace", t.root + "/rootdir", PathTrust::owners_checked));
}
