#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <set>
#include <string>

#include "run/checkpoint_tree.h"
#include "sys/file_copy.h"
#include "sys/unique_fd.h"

using namespace confine;

namespace {

struct TempDir {
  std::string root;
  TempDir() {
    char tmpl[] = "/tmp/confine-ckpt-XXXXXX";
    root = ::mkdtemp(tmpl);
  }
  ~TempDir() { [[maybe_unused]] int rc = std::system(("rm -rf " + root).c_str()); }
};

}  // namespace

TEST_CASE("a manifest survives its own bytes, names with newlines and spaces included") {
  run::Manifest m;
  m["."] = {.kind = 'd', .mode = 0755, .uid = 1000, .gid = 1000};
  m["dir/a file\nwith a newline"] = {.kind = 'f', .mode = 04755, .uid = 0, .gid = 5, .size = 1ULL << 40, .ino = 42,
                                     .mtime = {1700000000, 123456789}, .ctime = {1700000001, 5}};
  m["link"] = {.kind = 'l', .mode = 0777, .size = 7};
  auto parsed = run::parse_manifest(run::serialize(m));
  REQUIRE(parsed.ok());
  REQUIRE(parsed->size() == 3);
  for (const auto& [path, e] : m) {
    REQUIRE(parsed->contains(path));
    CHECK(run::unchanged(parsed->at(path), e));
    CHECK(parsed->at(path).mtime.tv_nsec == e.mtime.tv_nsec);
  }
  CHECK_FALSE(run::parse_manifest(std::string("x\0f 644 0 0", 11)).ok());
  CHECK_FALSE(run::parse_manifest(std::string("x\0q 644 0 0 0 0 0 0 0 0\0", 26)).ok());
}

TEST_CASE("unchanged: a file's ctime or inode tells an edit that restored the mtime; a directory's times do not count") {
  run::TreeEntry file{.kind = 'f', .mode = 0644, .size = 3, .ino = 7, .mtime = {1, 0}, .ctime = {2, 0}};
  auto edited = file;
  edited.ctime = {3, 0};
  CHECK(run::unchanged(file, file));
  CHECK_FALSE(run::unchanged(file, edited));
  auto replaced = file;
  replaced.ino = 8;
  CHECK_FALSE(run::unchanged(file, replaced));
  run::TreeEntry dir{.kind = 'd', .mode = 0755, .mtime = {1, 0}};
  auto touched = dir;
  touched.mtime = {9, 0};
  CHECK(run::unchanged(dir, touched));
  touched.mode = 0700;
  CHECK_FALSE(run::unchanged(dir, touched));
}

