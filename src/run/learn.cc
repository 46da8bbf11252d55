#include "run/learn.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cli/profiles.h"
#include "core/exit_status.h"
#include "core/host_layout.h"
#include "core/learn.h"
#include "core/secret_names.h"
#include "run/session.h"
#include "sys/log.h"
#include "sys/private_dir.h"
#include "sys/syscalls.h"
#include "sys/unique_fd.h"
#include "sys/user_files.h"

namespace confine::run {
namespace {

// The walk of what the run wrote stops here: each level holds one fd, and the list is for a person to read.
constexpr int kMaxWalkDepth = 64;
constexpr std::size_t kMaxWrites = 100000;
constexpr std::size_t kMaxNetLog = 64 * sys::kMiB;

// What learn cannot do, or would have to do against its promise (write outside the workspace and its own
// throw-away home, let a credential in): one line naming the option, or empty.
std::string refused_option(const Options& o) {
  if (o.command.empty()) return "learn: give the command to learn from after `--` (confine learn [OPTIONS] -- CMD)";
  if (o.net_given && o.net != NetChoice{NetMode::proxy})
    return "learn: --net " + std::string(net_word(o.net)) + ": learn records the network through confine's proxy (--net proxy)";
  auto not_taken = [](const char* flag, const char* why) { return std::string("learn: ") + flag + " is not taken: " + why; };
  if (!o.net_log.empty()) return not_taken("--net-log", "learn keeps its own log of the run's connections");
  if (!o.log_file.empty()) return not_taken("--log", "learn keeps its own log of the run's refusals");
  if (!o.rw_binds.empty()) return not_taken("--rw", "learn writes nothing of yours outside the workspace");
  if (o.checkpoint) return not_taken("--checkpoint", "learn writes nothing of yours outside the workspace");
  if (!o.worktree.empty()) return not_taken("--worktree", "learn writes nothing of yours outside the workspace");
  if (!o.pass_env.empty() || !o.secrets.empty() || !o.brokers.empty())
    return not_taken("--pass-env, --secret or --broker", "learn never lets a credential in");
  if (o.no_namespaces) return not_taken("--no-namespaces", "learn needs the sandbox's own network and home");
  return {};
}

// The base profile applied as a strict run would apply it, less what would write outside the sandbox or let a
// credential in: its private caches, state directories and read-write binds (the run writes to its throw-away
// home at those paths instead, and the base keeps them in the strict run), its copies (written into the home,
// which is a host directory here), its passed variables and credentials.
void without_writes_or_credentials(Options& o) {
  o.private_dirs.clear();
  o.private_copies.clear();
  o.state_dirs.clear();
  o.optional_rw_binds.clear();
  o.pass_env.clear();
  o.profile_credentials.clear();
  o.net = {NetMode::proxy};
}

void add_entries(int dir, const std::string& prefix, int depth, std::vector<std::string>& out);

// The directory `name` in `dir`, for listing: never through a link (O_NOFOLLOW on the name the sandbox made).
void add_directory(int dir, const std::string& name, const std::string& rel, int depth, std::vector<std::string>& out) {
  sys::UniqueFd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  std::size_t before = out.size();
  if (sub.valid() && depth < kMaxWalkDepth) add_entries(sub.get(), rel + "/", depth + 1, out);
  if (out.size() == before) out.push_back(rel);  // empty, unreadable or too deep: the directory itself
}

// Every name below `dir` that is not a directory, and every directory with nothing listed below it, as paths
// relative to the walk's start. Names are the sandbox's: they are data, never followed.
void add_entries(int dir, const std::string& prefix, int depth, std::vector<std::string>& out) {
  int copy = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) return;
  DIR* d = ::fdopendir(copy);
  if (d == nullptr) {
    ::close(copy);
    return;
  }
  std::vector<std::pair<std::string, bool>> names;  // name, a directory
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    struct stat st {};
    if (e->d_type == DT_UNKNOWN && ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) is_dir = S_ISDIR(st.st_mode);
    names.emplace_back(std::move(name), is_dir);
  }
  ::closedir(d);
  for (const auto& [name, is_dir] : names) {
    if (out.size() >= kMaxWrites) return;
    if (is_dir) add_directory(dir, name, prefix + name, depth, out);
    else out.push_back(prefix + name);
  }
}

