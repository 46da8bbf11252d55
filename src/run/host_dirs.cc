#include "run/host_dirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>

#include "sys/log.h"
#include "sys/owned_files.h"
#include "sys/unique_fd.h"

namespace confine::run {
namespace {

// `name` in `parent`, just made by this run: held with what identifies it.
sys::Result<MadeDirectory> made_in(int parent, const std::string& name) {
  MadeDirectory made{sys::UniqueFd(::fcntl(parent, F_DUPFD_CLOEXEC, 3)), name};
  struct stat st {};
  if (!made.parent.valid() || ::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return sys::errno_error(fmt::format("holding the new directory `{}`", name));
  made.dev = st.st_dev;
  made.ino = st.st_ino;
  return made;
}

// A git dir with no hooks/ (a repository made by a tool that copies no templates, or one whose hooks the user
// deleted) would let the agent create one and plant a hook. It is created here, empty, as `git init` would have,
// so it can be bound read-only like any other; owned like the git dir, so the user's own git can add hooks later.
// Made and chowned through fds, never by path: a sandbox already running on this workspace may swap names.
sys::Result<std::vector<MadeDirectory>> make_hooks_dir(const std::string& hooks_path, const std::string& git_dir) {
  auto dir = sys::open_real_directory("git directory", git_dir);
  if (!dir) return dir.error();
  struct stat st {};
  if (::fstat(dir->get(), &st) != 0) return sys::errno_error(fmt::format("open `{}`", git_dir));
  if (::mkdirat(dir->get(), "hooks", 0755) != 0) {
    int err = errno;
    struct stat hooks {};
    bool a_directory = ::fstatat(dir->get(), "hooks", &hooks, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(hooks.st_mode);
    if (err == EEXIST && a_directory) return std::vector<MadeDirectory>{};
    if (err == EEXIST)
      return sys::plain_error(fmt::format("`{}` is not a directory (a symbolic link?); remove it, or pass "
                                          "--allow-git-config", hooks_path));
    errno = err;
    return sys::errno_error(fmt::format("creating an empty `{}` to make it read-only (create it yourself, or "
                                        "pass --allow-git-config to leave git's hooks writable)", hooks_path));
  }
  auto made = made_in(dir->get(), "hooks");
  if (!made) return made.error();
  std::vector<MadeDirectory> out;
  out.push_back(std::move(*made));
  sys::UniqueFd hooks(::openat(dir->get(), "hooks", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (::geteuid() == 0 && hooks.valid())
    [[maybe_unused]] auto rc = ::fchownat(hooks.get(), "", st.st_uid, st.st_gid, AT_EMPTY_PATH);
  log::info("created an empty {} so that it can be made read-only", hooks_path);
  return out;
}

// A profile's directory that does not exist yet (a state directory before the tool's first run, a new private
// cache), made so that what the sandbox writes there is kept. Only missing components are made, each 0700 and
// opened without following a symlink; as root, they belong to whoever owns $HOME (root's own home: root).
sys::Result<std::vector<MadeDirectory>> make_profile_dir(const std::string& path, const std::string& home) {
  struct stat owner {};
  bool chown_them = ::geteuid() == 0 && !home.empty() && ::stat(home.c_str(), &owner) == 0;
  sys::UniqueFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::vector<MadeDirectory> made;
  // A failure part way takes back what this call made: the caller learns only of a success.
  auto failed = [&](std::string what) {
    auto error = sys::errno_error(std::move(what));
    remove_made_directories(made);
    return error;
  };
  for (std::size_t start = 1; start < path.size();) {
    auto end = std::min(path.find('/', start), path.size());
    std::string name = path.substr(start, end - start);
    start = end + 1;
    // Components that exist are the user's (a symlinked ~/.cache is fine); below the first one made, none can be
    // a link.
    int flags = O_PATH | O_DIRECTORY | O_CLOEXEC | (made.empty() ? 0 : O_NOFOLLOW);
    sys::UniqueFd next(::openat(dir.get(), name.c_str(), flags));
    if (!next.valid() && errno == ENOENT) {
      // Made by another run meanwhile (EEXIST): not this run's to give away, nor to remove on a failed start.
      bool made_here = ::mkdirat(dir.get(), name.c_str(), 0700) == 0;
      if (!made_here && errno != EEXIST) return failed(fmt::format("creating the profile's directory `{}`", path));
      if (made_here) {
        auto held = made_in(dir.get(), name);
        if (!held) {
          remove_made_directories(made);
          return held.error();
        }
        made.push_back(std::move(*held));
      }
      if (made_here && chown_them &&
          ::fchownat(dir.get(), name.c_str(), owner.st_uid, owner.st_gid, AT_SYMLINK_NOFOLLOW) != 0)
        return failed(fmt::format("giving the new directory `{}` to $HOME's owner", path));
      next.reset(::openat(dir.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
    if (!next.valid()) return failed(fmt::format("the profile's directory `{}`", path));
    dir = std::move(next);
  }
  return made;
}

}  // namespace

sys::Result<std::vector<MadeDirectory>> make_host_directory(const HostDirectory& dir) {
  switch (dir.purpose) {
    case HostDirectory::Purpose::git_hooks: return make_hooks_dir(dir.path, dir.owned_like);
    case HostDirectory::Purpose::profile: return make_profile_dir(dir.path, dir.owned_like);
  }
  return sys::plain_error("unknown directory purpose");
}

void remove_made_directories(std::vector<MadeDirectory>& made) {
  // Only an empty directory is removed: what a user or the sandbox put there meanwhile stays, with its parents.
  // A name that no longer holds the directory made (renamed away, replaced) is left as it is.
  for (auto it = made.rbegin(); it != made.rend(); ++it) {
    struct stat st {};
    if (::fstatat(it->parent.get(), it->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == it->dev &&
        st.st_ino == it->ino)
      ::unlinkat(it->parent.get(), it->name.c_str(), AT_REMOVEDIR);
  }
  made.clear();
}

}  // namespace confine::run
