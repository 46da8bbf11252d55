#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <string>

#include "sys/user_files.h"
#include "temp_dir.h"

using namespace confine;

namespace {

constexpr uid_t kOther = 65534;  // "nobody": a user other than root, for the tests that run as root

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir(0755) {}
};

void write_text(const std::string& path, const std::string& text, mode_t mode = 0644) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

void refused(const sys::Result<std::string>& r, const std::string& needle) {
  REQUIRE_FALSE(r.ok());
  INFO(r.error().message());
  CHECK(r.error().message().find(needle) != std::string::npos);
  CHECK(r.error().message().find('\n') == std::string::npos);
}

bool root() { return ::geteuid() == 0; }

}  // namespace

TEST_CASE("a regular file is read whole, within its bound") {
  TempDir t;
  write_text(t.root + "/env", "A=1\nB=2\n");
  auto r = sys::read_user_file("--env-file", t.root + "/env", 1024);
  REQUIRE(r.ok());
  CHECK(*r == "A=1\nB=2\n");
  refused(sys::read_user_file("--env-file", t.root + "/env", 4), "is larger than 4 bytes, the limit for it");
  write_text(t.root + "/big", std::string(2 * 1024, 'x'));
  refused(sys::read_user_file("profile", t.root + "/big", 1024), "profile `" + t.root + "/big` is larger than 1 KiB");
}

TEST_CASE("a missing file is ENOENT, for callers that search or skip") {
  TempDir t;
  auto r = sys::read_user_file("profile", t.root + "/none.toml", 1024);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().err == ENOENT);
  auto deeper = sys::read_user_file("profile", t.root + "/no/such/dir.toml", 1024);
  REQUIRE_FALSE(deeper.ok());
  CHECK(deeper.error().err == ENOENT);
}

TEST_CASE("the file itself is never reached through a symbolic link") {
  TempDir t;
  write_text(t.root + "/secret", "ROOTSECRET\n", 0600);
  REQUIRE(::symlink((t.root + "/secret").c_str(), (t.root + "/config.json").c_str()) == 0);
  auto r = sys::read_user_file("bundle config", t.root + "/config.json", 1024);
  refused(r, "bundle config `" + t.root + "/config.json` is a symbolic link");
  CHECK(r.error().message().find("ROOTSECRET") == std::string::npos);
}

TEST_CASE("a FIFO, a directory or a device is refused at once, never waited on") {
  TempDir t;
  REQUIRE(::mkfifo((t.root + "/fifo").c_str(), 0644) == 0);
  auto start = std::chrono::steady_clock::now();
  refused(sys::read_user_file("--env-file", t.root + "/fifo", 1024), "is a FIFO, not a regular file");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  refused(sys::read_user_file("--env-file", t.root, 1024), "is a directory, not a regular file");
  refused(sys::read_user_file("--seccomp", "/dev/null", 1024), "is a character device, not a regular file");
}

TEST_CASE("a relative path is taken from the current directory") {
  TempDir t;
  write_text(t.root + "/p.toml", "x");
  char cwd[4096];
  REQUIRE(::getcwd(cwd, sizeof cwd) != nullptr);
  REQUIRE(::chdir(t.root.c_str()) == 0);
  auto r = sys::read_user_file("profile", "p.toml", 16);
  REQUIRE(::chdir(cwd) == 0);
  REQUIRE(r.ok());
  CHECK(*r == "x");
}

