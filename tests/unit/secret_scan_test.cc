#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "core/secret_scan.h"
#include "temp_dir.h"

using namespace confine;

namespace {

using Workspace = testing::TempDir;

bool is_plain_name(std::string_view s) { return !s.empty() && s != "." && s != ".." && s.find('/') == std::string_view::npos; }

// The cache file's first lines for a walk of `root` with the default names: what a forged cache starts with.
std::string cache_header(const std::string& root) {
  auto names = default_secret_names().fingerprint();
  return "confine-scan-cache 6\n" + std::to_string(root.size()) + " " + root + std::to_string(names.size()) + " " + names;
}

}  // namespace

TEST_CASE("secret names come from secrets/default.toml, in any letter case") {
  const auto& names = default_secret_names();
  for (const char* n : {".env", ".env.local", ".ENV.Local", ".Env", ".envrc", "server.pem", "SERVER.PEM", "id_rsa",
                        "id_rsa.pub", "id_ed25519", "prod.key", "Prod.KEY", "cert.p12", "cert.pfx", "store.jks",
                        ".npmrc", ".pypirc", ".git-credentials", ".netrc", ".pgpass", ".dockercfg",
                        "credentials.json", "Credentials.JSON", "terraform.tfstate", "terraform.tfstate.backup"})
    CHECK(names.is_secret_file(n));
  for (const char* n : {"env", "environment.ts", ".pem", "pem.txt", "README.md", "id.rs", ".key", "keys.txt",
                        "credentials.json.txt", "my.npmrc", "tfstate"})
    CHECK_FALSE(names.is_secret_file(n));
  CHECK(names.is_secret_dir("secrets"));
  CHECK(names.is_secret_dir("Secrets"));
  CHECK(names.is_skipped_dir("node_modules"));
  CHECK(names.is_skipped_dir("target"));
  CHECK_FALSE(names.is_skipped_dir("src"));
  // Keys are the names looked for inside skipped directories: private halves only.
  for (const char* n : {"id_rsa", "ID_RSA", "id_ed25519", "id_ecdsa", "id_dsa", "tls.key", "a.p12", "a.pfx", "a.jks"})
    CHECK(names.is_key(n));
  for (const char* n : {"id_rsa.pub", ".env", "ca.pem", "index.js"}) CHECK_FALSE(names.is_key(n));
}

TEST_CASE("name patterns are a whole name, a prefix or a suffix, never a path") {
  auto p = parse_name_pattern("*.tfstate");
  REQUIRE(p.ok());
  CHECK(p->matches("a.tfstate", true));
  CHECK_FALSE(p->matches(".tfstate", true));  // a suffix needs something before it
  CHECK(p->spelled() == "*.tfstate");
  auto prefix = parse_name_pattern(".env*");
  REQUIRE(prefix.ok());
  CHECK(prefix->matches(".env", true));
  CHECK(prefix->matches(".ENV.prod", true));
  CHECK_FALSE(prefix->matches(".ENV.prod", false));
  for (const char* bad : {"", "*", "a/b", "*a*", "a*b", "..", "**"}) {
    INFO(bad);
    CHECK_FALSE(parse_name_pattern(bad).ok());
  }
}

TEST_CASE("profiles and flags change the names: more masked, more skipped, skipped ones walked") {
  auto changed = apply_secret_name_changes(default_secret_names(), {{"*.secret"}, {"build"}, {"node_modules"}});
  REQUIRE(changed.ok());
  CHECK(changed->is_secret_file("db.SECRET"));
  CHECK(changed->is_skipped_dir("build"));
  CHECK_FALSE(changed->is_skipped_dir("node_modules"));
  CHECK(changed->fingerprint() != default_secret_names().fingerprint());
  // A skip added by a profile can be undone by --scan-walk.
  CHECK(apply_secret_name_changes(default_secret_names(), {{}, {"build"}, {"build"}}).ok());
  auto typo = apply_secret_name_changes(default_secret_names(), {{}, {}, {"node_module"}});
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message().find("node_modules") != std::string::npos);  // says what is skipped
  CHECK_FALSE(apply_secret_name_changes(default_secret_names(), {{"a/b"}, {}, {}}).ok());
}

