// --checkpoint: before the run, the whole workspace (.git and nested repositories with their own .git, ignored
// and untracked files, secrets too: it is your own data) is copied into a store of confine's own, outside the
// workspace and invisible in the sandbox, so an agent that deletes everything cannot touch the copy.
// `confine checkpoints restore` puts one back, and refuses to overwrite changes made after the run ended.
//
// The store, $XDG_DATA_HOME/confine/checkpoints/<hash of the workspace path>/:
//   <ID>/tree/       the copy (directories 0700, files 0600: owners, modes and times are in the manifest), but for
//                    the directories unchanged since the previous checkpoint (absent if nothing changed)
//   <ID>/shared      those directories, each with the id of the checkpoint whose tree holds it (NUL-separated
//                    pairs); that one may refer further for a part of it
//   <ID>/manifest    every saved name with its metadata in the workspace (see checkpoint_tree.h)
//   <ID>/skipped     the names not saved and why (NUL-separated pairs)
//   <ID>/excluded    the names not saved because they match an exclusion, with the pattern (the same format)
//   <ID>/summary     one line for `confine checkpoints list`
//   <ID>/info        JSON: the command the checkpoint preceded, the files and bytes it holds (written by confine,
//                    never by the sandbox; absent from checkpoints made before it was recorded)
//   state            how the workspace was when the last run with --checkpoint ended, or the last restore did
//                    (a manifest); absent while a run is going on
// ID is the UTC time, with -2, -3 … for a second one in the same second.
#pragma once

#include <string>

#include "core/plan.h"
#include "core/policy.h"
#include "sys/result.h"

namespace confine::run {

struct SavedCheckpoint {
  std::string id;
  std::string report;     // "checkpoint ID saved (…); to undo the run: confine checkpoints restore …"
  std::string not_saved;  // what was not saved and why, empty if everything was
};

// `data_home` below: where checkpoints are kept (checkpoints_data_home, core/resolve.h).

// Saves the workspace as a new checkpoint (the save_checkpoint step). Refused if the store is reached by a
// symbolic link; resolve refused a store within the sandbox's reach (the workspace, a --rw bind).
sys::Result<SavedCheckpoint> make_checkpoint(const Plan::CheckpointSave& save);

// Records how the run left the workspace: what `restore` compares against to tell the run's changes from
// changes made after it. Warns if it cannot (a restore then needs --force).
void record_run_end(const std::string& workspace, const std::string& data_home);

// The workspace whose checkpoints `dir` (an absolute path without links) belongs to: `dir`, or the nearest
// directory above it that has checkpoints, so that `confine checkpoints` works from a subdirectory. `dir` if none.
std::string checkpoint_workspace(const std::string& dir, const std::string& data_home);

// `confine checkpoints [list] [--json]`: the workspace's checkpoints, newest first, with the time, the command
// each preceded, its size and what it did not save, and how to restore one. 0, or 125 on error.
int list_checkpoints(const std::string& workspace, const std::string& data_home, bool json);

// `confine checkpoints rm ID|latest`: removes one checkpoint; what another refers to in it, or shares with it,
// moves to that one.
// An `id` that is not a checkpoint id of this workspace (`../x`, `/etc`) is refused. 0, or 125.
int remove_checkpoint(const std::string& workspace, const std::string& data_home, const std::string& id);

// `confine checkpoints prune [--keep N]`: removes all but the `keep` newest (as typed; empty: kDefaultKeep).
inline constexpr unsigned long kDefaultKeep = 10;
int prune_checkpoints(const std::string& workspace, const std::string& data_home, const std::string& keep);

// `confine checkpoints restore [ID|latest] [--force]`. Without `force`, refused (125, nothing changed) when the
// workspace is not as the last run with --checkpoint (or the last restore) left it. Every file the checkpoint did
// not save and that is gone now is named on stderr (even with -q). 0, or 125.
int restore_checkpoint(const std::string& workspace, const std::string& data_home, const std::string& id,
                       bool force);

}  // namespace confine::run
