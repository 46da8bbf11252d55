#include "run/checkpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <functional>
#include <vector>

#include "run/git.h"
#include "sys/log.h"

namespace confine::run {
namespace {

std::string store_for(const std::string& workspace, const std::string& home) {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  std::string base = xdg != nullptr && xdg[0] == '/' ? std::string(xdg) : home + "/.local/share";
  return fmt::format("{}/confine/checkpoints/{:016x}.git", base, std::hash<std::string>{}(workspace));
}

// git with the store as its repository and the workspace as its work tree; nothing of the workspace's own
// configuration can run code here: the store's config is confine's, no system or global config is read (no
// filter, template or other program of theirs), and host_git overrides whatever could still name a program.
std::vector<std::string> git_argv(const std::string& store, const std::string& workspace, std::vector<std::string> args) {
  args.insert(args.begin(), {"--git-dir=" + store, "--work-tree=" + workspace, "-c", "user.name=confine", "-c",
                             "user.email=confine@localhost"});
  return host_git(std::move(args));
}

// The store's own config only (see git_argv).
const std::vector<std::string> kStoreOnlyConfig = {"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"};

std::string utc_stamp() {
  std::time_t now = std::time(nullptr);
  struct tm t {};
  ::gmtime_r(&now, &t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &t);
  return buf;
}

void make_parents(const std::string& path) {
  for (auto pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1))
    ::mkdir(path.substr(0, pos).c_str(), 0700);
}

std::string restore_command(const std::string& store, const std::string& workspace, const std::string& ref) {
  return fmt::format("git --git-dir={} --work-tree={} checkout -f {} -- .", store, workspace, ref);
}

}  // namespace

sys::Result<std::string> make_checkpoint(const std::string& workspace, const std::string& home) {
  if (home.empty()) return sys::plain_error("--checkpoint: no $HOME to keep checkpoints in");
  auto store = store_for(workspace, home);
  struct stat st {};
  if (::stat(store.c_str(), &st) != 0) {
    make_parents(store);
    if (auto r = run_captured(host_git({"init", "-q", "--bare", store}), "/", kStoreOnlyConfig); !r) return r.error().wrap("--checkpoint");
  }
  // Every file, untracked ones too (what .gitignore ignores stays out: build trees, dependencies).
  if (auto r = run_captured(git_argv(store, workspace, {"add", "-A", "."}), workspace, kStoreOnlyConfig); !r) return r.error().wrap("--checkpoint");
  auto stamp = utc_stamp();
  auto msg = "confine checkpoint " + stamp + " of " + workspace;
  if (auto r = run_captured(git_argv(store, workspace, {"commit", "-q", "--allow-empty", "--no-verify", "-m", msg}), workspace, kStoreOnlyConfig); !r)
    return r.error().wrap("--checkpoint");
  auto ref = "refs/confine/checkpoints/" + stamp;
  if (auto r = run_captured(git_argv(store, workspace, {"update-ref", ref, "HEAD"}), workspace, kStoreOnlyConfig); !r) return r.error().wrap("--checkpoint");
  return restore_command(store, workspace, ref);
}

int list_checkpoints(const std::string& workspace, const std::string& home) {
  auto store = store_for(workspace, home);
  struct stat st {};
  if (::stat(store.c_str(), &st) != 0) {
    std::printf("no checkpoints of %s (make one with confine --checkpoint)\n", workspace.c_str());
    return 0;
  }
  auto list = run_captured(git_argv(store, workspace, {"for-each-ref", "--sort=-refname", "--format=%(refname) %(objectname:short)",
                                                       "refs/confine/checkpoints/"}), workspace, kStoreOnlyConfig);
  if (!list) {
    log::error("{}", list.error().message());
    return 125;
  }
  std::printf("checkpoints of %s (store %s):\n%s\n", workspace.c_str(), store.c_str(), list->c_str());
  std::printf("restore one (files made since stay; `git clean` removes them):\n  %s\n",
              restore_command(store, workspace, "<ref>").c_str());
  return 0;
}

}  // namespace confine::run
