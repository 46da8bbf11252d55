#include "run/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <functional>
#include <vector>

#include "core/resolve.h"
#include "run/git.h"
#include "sys/log.h"
#include "sys/owned_files.h"

namespace confine::run {
namespace {

std::string store_for(const std::string& workspace, const std::string& home) {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  std::string base = xdg != nullptr && xdg[0] == '/' ? std::string(xdg) : home + "/.local/share";
  return normalize_absolute(fmt::format("{}/confine/checkpoints/{:016x}.git", base, std::hash<std::string>{}(workspace)));
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

// The store is confine's own and out of the sandbox's reach, made (and `git init`ed) if missing: a store that
// the sandbox could write would hand it the checkpoints, and the configuration confine's own git reads there.
sys::Status prepare_store(const Policy& p, const std::string& store) {
  // make_owned_directory follows no link, so the store's lexical path is where it is.
  if (sandbox_can_write(p, store))
    return sys::plain_error(fmt::format("--checkpoint: the store `{}` would be writable inside the sandbox; set "
                                        "XDG_DATA_HOME to a directory outside the workspace and the --rw binds", store));
  auto dir = sys::make_owned_directory("--checkpoint store", store);
  if (!dir) return dir.error();
  struct stat head {};
  if (::fstatat(dir->get(), "HEAD", &head, AT_SYMLINK_NOFOLLOW) == 0) return sys::ok_status();
  if (auto r = run_captured(host_git({"init", "-q", "--bare", store}), "/", kStoreOnlyConfig); !r) return r.error().wrap("--checkpoint");
  return sys::ok_status();
}

std::string restore_command(const std::string& store, const std::string& workspace, const std::string& ref) {
  return fmt::format("git --git-dir={} --work-tree={} checkout -f {} -- .", store, workspace, ref);
}

}  // namespace

sys::Result<std::string> make_checkpoint(const Policy& p, const std::string& home) {
  if (home.empty()) return sys::plain_error("--checkpoint: no $HOME to keep checkpoints in");
  const auto& workspace = p.fs.workspace;
  auto store = store_for(workspace, home);
  if (auto s = prepare_store(p, store); !s) return s.error();
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
