// `confine learn`: the names the command looked up to read (see path_lookups_notified in core/connect_gate.h), as
// absolute paths in the sandbox's view, each written once to learn's file. The recorder decides nothing: every
// call runs as the command made it, and what the names mean is learn's to check on the host after the run.
#pragma once

#include <linux/seccomp.h>

#include <string>
#include <unordered_set>

namespace confine::run {

class LookupRecorder {
 public:
  // `listener`: the seccomp listener (borrowed); `out`: where each new name goes, NUL-terminated (borrowed; -1:
  // nowhere, the calls still run).
  LookupRecorder(int listener, int out) : listener_(listener), out_(out) {}

  // True when `request` is a path lookup; it is then recorded and let run.
  bool take(const struct seccomp_notif& request);

 private:
  int listener_;
  int out_;
  std::unordered_set<std::string> seen_;
};

}  // namespace confine::run
