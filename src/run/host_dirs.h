// The directories confine makes on the host before a run (ParentStepKind::make_host_dirs): git's hooks
// directory, which a read-only bind needs, and a profile's missing state or cache directories.
#pragma once

#include <string>
#include <vector>

#include "core/plan.h"
#include "sys/result.h"

namespace confine::run {

// Makes `dir` where it is missing; the result: the directories it made, outermost first (none if it was there).
sys::Result<std::vector<std::string>> make_host_directory(const HostDirectory& dir);

// Removes the directories `made` (as make_host_directory returned them) that are still empty, innermost first:
// what a run that failed to start leaves of them.
void remove_made_directories(const std::vector<std::string>& made);

}  // namespace confine::run