TEST_CASE("inside skipped directories only keys are found, at any depth") {
  Workspace w;
  w.file("node_modules/pkg/id_rsa");
  w.file("node_modules/pkg/id_rsa.pub");
  w.file("node_modules/pkg/.env");
  w.file("node_modules/a/b/c/tls.KEY");
  w.file("node_modules/pkg/secrets/x.p12");
  w.file("node_modules/pkg/certifi/cacert.pem");
  w.file("target/release/store.jks");
  w.file(".git/id_rsa");  // git's metadata is never walked
  auto scan = scan_workspace_secrets(w.root);
  CHECK(scan.files == std::vector<std::string>{"node_modules/a/b/c/tls.KEY", "node_modules/pkg/id_rsa",
                                               "node_modules/pkg/secrets/x.p12", "target/release/store.jks"});
  CHECK(scan.dirs.empty());
  // Walked like any other directory: everything in it is found.
  auto walked = apply_secret_name_changes(default_secret_names(), {{}, {}, {"node_modules"}});
  REQUIRE(walked.ok());
  ScanLimits limits;
  limits.names = &*walked;
  auto full = scan_workspace_secrets(w.root, limits);
  CHECK(full.files == std::vector<std::string>{"node_modules/a/b/c/tls.KEY", "node_modules/pkg/.env",
                                               "node_modules/pkg/certifi/cacert.pem", "node_modules/pkg/id_rsa",
                                               "node_modules/pkg/id_rsa.pub", "target/release/store.jks"});
  CHECK(full.dirs == std::vector<std::string>{"node_modules/pkg/secrets"});
}

