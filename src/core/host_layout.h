// Read-only discovery of the host facts the plan depends on: which system directories exist (and which are
// merged-/usr symlinks), and the workspace's git layout. Done once in the parent, before clone.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

// The host's system directories. The ones `shown_inside` are bound read-only in the sandbox (the others it
// replaces with its own, or leaves out); as root, none may be the workspace or a --rw bind (resolve.cc).
struct SystemDir {
  std::string_view path;
  bool shown_inside = false;
  bool only_when_root_owned = false;  // /srv: a site directory that a user owns is that user's to hand out
  std::string_view except;            // a directory below that is no system one (/var/tmp); empty: none
};
std::span<const SystemDir> system_dirs();

struct SystemEntry {
  std::string path;         // e.g. "/usr", inside the sandbox
  std::string link_target;  // non-empty when the entry is a symlink (e.g. "/bin" -> "usr/bin")
  std::string source;       // the host directory shown there: `path` itself, or a directory of an image
};

// The host directories shown read-only inside. Everything else at the top level (/home, /root, /mnt, /media,
// /srv's neighbours, custom dirs such as /work) stays invisible.
std::vector<SystemEntry> discover_system_entries();

// `confine run DIR`: every top-level directory and symlink of the image, except the ones the sandbox makes
// itself (/dev, /proc, /sys, /tmp, /run): the image replaces the host's system directories.
std::vector<SystemEntry> discover_image_entries(const std::string& rootfs);

// With --net host, DNS must keep working: where /etc/resolv.conf links into /run (systemd-resolved), the
// directory it points into, to bind read-only over the private /run. Empty otherwise.
std::string discover_resolver_dir();

// The terminal on stdin/stdout/stderr, as a path on the host's devpts ("/dev/pts/3"), or empty. The sandbox has
// its own devpts, so this one is bound into it at its own name (for ttyname() and `tty`) and at /dev/console.
std::string discover_terminal();

struct GitLayout {
  bool dir = false;     // <workspace>/.git is a directory
  bool hooks = false;   // <workspace>/.git/hooks is a directory
  bool config = false;  // <workspace>/.git/config is a regular file
  bool file = false;    // <workspace>/.git is a file: a linked worktree (`gitdir: …`)
  // A linked worktree's repository (the git dir its objects, refs, hooks and config live in), only when that
  // repository lists this very worktree back: a planted .git file cannot point confine at another repository.
  std::string common_dir;
  bool common_hooks = false;   // common_dir/hooks exists (any kind)
  bool common_config = false;  // common_dir/config exists (any kind)
};

GitLayout discover_git_layout(const std::string& workspace);

}  // namespace confine
