#include "core/secret_names.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/toml_document.h"

namespace confine {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equal_folded(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

bool any_match(const std::vector<NameGroup>& groups, std::string_view name, bool any_case) {
  for (const auto& g : groups)
    for (const auto& p : g.names)
      if (p.matches(name, any_case)) return true;
  return false;
}

sys::Result<std::vector<NameGroup>> parse_groups(const toml::node& node, const std::string& where) {
  const auto* arr = node.as_array();
  if (arr == nullptr || !arr->is_array_of_tables())
    return sys::plain_error(where + ": must be groups ([[" + where.substr(where.rfind(' ') + 1) + "]])");
  std::vector<NameGroup> out;
  for (const auto& item : *arr) {
    const auto& t = *item.as_table();
    NameGroup g;
    auto why = t["why"].value<std::string>();
    if (!why || why->empty()) return sys::plain_error(where + ": every group needs a `why`");
    g.why = *why;
    const auto* names = t["names"].as_array();
    if (names == nullptr || names->empty()) return sys::plain_error(where + ": every group needs `names`");
    for (const auto& n : *names) {
      auto p = parse_name_pattern(n.value<std::string>().value_or(""));
      if (!p) return sys::plain_error(where + ": " + p.error().message());
      g.names.push_back(*p);
    }
    for (const auto& [key, v] : t)
      if (key.str() != "why" && key.str() != "names")
        return sys::plain_error(where + ": unknown key `" + std::string(key.str()) + "` (why, names)");
    out.push_back(std::move(g));
  }
  return out;
}

// FNV-1a: stable across builds and machines, unlike std::hash.
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

bool NamePattern::matches(std::string_view name, bool any_case) const {
  auto same = [&](std::string_view part) { return any_case ? equal_folded(part, text) : part == text; };
  switch (kind) {
    case Kind::exact: return same(name);
    case Kind::prefix: return name.size() >= text.size() && same(name.substr(0, text.size()));
    case Kind::suffix: return name.size() > text.size() && same(name.substr(name.size() - text.size()));
  }
  return false;
}

std::string NamePattern::spelled() const {
  switch (kind) {
    case Kind::exact: return text;
    case Kind::prefix: return text + "*";
    case Kind::suffix: return "*" + text;
  }
  return text;
}

sys::Result<NamePattern> parse_name_pattern(std::string_view text) {
  NamePattern p;
  std::string_view body = text;
  if (body.starts_with('*')) {
    p.kind = NamePattern::Kind::suffix;
    body.remove_prefix(1);
  } else if (body.ends_with('*')) {
    p.kind = NamePattern::Kind::prefix;
    body.remove_suffix(1);
  }
  if (body.empty() || body.find_first_of("*/") != std::string_view::npos || body == "." || body == "..")
    return sys::plain_error(fmt::format("`{}` is not a file name pattern (NAME, PREFIX* or *SUFFIX, no `/`)", text));
  p.text = body;
  return p;
}

bool SecretNames::is_secret_file(std::string_view name) const {
  return any_match(files, name, true) || any_match(keys, name, true);
}
bool SecretNames::is_secret_dir(std::string_view name) const { return any_match(dirs, name, true); }
bool SecretNames::is_key(std::string_view name) const { return any_match(keys, name, true); }

bool SecretNames::is_skipped_dir(std::string_view name) const {
  // Exact case: a directory skipped by mistake hides whatever is in it from the scan, so skip no more than named.
  return any_match(skip_dirs, name, false);
}

std::vector<std::string> SecretNames::skipped_dir_names() const {
  std::vector<std::string> out;
  for (const auto& g : skip_dirs)
    for (const auto& p : g.names) out.push_back(p.spelled());
  return out;
}

std::string SecretNames::fingerprint() const {
  std::string all;
  for (const auto* list : {&files, &dirs, &skip_dirs, &keys}) {
    for (const auto& g : *list)
      for (const auto& p : g.names) all += p.spelled() + '\n';
    all += "--\n";
  }
  return fmt::format("{:016x}", fnv1a(all));
}

namespace {

sys::Result<SecretNames> secret_names_from(const toml::table& doc, const std::string& source) {
  SecretNames out;
  for (const auto& [key, node] : doc) {
    std::string_view k = key.str();
    if (k == "format") continue;
    std::vector<NameGroup>* list = k == "files" ? &out.files : k == "dirs" ? &out.dirs
                                 : k == "skip_dirs" ? &out.skip_dirs : k == "keys" ? &out.keys : nullptr;
    if (list == nullptr)
      return sys::plain_error(source + ": unknown key `" + std::string(k) + "` (files, dirs, skip_dirs, keys)");
    auto groups = parse_groups(node, source + ": " + std::string(k));
    if (!groups) return groups.error();
    *list = std::move(*groups);
  }
  return out;
}

}  // namespace

sys::Result<SecretNames> parse_secret_names(std::string_view text, const std::string& source) {
  auto parsed = parse_toml_document(text, source, "confine-secrets/1");
  if (!parsed) return parsed.error();
  return secret_names_from(*parsed, source);
}

const SecretNames& default_secret_names() {
  // The embedded file is checked by the data tests; should a broken one ship anyway, masking nothing would be a
  // silent downgrade: stop instead.
  static const SecretNames names = [] {
    auto parsed = secret_names_from(builtin_secret_names_document(), "secrets/default.toml");
    if (!parsed) {
      std::fprintf(stderr, "confine: the built-in secret names do not parse: %s\n", parsed.error().message().c_str());
      std::abort();
    }
    return std::move(*parsed);
  }();
  return names;
}

sys::Result<SecretNames> apply_secret_name_changes(SecretNames names, const SecretNameChanges& changes) {
  auto group = [](const std::vector<std::string>& texts, const char* why) -> sys::Result<NameGroup> {
    NameGroup g{why, {}};
    for (const auto& t : texts) {
      auto p = parse_name_pattern(t);
      if (!p) return p.error();
      g.names.push_back(*p);
    }
    return g;
  };
  auto mask = group(changes.mask, "asked for by a profile");
  if (!mask) return mask.error();
  if (!mask->names.empty()) names.files.push_back(std::move(*mask));
  // Skips first: a directory a profile skips can be walked again with --scan-walk.
  auto skip = group(changes.skip, "asked for by a profile or --scan-skip");
  if (!skip) return skip.error();
  if (!skip->names.empty()) names.skip_dirs.push_back(std::move(*skip));
  for (const auto& w : changes.walk) {
    auto p = parse_name_pattern(w);
    if (!p) return p.error();
    std::size_t removed = 0;
    for (auto& g : names.skip_dirs)
      removed += std::erase_if(g.names, [&](const NamePattern& s) { return s.spelled() == p->spelled(); });
    if (removed == 0)
      return sys::plain_error(fmt::format("`{}` is not a directory the secret scan skips (it skips {})", w,
                                          fmt::join(names.skipped_dir_names(), ", ")));
  }
  return names;
}

}  // namespace confine