TEST_CASE("a cache made with other names is not reused") {
  Workspace w;
  w.file("build/.env");
  ScanLimits trust_now;
  trust_now.racy_seconds = -1;
  ScanCache cache;
  CHECK(scan_workspace_secrets(w.root, trust_now, &cache).files == std::vector<std::string>{"build/.env"});
  auto skipping = apply_secret_name_changes(default_secret_names(), {{}, {"build"}, {}});
  REQUIRE(skipping.ok());
  ScanLimits other = trust_now;
  other.names = &*skipping;
  ScanCache loaded;
  CHECK_FALSE(parse_scan_cache(cache.text, w.root, loaded, other));
  CHECK(parse_scan_cache(cache.text, w.root, loaded, trust_now));
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

TEST_CASE("the scan cache skips unchanged directories and notices every change") {
  Workspace w;
  w.file("a/b/.env");
  w.file("a/c/main.cc");
  ScanCache cache;
  ScanLimits trust_now;
  trust_now.racy_seconds = 0;  // the tree was made a moment ago
  auto first = scan_workspace_secrets(w.root, trust_now, &cache);
  CHECK(first.files == std::vector<std::string>{"a/b/.env"});
  CHECK(first.dirs_read == 4);
  CHECK(cache.changed);

  auto second = scan_workspace_secrets(w.root, trust_now, &cache);
  CHECK(second.files == first.files);
  CHECK(second.dirs_read == 0);  // everything from the cache
  CHECK_FALSE(cache.changed);

  w.file("a/c/id_rsa");  // a new secret in a cached directory: its ctime changed
  auto third = scan_workspace_secrets(w.root, trust_now, &cache);
  CHECK(third.files == std::vector<std::string>{"a/b/.env", "a/c/id_rsa"});
  CHECK(third.dirs_read == 1);
  CHECK(cache.changed);
}

TEST_CASE("the scan cache survives a round trip through its file format") {
  Workspace w;
  w.file("x/.env");
  ScanCache cache;
  ScanLimits trust_now;
  trust_now.racy_seconds = 0;
  scan_workspace_secrets(w.root, trust_now, &cache);
  auto text = cache.text;
  ScanCache loaded;
  REQUIRE(parse_scan_cache(text, w.root, loaded));
  CHECK(loaded.dirs.size() == cache.dirs.size());
  CHECK(scan_workspace_secrets(w.root, trust_now, &loaded).dirs_read == 0);
  ScanCache other;
  CHECK_FALSE(parse_scan_cache(text, "/another/workspace", other));
}

TEST_CASE("a scan cache's header names the directory it was written for, and nothing else does") {
  Workspace w;
  ScanCache cache;
  scan_workspace_secrets(w.root, {}, &cache);
  CHECK(scan_cache_scanned_path(cache.text) == w.root);
  CHECK(scan_cache_scanned_path(std::string_view(cache.text).substr(0, 40)) == std::nullopt);  // cut inside the path
  CHECK(scan_cache_scanned_path("old\n") == std::nullopt);
  CHECK(scan_cache_scanned_path("confine-scan-cache 6\n3 abc") == std::nullopt);  // not absolute
  CHECK(scan_cache_scanned_path("confine-scan-cache 5\n4 /abc") == std::nullopt);  // another format
}

TEST_CASE("a damaged or forged cache file is rejected, never trusted or crashed on") {
  Workspace w;
  w.file("x/y/.env");
  ScanCache cache;
  scan_workspace_secrets(w.root, {}, &cache);
  const auto text = cache.text;
  std::mt19937 rng(42);
  for (int i = 0; i < 3000; ++i) {
    auto mutated = text;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !mutated.empty(); ++e) {
      auto pos = rng() % mutated.size();
      switch (rng() % 3) {
        case 0: mutated[pos] = static_cast<char>(rng()); break;
        case 1: mutated.erase(pos, 1 + rng() % 8); break;
        default: mutated.insert(pos, 1, static_cast<char>(rng())); break;
      }
    }
    ScanCache out;
    if (parse_scan_cache(mutated, w.root, out)) {
      for (std::size_t d = 1; d < out.dirs.size(); ++d) CHECK(is_plain_name(out.view(out.dirs[d].name)));
      for (auto name : out.secrets) CHECK(is_plain_name(out.view(name)));
    }
  }
  // A record naming ".." as a subdirectory would lead the walk out of the workspace.
  ScanCache forged;
  std::string evil = cache_header(w.root) + "0 1 1 1 1 0 0 0 0 1 2 ..1 1 1 1 0 0 0 0 0 ";
  CHECK_FALSE(parse_scan_cache(evil, w.root, forged));
  CHECK(forged.dirs.empty());
  auto control = evil;
  control.replace(control.find(" ..") + 1, 2, "ab");  // the same record with a plain name is accepted
  CHECK(parse_scan_cache(control, w.root, forged));
  CHECK(forged.dirs.size() == 2);
}

TEST_CASE("a directory changed moments ago is never trusted from the cache (coarse ctimes)") {
  Workspace w;
  w.file("a/.env");
  ScanCache cache;
  scan_workspace_secrets(w.root, {}, &cache);             // default: 2 s of doubt
  CHECK(scan_workspace_secrets(w.root, {}, &cache).dirs_read == 2);  // both re-read: too fresh to trust
}

namespace {

// A tree wide and deep enough for the readers to share work: 6 top directories, each 3 levels of 3, with a secret
// in some of them, a skipped dependency tree and a symlink out.
void grow_tree(Workspace& w) {
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c)
        for (int d = 0; d < 3; ++d) {
          auto dir = "t" + std::to_string(a) + "/b" + std::to_string(b) + "/c" + std::to_string(c) + "/d" + std::to_string(d);
          w.file(dir + "/main.cc");
          if ((a + b + c + d) % 7 == 0) w.file(dir + "/.env");
          if ((a * b + d) % 11 == 3) w.file(dir + "/secrets/key");
        }
  w.file("node_modules/pkg/.env");
  w.file("node_modules/pkg/test/id_rsa");
  REQUIRE(::symlink("/etc", (w.root + "/t0/etc-link").c_str()) == 0);
}

struct Scanned {
  SecretScan scan;
  ScanCache cache;
};

Scanned scan_with(const Workspace& w, unsigned readers, ScanCache cache = {}, int max_depth = 8) {
  ScanLimits limits;
  limits.readers = readers;
  limits.racy_seconds = 0;  // the tree was made a moment ago
  limits.max_depth = max_depth;
  Scanned s{{}, std::move(cache)};
  s.scan = scan_workspace_secrets(w.root, limits, &s.cache);
  return s;
}

