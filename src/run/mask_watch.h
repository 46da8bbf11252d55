// Records each open of a masked name (a secret file or directory the sandbox sees as empty): pid 1 watches every
// mask with inotify, in plan order, and hands the watch to confine, which reads it while the run goes on (in the
// supervisor's loop, through `watches`).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/plan.h"
#include "run/fd_watch.h"
#include "run/refusal_log.h"
#include "sys/unique_fd.h"

namespace confine::run {

// Each mask's path inside, in plan order: the n-th is the one inotify's watch n+1 is on.
std::vector<std::string> mask_paths(const Plan& plan);

class MaskWatch {
 public:
  MaskWatch(FdWatches& watches, sys::UniqueFd watch, std::vector<std::string> paths, RefusalLog& log);
  MaskWatch(const MaskWatch&) = delete;
  MaskWatch& operator=(const MaskWatch&) = delete;
  // Records what is still queued (the last opens before the sandbox ended), then stops.
  ~MaskWatch();

 private:
  struct State;
  FdWatches& watches_;
  std::unique_ptr<State> state_;
};

}  // namespace confine::run
