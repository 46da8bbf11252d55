// The parent's steps of a plan, run with fake effects: which steps a plan holds, in which order, and what still
// runs after a failure.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/parent_steps.h"
#include "core/plan.h"
#include "core/report.h"

using namespace confine;

namespace {

// Records each step it is asked to do; the step named `fail_at` fails.
class FakeEffects final : public ParentEffects {
 public:
  explicit FakeEffects(std::string fail_at = "") : fail_at_(std::move(fail_at)) {}
  std::vector<std::string> done;

  sys::Status listen_published() override { return step("listen_published"); }
  sys::Status make_cgroup() override { return step("make_cgroup"); }
  sys::Status save_checkpoint() override { return step("save_checkpoint"); }
  sys::Status finish_interrupted_checks() override { return step("finish_interrupted_checks"); }
  sys::Status make_host_dirs() override { return step("make_host_dirs"); }
  void remove_made_host_dirs() override { done.push_back("remove_made_host_dirs"); }
  sys::Status make_run_dir() override { return step("make_run_dir"); }
  sys::Status save_scan_caches() override { return step("save_scan_caches"); }
  sys::Status record_git_check() override { return step("record_git_check"); }
  sys::Status join_cgroup() override { return step("join_cgroup"); }
  sys::Status block_signals() override { return step("block_signals"); }
  sys::Status shed_groups() override { return step("shed_groups"); }
  sys::Status clone_sandbox() override { return step("clone_sandbox"); }
  sys::Status write_id_maps() override { return step("write_id_maps"); }
  sys::Status connect_veth() override { return step("connect_veth"); }
  sys::Status start_socket_maker() override { return step("start_socket_maker"); }
  sys::Status open_idmapped_trees() override { return step("open_idmapped_trees"); }
  sys::Status send_go() override { return step("send_go"); }
  sys::Status start_services() override { return step("start_services"); }
  sys::Status supervise() override { return step("supervise"); }
  sys::Status check_git_state() override { return step("check_git_state"); }
  sys::Status drop_file_privileges() override { return step("drop_file_privileges"); }
  sys::Status record_run_end() override { return step("record_run_end"); }
  sys::Status remove_run_dir() override { return step("remove_run_dir"); }
  sys::Status report_usage() override { return step("report_usage"); }
  sys::Status receive_refusal_files() override { return step("receive_refusal_files"); }
  sys::Status report_refusals() override { return step("report_refusals"); }
  sys::Status stop_services() override { return step("stop_services"); }

 private:
  sys::Status step(const std::string& name) {
    done.push_back(name);
    if (name == fail_at_) return sys::plain_error("cannot " + name);
    return sys::ok_status();
  }
  std::string fail_at_;
};

Policy base_policy() {
  Policy p;
  p.fs.workspace = "/srv/project";
  p.fs.workspace_inside = p.fs.workspace;
  p.proc.argv = {"true"};
  p.proc.workdir = p.fs.workspace;
  return p;
}

// Everything the parent can be asked to do: run by root (idmapped binds, groups to shed), limits in a cgroup,
// the proxy over a veth pair with a forward on the sandbox's loopback, git checked after the run.
Plan busiest_plan() {
  auto p = base_policy();
  p.ids.run_by_root = true;
  p.net = NetMode::proxy;
  p.proxy.over_veth = true;
  auto entry = parse_allow_entry("127.0.0.1:5432");
  REQUIRE(entry);
  p.proxy.allow = Allowlist({*entry});
  p.limits.memory = 1 << 30;
  p.checkpoint = {true, {}, "/home/u/.local/share"};
  PlanInputs in;
  in.cgroup = CgroupPlan{CgroupPlace{CgroupPlaceKind::root, "/sys/fs/cgroup/confine.slice", ""}, p.limits};
  in.git.dir = true;  // a repository without hooks/: made, to be bound read-only
  in.scan_cache_dir = "/home/u/.cache/confine/scan";
  in.pending_checks_dir = in.scan_cache_dir;
  return make_plan(p, in);
}

std::vector<std::string> run(const Plan& plan, FakeEffects& fx) {
  run_parent_steps(plan, fx);
  return fx.done;
}

}  // namespace