void require_same(const Scanned& serial, const Scanned& parallel) {
  CHECK(parallel.scan.files == serial.scan.files);
  CHECK(parallel.scan.dirs == serial.scan.dirs);
  CHECK(parallel.scan.dirs_read == serial.scan.dirs_read);
  CHECK(parallel.scan.entries_seen == serial.scan.entries_seen);
  CHECK(parallel.scan.truncated == serial.scan.truncated);
  CHECK(parallel.cache.text == serial.cache.text);  // the same cache file, byte for byte
}

}  // namespace

TEST_CASE("a first run listed on several threads finds exactly what a serial walk finds") {
  Workspace w;
  grow_tree(w);
  auto serial = scan_with(w, 1);
  auto parallel = scan_with(w, 4);
  REQUIRE(serial.scan.files.size() > 20);
  // Every directory is listed (the check after a run needs them all): the 12 secrets/ too, though masked whole
  // and nothing below them reported; node_modules/pkg/test reports keys only.
  CHECK(serial.scan.dirs_read == 1 + 6 * (1 + 3 * (1 + 3 * (1 + 3))) + 3 + 12);
  for (const auto& f : serial.scan.files) CHECK(f.find("secrets/") == std::string::npos);
  require_same(serial, parallel);
  for (const auto& f : parallel.scan.files)
    if (f.starts_with("node_modules")) CHECK(f == "node_modules/pkg/test/id_rsa");

  SECTION("and the same when the depth limit cuts it short") {
    auto shallow_serial = scan_with(w, 1, {}, 2);
    auto shallow_parallel = scan_with(w, 4, {}, 2);
    CHECK(shallow_serial.scan.truncated);
    require_same(shallow_serial, shallow_parallel);
  }
}

TEST_CASE("after a large change the changed directories are listed ahead, with the same result") {
  Workspace w;
  grow_tree(w);
  auto before = scan_with(w, 1);
  // Well over the read-ahead threshold: a new file in 54 directories, and new subtrees with secrets under 18.
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 3; ++b) {
      for (int c = 0; c < 3; ++c) w.file("t" + std::to_string(a) + "/b" + std::to_string(b) + "/c" + std::to_string(c) + "/new.txt");
      w.file("t" + std::to_string(a) + "/b" + std::to_string(b) + "/fresh/deeper/id_rsa");
    }
  auto serial = scan_with(w, 1, before.cache);
  auto parallel = scan_with(w, 4, before.cache);
  CHECK(serial.scan.files.size() == before.scan.files.size() + 18);
  CHECK(serial.scan.dirs_read == 18 + 54 + 2 * 18);  // the b's and c's changed; fresh/ and fresh/deeper are new
  require_same(serial, parallel);
}

TEST_CASE("a large change inside a skipped directory is listed ahead for keys only") {
  Workspace w;
  for (int i = 0; i < 40; ++i) w.file("node_modules/p" + std::to_string(i) + "/index.js");
  auto before = scan_with(w, 1);
  CHECK(before.scan.files.empty());
  for (int i = 0; i < 40; ++i) {
    w.file("node_modules/p" + std::to_string(i) + "/.env");
    w.file("node_modules/p" + std::to_string(i) + "/id_ed25519");
  }
  auto serial = scan_with(w, 1, before.cache);
  auto parallel = scan_with(w, 4, before.cache);
  CHECK(serial.scan.files.size() == 40);
  for (const auto& f : serial.scan.files) CHECK(f.ends_with("/id_ed25519"));
  require_same(serial, parallel);
}

