// HeldPath: a path the caller named (the workspace, a bind source), resolved once, component by component, and
// held open. From then on confine uses the descriptor, never the name: whoever can rename a directory on the way
// (the owner of a home directory, say) cannot make a later step reach something else.
//
// Run by root, confine also refuses a path another user could have redirected: every directory it crosses and
// every symbolic link it follows must belong to root or to the owner of what the path ends at. So
// `/home/alice/proj`, alice's own directory, is fine; `/home/alice/link -> /srv/db` (root's) and
// `/home/alice/rootdir` (made by root in alice's home, which she may rename away and replace) are refused. The rule
// is the one OpenSSH's StrictModes follows. Run by anyone else, confine only has that user's own access, so
// symbolic links are followed as usual.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::sys {

struct HeldPath {
  std::string path;                      // absolute, with every symbolic link resolved (what realpath gives)
  std::shared_ptr<const UniqueFd> fd;    // O_PATH, on what `path` named when it was resolved
  struct stat st {};                     // of fd
};

enum class PathTrust {
  follow_links,    // the caller's own access: symbolic links are followed as the kernel would
  owners_checked,  // run by root: every directory and link on the way belongs to root or the final owner
};

// Resolves the absolute `path`; `what` names it in errors ("workspace", "--ro").
Result<HeldPath> hold_path(const std::string& what, const std::string& path, PathTrust trust);

// The trust hold_path needs for a path named to this process: owners_checked when it runs as root.
PathTrust caller_trust();

}  // namespace confine::sys
