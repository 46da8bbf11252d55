#include "run/git_check.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "core/report.h"
#include "core/resolve.h"
#include "core/secret_scan.h"
#include "run/git.h"
#include "run/scan_cache.h"
#include "sys/log.h"
#include "sys/owned_files.h"
#include "sys/syscalls.h"
#include "sys/unique_fd.h"

namespace confine::run {
namespace {

// Renames ROOT/REL to REL.confine-untrusted (or -2, -3 … if that exists) in the same directory. The directory is
// reached from ROOT without following any symlink, so a tree changed since the walk cannot redirect the rename.
sys::Status rename_aside(const GitFinding& f) {
  sys::UniqueFd root(::open(f.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return sys::errno_error(fmt::format("open `{}`", f.root));
  auto slash = f.rel.rfind('/');
  std::string parent = slash == std::string::npos ? "." : f.rel.substr(0, slash);
  std::string name = slash == std::string::npos ? f.rel : f.rel.substr(slash + 1);
  sys::UniqueFd dir(sys::openat2(root.get(), parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                                 sys::kResolveBeneath | sys::kResolveNoSymlinks | sys::kResolveNoMagicLinks));
  if (!dir.valid()) return sys::errno_error("open its directory");
  for (int i = 1; i < 100; ++i) {
    auto aside = name + kSetAsideSuffix + (i == 1 ? "" : fmt::format("-{}", i));
    if (::renameat2(dir.get(), name.c_str(), dir.get(), aside.c_str(), RENAME_NOREPLACE) == 0) return sys::ok_status();
    if (errno != EEXIST) return sys::errno_error("rename");
  }
  return sys::plain_error("rename: too many earlier set-aside copies beside it");
}

// `git ls-files -s` of one git dir's index, gitlinks only (mode 160000). The repository's settings cannot make it
// run anything (host_git), and neither can the system's or the user's (not read).
std::vector<std::string> list_gitlinks(const std::string& git_dir, const std::string& work_tree) {
  auto out = run_captured(host_git({"--git-dir=" + git_dir, "--work-tree=" + work_tree, "ls-files", "-s", "-z"}), "/",
                          {"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"});
  std::vector<std::string> links;
  if (!out) return links;
  for (std::size_t pos = 0; pos < out->size();) {
    auto end = out->find('\0', pos);
    if (end == std::string::npos) end = out->size();
    std::string_view line(out->data() + pos, end - pos);
    if (auto tab = line.find('\t'); line.starts_with("160000 ") && tab != std::string_view::npos)
      links.emplace_back(line.substr(tab + 1));
    pos = end + 1;
  }
  return links;
}

GitCheckRequest git_check_request(const GitCheckScope& s) {
  GitCheckRequest r;
  r.since = s.since;
  if (!s.workspace.empty()) {
    // The cache the scan at start wrote: only what changed during the run is listed again.
    auto cache_at = reopen_scan_cache({s.cache_dir, s.cache_name});
    auto cache = load_scan_cache(cache_at, s.workspace);
    auto scan = scan_workspace_secrets(s.workspace, {}, &cache);
    save_scan_cache(cache, cache_at);
    r.workspace = s.workspace;
    r.places = std::move(scan.git);
    r.places_incomplete = scan.truncated;
    r.gitlinks = list_gitlinks;
  }
  r.trees = s.trees;
  if (!s.common_dir.empty()) r.git_dirs.push_back(s.common_dir);
  r.read_only = s.read_only;
  return r;
}

// ---- checks left pending by a run that did not reach its end ----

// Records of pending checks live in the scan cache's directory: like the cache, only where no sandbox can write
// (a forged record would have a later confine rename files of its choosing), reached without a link, the caller's.
constexpr std::string_view kPendingPrefix = "pending-git-check.";

// A process's start time (clock ticks since boot, /proc/PID/stat field 22): with the pid, it names one process
// for good, even after the pid is reused.
std::uint64_t start_time_of(pid_t pid) {
  auto read = read_text_file("process status", fmt::format("/proc/{}/stat", pid));
  if (!read) return 0;
  const auto& text = *read;
  auto paren = text.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  return 0;
}

nlohmann::json to_json(const GitCheckScope& s) {
  return {{"workspace", s.workspace}, {"cache_dir", s.cache_dir}, {"cache_name", s.cache_name}, {"trees", s.trees}, {"common_dir", s.common_dir},
          {"read_only", s.read_only}, {"since", {s.since.tv_sec, s.since.tv_nsec}}};
}

std::optional<GitCheckScope> from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  try {
    GitCheckScope s;
    s.workspace = j.at("workspace").get<std::string>();
    s.cache_dir = j.at("cache_dir").get<std::string>();
    s.cache_name = j.at("cache_name").get<std::string>();
    s.trees = j.at("trees").get<std::vector<std::string>>();
    s.common_dir = j.at("common_dir").get<std::string>();
    s.read_only = j.at("read_only").get<std::vector<std::string>>();
    s.since.tv_sec = j.at("since").at(0).get<std::time_t>();
    s.since.tv_nsec = j.at("since").at(1).get<long>();
    return s;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}


}  // namespace

GitCheckScope git_check_scope(const Policy& p, const GitLayout& git, bool mounts, std::timespec since) {
  GitCheckScope s;
  if (!p.fs.workspace_readonly) s.workspace = p.fs.workspace;
  auto cache = scan_cache_place(p);
  s.cache_dir = cache.dir;
  s.cache_name = cache.name;
  for (const auto& b : p.fs.binds)
    if (b.writable && !b.is_file) s.trees.push_back(b.source);
  s.common_dir = git.common_dir;
  s.since = since;
  if (!mounts) return s;
  // Exactly what make_plan binds read-only: the workspace's own hooks and config when they existed, or a linked
  // worktree's .git file and its repository's hooks and config (bound where they exist).
  auto ws_git = p.fs.workspace + "/.git";
  if (git.dir && git.hooks) s.read_only.push_back(ws_git + "/hooks");
  if (git.dir && git.config) s.read_only.push_back(ws_git + "/config");
  if (!git.common_dir.empty()) {
    s.read_only.push_back(ws_git);
    struct stat st {};
    for (const char* leaf : {"/hooks", "/config"})
      if (::lstat((git.common_dir + leaf).c_str(), &st) == 0) s.read_only.push_back(git.common_dir + leaf);
  }
  return s;
}

PendingGitCheck::PendingGitCheck(const GitCheckScope& scope) {
  auto at = reopen_scan_cache({scope.cache_dir, scope.cache_name});
  if (!at.dir.valid()) return;  // no place out of the sandbox's reach: a killed run is not checked later
  auto name = fmt::format("{}{}-{}.json", kPendingPrefix, ::getpid(), start_time_of(::getpid()));
  sys::UniqueFd fd(::openat(at.dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  auto text = to_json(scope).dump() + "\n";
  if (!fd.valid() || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) return;
  dir_ = std::move(at.dir);
  name_ = std::move(name);
}

PendingGitCheck::~PendingGitCheck() {
  if (dir_.valid()) ::unlinkat(dir_.get(), name_.c_str(), 0);
}

void finish_interrupted_git_checks(const Policy& p) {
  auto at = reopen_scan_cache(scan_cache_place(p));
  if (!at.dir.valid()) return;
  sys::UniqueFd listable(::openat(at.dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::unique_ptr<DIR, int (*)(DIR*)> d(listable.valid() ? ::fdopendir(listable.get()) : nullptr, ::closedir);
  if (!d) return;
  [[maybe_unused]] int owned_by_dir = listable.release();  // closedir closes it
  while (auto* e = ::readdir(d.get())) {
    std::string name = e->d_name;
    long long pid = 0;
    unsigned long long started = 0;
    if (!name.starts_with(kPendingPrefix) ||
        std::sscanf(name.c_str() + kPendingPrefix.size(), "%lld-%llu.json", &pid, &started) != 2 || pid <= 0)
      continue;
    if (start_time_of(static_cast<pid_t>(pid)) == started) continue;  // that confine is still running
    auto fd = sys::open_owned_file_for_reading(at.dir.get(), name);
    std::string text(64 * 1024, '\0');
    auto n = fd.valid() ? ::read(fd.get(), text.data(), text.size()) : -1;
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    if (auto scope = from_json(text)) {
      log::warn("a run in {} ended before confine could check what it left for git (confine was killed): "
                "checking now", scope->workspace.empty() ? scope->common_dir : scope->workspace);
      report_git_set_aside(set_aside_untrusted_git_state(*scope));
    }
    ::unlinkat(at.dir.get(), name.c_str(), 0);
  }
}

GitSetAside set_aside_untrusted_git_state(const GitCheckScope& scope) {
  auto request = git_check_request(scope);
  auto check = find_untrusted_git_state(request);
  GitSetAside out;
  out.incomplete = check.incomplete || request.places_incomplete;
  for (const auto& f : check.untrusted) {
    auto path = f.root + "/" + f.rel;
    if (auto s = rename_aside(f); !s) out.not_moved.push_back(fmt::format("{}: {}", path, s.error().message()));
    else out.moved.push_back(path);
  }
  return out;
}

std::string report_git_set_aside(const GitSetAside& outcome) {
  for (const auto& path : outcome.moved)
    log::warn("set aside {} as {}{}: written during the run, git on this machine would have run or followed it",
              path, path.substr(path.rfind('/') + 1), kSetAsideSuffix);
  for (const auto& what : outcome.not_moved) log::error("could not set aside {} — do not run git there before looking at it", what);
  if (!outcome.moved.empty())
    log::warn("look at what was set aside before you rename any of it back (git config -f FILE -l lists a config)");
  if (outcome.incomplete)
    log::warn("the check for git files written during the run stopped at its limit; run git in this workspace only "
              "after looking for new .git entries, configs and hooks yourself");
  if (outcome.moved.empty() && outcome.not_moved.empty() && !outcome.incomplete) return {};
  std::string moved, failed;
  for (const auto& m : outcome.moved) moved += (moved.empty() ? "" : ",") + json_string(m);
  for (const auto& m : outcome.not_moved) failed += (failed.empty() ? "" : ",") + json_string(m);
  return fmt::format(R"({{"event":"git","set_aside":[{}],"not_set_aside":[{}],"incomplete":{}}})" "\n", moved, failed,
                     outcome.incomplete);
}

std::timespec file_clock_now() {
  std::timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return now;
}

}  // namespace confine::run
