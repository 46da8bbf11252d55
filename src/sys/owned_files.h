// The files and directories confine itself writes on the host: the --report and --net-log files, the scan cache,
// the checkpoint store, the empty .git/hooks it creates. An earlier run's sandbox may have planted any of those
// names, or a directory on the way to them, as a symbolic link to a host file (report.json -> /etc/shadow,
// sub -> /etc) or as a second name (a hard link) of one, for the next run, perhaps as root, to write through.
// So no symbolic link is ever followed on these paths (openat2 RESOLVE_NO_SYMLINKS, every component), and what
// confine writes to must be the caller's own: a regular file with a single name, or a directory, owned by the
// effective uid. Each refusal is one line: the path, what is wrong with it, and what to do.
#pragma once

#include <sys/types.h>

#include <string>

#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::sys {

enum class FileWrite {
  truncate,  // emptied once it is known to be the caller's own (never by O_TRUNC, which acts before any check)
  append,
};

// Opens the absolute `path` for writing (every write appends), creating it with `create_mode` if missing.
// `what` names the file in errors ("--report").
Result<UniqueFd> open_owned_file(const std::string& what, const std::string& path, FileWrite how, mode_t create_mode);

// Opens `name` in `dir` for reading only if it is a regular file of the caller's (not a link); an invalid fd
// (errno set) otherwise, including when it does not exist.
UniqueFd open_owned_file_for_reading(int dir, const std::string& name);

// The absolute directory `path` (an O_PATH fd), made 0700 with any missing parents; the last one must be the
// caller's own.
Result<UniqueFd> make_owned_directory(const std::string& what, const std::string& path);
// The same, made of nothing: a missing directory is an error (ENOENT).
Result<UniqueFd> open_owned_directory(const std::string& what, const std::string& path);

// An existing directory (an O_PATH fd) whoever owns it, reached without a symbolic link: where confine adds
// an entry of its own.
Result<UniqueFd> open_real_directory(const std::string& what, const std::string& path);

}  // namespace confine::sys