// What the run left in its home, walked from the host by fds.
std::vector<std::string> written_below(const std::string& home) {
  std::vector<std::string> out;
  sys::UniqueFd root(::open(home.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root.valid()) {
    log::warn("cannot list what the run wrote in its home `{}`: {}", home, std::strerror(errno));
    return out;
  }
  add_entries(root.get(), "", 0, out);
  if (out.size() >= kMaxWrites) log::warn("the run wrote more than {} files in its home; the profile lists the first", kMaxWrites);
  return out;
}

// What the run was given below $HOME (--ro, the base's binds), as `~/a/b`, less learn's own home: a profile
// must never hide it.
std::vector<std::string> bound_below(const std::string& home, const std::vector<UserBind>& binds) {
  std::vector<std::string> out;
  for (const auto& b : binds)
    if (b.dest.size() > home.size() && b.dest.starts_with(home) && b.dest[home.size()] == '/')
      out.push_back("~" + b.dest.substr(home.size()));
  return out;
}

// --- what the run looked up outside its view -------------------------------------------------------------------

// `path` (absolute) with `.`, `..` and repeated slashes resolved by name. Only a candidate: the host check after
// it resolves the result again, following no link.
std::string by_name(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start < path.size()) {
    auto slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    auto part = path.substr(start, slash - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.emplace_back(part);
    }
    start = slash + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

bool at_or_below(const std::string& path, const std::string& dir) {
  return !dir.empty() && (path == dir || (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/'));
}

// Whether `path` is not the host's to the run: the workspace and what was bound in (learn's home aside), then,
// outside $HOME, the system directories shown inside and the sandbox's own (/proc, /dev, /sys, /tmp, /run).
bool in_view(const std::string& path, const Policy& policy, const std::string& home, const std::string& learn_home) {
  if (at_or_below(path, policy.fs.workspace_inside)) return true;
  if (std::any_of(policy.fs.binds.begin(), policy.fs.binds.end(),
                  [&](const UserBind& b) { return b.source != learn_home && at_or_below(path, b.dest); }))
    return true;
  // $HOME first: it may lie below /tmp, the sandbox's own.
  if (at_or_below(path, home)) return false;
  for (const char* own : {"/proc", "/dev", "/sys", "/tmp", "/run"})
    if (at_or_below(path, own)) return true;
  return std::any_of(system_dirs().begin(), system_dirs().end(),
                     [&](const SystemDir& d) { return d.shown_inside && at_or_below(path, std::string(d.path)); });
}

std::vector<std::string> split_components(const std::string& path) {
  std::vector<std::string> parts;
  for (std::size_t start = 1; start < path.size();) {
    auto slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

// A name the secret scan masks on the way to `path` (a directory such as .ssh, or the file's own name).
bool secret_on_the_way(const std::string& path) {
  const auto& names = default_secret_names();
  auto parts = split_components(path);
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (names.is_secret_dir(parts[i]) || (i + 1 == parts.size() && names.is_secret_file(parts[i]))) return true;
  return false;
}

// Whether the host directory `dir` holds a name the secret scan masks: then the files read there are shown one by
// one, never the directory.
bool holds_secret(const std::string& dir) {
  sys::UniqueFd fd(sys::openat2(AT_FDCWD, dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_NO_SYMLINKS));
  if (!fd.valid()) return true;  // unreadable: assume the worst
  DIR* d = ::fdopendir(fd.release());
  if (d == nullptr) return true;
  const auto& names = default_secret_names();
  bool found = false;
  while (const dirent* e = ::readdir(d))
    if (names.is_secret_file(e->d_name) || names.is_secret_dir(e->d_name)) found = true;
  ::closedir(d);
  return found;
}

// What the run looked up (`names`, NUL-separated, in the sandbox's view) that it could not see and the host has:
// not in its view, not made by the run itself in its home, a file or directory on the host reached through no
// link (a name the sandbox chose may pass through one; the profile never shows more than the name itself).
std::vector<ReadRecord> reads_outside_view(std::string_view names, const Policy& policy, const std::string& home,
                                           const std::string& learn_home) {
  sys::UniqueFd run_home(::open(learn_home.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  std::map<std::string, bool> beside_secret;  // by directory: listed once
  std::vector<ReadRecord> out;
  for (std::size_t start = 0; start < names.size();) {
    auto end = names.find('\0', start);
    if (end == std::string_view::npos) end = names.size();
    auto path = by_name(names.substr(start, end - start));
    start = end + 1;
    if (path == "/" || path == home || in_view(path, policy, home, learn_home)) continue;
    bool in_home = !home.empty() && home != "/" && at_or_below(path, home);
    if (in_home && run_home.valid()) {
      // The run's own: made in its home during the run.
      sys::UniqueFd made(sys::openat2(run_home.get(), path.c_str() + home.size() + 1, O_PATH | O_CLOEXEC, 0,
                                      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS));
      if (made.valid()) continue;
    }
    sys::UniqueFd host(sys::openat2(AT_FDCWD, path.c_str(), O_PATH | O_CLOEXEC, 0, RESOLVE_NO_SYMLINKS));
    struct stat st {};
    if (!host.valid() || ::fstat(host.get(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) continue;
    auto dir = path.substr(0, path.rfind('/'));
    auto known = beside_secret.find(dir);
    if (known == beside_secret.end()) known = beside_secret.emplace(dir, holds_secret(dir.empty() ? "/" : dir)).first;
    out.push_back({in_home ? "~" + path.substr(home.size()) : path, S_ISDIR(st.st_mode), secret_on_the_way(path),
                   known->second});
  }
  return out;
}

// The calls the strict run would refuse: learn runs with the denial log on, in its throw-away directory like the
// net log, and with such calls let through and recorded (the floor's still fail: no profile can allow them).
std::vector<SeccompRecord> seccomp_refusals(const std::string& log_file) {
  auto text = sys::read_user_file("denial log", log_file, kMaxNetLog);
  if (text) return parse_seccomp_denials(*text);
  if (text.error().err != ENOENT) log::warn("{}", text.error().message());
  return {};
}

// The command's stdout goes to stderr, so that stdout holds the profile alone (`confine learn -- npm i >p.toml`).
// Returns the profile's stdout; invalid when it could not be set aside.
sys::UniqueFd set_stdout_aside() {
  sys::UniqueFd profile_out(::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3));
  if (!profile_out.valid() || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return {};
  return profile_out;
}

bool write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// A command that stops at the first host file it does not find (learn never shows it the host's files) is
// learned one file at a time: the warning says how to go on from there, since the cause is in the sandbox's view.
void warn_about_failed_run(int code, const std::vector<ReadRecord>& reads) {
  auto unseen = std::count_if(reads.begin(), reads.end(), [](const ReadRecord& r) { return !r.secret; });
  if (unseen == 0) {
    log::warn("the command exited with status {}: the profile records a run that did not succeed", code);
    return;
  }
  log::warn("the command exited with status {} after looking for {} host file{} the sandbox did not show (the profile "
            "names {}): to learn what comes after, learn again from the printed profile (confine learn --profile FILE)",
            code, unseen, unseen == 1 ? "" : "s", unseen == 1 ? "it" : "them");
}

}  // namespace

int learn(Options options, const CallerContext& caller) {
  if (auto refused = refused_option(options); !refused.empty()) {
    log::error("{}", refused);
    return kExitSetupFailed;
  }
  if (options.profile.empty()) options.profile = base_profile_for(options.command);
  auto base = cli::find_and_load_profile(options.profile, caller);
  if (!base) {
    log::error("{}", base.error().message());
    return kExitSetupFailed;
  }
  if (auto s = apply_profile(*base, caller.home, options); !s) {
    log::error("{}", s.error().message());
    return kExitSetupFailed;
  }
  without_writes_or_credentials(options);
  // The run's home and its net log live in a directory of confine's in /tmp, never in the caller's home; the
  // home is bound read-write over the sandbox's $HOME, everything else stays as the strict run has it.
  auto layer = sys::PrivateDir::make(sys::choose_private_dir(sys::kPrivateDirBase), caller.uid, caller.gid);
  if (!layer) {
    log::error("{}", layer.error().message());
    return kExitSetupFailed;
  }
  auto home = sys::private_home(layer->path());
  if (!caller.home.empty() && caller.home != "/") options.rw_binds.push_back(home + ":" + caller.home);
  options.net_log = layer->path() + "/net.jsonl";
  options.log_file = layer->path() + "/denials.jsonl";
  auto policy = resolve(options, caller);
  if (!policy) {
    log::error("{}", policy.error().message());
    return kExitSetupFailed;
  }
  policy->protection.record_instead_of_refusing = true;
  // Run by root, the home is written through an idmapped bind as the sandbox's own user.
  if (policy->ids.run_by_root && ::lchown(home.c_str(), policy->ids.inside_uid, policy->ids.inside_gid) != 0) {
    log::error("giving `{}` to the sandbox's user: {}", home, std::strerror(errno));
    return kExitSetupFailed;
  }
  auto files = open_output_files(*policy);
  if (!files) {
    log::error("{}", files.error().message());
    return kExitSetupFailed;
  }
  auto lookups_file = layer->path() + "/lookups";
  files->lookups = sys::UniqueFd(::open(lookups_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!files->lookups.valid()) {
    log::error("learn: cannot make `{}`: {}", lookups_file, std::strerror(errno));
    return kExitSetupFailed;
  }
  auto profile_out = set_stdout_aside();
  if (!profile_out.valid()) {
    log::error("learn: cannot set stdout aside for the profile: {}", std::strerror(errno));
    return kExitSetupFailed;
  }
  // Said unless -q: this sandbox allows every host, which the user must know while it runs.
  if (log::level() >= log::Level::normal)
    log::emit("confine: ", fmt::format("learn: starting from the `{}` profile; every host and this machine's loopback "
                                       "services are allowed and recorded, "
                                       "$HOME is a throw-away directory ({})", options.profile, home));
  int code = run_sandbox(*policy, *files);

  LearnRecords records;
  records.command = options.command;
  auto net_log = sys::read_user_file("net log", options.net_log, kMaxNetLog);
  if (net_log) records.network = parse_net_log(*net_log);
  else if (net_log.error().err != ENOENT) log::warn("{}", net_log.error().message());
  if (!caller.home.empty() && caller.home != "/") records.home_writes = written_below(home);
  records.seccomp = seccomp_refusals(options.log_file);
  records.dropped_env = policy->proc.dropped_env;
  records.bound = bound_below(caller.home, policy->fs.binds);
  // Before the run's home is removed: what the run made there itself is no read of the host's.
  auto looked_up = sys::read_user_file("lookups", lookups_file, kMaxNetLog);
  if (looked_up) records.reads = reads_outside_view(*looked_up, *policy, caller.home, home);
  else log::warn("{}", looked_up.error().message());
  if (!layer->remove())
    log::warn("could not remove all of `{}` (a name the run keeps re-creating, or a tree deeper than confine walks); "
              "remove it yourself", layer->path());
  if (code != 0) warn_about_failed_run(code, records.reads);
  if (!write_all(profile_out.get(), learned_profile(records, options.profile, *base))) {
    log::error("learn: writing the profile: {}", std::strerror(errno));
    return kExitSetupFailed;
  }
  return code;
}

}  // namespace confine::run