TEST_CASE("the parent's steps run in the plan's order, each where its why-comment says") {
  FakeEffects fx;
  auto order = run(busiest_plan(), fx);
  CHECK(order == std::vector<std::string>{
                     "make_cgroup",          // the kernel's milliseconds, on a thread while the steps below run
                     "save_checkpoint",      // the workspace as the user left it, before confine changes it
                     "finish_interrupted_checks",  // what an earlier run left for git, set aside before this one
                     "make_host_dirs",       // confine's own change, before the git check's time is taken
                     "save_scan_caches",     // the same
                     "record_git_check",     // on disk before the sandbox exists
                     "join_cgroup",          // pid 1 is born in the leaf, from a single-threaded confine
                     "block_signals",        // none lost between clone and supervise
                     "shed_groups",          // root's groups never reach the sandbox
                     "clone_sandbox",
                     "write_id_maps",        // before anything pid 1 or an idmapped mount needs them for
                     "connect_veth",         // pid 1's network namespace exists
                     "start_socket_maker",   // pid 1 is still dumpable, its maps are written
                     "open_idmapped_trees",  // the maps are written
                     "send_go",              // everything pid 1 needs is in place
                     "start_services",       // pid 1 handed its listeners over
                     "receive_refusal_files",   // after the listeners, in the order pid 1 sends them
                     "supervise",
                     "stop_services",        // the summary covers the whole run; its sockets close before the checks
                     "check_git_state",      // every process of the sandbox is gone
                     "record_run_end",       // after the check: what it set aside is part of how the run left it
                     "report_usage",         // before the leaf goes
                     "report_refusals",      // last: the limits' and the git check's refusals are in
                 });
}

TEST_CASE("a fallback run has no namespaces to map or connect, and removes its private directory") {
  auto p = base_policy();
  PlanInputs in;
  in.mode = Mode::fallback;
  in.run_dir = "/tmp/confine-run.abc";
  FakeEffects fx;
  auto order = run(make_plan(p, in), fx);
  // No mount namespace, so no denial log file inside; the summary of refusals comes last, as in every run.
  CHECK(order == std::vector<std::string>{"make_run_dir", "record_git_check", "block_signals", "clone_sandbox",
                                          "send_go", "supervise", "check_git_state", "remove_run_dir", "report_refusals"});
  auto plan = make_plan(p, in);
  REQUIRE(plan.run_dir);
  CHECK(plan.env.end() != std::find(plan.env.begin(), plan.env.end(), "HOME=/tmp/confine-run.abc/home"));
  CHECK(describe(plan, plan.parent_steps.front()) == "make the private HOME and TMPDIR in /tmp/confine-run.abc");
}

TEST_CASE("the private directory of a fallback run is for the ids the command runs as") {
  auto p = base_policy();
  p.ids = {1000, 1000, 1000, 1000, false};
  PlanInputs in;
  in.mode = Mode::fallback;
  in.run_dir = "/tmp/confine-run.abc";
  auto plan = make_plan(p, in);
  REQUIRE(plan.run_dir);
  CHECK((plan.run_dir->uid == 1000 && plan.run_dir->gid == 1000));
  p.ids = {1001, 1002, 0, 0, true};  // root, with --user 1001:1002
  p.protection.request.switch_user = true;
  plan = make_plan(p, in);
  REQUIRE(plan.run_dir);
  CHECK((plan.run_dir->uid == 1001 && plan.run_dir->gid == 1002));
  p.protection.request.switch_user = false;  // root keeping its own ids
  plan = make_plan(p, in);
  CHECK((plan.run_dir->uid == 0 && plan.run_dir->gid == 0));
}

TEST_CASE("a run that falls back to fallback mode saves its checkpoint once") {
  auto p = base_policy();
  p.checkpoint = {true, {}, "/home/u/.local/share"};
  PlanInputs in;
  auto has = [](const Plan& plan, ParentStepKind kind) {
    return std::any_of(plan.parent_steps.begin(), plan.parent_steps.end(), [&](const ParentStep& s) { return s.kind == kind; });
  };
  CHECK(has(make_plan(p, in), ParentStepKind::save_checkpoint));
  in.checkpoint_saved = true;  // the first attempt's, before the kernel refused its namespaces
  in.mode = Mode::fallback;
  auto plan = make_plan(p, in);
  CHECK_FALSE(has(plan, ParentStepKind::save_checkpoint));
  CHECK(has(plan, ParentStepKind::record_run_end));  // the run still ends by recording how it left the workspace
}

TEST_CASE("a rootless run with --net none and no limits has only the steps it needs") {
  auto p = base_policy();
  p.fs.protect_git = false;
  FakeEffects fx;
  auto order = run(make_plan(p, PlanInputs{}), fx);
  CHECK(order == std::vector<std::string>{"block_signals", "clone_sandbox", "write_id_maps", "send_go",
                                          "receive_refusal_files",  // pid 1 hands it over before the command exists
                                          "supervise", "report_refusals"});
}

