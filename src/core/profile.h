// Profiles (profiles/*.toml, `format = "confine-profile/1"`): named sets of options for an agent or a build
// tool. A profile may extend one other and may only add to it: binds, environment passes, allowed hosts; a
// setting the parent already made (network mode, a limit, workspace access) cannot be changed. CLI flags apply
// on top. Pure: reading files is the caller's (cli/profiles.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/options.h"
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
  // Host paths bound back (`~/` is $HOME). A missing one is skipped, except an `rw` entry ending in `/`: a state
  // directory, created when missing so that what the tool writes there the first time is kept.
  std::vector<std::string> ro, rw;
  // `~/` paths the sandbox gets its own directory at, kept by confine per profile (the one that names it): a
  // cache the host's own builds never read.
  struct PrivateDir {
    std::string path;
    std::string profile;
  };
  std::vector<PrivateDir> private_dirs;
  std::vector<std::string> copies;         // `~/` files the sandbox gets its own copy of; changes stay inside
  std::vector<std::string> tmpfs, mask;
  // [secrets]: file name patterns masked besides secrets/default.toml's, directories skipped, skipped ones walked.
  std::vector<std::string> secret_masks, scan_skip, scan_walk;
  std::vector<std::string> checkpoint_exclude;  // [checkpoint] exclude: names --checkpoint does not save
  std::vector<std::string> pass_env;       // names kept in the environment
  std::vector<std::string> set_env;        // NAME=value
  std::vector<std::string> allow;          // hosts for --net proxy
  // [credentials.NAME]: for, source, broker, set (see Options::ProfileCredential); a child's entry replaces its
  // parent's of the same name.
  std::vector<Options::ProfileCredential> credentials;
  // Scalars, keyed as written ("network.mode", "limits.memory", "filesystem.workspace", "sandbox.allow_nested").
  std::vector<std::pair<std::string, ProfileSetting>> settings;
  [[nodiscard]] const ProfileSetting* setting(std::string_view key) const;
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
