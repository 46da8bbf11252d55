// After a run that could make user namespaces of its own (--allow-nested): what it left on the host that grants
// privilege to whoever runs it there — a setuid bit, a setgid bit with group execute, a file capability
// (security.capability). seccomp refuses every syscall that sets one, but an overlayfs the command mounts in its
// own namespace copies them from a lower file when it copies that file up (the kernel's own write, which no
// filter sees). Every such file written during the run loses them, as a chown takes them away; nothing else of it
// changes.
#pragma once

#include <ctime>
#include <string>
#include <vector>

namespace confine::run {

struct FilePrivilegesDropped {
  struct Dropped {
    std::string path;  // absolute
    std::string what;  // "the setuid bit and file capability"
  };
  std::vector<Dropped> dropped;
  std::vector<std::string> not_dropped;  // "WHAT of PATH: reason": they stay; the run fails (exit 125)
  std::vector<std::string> unreadable;   // directories nothing could be checked in
  bool incomplete = false;               // the walk hit a limit
};

// Walks each tree (absolute) without following a link and judges every regular file changed at or after `since`.
FilePrivilegesDropped drop_file_privileges(const std::vector<std::string>& trees, const std::timespec& since);

// Says what was dropped on stderr; returns the `"event":"file-privileges"` line for --report (empty when nothing
// was found).
std::string report_file_privileges(const FilePrivilegesDropped& outcome);

}  // namespace confine::run
