// The parent's side of a Plan (Plan::parent_steps), run by one loop. What each step does to the system is behind
// ParentEffects (src/run/session.cc carries them out), so a unit test runs a plan with fake effects and sees the
// order, and a step added to ParentStepKind without an effect fails to compile (-Werror=switch).
#pragma once

#include <cstddef>
#include <vector>

#include "core/plan.h"
#include "sys/result.h"

namespace confine {

class ParentEffects {
 public:
  virtual ~ParentEffects() = default;
  virtual sys::Status listen_published() = 0;
  virtual sys::Status make_cgroup() = 0;
  virtual sys::Status save_checkpoint() = 0;
  virtual sys::Status finish_interrupted_checks() = 0;
  virtual sys::Status make_host_dirs() = 0;
  virtual void remove_made_host_dirs() = 0;  // make_host_dirs undone
  virtual sys::Status make_run_dir() = 0;
  virtual sys::Status save_scan_caches() = 0;
  virtual sys::Status record_git_check() = 0;
  virtual sys::Status join_cgroup() = 0;
  virtual sys::Status block_signals() = 0;
  virtual sys::Status shed_groups() = 0;
  virtual sys::Status clone_sandbox() = 0;
  virtual sys::Status write_id_maps() = 0;
  virtual sys::Status connect_veth() = 0;
  virtual sys::Status start_socket_maker() = 0;
  virtual sys::Status open_idmapped_trees() = 0;
  virtual sys::Status send_go() = 0;
  virtual sys::Status start_services() = 0;
  virtual sys::Status receive_refusal_files() = 0;
  virtual sys::Status supervise() = 0;
  virtual sys::Status check_git_state() = 0;
  virtual sys::Status drop_file_privileges() = 0;
  virtual sys::Status record_run_end() = 0;
  virtual sys::Status remove_run_dir() = 0;
  virtual sys::Status report_usage() = 0;
  virtual sys::Status stop_services() = 0;
  virtual sys::Status report_refusals() = 0;
};

struct ParentStepFailure {
  std::size_t step;  // index into Plan::parent_steps
  sys::Error error;
};

// Runs the steps in order. After the first failure only the steps marked `always` run (they check, remove or
// report what the run may have left), and then, when the run did not get through its own steps, what the steps
// done before the failure made on the host is undone, the latest first. Returns every failure, the first one first.
std::vector<ParentStepFailure> run_parent_steps(const Plan& plan, ParentEffects& effects);

}  // namespace confine
