// The names of the workspace files masked by default, read from secrets/default.toml (embedded at build time)
// and changed by profiles and flags: one source of truth for the scan, the docs' lists and the cache key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sys/result.h"

namespace confine {

// One name as written in the data: `NAME`, `PREFIX*` or `*SUFFIX`.
struct NamePattern {
  enum class Kind { exact, prefix, suffix };
  Kind kind = Kind::exact;
  std::string text;  // without the `*`
  [[nodiscard]] bool matches(std::string_view name, bool any_case) const;
  [[nodiscard]] std::string spelled() const;  // as written: "*.key"
};

// A pattern from user input (data file, profile, flag): one `*` at the start or the end at most, no `/`.
sys::Result<NamePattern> parse_name_pattern(std::string_view text);

// A named group of patterns, with the reason it is there (shown in docs, kept for review).
struct NameGroup {
  std::string why;
  std::vector<NamePattern> names;
};

struct SecretNames {
  std::vector<NameGroup> files;      // masked where the scan walks (any case)
  std::vector<NameGroup> dirs;       // masked whole (any case)
  std::vector<NameGroup> skip_dirs;  // not walked, except for keys (exact case)
  std::vector<NameGroup> keys;       // masked everywhere, skipped directories included (any case)

  [[nodiscard]] bool is_secret_file(std::string_view name) const;  // a file or a key name
  [[nodiscard]] bool is_secret_dir(std::string_view name) const;
  [[nodiscard]] bool is_skipped_dir(std::string_view name) const;
  [[nodiscard]] bool is_key(std::string_view name) const;
  // The skipped directory names, in order, as written ("node_modules, target, ...").
  [[nodiscard]] std::vector<std::string> skipped_dir_names() const;
  // Changes every list's content is a function of: a scan cache made with other names is not reused.
  [[nodiscard]] std::string fingerprint() const;
};

sys::Result<SecretNames> parse_secret_names(std::string_view text, const std::string& source);
const SecretNames& default_secret_names();  // secrets/default.toml, built into confine; read once

// What a profile or the command line changes: more names masked, more directories skipped, skipped ones walked.
struct SecretNameChanges {
  std::vector<std::string> mask;  // file patterns
  std::vector<std::string> skip;  // directory names
  std::vector<std::string> walk;  // directory names no longer skipped
};

// The names with `changes` applied; a bad pattern is an error naming it.
// A `walk` name that is not skipped is an error (a typo must not pass unnoticed).
sys::Result<SecretNames> apply_secret_name_changes(SecretNames names, const SecretNameChanges& changes);

}  // namespace confine