TEST_CASE("published ports are listened on before anything else, and served through the socket maker") {
  auto p = base_policy();
  p.published = {parse_published_port("3000:3000").value()};
  auto plan = make_plan(p, PlanInputs{});
  CHECK(plan.sandbox_sockets);
  FakeEffects fx;
  CHECK(run(plan, fx) == std::vector<std::string>{"listen_published",  // a taken port: nothing exists yet
                                                  "record_git_check", "block_signals", "clone_sandbox",
                                                  "write_id_maps", "start_socket_maker", "send_go",
                                                  "start_services", "receive_refusal_files", "supervise",
                                                  "stop_services", "check_git_state",  // the host's ports are free again
                                                  "report_refusals"});
  FakeEffects taken("listen_published");
  auto failures = run_parent_steps(plan, taken);
  REQUIRE(failures.size() == 1);
  CHECK(taken.done == std::vector<std::string>{"listen_published", "stop_services", "check_git_state", "report_refusals"});
  CHECK(describe(plan, plan.parent_steps.front()) == "listen on the published ports (127.0.0.1:3000)");
}

TEST_CASE("with --allow-nested what the run left that grants privilege is dropped after it, failed or not") {
  auto p = base_policy();
  p.protection.allow_nested = true;
  p.checkpoint = {true, {}, "/home/u/.local/share"};
  UserBind bound;
  bound.source = bound.dest = "/srv/data";
  bound.writable = true;
  p.fs.binds.push_back(bound);
  auto plan = make_plan(p, PlanInputs{});
  CHECK(plan.file_privilege_trees == std::vector<std::string>{"/srv/project", "/srv/data"});
  FakeEffects fx;
  CHECK(run(plan, fx) == std::vector<std::string>{"save_checkpoint", "record_git_check", "block_signals",
                                                  "clone_sandbox", "write_id_maps", "send_go",
                                                  "receive_refusal_files", "supervise", "check_git_state",
                                                  "drop_file_privileges",  // every process of the sandbox is gone
                                                  "record_run_end",        // what it dropped is how the run left it
                                                  "report_refusals"});
  FakeEffects failed("supervise");
  run_parent_steps(plan, failed);
  CHECK(std::find(failed.done.begin(), failed.done.end(), "drop_file_privileges") != failed.done.end());
  CHECK(describe(plan, plan.parent_steps[9]) == "drop the setuid bits and file capabilities the sandbox left");

  // Without --allow-nested no syscall of the sandbox can give a file privilege; in fallback mode no mount can.
  p.protection.allow_nested = false;
  CHECK(make_plan(p, PlanInputs{}).file_privilege_trees.empty());
  p.protection.allow_nested = true;
  PlanInputs fallback;
  fallback.mode = Mode::fallback;
  CHECK(make_plan(p, fallback).file_privilege_trees.empty());
}

TEST_CASE("with --net host or in fallback mode nothing is published") {
  auto p = base_policy();
  p.published = {parse_published_port("3000:3000").value()};
  PlanInputs fallback;
  fallback.mode = Mode::fallback;
  auto plan = make_plan(p, fallback);
  CHECK(plan.published.empty());
  CHECK_FALSE(plan.sandbox_sockets);
  p.net = NetMode::host;
  CHECK(make_plan(p, PlanInputs{}).published.empty());
}

TEST_CASE("after a failed step only the steps that check, remove or report what the run left still run") {
  auto plan = busiest_plan();
  FakeEffects fx("write_id_maps");
  auto failures = run_parent_steps(plan, fx);
  REQUIRE(failures.size() == 1);
  CHECK(plan.parent_steps[failures[0].step].kind == ParentStepKind::write_id_maps);
  CHECK(failures[0].error.message() == "cannot write_id_maps");
  CHECK(fx.done == std::vector<std::string>{"make_cgroup", "save_checkpoint", "finish_interrupted_checks",
                                            "make_host_dirs", "save_scan_caches",
                                            "record_git_check", "join_cgroup", "block_signals", "shed_groups",
                                            "clone_sandbox", "write_id_maps", "stop_services", "check_git_state",
                                            "record_run_end", "report_usage", "report_refusals",
                                            "remove_made_host_dirs"});  // after the git check, which saw them as made
}

