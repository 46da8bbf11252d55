#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/secret_scan.h"

using namespace confine;

namespace {

struct Workspace {
  std::string root;
  Workspace() {
    char tmpl[] = "/tmp/confine-scan-XXXXXX";
    root = ::mkdtemp(tmpl);
  }
  ~Workspace() { [[maybe_unused]] int rc = std::system(("rm -rf " + root).c_str()); }
  void file(const std::string& rel) {
    auto path = root + "/" + rel;
    [[maybe_unused]] int rc = std::system(("mkdir -p \"$(dirname " + path + ")\"").c_str());
    std::ofstream(path) << "x";
  }
};

}  // namespace

TEST_CASE("secret names follow the seed's deny list") {
  for (const char* n : {".env", ".env.local", "server.pem", "id_rsa", "id_rsa.pub", "id_ed25519"})
    CHECK(is_secret_file_name(n));
  for (const char* n : {"env", "environment.ts", ".pem", "pem.txt", "README.md", "id.rs"}) CHECK_FALSE(is_secret_file_name(n));
  CHECK(is_secret_dir_name("secrets"));
  CHECK(is_skipped_dir_name(".git"));
  CHECK(is_skipped_dir_name("node_modules"));
}

TEST_CASE("the scan finds secrets, skips dependency trees and never follows symlinks") {
  Workspace w;
  w.file(".env");
  w.file("app/config/.env.production");
  w.file("certs/tls.pem");
  w.file("deploy/id_rsa_deploy");
  w.file("secrets/token");
  w.file("src/main.cc");
  w.file("node_modules/pkg/.env");
  w.file(".git/objects/.env");
  REQUIRE(::symlink("/etc", (w.root + "/etc-link").c_str()) == 0);
  auto scan = scan_workspace_secrets(w.root);
  CHECK(scan.files == std::vector<std::string>{".env", "app/config/.env.production", "certs/tls.pem",
                                               "deploy/id_rsa_deploy"});
  CHECK(scan.dirs == std::vector<std::string>{"secrets"});
  CHECK_FALSE(scan.truncated);
}

TEST_CASE("the scan is bounded and says so when it stops early") {
  Workspace w;
  w.file("a/b/c/d/.env");
  ScanLimits shallow;
  shallow.max_depth = 2;
  auto scan = scan_workspace_secrets(w.root, shallow);
  CHECK(scan.files.empty());
  CHECK(scan.truncated);
  ScanLimits few;
  few.max_entries = 1;
  w.file("x.txt");
  CHECK(scan_workspace_secrets(w.root, few).truncated);
}
