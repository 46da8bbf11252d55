#include "core/parent_steps.h"

namespace confine {
namespace {

sys::Status run_parent_step(ParentEffects& fx, ParentStepKind kind) {
  switch (kind) {
    case ParentStepKind::listen_published: return fx.listen_published();
    case ParentStepKind::make_host_dirs: return fx.make_host_dirs();
    case ParentStepKind::make_run_dir: return fx.make_run_dir();
    case ParentStepKind::save_scan_caches: return fx.save_scan_caches();
    case ParentStepKind::make_cgroup: return fx.make_cgroup();
    case ParentStepKind::save_checkpoint: return fx.save_checkpoint();
    case ParentStepKind::finish_interrupted_checks: return fx.finish_interrupted_checks();
    case ParentStepKind::record_git_check: return fx.record_git_check();
    case ParentStepKind::join_cgroup: return fx.join_cgroup();
    case ParentStepKind::block_signals: return fx.block_signals();
    case ParentStepKind::shed_groups: return fx.shed_groups();
    case ParentStepKind::clone_sandbox: return fx.clone_sandbox();
    case ParentStepKind::write_id_maps: return fx.write_id_maps();
    case ParentStepKind::connect_veth: return fx.connect_veth();
    case ParentStepKind::start_socket_maker: return fx.start_socket_maker();
    case ParentStepKind::open_idmapped_trees: return fx.open_idmapped_trees();
    case ParentStepKind::send_go: return fx.send_go();
    case ParentStepKind::start_services: return fx.start_services();
    case ParentStepKind::receive_refusal_files: return fx.receive_refusal_files();
    case ParentStepKind::supervise: return fx.supervise();
    case ParentStepKind::check_git_state: return fx.check_git_state();
    case ParentStepKind::drop_file_privileges: return fx.drop_file_privileges();
    case ParentStepKind::record_run_end: return fx.record_run_end();
    case ParentStepKind::remove_run_dir: return fx.remove_run_dir();
    case ParentStepKind::report_usage: return fx.report_usage();
    case ParentStepKind::stop_services: return fx.stop_services();
    case ParentStepKind::report_refusals: return fx.report_refusals();
  }
  return sys::plain_error("unknown parent step");
}

// What a step made on the host that a run which failed to start must not leave behind. The other steps' sockets,
// processes and cgroup leaf belong to the effects and go with them; what the `always` steps do is the run's end.
void undo_parent_step(ParentEffects& fx, ParentStepKind kind) {
  switch (kind) {
    case ParentStepKind::make_host_dirs: fx.remove_made_host_dirs(); return;
    case ParentStepKind::listen_published:
    case ParentStepKind::make_run_dir:  // remove_run_dir, which runs always, removes it
    case ParentStepKind::make_cgroup:   // the leaf goes with the effects, once made
    case ParentStepKind::save_checkpoint:  // the workspace as it was: still what a restore brings back
    case ParentStepKind::save_scan_caches:  // what the scans learned holds for the next run too
    case ParentStepKind::finish_interrupted_checks:  // earlier runs' business, done
    case ParentStepKind::record_git_check:
    case ParentStepKind::join_cgroup:
    case ParentStepKind::block_signals:
    case ParentStepKind::shed_groups:
    case ParentStepKind::clone_sandbox:
    case ParentStepKind::write_id_maps:
    case ParentStepKind::connect_veth:
    case ParentStepKind::start_socket_maker:
    case ParentStepKind::open_idmapped_trees:
    case ParentStepKind::send_go:
    case ParentStepKind::start_services:
    case ParentStepKind::receive_refusal_files:
    case ParentStepKind::supervise:
    case ParentStepKind::check_git_state:
    case ParentStepKind::drop_file_privileges:
    case ParentStepKind::record_run_end:
    case ParentStepKind::remove_run_dir:
    case ParentStepKind::report_usage:
    case ParentStepKind::stop_services:
    case ParentStepKind::report_refusals: return;
  }
}

}  // namespace

std::vector<ParentStepFailure> run_parent_steps(const Plan& plan, ParentEffects& effects) {
  std::vector<ParentStepFailure> failures;
  std::vector<ParentStepKind> done;  // before the first failure
  bool cut_short = false;            // a step of the run's own failed, not one of those that end it
  for (std::size_t i = 0; i < plan.parent_steps.size(); ++i) {
    const auto& step = plan.parent_steps[i];
    if (!failures.empty() && !step.always) continue;
    if (auto s = run_parent_step(effects, step.kind); !s) {
      if (failures.empty()) cut_short = !step.always;
      failures.push_back({i, s.error()});
    } else if (failures.empty()) {
      done.push_back(step.kind);
    }
  }
  // After the `always` steps: the git check looks at the trees as the run left them, the directories included.
  if (cut_short)
    for (auto it = done.rbegin(); it != done.rend(); ++it) undo_parent_step(effects, *it);
  return failures;
}

}  // namespace confine
