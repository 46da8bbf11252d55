#include "run/git_check.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <fmt/format.h>

#include "core/report.h"
#include "core/secret_scan.h"
#include "run/git.h"
#include "run/scan_cache.h"
#include "sys/log.h"
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

GitCheckRequest git_check_request(const Policy& p, const GitLayout& git, bool mounts, std::timespec since) {
  GitCheckRequest r;
  r.since = since;
  if (!p.fs.workspace.empty() && !p.fs.workspace_readonly) {
    // The cache the scan at start wrote: only what changed during the run is listed again.
    auto cache = load_scan_cache(p.fs.workspace, p.fs.home);
    auto scan = scan_workspace_secrets(p.fs.workspace, {}, &cache);
    save_scan_cache(cache, p.fs.workspace, p.fs.home);
    r.workspace = p.fs.workspace;
    r.places = std::move(scan.git);
    r.places_incomplete = scan.truncated;
    r.gitlinks = list_gitlinks;
  }
  for (const auto& b : p.fs.binds)
    if (b.writable && !b.is_file) r.trees.push_back(b.source);
  if (!git.common_dir.empty()) r.git_dirs.push_back(git.common_dir);
  if (!mounts) return r;
  // The same paths make_plan binds read-only: the sandbox could not change them.
  auto git_dir = git.common_dir.empty() ? p.fs.workspace + "/.git" : git.common_dir;
  r.read_only = {git_dir + "/config", git_dir + "/hooks"};
  if (git.file) r.read_only.push_back(p.fs.workspace + "/.git");
  return r;
}

}  // namespace

GitSetAside set_aside_untrusted_git_state(const Policy& p, const GitLayout& git, bool mounts, std::timespec since) {
  auto request = git_check_request(p, git, mounts, since);
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
