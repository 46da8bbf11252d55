// Policy: the validated, fully resolved description of one sandbox. Plain data; built only by resolve().
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/allowlist.h"
#include "core/devices.h"
#include "core/request_rules.h"
#include "core/secrets.h"
#include "core/limits.h"
#include "core/log_budget.h"
#include "core/layers.h"
#include "core/net_mode.h"
#include "core/published_port.h"
#include "core/seccomp_policy.h"
#include "core/secret_names.h"
#include "sys/unique_fd.h"

namespace confine {

struct UserBind {
  std::string source;  // absolute, canonical host path
  std::string dest;    // absolute path inside the sandbox
  bool writable = false;
  bool is_file = false;  // the source is not a directory: its mount point is a file
  bool create = false;   // a directory confine makes before the run if it is missing (a profile's state or cache)
  bool private_dir = false;  // a profile's private directory: only sandboxes use it (not checked for git after a run)
  // The source, held open since it was resolved (see sys/held_path.h): what is mounted is what was checked. Unset
  // for a directory confine makes before the run.
  std::shared_ptr<const sys::UniqueFd> source_fd = nullptr;
  // A directory named on the command line (--ro, --rw, a `confine run` volume), not in a system directory: its
  // secret files are masked like the workspace's. A profile's binds are not scanned: they are the tool's own
  // state, shared on purpose.
  bool scan_secrets = false;
};

// Who the sandbox runs as. Rootless: the caller's own uid outside (the only id it may map). Run by root: an
// unprivileged host id (nobody) outside, so nothing only host root may touch is reachable; inside, the id the
// command sees (by default the caller's, or the workspace owner's when root runs it).
struct Identity {
  uid_t inside_uid = 0;
  gid_t inside_gid = 0;
  uid_t host_uid = 0;
  gid_t host_gid = 0;
  bool run_by_root = false;  // the parent prepares user binds as idmapped mounts
};

struct TmpfsMount {
  std::string dest;     // absolute inside
  std::string options;  // tmpfs options: "mode=0755" plus an optional size
};

struct FsPolicy {
  std::string workspace;  // absolute, canonical host path; bound read-write (empty: `confine run` without a volume)
  std::shared_ptr<const sys::UniqueFd> workspace_fd;  // held since it was resolved, like UserBind::source_fd
  std::string workspace_inside;  // where it appears inside: its own path, or a `confine run -v` destination
  std::string rootfs;            // `confine run DIR`: the system directories come from DIR instead of the host
  bool rootfs_writable = false;  // DIR's directories are overlays on a tmpfs (writes vanish at exit), not read-only
  std::string home;       // $HOME inside: an empty tmpfs (empty: HOME unset or "/", no tmpfs)
  std::vector<UserBind> binds;
  std::vector<TmpfsMount> tmpfs;
  std::vector<std::string> masks;  // absolute paths inside the sandbox
  std::vector<HostDevice> devices;  // --device, --gpus (core/devices.h): bound at their dest, granted by Landlock
  std::vector<std::string> device_notes;  // said at start: what of a device request confine does not do
  SecretNames secret_names = default_secret_names();  // what the workspace scan masks and skips
  std::vector<std::string> copies;  // host files below $HOME the sandbox gets its own copy of, at the same path
  // Values set in a copy (a TOML file) before the sandbox sees it: the agent's configuration pointed at a broker.
  struct CopyEdit {
    std::string path;              // one of `copies`
    std::vector<std::string> key;  // {"openai_base_url"}, {"model_providers", "gw", "base_url"}
    std::string value;
  };
  std::vector<CopyEdit> copy_edits;
  // Bytes each in-memory directory may hold: /tmp, /var/tmp, /run, $HOME and a --tmpfs without size= (tmpfs_size),
  // /dev/shm (shm_size). A tmpfs without a size may take half the host's memory, and there are five of them.
  std::uint64_t tmpfs_size = 0;
  std::uint64_t shm_size = 0;
  bool protect_git = true;         // .git/hooks and .git/config read-only
  bool workspace_readonly = false; // profile read-only: the workspace is bound read-only too
};

struct ProcPolicy {
  std::vector<std::string> argv;
  std::vector<std::string> env;            // NAME=value, already scrubbed
  std::vector<std::string> dropped_env;    // names, for -v
  std::vector<int> preserve_fds;           // sorted, unique, all > 2
  std::string workdir;
};

// The kernel layers on top of the namespaces, and how strict to be when one is missing.
struct ProtectionPolicy {
  RunRequest request;       // best-effort, --require, --no-namespaces, what was opted out of
  std::optional<SeccompPolicy> custom_seccomp;  // --seccomp FILE; unset: the built-in policy
  bool allow_nested = false;
  std::string allow_nested_profile;  // see Options
  bool seccomp_log = false;
  // confine learn: a call the policy refuses is let through and recorded (RefusalAction::recorded), except those
  // of the floor, which no profile can allow.
  bool record_instead_of_refusing = false;
};

// The seccomp policy in force: --seccomp's, or the built-in one (parsed only when asked for).
inline const SeccompPolicy& seccomp_policy(const ProtectionPolicy& p) {
  return p.custom_seccomp ? *p.custom_seccomp : builtin_seccomp_policy();
}

// --checkpoint: the workspace saved before the run, and how the run left it recorded after.
struct CheckpointPolicy {
  bool save = false;
  std::vector<std::string> exclude;  // --checkpoint-exclude and the profile's, name patterns
  std::string data_home;             // where the store is (checkpoints_data_home; empty: no $HOME)
};

struct ReportPolicy {
  std::optional<int> status_fd;  // one JSON line once the command runs
  std::string report_file;
  std::string log_file;  // --log: one JSON line per refusal (run/refusal_log.h)
  LogCaps log_caps = kRefusalLogCaps;  // how much --log and the sandbox's denial log take per run
};

// --net proxy: what the egress proxy lets through, and where it logs.
struct NetPolicy {
  Allowlist allow;
  std::string log_file;               // --net-log
  LogCaps log_caps = kNetLogCaps;     // how much it takes per run
  std::string upstream_host;  // --upstream-proxy; empty: connect directly
  std::uint16_t upstream_port = 0;
  bool check_sni = false;
  bool over_veth = false;     // --net veth: reached over a veth pair at kVethProxyAddress, not on loopback
  std::vector<SecretSpec> secrets;  // --secret/--for, placeholders made; the real values are read at run time
  std::vector<BrokerSpec> brokers;  // --broker
  RequestRules rules;               // --allow 'METHOD HOST/PATH'
  std::vector<std::string> credential_env;  // NAME=value a profile's credential in use sets (its base URL)
  std::vector<std::string> notes;           // said at start: the endpoints of the user's that a credential brokers to
};

// Where the sandbox finds the proxy, inside its own network namespace (empty there, so any port is free).
inline constexpr std::uint16_t kProxyPort = 3128;
// Where the sandbox's /etc/resolv.conf points (--net proxy): confine's DNS stub, on the sandbox's own loopback.
inline constexpr const char* kDnsStubAddress = "127.0.0.53";
// What each in-memory directory holds by default (--tmpfs-size, --shm-size): docker's 64 MiB for /dev/shm.
inline constexpr std::uint64_t kDefaultTmpfsSize = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kDefaultShmSize = std::uint64_t{64} << 20;
// --net veth: the two ends of the pair (a /30 between two private namespaces, so it clashes with nothing).
inline constexpr const char* kVethProxyAddress = "10.77.0.1";
inline constexpr const char* kVethSandboxAddress = "10.77.0.2";
inline constexpr int kVethPrefixLength = 30;
inline constexpr const char* kVethProxyInterface = "confine0";
inline constexpr const char* kVethSandboxInterface = "eth0";

// What confine itself takes from the caller's environment (never the sandbox's), read once at start by main
// (CallerContext) so that nothing later calls getenv. An XDG directory that is unset or relative is empty here:
// each user of it then takes its default below $HOME.
struct CallerEnvironment {
  std::string xdg_cache_home;   // the workspace scan cache; profiles' private directories
  std::string xdg_config_home;  // git's global config, checked after a run
  std::string xdg_data_home;    // checkpoints
  std::string xdg_runtime_dir;  // where the user's systemd manager listens ($XDG_RUNTIME_DIR/bus)
  std::string session_bus;      // $DBUS_SESSION_BUS_ADDRESS
  std::string container_mark;   // $container, set by podman, systemd-nspawn, LXC: words a refused step's fix
  bool in_kubernetes = false;   // $KUBERNETES_SERVICE_HOST is set: the same
  std::vector<std::string> cdi_spec_dirs;  // $CONFINE_CDI_SPEC_DIRS: where CDI specs are read (empty: core/devices.h's)
};

struct Policy {
  std::string profile_name = "default";  // for explain and CONFINE_PROFILE
  std::string hostname = "confine";
  ProtectionPolicy protection;
  ResourceLimits limits;
  NetPolicy proxy;
  std::vector<PublishedPort> published;  // --publish: confine listens on the host, each connection goes inside
  ReportPolicy report;
  CheckpointPolicy checkpoint;
  FsPolicy fs;
  NetMode net = NetMode::none;
  Identity ids;
  ProcPolicy proc;
  CallerEnvironment caller_env;
  std::optional<FeatureOverride> test_features;  // a test build's CONFINE_TEST_FEATURES (layers.h)
};

}  // namespace confine
