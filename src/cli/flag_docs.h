// The one table of confine's flags: their names, the placeholder of their value and their one-line help. The
// parsers (cli.cc, docker_run.cc) take each option's help from here, and tests/flags checks `--help`,
// man/confine.1 and the three completion files against it, so that the flag documentation cannot drift.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace confine::cli {

// Where a flag is taken: which command's help lists it.
enum class FlagSet {
  help,         // -h/--help: confine and each of its subcommands but `run`
  sandbox,      // confine, confine explain and confine doctor: what the sandbox is
  top,          // confine alone: -v, -q, --version
  probe,        // confine probe
  explain,      // confine explain, beside the sandbox flags
  checkpoints,  // confine checkpoints and each of its subcommands
  list,         // confine checkpoints and checkpoints list
  restore,      // confine checkpoints restore
  prune,        // confine checkpoints prune
  run,          // confine run: docker's flags and confine's own among them
};

struct FlagDoc {
  FlagSet set;
  std::string_view names;  // as CLI11 takes them: "-w,--workspace"
  std::string_view value;  // the value's placeholder in the help; empty for a switch, which takes none
  std::string_view help;   // one line; --scan-skip's `{}` is the list of directories skipped by default
};

inline constexpr std::array kFlagDocs = {
    FlagDoc{FlagSet::help, "-h,--help", "", "Print this help message and exit"},

    FlagDoc{FlagSet::sandbox, "--profile", "NAME|FILE",
            "Start from a profile: a built-in name (default, read-only, workspace-write, full-network, codex, "
            "claude, aider, gemini, npm, pip, cargo, go, gpu), one in ~/.config/confine/profiles/ or "
            "/etc/confine/profiles/, or a path to a .toml file; flags apply on top (see confine-profile(5))"},
    FlagDoc{FlagSet::sandbox, "-w,--workspace", "DIR",
            "Project directory: bound read-write at its own path and used as the working directory "
            "(default: the current directory)"},
    FlagDoc{FlagSet::sandbox, "--net", "MODE",
            "Network: `none` (default; only loopback), `proxy` (only the --allow hosts, through confine's proxy), "
            "`veth` (the same proxy reached over a veth pair at 10.77.0.1; root only), or `host` (no isolation; "
            "warned)"},
    FlagDoc{FlagSet::sandbox, "--allow", "HOST[:PORT]",
            "With --net proxy or veth: a host the sandbox may reach (port 443 unless given; *.example.com "
            "wildcards; an address such as 127.0.0.1:11434 is also forwarded from the sandbox's loopback; "
            "'POST api.example.com/v1/x' or 'GET api.example.com/v1/*' lets only such requests reach that host); "
            "repeatable"},
    FlagDoc{FlagSet::sandbox, "--net-log", "FILE",
            "With --net proxy or --publish: append one JSON line per proxy decision or published connection to FILE"},
    FlagDoc{FlagSet::sandbox, "--check-sni", "",
            "With --net proxy: a CONNECT tunnel must carry TLS whose server name (SNI) is the allowed host"},
    FlagDoc{FlagSet::sandbox, "--upstream-proxy", "http://HOST:PORT",
            "With --net proxy: send every allowed request through this proxy (e.g. a corporate Squid)"},
    FlagDoc{FlagSet::sandbox, "--secret", "NAME[=SOURCE]",
            "With --net proxy: NAME inside holds a random placeholder; confine reads the real value (SOURCE: "
            "env:VAR, file:PATH or cmd:COMMAND; default: the caller's NAME) and puts it only into request headers "
            "to the hosts of the matching --for; repeatable, one --for each"},
    FlagDoc{FlagSet::sandbox, "--for", "HOST[,HOST...]",
            "The hosts that receive the real value of the --secret in the same position (in plain HTTP only on this "
            "machine's loopback; http://HOST:PORT: also to that port, in clear text)"},
    FlagDoc{FlagSet::sandbox, "--broker", "PORT=https://HOST[:PORT]",
            "With --net proxy: plain HTTP on the sandbox's 127.0.0.1:PORT, forwarded by confine over verified TLS "
            "to HOST (an allowed host); point the tool's base URL at it; repeatable"},
    FlagDoc{FlagSet::sandbox, "--publish", "[HOSTADDR:]HOSTPORT:PORT",
            "Listen on HOSTADDR:HOSTPORT (default address 127.0.0.1) and forward each connection to PORT on the "
            "sandbox's loopback; TCP only; not with --net host; repeatable"},
    FlagDoc{FlagSet::sandbox, "--ro", "SRC[:DEST]", "Bind SRC read-only at DEST (default: the same path); repeatable"},
    FlagDoc{FlagSet::sandbox, "--rw", "SRC[:DEST]", "Bind SRC read-write at DEST (default: the same path); repeatable"},
    FlagDoc{FlagSet::sandbox, "--tmpfs", "DEST[:OPTIONS]",
            "Mount an empty writable tmpfs at DEST (OPTIONS: size=N[k|m|g], mode=OCTAL, as in docker); repeatable"},
    FlagDoc{FlagSet::sandbox, "--device", "SRC[:DEST[:PERMS]]",
            "Give the sandbox the host's device SRC at DEST (default: the same path), PERMS r or rw (default rw); "
            "or VENDOR/CLASS=NAME, a device of a CDI spec in /etc/cdi or /var/run/cdi (NAME all: every one); repeatable"},
    FlagDoc{FlagSet::sandbox, "--gpus", "all|N|device=ID[,ID...]",
            "GPUs as docker names NVIDIA's: the CDI devices nvidia.com/gpu=all, the first N, or those named (AMD's "
            "amd.com/gpu where only its spec is there)"},
    FlagDoc{FlagSet::sandbox, "--mask", "PATH",
            "Hide PATH (a file reads as empty, a directory as empty); relative paths are inside the workspace"},
    FlagDoc{FlagSet::sandbox, "--scan-skip", "NAME",
            "Do not walk directories named NAME when looking for secret files; only private-key names are looked "
            "for in them, as in those skipped by default: {}; repeatable"},
    FlagDoc{FlagSet::sandbox, "--scan-walk", "NAME",
            "Walk directories named NAME, one of those skipped by default, like any other; repeatable"},
    FlagDoc{FlagSet::sandbox, "--env", "NAME=VALUE", "Set a variable inside; repeatable"},
    FlagDoc{FlagSet::sandbox, "--pass-env", "NAME", "Keep a variable that credential scrubbing would drop; repeatable"},
    FlagDoc{FlagSet::sandbox, "--preserve-fd", "N", "Keep inherited file descriptor N open inside; repeatable"},
    FlagDoc{FlagSet::sandbox, "--user", "UID[:GID]",
            "The uid[:gid] the command sees inside (default: yours; as root: the workspace owner's)"},
    FlagDoc{FlagSet::sandbox, "--allow-git-config", "",
            "Leave .git/hooks and .git/config writable (by default read-only, so the agent cannot plant code that "
            "runs outside the sandbox on your next git command)"},
    FlagDoc{FlagSet::sandbox, "--allow-nested", "",
            "Let the command build its own sandbox: namespaces, and mounts inside them (for agents that bring one, "
            "such as Codex's bubblewrap); Landlock's filesystem rules step back"},
    FlagDoc{FlagSet::sandbox, "--seccomp", "FILE",
            "Load this seccomp policy (confine-seccomp/1 TOML, or a Docker/OCI JSON profile) instead of the "
            "built-in one"},
    FlagDoc{FlagSet::sandbox, "--seccomp-log", "", "Log every seccomp denial to the kernel log (dmesg / audit)"},
    FlagDoc{FlagSet::sandbox, "--checkpoint", "",
            "Before the run, save every file of the workspace (untracked ones too) as a checkpoint outside it, "
            "which the sandbox cannot reach; `confine checkpoints` lists them and says how to restore one"},
    FlagDoc{FlagSet::sandbox, "--checkpoint-exclude", "PATTERN",
            "With --checkpoint: do not save the files and directories whose name matches PATTERN (a shell pattern: "
            "node_modules, *.o) at any depth; a restore leaves them as they are; repeatable"},
    FlagDoc{FlagSet::sandbox, "--worktree", "BRANCH",
            "Run in a new git worktree beside the repository (git worktree add ../REPO-BRANCH -b BRANCH; reused "
            "if it exists), so the changes land on their own branch and your checkout stays out of reach"},
    FlagDoc{FlagSet::sandbox, "--best-effort", "",
            "Run even if a promise cannot be enforced on this kernel (each one lost is listed at start); "
            "without it confine refuses with exit 125"},
    FlagDoc{FlagSet::sandbox, "--require", "LAYER[,LAYER...]",
            "Layers that must be enforced even with --best-effort: namespaces, landlock, seccomp"},
    FlagDoc{FlagSet::sandbox, "--no-namespaces", "",
            "Fallback mode: no namespaces, only Landlock + seccomp + no_new_privs (needs --best-effort)"},
    FlagDoc{FlagSet::sandbox, "--memory", "SIZE",
            "Memory limit (cgroup v2 memory.max; swap off unless --memory-swap), e.g. 512m or 4g"},
    FlagDoc{FlagSet::sandbox, "--memory-swap", "SIZE", "Memory plus swap, as in docker (-1: unlimited swap)"},
    FlagDoc{FlagSet::sandbox, "--pids,--pids-limit", "N",
            "Most processes and threads the sandbox may have at once (pids.max)"},
    FlagDoc{FlagSet::sandbox, "--cpus", "X", "CPU time, in CPUs (cpu.max), e.g. 0.5 or 2"},
    FlagDoc{FlagSet::sandbox, "--tmpfs-size", "SIZE",
            "Size of each in-memory directory: /tmp, /var/tmp, /run, $HOME, and --tmpfs without size= "
            "(default 1g, and never more than --memory)"},
    FlagDoc{FlagSet::sandbox, "--shm-size", "SIZE", "Size of /dev/shm (default 64m, as in docker)"},
    FlagDoc{FlagSet::sandbox, "--status-fd", "N",
            "Write one JSON line with the layers applied to fd N once the command runs"},
    FlagDoc{FlagSet::sandbox, "--log", "FILE",
            "Append one JSON line per refusal to FILE: refused syscalls, network requests and names, limits reached, "
            "masked files read, git state set aside (the sandbox reads the same lines in /run/confine/denials.jsonl)"},
    FlagDoc{FlagSet::sandbox, "--report", "FILE", "Write the same JSON line to FILE"},

    FlagDoc{FlagSet::top, "-v,--verbose", "", "Say what was set up: masked files, dropped variables, layers"},
    FlagDoc{FlagSet::top, "-q,--quiet", "", "Print only errors"},
    FlagDoc{FlagSet::top, "--version", "", "Display program version information and exit"},

    FlagDoc{FlagSet::probe, "--json", "", "Machine-readable output"},
    FlagDoc{FlagSet::explain, "--json", "", "Machine-readable output"},
    FlagDoc{FlagSet::checkpoints, "-w,--workspace", "DIR", "The workspace (default: the current directory)"},
    FlagDoc{FlagSet::list, "--json", "", "Machine-readable output"},
    FlagDoc{FlagSet::restore, "--force", "", "Restore even over changes made after the run"},
    FlagDoc{FlagSet::prune, "--keep", "N", "How many of the newest checkpoints to keep (default: 10)"},

    FlagDoc{FlagSet::run, "--help", "", "Print this help and exit"},
    FlagDoc{FlagSet::run, "-v,--volume", "SRC:DST[:OPTS]", "Bind a host path: SRC:DST[:ro|rw]"},
    FlagDoc{FlagSet::run, "--mount", "SPEC",
            "type=bind,source=SRC,target=DST[,readonly] or type=tmpfs,target=DST[,tmpfs-size=N][,tmpfs-mode=M]"},
    FlagDoc{FlagSet::run, "-w,--workdir", "DIR", "Working directory inside (absolute)"},
    FlagDoc{FlagSet::run, "-e,--env", "NAME[=VALUE]", "Set NAME=VALUE, or pass the host's NAME"},
    FlagDoc{FlagSet::run, "--env-file", "FILE", "Read variables from a file (NAME=VALUE or NAME per line)"},
    FlagDoc{FlagSet::run, "--network,--net", "MODE", "none (default), host, or proxy (only the --allow hosts)"},
    FlagDoc{FlagSet::run, "--allow", "HOST[:PORT]",
            "confine's own, with --network proxy: a host the sandbox may reach (port 443 unless given; as confine "
            "--allow); repeatable"},
    FlagDoc{FlagSet::run, "-p,--publish", "[HOSTADDR:]HOSTPORT:PORT",
            "Publish a TCP port of the sandbox on the host (127.0.0.1 unless HOSTADDR is given); repeatable"},
    FlagDoc{FlagSet::run, "-m,--memory", "SIZE", "Memory limit (cgroup v2)"},
    FlagDoc{FlagSet::run, "--memory-swap", "SIZE", "Memory plus swap (-1: unlimited swap)"},
    FlagDoc{FlagSet::run, "--pids-limit", "N", "Most processes and threads at once"},
    FlagDoc{FlagSet::run, "--cpus", "X", "CPU time, in CPUs"},
    FlagDoc{FlagSet::run, "--shm-size", "SIZE", "Size of /dev/shm (default 64m)"},
    FlagDoc{FlagSet::run, "--tmpfs-size", "SIZE",
            "confine's own: size of /tmp, /run and every --tmpfs without size= (default 1g)"},
    FlagDoc{FlagSet::run, "--cap-drop", "CAP", "Accepted: confine drops every capability anyway"},
    FlagDoc{FlagSet::run, "--security-opt", "OPT",
            "no-new-privileges (always on) or seccomp=FILE (Docker JSON or confine TOML)"},
    FlagDoc{FlagSet::run, "-u,--user", "UID[:GID]", "UID[:GID] inside, numeric (default 0:0, mapped to you)"},
    FlagDoc{FlagSet::run, "--read-only", "",
            "The image's directories read-only (otherwise writable, changes thrown away)"},
    FlagDoc{FlagSet::run, "--tmpfs", "DST[:OPTS]", "An empty tmpfs at DST[:size=N,mode=M]"},
    FlagDoc{FlagSet::run, "--device", "SRC[:DEST[:PERMS]]",
            "A host device at DEST (PERMS r or rw; m grants nothing), or a CDI device VENDOR/CLASS=NAME"},
    FlagDoc{FlagSet::run, "--gpus", "all|N|device=ID,...", "NVIDIA GPUs through their CDI spec (nvidia.com/gpu)"},
    FlagDoc{FlagSet::run, "-h,--hostname", "NAME", "Hostname inside"},
    FlagDoc{FlagSet::run, "--rm", "", "Accepted: nothing outlives a run anyway"},
    FlagDoc{FlagSet::run, "-i,--interactive", "", "Keep stdin open (otherwise it reads as empty)"},
    FlagDoc{FlagSet::run, "-t,--tty", "", "The command uses your terminal (confine allocates no new one)"},
    FlagDoc{FlagSet::run, "--init", "", "Accepted: confine's own pid 1 already reaps and forwards signals"},
    FlagDoc{FlagSet::run, "--best-effort", "",
            "confine's own: run even if a limit or layer cannot be enforced here"},
    FlagDoc{FlagSet::run, "--verbose", "", "Say what was set up"},
    FlagDoc{FlagSet::run, "-q,--quiet", "", "Print only errors"},
};

