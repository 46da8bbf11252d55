// The directories a run makes on the host, and how a run that failed to start takes them back: through the
// directories they were made in, never by path, so a name swapped meanwhile sends the removal nowhere else.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "run/host_dirs.h"
#include "sys/private_dir.h"
#include "temp_dir.h"

using namespace confine;

namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

HostDirectory profile_dir(const std::string& path) { return {HostDirectory::Purpose::profile, path, ""}; }

}  // namespace

TEST_CASE("a failed start removes the directories it made, innermost first, and only while empty") {
  testing::TempDir t;
  auto made = run::make_host_directory(profile_dir(t.root + "/state/tool/cache"));
  REQUIRE(made);
  REQUIRE(made->size() == 3);
  REQUIRE(is_dir(t.root + "/state/tool/cache"));
  REQUIRE(::mkdir((t.root + "/state/tool/kept").c_str(), 0700) == 0);  // someone else's, meanwhile
  run::remove_made_directories(*made);
  CHECK(made->empty());
  CHECK_FALSE(is_dir(t.root + "/state/tool/cache"));
  CHECK(is_dir(t.root + "/state/tool/kept"));  // not empty: it and its parents stay
  CHECK(is_dir(t.root + "/state/tool"));
}

TEST_CASE("a made directory renamed away and replaced: the replacement stays, whatever its name") {
  testing::TempDir t;
  auto made = run::make_host_directory(profile_dir(t.root + "/a/b"));
  REQUIRE(made);
  REQUIRE(made->size() == 2);
  // A process of the user's swaps the names while the run fails to start: `a` moves, an empty `a` takes its place.
  REQUIRE(::rename((t.root + "/a").c_str(), (t.root + "/moved").c_str()) == 0);
  REQUIRE(::mkdir((t.root + "/a").c_str(), 0700) == 0);
  REQUIRE(::mkdir((t.root + "/a/b").c_str(), 0700) == 0);
  run::remove_made_directories(*made);
  CHECK(is_dir(t.root + "/a/b"));          // not what was made, though at its path (by path, both went)
  CHECK_FALSE(is_dir(t.root + "/moved/b"));  // what was made, removed where it is now
  CHECK(is_dir(t.root + "/moved"));        // renamed: no longer at the name it was made as
}

TEST_CASE("a private directory is made only at a name that does not exist") {
  testing::TempDir t;
  auto path = sys::choose_private_dir(t.root);
  CHECK(path.size() == t.root.size() + std::string("/confine-XXXXXX").size());
  CHECK(path != sys::choose_private_dir(t.root));
  REQUIRE(::symlink("/etc", path.c_str()) == 0);  // planted where the run will make it
  auto refused = sys::PrivateDir::make(path, ::getuid(), ::getgid());
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message().find("File exists") != std::string::npos);
  ::unlink(path.c_str());
  auto made = sys::PrivateDir::make(path, ::getuid(), ::getgid());
  REQUIRE(made);
  CHECK(is_dir(path + "/home"));
  CHECK(made->remove());
  CHECK_FALSE(is_dir(path));
}
