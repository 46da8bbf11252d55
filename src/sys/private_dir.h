// A directory of one run's own on the host: in fallback mode (no mount namespace) the command's $HOME and
// $TMPDIR. Its real home is unreadable there (Landlock) and /tmp is everyone's, so it gets these instead.
// The directory is a new name made by mkdtemp(3) in /tmp (mkdir never follows a link, and /tmp's sticky bit
// keeps other users from renaming it away), checked to be the caller's own once opened, and handed to the uid
// the command runs as. Removing it never follows a link the command planted inside: each name is unlinked as
// itself, and a directory is entered only by an fd opened with O_NOFOLLOW from its parent's fd.
#pragma once

#include <sys/types.h>

#include <string>

#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::sys {

class PrivateDir {
 public:
  // Makes `path` (as choose_private_dir named it) with `home` and `tmp` in it, for the command's `uid`/`gid`.
  // A name that exists already is refused, whoever made it: the directory is always one confine made.
  static Result<PrivateDir> make(const std::string& path, uid_t uid, gid_t gid);

  PrivateDir(PrivateDir&&) = default;
  PrivateDir& operator=(PrivateDir&&) = delete;
  ~PrivateDir() { remove(); }

  [[nodiscard]] const std::string& path() const { return path_; }

  // Removes the directory and everything in it (once; later calls do nothing). False when something is left:
  // a tree deeper than confine walks, or a name the command keeps re-creating.
  bool remove();

 private:
  PrivateDir(std::string path, std::string name, UniqueFd base, UniqueFd dir)
      : path_(std::move(path)), name_(std::move(name)), base_(std::move(base)), dir_(std::move(dir)) {}

  std::string path_;
  std::string name_;  // in base_
  UniqueFd base_;     // the directory it was made in
  UniqueFd dir_;      // the directory itself (O_RDONLY), as made
};

// Where a run's private directories are made, and the name `explain` shows for the one a run would make.
inline constexpr const char* kPrivateDirBase = "/tmp";
inline constexpr const char* kPrivateDirExample = "/tmp/confine-XXXXXX";

// A name for a run's private directory in `base` (`base`/confine-XXXXXX, six random letters or digits), chosen
// before it is made: the plan names the command's $HOME and $TMPDIR by it.
std::string choose_private_dir(const std::string& base);

// The command's $HOME and $TMPDIR in the private directory `dir`.
inline std::string private_home(const std::string& dir) { return dir + "/home"; }
inline std::string private_tmp(const std::string& dir) { return dir + "/tmp"; }

}  // namespace confine::sys
