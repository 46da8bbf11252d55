// What the user asked for, as typed (after CLI parsing, before validation; only --net's word is parsed where it is
// given, by the one table of core/net_mode.h). resolve() turns it into a Policy.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/net_mode.h"

namespace confine {

enum class Subcommand { run, probe, explain, doctor, checkpoints, checkpoints_restore, checkpoints_rm, checkpoints_prune, learn };

struct Options {
  Subcommand subcommand = Subcommand::run;
  bool json = false;  // probe / explain / checkpoints list
  std::string workspace;              // empty: the current directory
  bool workspace_readonly = false;    // profile `filesystem.workspace = "ro"`
  std::string profile;                // --profile NAME|PATH (empty: the built-in `default`)
  NetChoice net;                      // --net, parsed where it is given (the command line, a profile, --network)
  bool net_given = false;             // --net was on the command line (a profile's mode yields to it)
  std::vector<std::string> allow;     // HOST[:PORT] for --net proxy
  std::string net_log;                // JSON lines, one per proxy decision
  std::string upstream_proxy;         // http://HOST:PORT
  bool check_sni = false;
  std::vector<std::string> secrets;      // NAME[=SOURCE], each with the --for of the same index
  std::vector<std::string> secret_for;   // HOST[,HOST…]
  std::vector<std::string> brokers;      // PORT=https://HOST[:PORT]
  // A profile's [credentials]: used only when its source is there (an env: source that is unset is left out,
  // with its broker and variables), so one profile serves callers with and without an API key.
  struct ProfileCredential {
    std::string secret;                // NAME[=SOURCE], as --secret takes it
    std::string hosts;                 // as --for takes it
    std::string broker;                // as --broker takes it; empty: none
    std::vector<std::string> set_env;  // NAME=value, set only with the secret (its base-URL variable)
    // The variable the agent reads its endpoint from (ANTHROPIC_BASE_URL): when the user sets it (--env, or in
    // the caller's environment), the broker goes to that endpoint instead (resolve's use_chosen_endpoint).
    std::string endpoint;
    // The key of the profile's [config] file that holds the same endpoint (Codex's `openai_base_url`): the user's
    // value there counts when the variable is unset, and the sandbox's copy gets the broker's address there.
    std::string endpoint_key;
  };
  std::vector<ProfileCredential> profile_credentials;
  // A profile's [config]: the agent's own configuration file (one of the profile's copies), read at the start for
  // the endpoints the user set there; the sandbox's copy is pointed at confine's brokers (resolve_agent_config).
  struct AgentConfig {
    std::string profile;
    std::string file;                 // absolute
    std::string providers;            // its table of the user's providers ([model_providers.NAME]); empty: none
    std::optional<std::string> text;  // as read at the start; nullopt: the file does not exist
  };
  std::optional<AgentConfig> agent_config;
  std::vector<std::string> publish;   // [HOSTADDR:]HOSTPORT:PORT[/tcp], docker's -p
  std::vector<std::string> ro_binds;  // SRC[:DEST]
  std::vector<std::string> rw_binds;  // SRC[:DEST]
  std::vector<std::string> optional_ro_binds;  // from a profile: skipped when the source does not exist
  std::vector<std::string> optional_rw_binds;
  std::vector<std::string> state_dirs;         // from a profile: bound read-write, created when missing
  struct PrivateDir {
    std::string profile;  // whose directory it is (the profile that names it)
    std::string dest;     // where the sandbox sees it (below $HOME)
  };
  std::vector<PrivateDir> private_dirs;        // from a profile: confine's own directory for the sandbox, at dest
  std::vector<std::string> private_copies;     // from a profile: host files the sandbox gets its own copy of
  std::vector<std::string> tmpfs;     // DEST
  std::vector<std::string> devices;   // --device SRC[:DEST[:PERMS]] or VENDOR/CLASS=NAME (core/devices.h)
  std::string gpus;                   // --gpus all|N|device=ID[,ID...]
  std::vector<std::string> masks;     // PATH
  std::vector<std::string> secret_masks;  // profile [secrets] mask: more file name patterns masked
  std::vector<std::string> scan_skip;     // --scan-skip NAME, profile [secrets] skip
  std::vector<std::string> scan_walk;     // --scan-walk NAME, profile [secrets] walk
  std::vector<std::string> set_env;   // K=V
  std::vector<std::string> pass_env;  // NAME
  std::vector<int> preserve_fds;
  std::optional<std::string> user;  // UID:GID
  bool allow_git_config = false;
  bool checkpoint = false;            // save the workspace to confine's checkpoint store before the run
  std::vector<std::string> checkpoint_exclude;  // --checkpoint-exclude PATTERN: names it does not save
  std::string checkpoint_id;          // checkpoints restore [ID|latest] (empty: latest), checkpoints rm ID
  std::string keep;                   // checkpoints prune --keep N, as typed (empty: the default)
  bool force = false;                 // checkpoints restore --force
  std::string worktree;               // --worktree BRANCH: run in a new linked worktree of the workspace's repository
  bool allow_nested = false;          // permit new namespaces inside (agents with their own sandbox)
  std::string allow_nested_profile;   // the profile that set it (sandbox.allow_nested); empty: --allow-nested
  // What the command line changed of the profile's settings, one line each, said before the run.
  std::vector<std::string> profile_overrides;
  std::string seccomp_file;           // empty: the built-in policy
  bool seccomp_log = false;
  bool best_effort = false;
  std::vector<std::string> require;   // layers, possibly comma-separated
  bool no_namespaces = false;         // force fallback mode
  std::string memory;                 // --memory SIZE (docker notation)
  std::string memory_swap;            // --memory-swap SIZE (memory + swap), -1 for unlimited swap
  std::string pids;                   // --pids N
  std::string cpus;                   // --cpus X
  std::string tmpfs_size;             // --tmpfs-size SIZE: each tmpfs confine makes (/tmp, $HOME, ...)
  std::string shm_size;               // --shm-size SIZE: /dev/shm
  std::optional<int> status_fd;
  std::string report_file;
  std::string log_file;  // --log FILE: the denial log, JSON lines
  int verbosity = 1;  // 0 quiet, 1 normal, 2 verbose
  std::vector<std::string> command;

  // `confine run` (docker-run compatible); all empty/false for plain confine.
  std::string rootfs;              // the image position: a directory holding a root filesystem; empty: the host's
  bool rootfs_readonly = false;    // --read-only (otherwise the image's tree is writable, changes thrown away)
  bool no_workspace = false;       // no read-write volume: nothing of the host is writable
  std::string workspace_dest;      // where the workspace appears inside (empty: at its own path)
  std::string workdir;             // -w (empty: the workspace)
  std::string hostname;            // --hostname (empty: "confine")
  bool docker_run = false;         // no profile; docker's environment (PATH, HOME, HOSTNAME, TERM, -e), not the host's
  bool stdin_closed = false;       // no -i: stdin reads as empty, as in docker
};

}  // namespace confine
