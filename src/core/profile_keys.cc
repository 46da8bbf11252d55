#include "core/profile_keys.h"

#include <algorithm>
#include <array>

namespace confine {
namespace {

using enum ProfileKey;
using V = ProfileValue;

constexpr std::array kKeys = {
    ProfileKeyInfo{filesystem_ro, "filesystem", "ro", V::strings},
    ProfileKeyInfo{filesystem_rw, "filesystem", "rw", V::strings},
    ProfileKeyInfo{filesystem_private, "filesystem", "private", V::home_paths},
    ProfileKeyInfo{filesystem_copy, "filesystem", "copy", V::home_paths},
    ProfileKeyInfo{filesystem_tmpfs, "filesystem", "tmpfs", V::strings},
    ProfileKeyInfo{filesystem_mask, "filesystem", "mask", V::strings},
    ProfileKeyInfo{filesystem_workspace, "filesystem", "workspace", V::text},
    ProfileKeyInfo{secrets_mask, "secrets", "mask", V::strings},
    ProfileKeyInfo{secrets_skip, "secrets", "skip", V::strings},
    ProfileKeyInfo{secrets_walk, "secrets", "walk", V::strings},
    ProfileKeyInfo{environment_pass, "environment", "pass", V::strings},
    ProfileKeyInfo{environment_set, "environment", "set", V::assignments},
    ProfileKeyInfo{network_mode, "network", "mode", V::text},
    ProfileKeyInfo{network_allow, "network", "allow", V::strings},
    ProfileKeyInfo{limits_memory, "limits", "memory", V::text_or_number},
    ProfileKeyInfo{limits_memory_swap, "limits", "memory_swap", V::text_or_number},
    ProfileKeyInfo{limits_pids, "limits", "pids", V::text_or_number},
    ProfileKeyInfo{limits_cpus, "limits", "cpus", V::text_or_number},
    ProfileKeyInfo{limits_tmpfs_size, "limits", "tmpfs_size", V::text_or_number},
    ProfileKeyInfo{limits_shm_size, "limits", "shm_size", V::text_or_number},
    ProfileKeyInfo{sandbox_allow_nested, "sandbox", "allow_nested", V::boolean},
    ProfileKeyInfo{devices_device, "devices", "device", V::strings},
    ProfileKeyInfo{devices_gpus, "devices", "gpus", V::text},
    ProfileKeyInfo{checkpoint_exclude, "checkpoint", "exclude", V::strings},
    ProfileKeyInfo{config_file, "config", "file", V::text},
    ProfileKeyInfo{config_providers, "config", "providers", V::text},
};

// The table is indexed by the enum: each key at its own place.
constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kKeys.size(); ++i)
    if (static_cast<std::size_t>(kKeys[i].key) != i) return false;
  return kKeys.size() == static_cast<std::size_t>(config_providers) + 1;
}
static_assert(in_enum_order(), "kKeys lists every ProfileKey once, in the enum's order");

}  // namespace

std::span<const ProfileKeyInfo> profile_keys() { return kKeys; }

const ProfileKeyInfo& profile_key(ProfileKey key) { return kKeys[static_cast<std::size_t>(key)]; }

std::string profile_key_text(ProfileKey key) {
  const auto& k = profile_key(key);
  return std::string(k.table) + "." + std::string(k.name);
}

bool is_list(ProfileValue value) {
  switch (value) {
    case ProfileValue::strings:
    case ProfileValue::home_paths:
    case ProfileValue::assignments: return true;
    case ProfileValue::text:
    case ProfileValue::text_or_number:
    case ProfileValue::boolean: return false;
  }
  return false;
}

}  // namespace confine
