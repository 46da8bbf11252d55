#include "cli/profiles.h"

#include <cstdlib>
#include <filesystem>

#include "core/embedded.h"
#include "core/profile.h"
#include "sys/user_files.h"

namespace confine::cli {
namespace {

constexpr std::size_t kMaxProfileSize = sys::kMiB;

// A profile file, or nullopt when there is none at `path` (the search goes on); anything else that stops it
// being read (a link, a FIFO, too large, unreadable) is an error, never a reason to take another profile.
sys::Result<std::optional<ProfileSource>> read_profile_file(const std::string& path) {
  auto text = sys::read_user_file("profile", path, kMaxProfileSize);
  if (!text && text.error().err == ENOENT) return std::optional<ProfileSource>{};
  if (!text) return text.error();
  return std::optional<ProfileSource>{ProfileSource{std::move(*text), path}};
}

std::string user_profile_dir(const CallerContext& caller) {
  if (!caller.env.xdg_config_home.empty()) return caller.env.xdg_config_home + "/confine/profiles";
  return caller.home.empty() ? std::string() : caller.home + "/.config/confine/profiles";
}

constexpr const char* kSystemProfileDir = "/etc/confine/profiles";

// Where profiles named NAME are looked for, in order (the built-in ones come after).
std::vector<std::string> profile_dirs(const CallerContext& caller) {
  std::vector<std::string> dirs;
  if (auto dir = user_profile_dir(caller); !dir.empty()) dirs.push_back(dir);
  dirs.emplace_back(kSystemProfileDir);
  return dirs;
}

// Every name --profile could find: the built-in ones and each NAME.toml in the profile directories.
std::vector<std::string> profile_names(const CallerContext& caller) {
  std::vector<std::string> names;
  for (const auto& f : builtin_profiles()) names.emplace_back(f.name);
  for (const auto& dir : profile_dirs(caller)) {
    std::error_code ec;  // a directory that is missing or unreadable names nothing
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      auto file = it->path().filename().string();
      if (file.ends_with(".toml") && file.size() > 5) names.push_back(file.substr(0, file.size() - 5));
    }
  }
  return names;
}

sys::Result<std::optional<ProfileSource>> find_profile(const std::string& name, const CallerContext& caller) {
  if (name.find('/') != std::string::npos) return read_profile_file(name);
  std::vector<std::string> places;
  for (const auto& dir : profile_dirs(caller)) places.push_back(dir + "/" + name + ".toml");
  for (const auto& place : places) {
    auto found = read_profile_file(place);
    if (!found || *found) return found;
  }
  for (const auto& f : builtin_profiles())
    if (f.name == name) return std::optional<ProfileSource>{ProfileSource{std::string(f.text), "built-in:" + name}};
  return std::optional<ProfileSource>{};
}

}  // namespace

sys::Result<Profile> find_and_load_profile(const std::string& name, const CallerContext& caller) {
  // load_profile's lookup answers "found or not"; a file that is there but may not be read stops it here.
  std::optional<sys::Error> unreadable;
  auto lookup = [&](const std::string& wanted) -> std::optional<ProfileSource> {
    auto found = find_profile(wanted, caller);
    if (found) return *found;
    if (!unreadable) unreadable = found.error();
    return std::nullopt;
  };
  auto profile = load_profile(name, lookup, [&] { return profile_names(caller); });
  if (unreadable) return *unreadable;
  return profile;
}

sys::Status apply_profile_to(Options& o, const CallerContext& caller) {
  auto profile = find_and_load_profile(o.profile.empty() ? "default" : o.profile, caller);
  if (!profile) return profile.error();
  if (auto s = apply_profile(*profile, caller.home, o); !s) return s;
  // The agent's own configuration, once, here: what resolve decides from it is what the sandbox's copy gets.
  if (o.agent_config) {
    auto text = sys::read_user_file("profile config", o.agent_config->file, kMaxProfileSize);
    if (text) o.agent_config->text = std::move(*text);
    else if (text.error().err != ENOENT) return text.error();
  }
  return sys::ok_status();
}

}  // namespace confine::cli