namespace flag_docs_detail {
consteval bool each_flag_once_per_set() {
  for (std::size_t i = 0; i < kFlagDocs.size(); ++i)
    for (std::size_t j = i + 1; j < kFlagDocs.size(); ++j)
      if (kFlagDocs[i].set == kFlagDocs[j].set && kFlagDocs[i].names == kFlagDocs[j].names) return false;
  return true;
}
// A second row would never be found: the first one documents the flag.
static_assert(each_flag_once_per_set(), "src/cli/flag_docs.h: a flag has two rows in the same set");

// Not constexpr: reaching it in a constant evaluation makes the build fail, naming the flag's lookup.
inline void flag_missing_from_the_table_in_flag_docs_h() {}

consteval const FlagDoc& find(FlagSet set, std::string_view names, bool takes_value) {
  for (const auto& doc : kFlagDocs)
    if (doc.set == set && doc.names == names && doc.value.empty() != takes_value) return doc;
  flag_missing_from_the_table_in_flag_docs_h();
  return kFlagDocs.front();
}
}  // namespace flag_docs_detail

// The table's entry for an option that takes a value, or for a switch. Evaluated at compile time: a flag the
// table lacks (or whose value it gets wrong) is a build error, never an empty help line.
consteval const FlagDoc& option_doc(FlagSet set, std::string_view names) {
  return flag_docs_detail::find(set, names, true);
}
consteval const FlagDoc& switch_doc(FlagSet set, std::string_view names) {
  return flag_docs_detail::find(set, names, false);
}

}  // namespace confine::cli
