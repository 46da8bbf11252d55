// The parent's process work for one sandbox, one method per parent step (the order is the Plan's:
// core/plan.cc, parent_steps_for): block the forwarded signals, clone pid 1 into its namespaces, write its id
// maps, hand it the trees only the parent may make, start it, take the sockets it opened for confine, and
// supervise it (signal forwarding, exit status, error reports).
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/plan.h"
#include "run/channel.h"
#include "run/fd_watch.h"
#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::run {

struct LaunchOutcome {
  int exit_code = 0;
  // User namespaces are unusable here (refused at clone, at the id maps, or at the first mount): nothing ran,
  // nothing was reported; the caller decides between failing and falling back.
  bool namespaces_refused = false;
  int err = 0;
  // A later step of the full sandbox refused by the kernel (EPERM/EACCES: a container's masks, filters or missing
  // capabilities that confine did not foresee): which, as the error says it. Nothing ran; the caller falls back
  // as for a namespace refusal.
  std::string refused_step;
};

class Launch {
 public:
  explicit Launch(const Plan& plan);
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;
  ~Launch();  // a sandbox still running (a step failed after its birth) is killed and reaped

  sys::Status block_signals();
  sys::Status shed_groups();
  // `cgroup_fd`, if not -1, is the cgroup v2 directory pid 1 is born in (CLONE_INTO_CGROUP): its cgroup
  // namespace then has that leaf as its root.
  sys::Status clone_sandbox(int cgroup_fd);
  sys::Status write_id_maps();
  sys::Status open_idmapped_trees();
  sys::Status send_go();
  // The sockets pid 1 opened on its loopback (Listener::Place::sandbox_loopback), in the plan's order; none if
  // pid 1 failed or exited before handing them over (supervise then reports why).
  std::vector<sys::UniqueFd> receive_listeners();
  // What pid 1 hands over for the denial log (Plan::denial_log): the writable end of the sandbox's file, and the
  // inotify watch on its masks (one watch per mask, in plan order); each invalid if pid 1 had none, or failed first.
  struct RefusalFiles {
    sys::UniqueFd denial_log;
    sys::UniqueFd mask_watch;
    std::vector<sys::UniqueFd> tmpfs;  // the writable tmpfs mounts, in plan order (the first kMaxWatchedTmpfs)
  };
  RefusalFiles receive_refusal_files();
  // What supervise tells its caller as the run goes on.
  struct Events {
    std::function<void(pid_t)> started;  // once, when the command has been executed
    // The command's seccomp listener (Plan's seccomp.notifying); invalid: the kernel gave none. Before `started`.
    std::function<void(sys::UniqueFd)> seccomp_listener;
    // Served in supervise's loop until pid 1 exits (the seccomp and mask watches add theirs); none: no watch.
    FdWatches* watches = nullptr;
  };
  // Until pid 1 exits.
  sys::Status supervise(const Events& events);

  [[nodiscard]] pid_t sandbox_pid() const;
  // What the launch came to: after supervise, the command's exit code; after a failed step, 125 or a namespace
  // refusal (the step's error is then not to be reported: the caller falls back or explains).
  [[nodiscard]] LaunchOutcome outcome() const;

 private:
  // pid 1's next handover of `phase`: the descriptors and the message's detail; none if a report of a failed step,
  // or the end of the channel, comes first (supervise then says why).
  struct Handover {
    std::vector<sys::UniqueFd> fds;
    std::uint32_t detail = 0;
  };
  Handover receive_handover(Phase phase);

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace confine::run
