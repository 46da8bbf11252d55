// The sandbox side: pid 1 of the new pid namespace builds the sandbox step by step, spawns the command, then
// stays as a tiny init that forwards signals and reaps. Never throws, never allocates after clone.
#pragma once

#include <signal.h>

#include "core/plan.h"
#include "mech/caps.h"

namespace confine::run {

// Everything the child needs, prepared by the parent before clone (the child only reads it).
struct ChildContext {
  const Plan* plan = nullptr;
  int channel = -1;            // child end of the channel
  int* tree_fds = nullptr;     // one slot per plan mount
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  mech::CapabilityDrop caps;
  sigset_t original_mask;      // what the command starts with
  const int* forwarded = nullptr;  // signals pid 1 forwards to the command
  int forwarded_count = 0;
};

// Notes where the kernel laid out confine's own command line and environment; main calls it before anything
// can move them. pid 1, a copy of confine, erases both, so /proc/1/cmdline inside shows neither.
void remember_caller_strings(char** argv, char** envp);

[[noreturn]] void run_sandbox_init(ChildContext& ctx);

}  // namespace confine::run
