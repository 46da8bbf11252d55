// The files confine reads from places its user names: an OCI bundle's config.json, an image's etc/passwd,
// --env-file, profiles (--profile FILE and the profile directories), --seccomp, the files a profile copies in.
// The reading counterpart of owned_files.h. Whoever can change what such a path names may have put a symbolic
// link there (config.json -> /root/secret), or a FIFO that would hang confine forever. So the file itself is
// never reached through a link, must be a regular file, and is bounded in size; and when confine runs as root,
// it is read with the permissions of the one user who can change what the path names, so that user cannot make
// confine read for them anything they could not read themselves. Each refusal is one line naming the file.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "sys/result.h"

namespace confine::sys {

inline constexpr std::size_t kMiB = std::size_t{1} << 20;

// The bytes of the regular file at `path` (a relative one is taken from the current directory), at most
// `max_bytes` of them. `what` names it in errors
// ("--env-file"): "WHAT `PATH` is a symbolic link; ...". A missing file is an Error with err == ENOENT.
Result<std::string> read_user_file(const std::string& what, const std::string& path, std::size_t max_bytes);

// Who can change what `path` names, as root sees it: every directory looked in on the way (links followed, as
// the kernel would) and every name found there. `reader` is the one user other than root among their owners,
// or 0 when there is none; `refusal` says why no single user will do (two users, or a directory that a whole
// group or everyone may change); `missing` when a name on the way does not exist (then nothing is read, refusal
// or not). Exposed for tests.
struct PathControl {
  uid_t reader = 0;
  std::string reader_because;  // the name whose owner made `reader` what it is
  std::string refusal;
  bool missing = false;
};
PathControl who_controls(const std::string& path);

}  // namespace confine::sys
