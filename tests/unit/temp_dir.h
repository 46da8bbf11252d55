// A directory under /tmp for one test, removed with everything in it when the test ends.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace confine::testing {

struct TempDir {
  std::string root;

  // `mode`: the directory's own (mkdtemp makes it 0700; 0755 lets another user's reader in).
  explicit TempDir(mode_t mode = 0700) {
    std::string tmpl = "/tmp/confine-unit-XXXXXX";
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    root = tmpl;
    REQUIRE(::chmod(root.c_str(), mode) == 0);
  }
  ~TempDir() {
    std::error_code ignored;  // a test that made something unremovable must not also fail the next one
    std::filesystem::remove_all(root, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // `rel` (and the directories on its way) below the root.
  void mkdir(const std::string& rel) const { std::filesystem::create_directories(root + "/" + rel); }
  void file(const std::string& rel, const std::string& text = "x") const {
    auto path = std::filesystem::path(root) / rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
};

}  // namespace confine::testing
