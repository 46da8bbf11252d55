// libFuzzer target for confine learn's profile writer (built with -Dfuzz=true and clang; see tests/fuzz/meson.build).
// The names it writes come from the sandbox: whatever they hold, the profile must be valid TOML that reads back as
// a profile, every private entry must be exactly a directory the run wrote, every ro entry a name the run read or
// a directory it read in (never $HOME or a shared directory, but for a file of that very name that was read), and
// no name may add a key or a table.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

#include "core/learn.h"

namespace {

// The input, split at NUL bytes: the files written below $HOME, then (after an empty part) host names.
confine::LearnRecords records_from(std::string_view data) {
  confine::LearnRecords r;
  r.command = {"fuzz"};
  bool hosts = false;
  while (!data.empty()) {
    auto nul = data.find('\0');
    auto part = data.substr(0, nul);
    data = nul == std::string_view::npos ? std::string_view{} : data.substr(nul + 1);
    if (part.empty()) hosts = true;
    else if (hosts) r.network.push_back({"CONNECT", std::string(part), 443, true, "recorded by confine learn"});
    else r.home_writes.emplace_back(part);
  }
  r.dropped_env = r.home_writes;
  for (const auto& w : r.home_writes) r.reads.push_back({"~/" + w, false, false, false});
  return r;
}

// "a//b/", "/a/b" → "a/b/": a path as its names, each followed by a slash.
std::string components(std::string_view path) {
  std::string out;
  while (!path.empty()) {
    auto slash = path.find('/');
    if (slash != 0) out += std::string(path.substr(0, slash)) + "/";
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto records = records_from(std::string_view(reinterpret_cast<const char*>(data), size));
  confine::Profile base;
  base.settings = {{confine::ProfileKey::network_mode, {"none", "fuzz:1"}}};
  base.net = confine::NetChoice{confine::NetMode::none};
  auto text = confine::learned_profile(records, "default", base);
  toml::table doc;
  try {
    doc = toml::parse(text);
  } catch (const toml::parse_error&) {
    __builtin_trap();
  }
  for (const auto& [key, node] : doc)
    if (key != "format" && key != "description" && key != "extends" && key != "filesystem" && key != "environment" &&
        key != "network")
      __builtin_trap();
  if (doc.at_path("filesystem.rw") || doc.at_path("environment.pass")) __builtin_trap();
  if (const auto* privates = doc.at_path("filesystem.private").as_array())
    for (const auto& entry : *privates) {
      auto path = entry.value<std::string>();
      if (!path || !path->starts_with("~/")) __builtin_trap();
      auto dir = path->substr(2) + "/";
      bool written = false;
      for (const auto& w : records.home_writes) written = written || components(w).starts_with(dir);
      if (!written) __builtin_trap();
    }
  if (const auto* ro = doc.at_path("filesystem.ro").as_array())
    for (const auto& entry : *ro) {
      auto path = entry.value<std::string>();
      if (!path) __builtin_trap();
      // A shared directory is never shown whole; only a file of that very name that was read may be an entry.
      bool read_as_file = std::any_of(records.reads.begin(), records.reads.end(),
                                      [&](const confine::ReadRecord& r) { return r.path == *path && !r.directory; });
      bool shared = *path == "~" || *path == "~/.config" || *path == "~/.cache" || *path == "~/.local";
      if (shared && !read_as_file) __builtin_trap();
      bool read = false;
      for (const auto& r : records.reads)
        read = read || r.path == *path || (r.path.starts_with(*path + "/") && r.path.find('/', path->size() + 1) == std::string::npos);
      if (!read) __builtin_trap();
    }
  return 0;
}
