// Landlock rule sets as data (landlock/*.toml, format confine-landlock/1) and their translation into access
// masks for the running kernel's ABI. Pure: applying them is mech/landlock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sys/result.h"

namespace confine {

// dev_read: a device given with PERMS r (--device); not a class of the data files.
enum class AccessClass { ro, rx, rw, dev, dev_read };

struct LandlockPath {
  std::string path;  // may be $WORKSPACE, $HOME or $RUN_DIR
  AccessClass access = AccessClass::ro;
  bool optional = false;
};

struct LandlockData {
  std::vector<LandlockPath> sandbox;   // full mode
  std::vector<LandlockPath> fallback;  // no namespaces
};

sys::Result<LandlockData> parse_landlock_data(std::string_view text, const std::string& source);
const LandlockData& builtin_landlock_data();  // landlock/default.toml, built into confine; read once

struct LandlockRule {
  std::string path;  // expanded
  std::uint64_t access = 0;
  bool optional = false;
};

// What is applied: every right the ABI knows is handled; rules grant subsets of them.
struct LandlockPlan {
  int abi = 0;  // 0: not applied
  std::uint64_t handled_fs = 0;
  std::uint64_t handled_net = 0;
  std::uint64_t scoped = 0;
  std::vector<LandlockRule> rules;
  bool grant_std_terminals = true;  // stdin/stdout/stderr that are terminals get `dev` access
  std::uint32_t restrict_flags = 0;  // landlock_restrict_self()'s flags
};

// Filesystem rights handled at this ABI (all of them, so nothing is silently left unrestricted).
std::uint64_t handled_fs_rights(int abi);
// The rights of an access class, limited to what the ABI handles.
std::uint64_t class_rights(AccessClass access, int abi);
// What a newer ABI would restrict that this one cannot, from the ladder (one row per ABI confine uses, with the
// Linux release that brought it), e.g. "truncate (ABI 3, Linux 6.2)"; `fallback_only`: full mode does not use it
// (its namespaces keep the promise). Empty at the newest ABI confine uses.
struct LandlockGap {
  std::string text;
  bool fallback_only = false;
};
std::vector<LandlockGap> landlock_gaps(int abi);
// The gaps that matter in one mode, as text.
std::vector<std::string> landlock_rights_missing(int abi, bool fallback);

struct LandlockRequest {
  int abi = 0;
  std::vector<LandlockPath> paths;
  std::string workspace;
  std::string home;
  std::string run_dir;  // fallback mode: the run's private $HOME and $TMPDIR live here (sys/private_dir.h)
  bool deny_tcp = false;  // handle TCP bind/connect with no port allowed (fallback: the egress wall)
  bool deny_udp = false;  // ABI 10: the same for UDP bind, connect and sends naming a peer (fallback, beside seccomp)
  // ABI 9: connecting to a unix socket file (D-Bus, ssh-agent, docker.sock) made outside the sandbox is refused
  // except under `rw` paths (fallback: in full mode the mount view keeps those files out of sight).
  bool socket_files = false;
  bool scope_abstract_sockets = true;  // ABI 6: the host's abstract unix sockets are out of reach
  bool scope_signals = true;           // ABI 6: processes outside the sandbox cannot be signalled
  // Full mode: leave reads and truncate(2) to the mount view (its root is readable anyway, and read-only binds
  // refuse truncate), so Landlock checks only writes, creation, removal, execution, links and device ioctls. Every
  // handled read right costs a path walk on each open().
  bool writes_only = false;
  // False with --allow-nested in full mode: no filesystem right is handled, because a Landlock domain that handles
  // any refuses every mount, even in namespaces the command makes itself (a nested sandbox such as bwrap needs
  // them); the mount view alone keeps the filesystem boundary then. The network rules and scopes stay.
  bool filesystem = true;
};

LandlockPlan make_landlock_plan(const LandlockRequest& request);

}  // namespace confine