TEST_CASE("who controls a path: the one user besides root who owns a name on the way") {
  if (!root()) return;  // needs files owned by several users
  TempDir t;
  auto alice = t.root + "/alice";
  REQUIRE(::mkdir(alice.c_str(), 0755) == 0);
  write_text(alice + "/config.json", "{}");
  write_text(t.root + "/rootfile", "{}");
  CHECK(sys::who_controls(t.root + "/rootfile").reader == 0);
  CHECK(sys::who_controls(alice + "/config.json").reader == 0);
  REQUIRE(::chown(alice.c_str(), kOther, kOther) == 0);
  auto c = sys::who_controls(alice + "/config.json");
  CHECK(c.reader == kOther);
  CHECK(c.reader_because == alice);
  CHECK(c.refusal.empty());

  SECTION("a link on the way is followed, and what it passes through counts") {
    // /root-owned/link -> alice/: root's own link, but alice can change what is behind it.
    REQUIRE(::symlink(alice.c_str(), (t.root + "/link").c_str()) == 0);
    auto via = sys::who_controls(t.root + "/link/config.json");
    CHECK(via.reader == kOther);
    CHECK(via.reader_because == alice);
  }
  SECTION("two users: refused") {
    auto bob = alice + "/bob";
    REQUIRE(::mkdir(bob.c_str(), 0755) == 0);
    REQUIRE(::chown(bob.c_str(), kOther - 1, kOther - 1) == 0);
    write_text(bob + "/f", "x");
    auto two = sys::who_controls(bob + "/f");
    CHECK(two.refusal.find("to uid 65533") != std::string::npos);
    refused(sys::read_user_file("profile", bob + "/f", 16), "at most one user besides root");
  }
  SECTION("a directory anyone may change, without the sticky bit: refused; with it, fine") {
    auto open = t.root + "/open";
    REQUIRE(::mkdir(open.c_str(), 0755) == 0);
    REQUIRE(::chmod(open.c_str(), 0777) == 0);
    write_text(open + "/f", "x");
    CHECK(sys::who_controls(open + "/f").refusal.find("can be changed by anyone (mode 0777)") != std::string::npos);
    refused(sys::read_user_file("profile", open + "/f", 16), "can be changed by anyone");
    // A file that is not there is only missing (a profile search goes on): nothing would be read anyway.
    auto none = sys::read_user_file("profile", open + "/none.toml", 16);
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().err == ENOENT);
    REQUIRE(::chmod(open.c_str(), 01777) == 0);
    auto sticky = sys::who_controls(open + "/f");
    CHECK(sticky.refusal.empty());
    CHECK(sticky.reader == 0);
  }
  SECTION("a missing name is reported as missing") {
    CHECK(sys::who_controls(alice + "/nothing/here").missing);
  }
}

TEST_CASE("run by root, a file another user can redirect is read with that user's permissions") {
  if (!root()) return;
  TempDir t;
  // A root-only directory and secret, and a directory "nobody" owns, with a link to the secret's directory.
  auto vault = t.root + "/vault";
  REQUIRE(::mkdir(vault.c_str(), 0700) == 0);
  write_text(vault + "/config.json", "ROOTSECRET", 0600);
  auto home = t.root + "/home";
  REQUIRE(::mkdir(home.c_str(), 0755) == 0);
  write_text(home + "/own.json", "mine", 0600);
  REQUIRE(::chown((home + "/own.json").c_str(), kOther, kOther) == 0);
  REQUIRE(::symlink(vault.c_str(), (home + "/bundle").c_str()) == 0);
  REQUIRE(::chown(home.c_str(), kOther, kOther) == 0);

  auto own = sys::read_user_file("bundle config", home + "/own.json", 1024);
  REQUIRE(own.ok());
  CHECK(*own == "mine");

  auto r = sys::read_user_file("bundle config", home + "/bundle/config.json", 1024);
  refused(r, "Permission denied (read with the permissions of uid 65534, who can change `" + home + "`)");
  CHECK(r.error().message().find("ROOTSECRET") == std::string::npos);

  // The same file at a path only root controls is root's to read.
  auto direct = sys::read_user_file("bundle config", vault + "/config.json", 1024);
  REQUIRE(direct.ok());
  CHECK(*direct == "ROOTSECRET");

  SECTION("the reader's bound holds for what comes through the pipe") {
    write_text(home + "/big", std::string(5000, 'x'));
    refused(sys::read_user_file("--env-file", home + "/big", 4096), "is larger than 4 KiB");
  }
  SECTION("a FIFO the user made is refused by the reader too") {
    REQUIRE(::mkfifo((home + "/fifo").c_str(), 0644) == 0);
    refused(sys::read_user_file("--env-file", home + "/fifo", 4096), "is a FIFO, not a regular file");
  }
}