TEST_CASE("the scan lists where git would find a repository, from the cache too") {
  Workspace w;
  w.file(".git/config");
  w.file("sub/.git");                   // a .git file
  w.file("proj/HEAD");                  // a bare repository: HEAD and objects/
  w.file("proj/objects/info/packs");
  w.file("wt-entry/HEAD");              // a linked worktree's entry: HEAD and a commondir
  w.file("wt-entry/commondir");
  w.file("notes/HEAD");                 // HEAD alone is not a git dir
  w.file("node_modules/dep/.git/config");  // a skipped directory: no secret reported there but keys, every repository
  w.file("secrets/inner/.git/config");     // below a secret directory too
  const std::vector<std::string> want = {".git", "node_modules/dep/.git", "proj/HEAD", "secrets/inner/.git", "sub/.git",
                                         "wt-entry/HEAD"};
  ScanCache cache;
  CHECK(scan_workspace_secrets(w.root, {}, &cache).git == want);
  ScanLimits trust_now;
  trust_now.racy_seconds = 0;
  for (unsigned readers : {1u, 4u}) {
    trust_now.readers = readers;
    ScanCache fresh;
    CHECK(scan_workspace_secrets(w.root, trust_now, &fresh).git == want);  // listed (ahead, with 4 readers)
    auto warm = scan_workspace_secrets(w.root, trust_now, &fresh);
    CHECK(warm.dirs_read == 0);
    CHECK(warm.git == want);  // every name from the cache
  }
}

namespace {

struct Resolved {
  SecretScan scan;
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const auto& m : scan.masks) out.push_back(m.path);
    return out;
  }
  const MaskTarget* find(const std::string& path) const {
    for (const auto& m : scan.masks)
      if (m.path == path) return &m;
    return nullptr;
  }
};

Resolved resolve(const std::string& root, const ScanLimits& limits = {}, ScanCache* cache = nullptr) {
  Resolved r;
  r.scan = scan_workspace_secrets(root, limits, cache);
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  resolve_masks(fd, root, r.scan, limits);
  ::close(fd);
  return r;
}

std::uint64_t inode(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_ino;
}

}  // namespace

TEST_CASE("a secret-named symlink is masked as itself and as what it leads to inside the workspace") {
  Workspace w;
  w.file("notes.txt");
  w.file("cfg/real.txt");
  w.file("outside-dir/x");
  REQUIRE(::symlink("notes.txt", (w.root + "/.env.local").c_str()) == 0);
  REQUIRE(::symlink("../cfg/real.txt", (w.root + "/cfg/.env").c_str()) == 0);   // through ".." and back in
  REQUIRE(::symlink((w.root + "/cfg").c_str(), (w.root + "/.env.dir").c_str()) == 0);  // absolute, into the workspace
  REQUIRE(::symlink("/etc/passwd", (w.root + "/.env.abs").c_str()) == 0);       // out of it: only the link
  REQUIRE(::symlink("../../../../../../etc/hostname", (w.root + "/.env.up").c_str()) == 0);
  REQUIRE(::symlink("missing.txt", (w.root + "/.env.dangling").c_str()) == 0);
  ScanCache cache;
  auto r = resolve(w.root, {}, &cache);
  CHECK(r.scan.links == std::vector<std::string>{".env.abs", ".env.dangling", ".env.dir", ".env.local", ".env.up", "cfg/.env"});
  CHECK(r.paths() == std::vector<std::string>{".env.abs", ".env.dangling", ".env.dir", ".env.local", ".env.up", "cfg",
                                              "notes.txt"});  // cfg/.env and cfg/real.txt: inside the masked cfg
  REQUIRE(r.find(".env.local") != nullptr);
  CHECK(r.find(".env.local")->type == S_IFLNK);
  CHECK(r.find(".env.local")->ino == inode(w.root + "/.env.local"));
  CHECK(r.find("notes.txt")->type == S_IFREG);
  CHECK(r.find("notes.txt")->ino == inode(w.root + "/notes.txt"));
  CHECK(r.find("cfg")->type == S_IFDIR);
  CHECK(r.scan.vanished.empty());
  // The links come back from the cache file, as the walk saw them.
  ScanCache reread;
  REQUIRE(parse_scan_cache(cache.text, w.root, reread));
  ScanLimits trust_now;
  trust_now.racy_seconds = 0;
  auto warm = resolve(w.root, trust_now, &reread);
  CHECK(warm.scan.links == r.scan.links);
  CHECK(warm.paths() == r.paths());
}

