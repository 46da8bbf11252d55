// Building the sandbox's filesystem view (child side). Every function is async-signal-safe: no allocation,
// no exceptions; failures return -1 with errno set, and the caller reports the step.
#pragma once

#include "core/plan.h"

namespace confine::mech {

struct MountState {
  int root_fd = -1;        // the new root (a tmpfs attached over kStagingDir until pivot_root)
  int* tree_fds = nullptr;  // one per plan mount: the detached source tree of a bind, an overlay's lower dir, or -1
  bool layers = false;      // the overlays' layers tmpfs is attached at kLayersDir
  int held_pty = -1;        // the sandbox's pty whose name the caller's terminal is bound over (MountOp::devpts_index)
  std::size_t content_files = 0;  // `file` mounts' and file masks' contents in the new root, kContentFileName + 0, 1, ...
  int mask_watch = -1;            // inotify: one watch per mask, in plan order (confine reads the opens)
  int confine_writes = -1;         // the writable end of the file mount confine keeps writing (the denial log)
  int tmpfs_roots[kMaxWatchedTmpfs];  // the writable tmpfs mounts, in plan order, handed to confine
  int tmpfs_count = 0;  // the writable end of the file mount confine keeps writing (MountOp::written_by_confine)
};

// Clones a bind's host source into a detached tree with its attributes set (before the new root hides it).
int clone_bind_source(const MountOp& op, int* tree_fd);
// Creates the new root tmpfs and attaches it over the staging directory.
int create_root(MountState& state);
// Attaches the tmpfs for the overlays' writable layers at kLayersDir in the new root.
int create_layers(MountState& state, const char* tmpfs_options);
// Performs one mount op inside the new root.
int attach_mount(const Plan& plan, std::size_t index, MountState& state);
// pivot_root into the new root and detach the old one.
int pivot_into_root(MountState& state);
// Removes the staging leftovers (the content files, the layers tmpfs) and makes the root tmpfs itself read-only (its
// submounts keep their own modes).
int seal_root(const MountState& state);

// Attributes every bind gets: read-only if asked; never setuid; device nodes only where meant to be.
unsigned long long bind_attributes(const MountOp& op);

}  // namespace confine::mech
