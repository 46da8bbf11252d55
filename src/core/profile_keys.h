// The keys of a profile (confine-profile(5)), each spelled once, in this table: the reader and the applier
// (core/profile.cc) and learn's writer (core/learn.cc) take their names and kinds from it, and switch over
// ProfileKey with no default, so a key one of them forgets does not compile.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace confine {

enum class ProfileKey {
  filesystem_ro,
  filesystem_rw,
  filesystem_private,
  filesystem_copy,
  filesystem_tmpfs,
  filesystem_mask,
  filesystem_workspace,
  secrets_mask,
  secrets_skip,
  secrets_walk,
  environment_pass,
  environment_set,
  network_mode,
  network_allow,
  limits_memory,
  limits_memory_swap,
  limits_pids,
  limits_cpus,
  limits_tmpfs_size,
  limits_shm_size,
  sandbox_allow_nested,
  devices_device,
  devices_gpus,
  checkpoint_exclude,
  config_file,
  config_providers,
};

// What a key holds, as the profile writes it.
enum class ProfileValue {
  strings,         // ["a", "b"]
  home_paths,      // ["~/a"]: paths below the home only
  assignments,     // { NAME = "value" }, kept as "NAME=value"
  text,            // "value"
  text_or_number,  // "4g" or 4
  boolean,         // true
};

struct ProfileKeyInfo {
  ProfileKey key;
  std::string_view table;  // [filesystem]
  std::string_view name;   // ro
  ProfileValue value;
};

// Every key, in the order confine-profile(5) documents them (its tables in that order too).
std::span<const ProfileKeyInfo> profile_keys();
const ProfileKeyInfo& profile_key(ProfileKey key);
// "filesystem.ro"
std::string profile_key_text(ProfileKey key);
// A list (strings, home paths, assignments), not a scalar.
bool is_list(ProfileValue value);

}  // namespace confine