TEST_CASE("copy_data copies a sparse file's data and keeps its holes") {
  TempDir t;
  auto from_path = t.root + "/from", to_path = t.root + "/to";
  sys::UniqueFd from(::open(from_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  REQUIRE(from.valid());
  constexpr off_t kSize = off_t{1} << 30;
  REQUIRE(::ftruncate(from.get(), kSize) == 0);
  const std::string data = "data in the middle";
  REQUIRE(::pwrite(from.get(), data.data(), data.size(), kSize / 2) == static_cast<ssize_t>(data.size()));
  sys::UniqueFd to(::open(to_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  REQUIRE(to.valid());
  auto copied = sys::copy_data(from.get(), to.get(), kSize);
  REQUIRE(copied.ok());
  CHECK(*copied < 1024 * 1024);  // one block's worth, not a GiB
  struct stat st {};
  REQUIRE(::fstat(to.get(), &st) == 0);
  CHECK(st.st_size == kSize);
  CHECK(st.st_blocks * 512 < 1024 * 1024);
  std::string back(data.size(), '\0');
  REQUIRE(::pread(to.get(), back.data(), back.size(), kSize / 2) == static_cast<ssize_t>(back.size()));
  CHECK(back == data);
}

TEST_CASE("unchanged_directories: a name added, removed or changed at any depth marks every directory above it") {
  run::Manifest before;
  before["."] = {.kind = 'd', .mode = 0755};
  for (const char* dir : {"a", "a/b", "a-c", "d"}) before[dir] = {.kind = 'd', .mode = 0755};
  for (const char* file : {"a/b/f", "a-c/g", "d/h", "top"}) before[file] = {.kind = 'f', .mode = 0644, .size = 1, .ino = 1};
  CHECK(run::unchanged_directories(before, before) == std::set<std::string>{".", "a", "a/b", "a-c", "d"});

  auto changed = before;
  changed["a/b/f"].ctime = {5, 0};
  CHECK(run::unchanged_directories(changed, before) == std::set<std::string>{"a-c", "d"});

  auto added = before;
  added["a-c/new"] = {.kind = 'f', .mode = 0644};
  CHECK(run::unchanged_directories(added, before) == std::set<std::string>{"a", "a/b", "d"});

  auto removed = before;
  removed.erase("d/h");
  CHECK(run::unchanged_directories(removed, before) == std::set<std::string>{"a", "a/b", "a-c"});

  auto chmodded = before;
  chmodded["a/b"].mode = 0700;
  CHECK(run::unchanged_directories(chmodded, before) == std::set<std::string>{"a-c", "d"});

  CHECK(run::unchanged_directories(before, run::Manifest{}).empty());

  // What the previous checkpoint could not save counts as changed: its directory holds less than the manifest says.
  CHECK(run::unchanged_directories(before, before, {"a/b"}) == std::set<std::string>{"a-c", "d"});
  CHECK(run::unchanged_directories(before, before, {"d/h"}) == std::set<std::string>{"a", "a/b", "a-c"});
}

TEST_CASE("save_tree: an unchanged directory is referred to, and its neighbours that sort beside it are not taken with it") {
  TempDir t;
  auto at = [&](const std::string& rel) { return t.root + "/" + rel; };
  for (const char* dir : {"ws", "ws/d", "ws/d-x", "ws/d.y", "ws/-first", "one", "two"}) REQUIRE(::mkdir(at(dir).c_str(), 0755) == 0);
  for (const char* file : {"ws/d/f", "ws/d-x/g", "ws/d.y/h", "ws/-first/i", "ws/top"}) {
    sys::UniqueFd fd(::open(at(file).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    REQUIRE(fd.valid());
    REQUIRE(::write(fd.get(), "x", 1) == 1);
  }
  sys::UniqueFd ws(::open(at("ws").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  sys::UniqueFd one(::open(at("one").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  sys::UniqueFd two(::open(at("two").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  run::Progress silent("");
  auto first = run::save_tree(ws.get(), one.get(), {}, {}, silent);
  REQUIRE(first.ok());
  CHECK(first->shared_directories.empty());

  // Only d.y changes: d, d-x and -first are referred to; d.y and the top are stored again.
  REQUIRE(::unlink(at("ws/d.y/h").c_str()) == 0);
  run::PreviousTree previous{&first->manifest, "ONE", [&](const std::string& path) {
                               return sys::UniqueFd(path == "." ? ::dup(one.get()) : ::openat(one.get(), path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
                             }};
  auto second = run::save_tree(ws.get(), two.get(), previous, {}, silent);
  REQUIRE(second.ok());
  CHECK(second->shared_directories == run::SharedDirectories{{"-first", "ONE"}, {"d", "ONE"}, {"d-x", "ONE"}});
  auto now = run::snapshot(ws.get());
  CHECK(second->manifest.size() == now.size());
  for (const auto& [path, e] : now) {
    INFO(path);
    REQUIRE(second->manifest.contains(path));
    CHECK(run::unchanged(second->manifest.at(path), e));
  }
  struct stat st {};
  CHECK(::stat((t.root + "/two/d").c_str(), &st) != 0);
  CHECK(::stat((t.root + "/two/d.y").c_str(), &st) == 0);
  CHECK(second->files == 4);
  CHECK(second->shared == 4);  // 3 in the shared directories, top linked
}
