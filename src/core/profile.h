// Profiles (profiles/*.toml, `format = "confine-profile/1"`): named sets of options for an agent or a build
// tool. A profile may extend one other and may only add to it: binds, environment passes, allowed hosts; a
// setting the parent already made (network mode, a limit, workspace access) cannot be changed. CLI flags apply
// on top. Pure: reading files is the caller's (cli/profiles.cc).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/net_mode.h"
#include "core/options.h"
#include "core/profile_keys.h"
#include "sys/result.h"

namespace confine {

// One scalar setting and the line it was made on (for "a profile may only add" errors).
struct ProfileSetting {
  std::string value;
  std::string origin;  // "FILE:LINE"
};

struct Profile {
  std::string name;
  std::string description;
  // Every list key's entries (ProfileValue strings, home_paths, assignments as "NAME=value"), the parent's first.
  // filesystem.ro/rw: host paths bound back (`~/` is $HOME); a missing one is skipped, except an `rw` entry ending
  // in `/`: a state directory, created when missing so that what the tool writes there the first time is kept.
  // filesystem.private: `~/` paths the sandbox gets its own directory at, kept by confine per profile (the one
  // that names it, in `private_owners`, the same order): a cache the host's own builds never read.
  // filesystem.copy: `~/` files the sandbox gets its own copy of; changes stay inside.
  std::map<ProfileKey, std::vector<std::string>> lists;
  std::vector<std::string> private_owners;
  // [credentials.NAME]: for, source, broker, set (see Options::ProfileCredential); a child's entry replaces its
  // parent's of the same name.
  std::vector<Options::ProfileCredential> credentials;
  // Scalars, each with where it was set.
  std::vector<std::pair<ProfileKey, ProfileSetting>> settings;
  // network.mode, parsed once when the profile is loaded; unset if it has none or one that is no mode (which
  // apply_profile reports, with its file and line).
  std::optional<NetChoice> net;

  [[nodiscard]] const std::vector<std::string>& list(ProfileKey key) const;
  [[nodiscard]] const ProfileSetting* setting(ProfileKey key) const;
};

// The text of a profile by name, and where it came from; nullopt if there is none.
struct ProfileSource {
  std::string text;
  std::string origin;  // a file path, or "built-in:NAME"
};
using ProfileLookup = std::function<std::optional<ProfileSource>(const std::string& name)>;
// Every profile name a lookup could find (built-in and on disk), for "did you mean" when one is not found.
using ProfileNames = std::function<std::vector<std::string>()>;

// Parses `name` and the profiles it extends. Every problem (unknown key, bad type, unknown parent, a changed
// setting, a cycle) is reported, one line each with file and line, all at once.
sys::Result<Profile> load_profile(const std::string& name, const ProfileLookup& lookup, const ProfileNames& names = {});

// The options a profile stands for, under the ones given on the command line: lists are the profile's followed
// by the CLI's; a scalar is the profile's only where the CLI left it unset. `home` expands `~/`.
sys::Status apply_profile(const Profile& p, const std::string& home, Options& o);

}  // namespace confine
