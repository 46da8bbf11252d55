#include "cli/profiles.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "core/embedded.h"
#include "core/profile.h"
#include "sys/unique_fd.h"

namespace confine::cli {
namespace {

// Plain read(2), not iostreams: the first stream costs a locale's initialisation, ~1 ms of start-up here.
std::optional<ProfileSource> read_file(const std::string& path) {
  sys::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  return ProfileSource{std::move(text), path};
}

std::string user_profile_dir(const std::string& home) {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/confine/profiles";
  return home.empty() ? std::string() : home + "/.config/confine/profiles";
}

std::optional<ProfileSource> find_profile(const std::string& name, const std::string& home) {
  if (name.find('/') != std::string::npos) return read_file(name);
  if (auto dir = user_profile_dir(home); !dir.empty())
    if (auto p = read_file(dir + "/" + name + ".toml")) return p;
  if (auto p = read_file("/etc/confine/profiles/" + name + ".toml")) return p;
  for (const auto& f : builtin_profiles())
    if (f.name == name) return ProfileSource{std::string(f.text), "built-in:" + name};
  return std::nullopt;
}

}  // namespace

sys::Status apply_profile_to(Options& o, const std::string& home) {
  auto lookup = [&](const std::string& name) { return find_profile(name, home); };
  auto profile = load_profile(o.profile.empty() ? "default" : o.profile, lookup);
  if (!profile) return profile.error();
  return apply_profile(*profile, home, o);
}

}  // namespace confine::cli
