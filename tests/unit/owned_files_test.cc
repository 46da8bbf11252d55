#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "sys/owned_files.h"
#include "temp_dir.h"

using namespace confine;

namespace {

using testing::TempDir;

void write_text(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
}

std::string read_text(const std::string& path) {
  std::string out(4096, '\0');
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto n = ::read(fd, out.data(), out.size());
  ::close(fd);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

void refused(const sys::Result<sys::UniqueFd>& r, const std::string& needle) {
  REQUIRE_FALSE(r.ok());
  INFO(r.error().message());
  CHECK(r.error().message().find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("a file confine writes is created, emptied only once checked, appended to") {
  TempDir t;
  auto path = t.root + "/report.json";
  auto fd = sys::open_owned_file("--report", path, sys::FileWrite::truncate, 0600);
  REQUIRE(fd.ok());
  REQUIRE(::write(fd->get(), "one\n", 4) == 4);
  fd->reset();
  auto again = sys::open_owned_file("--net-log", path, sys::FileWrite::append, 0600);
  REQUIRE(again.ok());
  REQUIRE(::write(again->get(), "two\n", 4) == 4);
  again->reset();
  CHECK(read_text(path) == "one\ntwo\n");
  auto emptied = sys::open_owned_file("--report", path, sys::FileWrite::truncate, 0600);
  REQUIRE(emptied.ok());
  emptied->reset();
  CHECK(read_text(path).empty());
}

TEST_CASE("confine writes through no link and to no second name") {
  TempDir t;
  auto target = t.root + "/target";
  write_text(target, "precious\n");
  ::mkdir((t.root + "/real").c_str(), 0755);

  REQUIRE(::symlink(target.c_str(), (t.root + "/link.json").c_str()) == 0);
  refused(sys::open_owned_file("--report", t.root + "/link.json", sys::FileWrite::truncate, 0600),
          "is a symbolic link");
  REQUIRE(::symlink((t.root + "/real").c_str(), (t.root + "/sub").c_str()) == 0);
  refused(sys::open_owned_file("--report", t.root + "/sub/new.json", sys::FileWrite::truncate, 0600),
          "`" + t.root + "/sub` is a symbolic link");
  CHECK_FALSE(::access((t.root + "/real/new.json").c_str(), F_OK) == 0);
  REQUIRE(::symlink((t.root + "/nowhere").c_str(), (t.root + "/dangling").c_str()) == 0);
  refused(sys::open_owned_file("--net-log", t.root + "/dangling", sys::FileWrite::append, 0600), "symbolic link");
  CHECK_FALSE(::access((t.root + "/nowhere").c_str(), F_OK) == 0);

  REQUIRE(::link(target.c_str(), (t.root + "/hard.json").c_str()) == 0);
  refused(sys::open_owned_file("--report", t.root + "/hard.json", sys::FileWrite::truncate, 0600), "2 names");
  CHECK(read_text(target) == "precious\n");

  REQUIRE(::mkfifo((t.root + "/fifo").c_str(), 0600) == 0);
  refused(sys::open_owned_file("--net-log", t.root + "/fifo", sys::FileWrite::append, 0600), "not a regular file");
  refused(sys::open_owned_file("--report", t.root + "/real", sys::FileWrite::truncate, 0600), "not a regular file");
  refused(sys::open_owned_file("--report", "relative.json", sys::FileWrite::truncate, 0600), "absolute");
}

TEST_CASE("directories confine makes are real, the caller's, and reached without a link") {
  TempDir t;
  auto made = sys::make_owned_directory("the cache", t.root + "/a/b/c");
  REQUIRE(made.ok());
  struct stat st {};
  REQUIRE(::stat((t.root + "/a/b/c").c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(sys::make_owned_directory("the cache", t.root + "/a/b/c").ok());  // there already: reused

  ::mkdir((t.root + "/elsewhere").c_str(), 0755);
  REQUIRE(::symlink((t.root + "/elsewhere").c_str(), (t.root + "/a/link").c_str()) == 0);
  refused(sys::make_owned_directory("the cache", t.root + "/a/link/d"), "`" + t.root + "/a/link` is a symbolic link");
  CHECK_FALSE(::access((t.root + "/elsewhere/d").c_str(), F_OK) == 0);
  refused(sys::open_real_directory("git directory", t.root + "/a/link"), "symbolic link");
  write_text(t.root + "/a/file", "");
  refused(sys::make_owned_directory("the cache", t.root + "/a/file/d"), "not a directory");
  refused(sys::make_owned_directory("the cache", t.root + "/a/../a"), "normalised");

  if (::geteuid() == 0) {
    REQUIRE(::chown((t.root + "/a/b").c_str(), 65534, 65534) == 0);
    refused(sys::make_owned_directory("the cache", t.root + "/a/b"), "owned by uid 65534");
    write_text(t.root + "/theirs.json", "");
    REQUIRE(::chown((t.root + "/theirs.json").c_str(), 65534, 65534) == 0);
    refused(sys::open_owned_file("--report", t.root + "/theirs.json", sys::FileWrite::truncate, 0600),
            "owned by uid 65534");
    sys::UniqueFd dir(::open(t.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    CHECK_FALSE(sys::open_owned_file_for_reading(dir.get(), "theirs.json").valid());
  }
}

TEST_CASE("a file confine reads back (the scan cache) is its own regular file, not a link") {
  TempDir t;
  write_text(t.root + "/cache", "data");
  REQUIRE(::symlink((t.root + "/cache").c_str(), (t.root + "/link").c_str()) == 0);
  sys::UniqueFd dir(::open(t.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  CHECK(sys::open_owned_file_for_reading(dir.get(), "cache").valid());
  CHECK_FALSE(sys::open_owned_file_for_reading(dir.get(), "link").valid());
  CHECK_FALSE(sys::open_owned_file_for_reading(dir.get(), "missing").valid());
}