TEST_CASE("every name the walk finds for a hard-linked secret is masked, and names it cannot find are reported") {
  Workspace w;
  w.file(".env.production");
  w.file("node_modules/pkg/index.js");
  REQUIRE(::link((w.root + "/.env.production").c_str(), (w.root + "/notes.txt").c_str()) == 0);
  REQUIRE(::link((w.root + "/.env.production").c_str(), (w.root + "/node_modules/pkg/copy").c_str()) == 0);
  w.file("other.txt");
  auto r = resolve(w.root);
  CHECK(r.paths() == std::vector<std::string>{".env.production", "node_modules/pkg/copy", "notes.txt"});
  for (const auto& m : r.scan.masks) CHECK(m.ino == inode(w.root + "/.env.production"));
  CHECK(r.scan.linked_outside.empty());
  // A fourth name outside the workspace: found 3 of 4, said so.
  Workspace elsewhere;
  REQUIRE(::link((w.root + "/.env.production").c_str(), (elsewhere.root + "/kept").c_str()) == 0);
  auto outside = resolve(w.root);
  REQUIRE(outside.scan.linked_outside.size() == 1);
  CHECK(outside.scan.linked_outside[0].path == ".env.production");
  CHECK(outside.scan.linked_outside[0].links == 4);
  CHECK(outside.scan.linked_outside[0].found == 3);
}

TEST_CASE("a secret gone or replaced between the walk and its pinning is reported as moved") {
  Workspace w;
  w.file("a/.env");
  auto scan = scan_workspace_secrets(w.root);
  REQUIRE(scan.files == std::vector<std::string>{"a/.env"});
  REQUIRE(::rename((w.root + "/a").c_str(), (w.root + "/b").c_str()) == 0);
  int fd = ::open(w.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  resolve_masks(fd, w.root, scan);
  CHECK(scan.vanished == std::vector<std::string>{"a/.env"});
  CHECK(scan.masks.empty());
  // Replaced by a link to the moved file: not the regular file the walk saw.
  REQUIRE(::mkdir((w.root + "/a").c_str(), 0755) == 0);
  REQUIRE(::symlink("../b/.env", (w.root + "/a/.env").c_str()) == 0);
  SecretScan again;
  again.files = {"a/.env"};
  resolve_masks(fd, w.root, again);
  CHECK(again.vanished == std::vector<std::string>{"a/.env"});
  ::close(fd);
}

TEST_CASE("a directory its unchanged parent names but the walk cannot find is reported as moved") {
  Workspace w;
  w.file("z/readme");
  struct stat root {};
  REQUIRE(::stat(w.root.c_str(), &root) == 0);
  // The cache as a walk just before a concurrent `mv a b` left it: the root (unchanged when checked) lists a/,
  // which held a secret; a/ is gone when the walk comes to it. Reusing the root and skipping a/ would mask nothing.
  auto text = cache_header(w.root) + "0 " + std::to_string(root.st_ino) +
              " " + std::to_string(root.st_ctim.tv_sec) + " " + std::to_string(root.st_ctim.tv_nsec) +
              " 2 0 0 0 0 1 1 a99 1 1 1 1 4 .env0 0 0 0 ";
  ScanCache cache;
  REQUIRE(parse_scan_cache(text, w.root, cache));
  ScanLimits serial;
  serial.readers = 1;
  auto scan = scan_workspace_secrets(w.root, serial, &cache);
  CHECK(scan.files.empty());
  CHECK(scan.vanished == std::vector<std::string>{"a"});
  // Back where the cache says (moved back before the walk came to it): read as it is now, its secret found.
  w.file("a/.env");
  REQUIRE(::stat(w.root.c_str(), &root) == 0);
  text = cache_header(w.root) + "0 " + std::to_string(root.st_ino) +
         " " + std::to_string(root.st_ctim.tv_sec) + " " + std::to_string(root.st_ctim.tv_nsec) +
         " 2 0 0 0 0 1 1 a99 1 1 1 0 0 0 0 0 ";
  REQUIRE(parse_scan_cache(text, w.root, cache));
  auto back = scan_workspace_secrets(w.root, serial, &cache);
  CHECK(back.files == std::vector<std::string>{"a/.env"});
  CHECK(back.vanished.empty());
}
