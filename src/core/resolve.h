// resolve(): Options + the caller's context -> a validated Policy, or every problem found, one line each.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/options.h"
#include "core/policy.h"
#include "sys/result.h"

namespace confine {

// Facts about the caller that resolve() needs, gathered once by main so resolve stays testable.
struct CallerContext {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string cwd;
  std::string home;
  std::vector<std::string> environ;  // the caller's, which the sandbox's is scrubbed from
  CallerEnvironment env;             // what confine itself takes from it
  std::string test_features;         // CONFINE_TEST_FEATURES, filled only by a test build (-Dtest_hooks=true)
  std::string test_log_caps;         // CONFINE_TEST_LOG_CAPS ("lines=N,bytes=N"), the same (core/log_budget.h)
};

// Where checkpoints are kept: $XDG_DATA_HOME, else ~/.local/share (empty: no $HOME).
std::string checkpoints_data_home(const std::string& home, const CallerEnvironment& env);
// The store of `workspace`'s checkpoints in `data_home`.
std::string checkpoint_store(const std::string& workspace, const std::string& data_home);

// The variables confine itself reads, from an environment (NAME=value entries).
CallerEnvironment caller_environment(const std::vector<std::string>& environ);

// The host uid/gid a sandbox started by root runs as: "nobody", which owns nothing that matters.
inline constexpr uid_t kUnprivilegedHostUid = 65534;
inline constexpr gid_t kUnprivilegedHostGid = 65534;

// Every independent problem is reported: one alone as it is, several one a line below their count (as a profile's
// are). A check whose input failed is skipped, so no problem is reported again through its consequences.
sys::Result<Policy> resolve(const Options& options, const CallerContext& caller);

// Whether a sandbox with this policy can write `path` (normalised, absolute, no links on it): it lies in the
// writable workspace or a --rw bind. confine keeps nothing of its own there.
bool sandbox_can_write(const Policy& p, const std::string& path);

// Helpers exposed for unit tests.
// Lexically normalises an absolute path ("/a/./b/../c" -> "/a/c"); empty result if it is not absolute.
std::string normalize_absolute(const std::string& path);
// "a/b" relative to base, or absolute as is; then normalised.
std::string absolute_from(const std::string& base, const std::string& path);
// True when `inner` equals `outer` or lies below it (both normalised absolute paths).
bool is_within(const std::string& inner, const std::string& outer);
// "a:b::c" -> {"a", "b", "", "c"}: every field, empty ones too (docker's -v, /etc/passwd).
std::vector<std::string_view> split_fields(std::string_view text, char separator);
// A system directory (host_layout.h) and where it really is: its links resolved (/lib -> /usr/lib), so that a
// path is judged by what it reaches, not by how it is spelled.
struct SystemDirPlace {
  std::string path;  // as the table names it
  std::string real;
  bool only_when_root_owned = false;
  std::string except;  // real, or empty
};
// Why `path` (resolved) may not be handed to a sandbox as root: it is, lies inside or contains one of `places`
// ("is the system directory `/etc`"); empty when it may. `owned_by_root`: who owns `path`.
std::string system_dir_clash(const std::string& path, bool owned_by_root, const std::vector<SystemDirPlace>& places);

}  // namespace confine
