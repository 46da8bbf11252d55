// The shipped policy data (seccomp/, landlock/, secrets/): every file parses, every syscall is known on this arch (or marked optional), and the
// lists stay sorted without duplicates so review diffs stay readable.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/landlock_rules.h"
#include "core/seccomp_compile.h"
#include "core/seccomp_policy.h"
#include "core/secret_names.h"
#include "core/toml_document.h"

using namespace confine;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> toml_files(const char* dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(CONFINE_SOURCE_DIR) / dir))
    if (e.path().extension() == ".toml") out.push_back(e.path());
  REQUIRE_FALSE(out.empty());
  return out;
}

template <typename T>
bool sorted_unique(const std::vector<T>& v) {
  return std::is_sorted(v.begin(), v.end()) && std::adjacent_find(v.begin(), v.end()) == v.end();
}

}  // namespace

TEST_CASE("every seccomp policy file parses, compiles, and lists known syscalls in order", "[data]") {
  for (const auto& file : toml_files("seccomp")) {
    INFO(file);
    auto p = parse_seccomp_policy(slurp(file), file.string());
    REQUIRE(p.ok());
    CHECK(unknown_syscalls(*p).empty());
    CHECK(compile_seccomp(*p, false).ok());
    for (const auto& r : p->rules) {
      INFO(r.group);
      CHECK(sorted_unique(r.syscalls));
      CHECK_FALSE(r.why.empty());
    }
  }
}

TEST_CASE("the documents built into confine equal the parse of the data files", "[data]") {
  // A run reads these instead of parsing the text (issue: no TOML parse on a plain run); the generator must lose
  // nothing, neither a key nor a value's kind.
  auto parse = [](const char* file) { return toml::parse(slurp(std::filesystem::path(CONFINE_SOURCE_DIR) / file)); };
  CHECK(builtin_seccomp_document() == parse("seccomp/default.toml"));
  CHECK(builtin_landlock_document() == parse("landlock/default.toml"));
  CHECK(builtin_secret_names_document() == parse("secrets/default.toml"));
}

TEST_CASE("every Landlock rule file parses, with sorted absolute paths per class", "[data]") {
  for (const auto& file : toml_files("landlock")) {
    INFO(file);
    auto d = parse_landlock_data(slurp(file), file.string());
    REQUIRE(d.ok());
    CHECK_FALSE(d->sandbox.empty());
    CHECK_FALSE(d->fallback.empty());
    for (const auto* section : {&d->sandbox, &d->fallback})
      for (auto cls : {AccessClass::ro, AccessClass::rx, AccessClass::rw, AccessClass::dev}) {
        std::vector<std::string> paths;
        for (const auto& p : *section)
          if (p.access == cls) paths.push_back(p.path);
        CHECK(sorted_unique(paths));
      }
  }
}

TEST_CASE("the secret names file parses, says why for every group, and lists names in order", "[data]") {
  auto text = slurp(std::filesystem::path(CONFINE_SOURCE_DIR) / "secrets/default.toml");
  auto names = parse_secret_names(text, "secrets/default.toml");
  REQUIRE(names.ok());
  for (const auto* list : {&names->files, &names->dirs, &names->skip_dirs, &names->keys}) {
    CHECK_FALSE(list->empty());
    for (const auto& g : *list) {
      INFO(g.why);
      CHECK_FALSE(g.why.empty());
      std::vector<std::string> spelled;
      for (const auto& p : g.names) spelled.push_back(p.spelled());
      CHECK(sorted_unique(spelled));
    }
  }
  CHECK_FALSE(parse_secret_names("format = \"confine-secrets/1\"\n[[files]]\nwhy = \"x\"\nnames = [\"a/b\"]\n", "t").ok());
  CHECK_FALSE(parse_secret_names("format = \"confine-secrets/1\"\n[[files]]\nnames = [\"a\"]\n", "t").ok());
  CHECK_FALSE(parse_secret_names("format = \"confine-secrets/1\"\n[[other]]\nwhy = \"x\"\nnames = [\"a\"]\n", "t").ok());
}
