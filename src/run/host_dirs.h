// The directories confine makes on the host before a run (ParentStepKind::make_host_dirs): git's hooks
// directory, which a read-only bind needs, and a profile's missing state or cache directories.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/plan.h"
#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::run {

// One directory confine made: the directory it was made in, held open, and the name and inode it was made as.
// Taken back through these, never by path: a process that renames a parent meanwhile, or swaps the name for a
// link, cannot point the removal at another directory.
struct MadeDirectory {
  sys::UniqueFd parent;
  std::string name;
  dev_t dev = 0;
  ino_t ino = 0;
};

// Makes `dir` where it is missing; the result: the directories it made, outermost first (none if it was there).
sys::Result<std::vector<MadeDirectory>> make_host_directory(const HostDirectory& dir);

// Removes the directories `made` (as make_host_directory returned them) that are still empty and still the ones
// made, innermost first: what a run that failed to start leaves of them. `made` is emptied.
void remove_made_directories(std::vector<MadeDirectory>& made);

}  // namespace confine::run
