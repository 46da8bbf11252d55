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
#include <sys/random.h>

#include "core/report.h"
#include "core/resolve.h"
#include "core/secret_scan.h"
#include "run/git.h"
#include "run/scan_cache.h"
#include "sys/held_path.h"
#include "sys/log.h"
#include "sys/owned_files.h"
#include "sys/syscalls.h"
#include "sys/unique_fd.h"
#include "sys/user_files.h"

namespace confine::run {
namespace {

// Renames ROOT/REL to REL.confine-untrusted-XXXXXX in the same directory, the X's random, so no name planted
// beforehand can stand in the way. The directory is reached from ROOT without following any link, so a tree
// changed since the walk cannot redirect the rename.
sys::Result<std::string> rename_aside(const GitFinding& f) {
  auto held = sys::hold_path("open", f.root, sys::caller_trust());
  if (!held) return held.error();
  const sys::UniqueFd& root = *held->fd;
  auto slash = f.rel.rfind('/');
  std::string parent = slash == std::string::npos ? "." : f.rel.substr(0, slash);
  std::string name = slash == std::string::npos ? f.rel : f.rel.substr(slash + 1);
  sys::UniqueFd dir(sys::openat2(root.get(), parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                                 sys::kResolveBeneath | sys::kResolveNoSymlinks | sys::kResolveNoMagicLinks));
  if (!dir.valid()) return sys::errno_error("open its directory");
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::uint64_t random = 0;
    if (::getrandom(&random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) return sys::errno_error("getrandom");
    auto aside = fmt::format("{}{}-{:06x}", name, kSetAsideSuffix, random & 0xffffff);
    if (::renameat2(dir.get(), name.c_str(), dir.get(), aside.c_str(), RENAME_NOREPLACE) == 0) return aside;
    if (errno != EEXIST) return sys::errno_error("rename");
  }
  return sys::plain_error("rename: no free name beside it");
}

// The scan of every directory of one tree (dependency trees too: git finds a repository wherever it is), through
// the start-up scan's cache (`kept`, or its file when the start was in another confine): only directories changed
// since are listed again.
GitCheckTree scan_tree(const std::string& tree, const std::string& cache_dir, KeptScanCache* kept) {
  KeptScanCache loaded;
  if (kept == nullptr) {
    loaded.at = reopen_scan_cache({cache_dir, scan_cache_name(tree)});
    loaded.cache = load_scan_cache(loaded.at, tree, loaded.limits);
    kept = &loaded;
  }
  // The tree's owner may have renamed a directory on its path since the run began: resolve it afresh, by the
  // rule of the start (sys/held_path.h), and walk what that gives.
  auto held = sys::hold_path("git check", tree, sys::caller_trust());
  if (!held) {
    log::warn("{}: not checked for git state", held.error().message());
    return {tree, {}, {}, true};
  }
  auto scan = scan_workspace_secrets(tree, kept->limits, &kept->cache, held->fd->get());
  save_scan_cache(kept->cache, kept->at);
  return {tree, std::move(scan.git), std::move(scan.unreadable), scan.truncated};
}

GitCheckRequest git_check_request(const GitCheckScope& s, KeptScanCaches* kept) {
  GitCheckRequest r;
  r.since = s.since;
  for (const auto& tree : s.trees) {
    KeptScanCache* same = nullptr;
    if (kept != nullptr)
      for (auto& k : *kept)
        if (k.tree == tree) same = &k;
    r.trees.push_back(scan_tree(tree, s.cache_dir, same));
  }
  if (!s.common_dir.empty()) r.git_dirs.push_back(s.common_dir);
  r.configs = s.configs;
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
  auto read = sys::read_user_file("process status", fmt::format("/proc/{}/stat", pid), 64 << 10);
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
  return {{"trees", s.trees},         {"cache_dir", s.cache_dir}, {"common_dir", s.common_dir},
          {"configs", s.configs},     {"read_only", s.read_only}, {"since", {s.since.tv_sec, s.since.tv_nsec}}};
}

std::optional<GitCheckScope> from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  try {
    GitCheckScope s;
    s.trees = j.at("trees").get<std::vector<std::string>>();
    s.cache_dir = j.at("cache_dir").get<std::string>();
    s.common_dir = j.at("common_dir").get<std::string>();
    s.configs = j.at("configs").get<std::vector<std::string>>();
    s.read_only = j.at("read_only").get<std::vector<std::string>>();
    s.since.tv_sec = j.at("since").at(0).get<std::time_t>();
    s.since.tv_nsec = j.at("since").at(1).get<long>();
    return s;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}


}  // namespace

PendingGitCheck::PendingGitCheck(const GitCheckScope& scope) {
  auto at = reopen_scan_cache({scope.cache_dir, {}});
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

void finish_interrupted_git_checks(const std::string& dir) {
  // Opened, not made: where it is missing, no run noted a check there.
  auto at = sys::open_owned_directory("the workspace scan cache", dir);
  if (!at) return;
  sys::UniqueFd listable(::openat(at->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
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
    auto fd = sys::open_owned_file_for_reading(at->get(), name);
    std::string text(64 * 1024, '\0');
    auto n = fd.valid() ? ::read(fd.get(), text.data(), text.size()) : -1;
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    if (auto scope = from_json(text)) {
      log::warn("a run in {} ended before confine could check what it left for git (confine was killed): "
                "checking now", scope->trees.empty() ? scope->common_dir : scope->trees.front());
      report_git_set_aside(set_aside_untrusted_git_state(*scope));
    }
    ::unlinkat(at->get(), name.c_str(), 0);
  }
}

GitSetAside set_aside_untrusted_git_state(const GitCheckScope& scope, KeptScanCaches* kept) {
  auto request = git_check_request(scope, kept);
  auto check = find_untrusted_git_state(request);
  GitSetAside out;
  out.incomplete = check.incomplete;
  out.unreadable = std::move(check.unreadable);
  for (const auto& f : check.untrusted) {
    auto path = f.root + "/" + f.rel;
    auto aside = rename_aside(f);
    if (!aside) out.not_moved.push_back(fmt::format("{} ({}): {}", path, describe(f.hazard), aside.error().message()));
    else out.moved.push_back({path, *aside, describe(f.hazard)});
  }
  return out;
}

void warn_unreadable(const std::vector<std::string>& dirs, std::string_view what_then) {
  constexpr std::size_t kNamed = 10;
  for (std::size_t i = 0; i < dirs.size() && i < kNamed; ++i) log::warn("could not read {}: {}", dirs[i], what_then);
  if (dirs.size() > kNamed) log::warn("… and {} more directories that could not be read", dirs.size() - kNamed);
}

std::string report_git_set_aside(const GitSetAside& outcome) {
  for (const auto& m : outcome.moved) log::warn("set aside {} as {}: {}", m.path, m.renamed_to, m.what);
  for (const auto& what : outcome.not_moved) log::error("could not set aside {}: do not run git there before looking at it", what);
  if (!outcome.moved.empty())
    log::warn("look at what was set aside before you rename any of it back (git config -f FILE -l lists a config)");
  warn_unreadable(outcome.unreadable, "a repository below it was not checked, and git can still enter it; look there "
                                     "before you run git below it");
  if (outcome.incomplete)
    log::warn("the check for git files written during the run stopped at a limit (64 levels, 1 000 000 entries); "
              "run git in this workspace only after looking for new .git entries, configs and hooks yourself");
  if (outcome.moved.empty() && outcome.not_moved.empty() && outcome.unreadable.empty() && !outcome.incomplete) return {};
  std::string moved, failed;
  for (const auto& m : outcome.moved) moved += (moved.empty() ? "" : ",") + json_string(m.path);
  for (const auto& m : outcome.not_moved) failed += (failed.empty() ? "" : ",") + json_string(m);
  std::string unreadable;
  for (const auto& u : outcome.unreadable) unreadable += (unreadable.empty() ? "" : ",") + json_string(u);
  return fmt::format(R"({{"event":"git","set_aside":[{}],"not_set_aside":[{}],"unreadable":[{}],"incomplete":{}}})" "\n",
                     moved, failed, unreadable, outcome.incomplete);
}

std::timespec file_clock_now() {
  std::timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return now;
}

}  // namespace confine::run