TEST_CASE("the directories a run makes are planned from the host's layout, and count as there for the mounts") {
  auto p = base_policy();
  p.fs.home = "/home/u";
  UserBind state;
  state.source = "/home/u/.local/state/tool";
  state.dest = state.source;
  state.writable = true;
  state.create = true;
  p.fs.binds.push_back(state);
  PlanInputs in;
  in.git.dir = true;
  auto plan = make_plan(p, in);
  REQUIRE(plan.host_dirs.size() == 2);
  CHECK(plan.host_dirs[0].path == "/home/u/.local/state/tool");
  CHECK(plan.host_dirs[0].owned_like == "/home/u");
  CHECK(plan.host_dirs[1].path == "/srv/project/.git/hooks");
  CHECK(plan.host_dirs[1].purpose == HostDirectory::Purpose::git_hooks);
  auto hooks_bound = std::any_of(plan.mounts.begin(), plan.mounts.end(), [](const MountOp& m) {
    return m.kind == MountKind::rebind && m.beneath == "/srv/project" && m.dest == ".git/hooks" && m.read_only && !m.skip_if_missing;
  });
  CHECK(hooks_bound);
  REQUIRE(plan.git_check);
  CHECK(std::find(plan.git_check->read_only.begin(), plan.git_check->read_only.end(), "/srv/project/.git/hooks") !=
        plan.git_check->read_only.end());
  CHECK(describe(plan, plan.parent_steps[0]) ==
        "make the missing directories /home/u/.local/state/tool (the profile's), /srv/project/.git/hooks (bound read-only)");

  // Nothing to make: a read-only workspace's git is not bound, and fallback mode binds nothing.
  p.fs.binds.clear();
  p.fs.workspace_readonly = true;
  CHECK(make_plan(p, in).host_dirs.empty());
  p.fs.workspace_readonly = false;
  in.mode = Mode::fallback;
  CHECK(make_plan(p, in).host_dirs.empty());
}

TEST_CASE("a failure after the run ended undoes nothing: the run's directories are the user's now") {
  auto plan = busiest_plan();
  FakeEffects fx("check_git_state");
  run_parent_steps(plan, fx);
  CHECK(std::find(fx.done.begin(), fx.done.end(), "remove_made_host_dirs") == fx.done.end());
}

TEST_CASE("every failure is returned, the first one first") {
  auto plan = busiest_plan();
  FakeEffects fx("check_git_state");
  auto failures = run_parent_steps(plan, fx);
  REQUIRE(failures.size() == 1);
  CHECK(plan.parent_steps[failures[0].step].kind == ParentStepKind::check_git_state);
  CHECK(fx.done.back() == "report_refusals");  // a failing step after the run stops nothing that follows it
}

TEST_CASE("the listeners say where each is opened and what it serves, by name") {
  auto plan = busiest_plan();
  REQUIRE(plan.listeners.size() == 3);
  CHECK(plan.listeners[0].place == Listener::Place::veth);
  CHECK(plan.listeners[0].service == Listener::Service::http_proxy);
  CHECK(plan.listeners[1].place == Listener::Place::sandbox_loopback);
  CHECK(plan.listeners[1].service == Listener::Service::dns);  // on the sandbox's loopback even over a veth pair
  CHECK(plan.listeners[2].place == Listener::Place::sandbox_loopback);
  CHECK(plan.listeners[2].service == Listener::Service::forward);
  CHECK(plan.listeners[2].forward_host == "127.0.0.1");
  CHECK(plan.listeners[2].forward_port == 5432);
  CHECK(plan.sandbox_sockets);  // the DNS stub's names get their listeners while the sandbox runs
}

TEST_CASE("every parent step is described for error messages and explain") {
  auto plan = busiest_plan();
  for (const auto& step : plan.parent_steps) CHECK_FALSE(describe(plan, step).empty());
}

TEST_CASE("explain -v lists confine's steps around the sandbox's, in the order they run") {
  auto text = explain_steps(busiest_plan());
  auto at = [&](const std::string& line) {
    auto pos = text.find(line);
    INFO(line);
    REQUIRE(pos != std::string::npos);
    return pos;
  };
  CHECK(at("confine  connect the sandbox by a veth pair") < at("confine  start the sandbox's set-up"));
  CHECK(at("confine  start the sandbox's set-up") < at("init     switch to the sandbox's uid/gid"));
  CHECK(at("init     make the sandbox's init non-dumpable") < at("command  reset the signal mask"));
  CHECK(at("command  execute `true`") < at("confine  start the proxy on the sandbox's listeners"));
  CHECK(at("confine  supervise the sandbox") < at("confine  stop the proxy"));
}
