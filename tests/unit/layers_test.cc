#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "core/layers.h"
#include "core/seccomp_policy.h"

using namespace confine;

namespace {

KernelFeatures modern() {
  KernelFeatures f;
  f.landlock_abi = 7;
  f.seccomp = true;
  return f;
}

// A request as resolve() makes it for the built-in seccomp policy.
RunRequest builtin() {
  RunRequest r;
  r.seccomp_groups = seccomp_rule_groups(builtin_seccomp_policy(), false);
  return r;
}

// What keeps a promise, as explain says it.
std::vector<std::string> texts(const Promise& p) {
  std::vector<std::string> out;
  for (const auto& e : p.enforced_by) out.push_back(enforcer_text(e));
  return out;
}

const Promise& find(const Enforcement& e, const std::string& id) {
  auto it = std::find_if(e.promises.begin(), e.promises.end(), [&](const Promise& p) { return promise_id_name(p.id) == id; });
  REQUIRE(it != e.promises.end());
  return *it;
}

}  // namespace

TEST_CASE("full mode on a modern kernel keeps every promise") {
  auto e = decide(builtin(), modern(), Mode::full);
  CHECK(e.ok());
  CHECK(e.lost().empty());
  CHECK(find(e, "writes").enforced_by.size() == 2);  // mount namespace + Landlock
}

TEST_CASE("fallback refuses without --best-effort and names what is lost") {
  RunRequest r = builtin();
  r.no_namespaces = true;
  auto e = decide(r, modern(), Mode::fallback);
  CHECK_FALSE(e.ok());
  CHECK_FALSE(find(e, "workspace-secrets").kept());
  CHECK_FALSE(find(e, "metadata").kept());  // Landlock has no chmod/chown/utimes right
  CHECK(find(e, "network").kept());  // Landlock TCP + seccomp on ABI 7
  r.best_effort = true;
  e = decide(r, modern(), Mode::fallback);
  CHECK(e.ok());
  CHECK_FALSE(e.warnings.empty());
}

TEST_CASE("fallback mode: Landlock ABI 9 keeps the host's socket files out of reach, ABI 10 adds UDP rules") {
  RunRequest r = builtin();
  r.no_namespaces = true;
  r.best_effort = true;
  auto f = modern();
  for (int abi : {7, 8}) {
    f.landlock_abi = abi;
    auto e = decide(r, f, Mode::fallback);
    CHECK_FALSE(find(e, "socket-files").kept());
    CHECK(find(e, "socket-files").note.find("needs Landlock ABI 9") != std::string::npos);
  }
  f.landlock_abi = 9;
  auto e = decide(r, f, Mode::fallback);
  CHECK(find(e, "socket-files").kept());
  CHECK(texts(find(e, "network")).front() == "Landlock TCP rules");
  f.landlock_abi = 10;
  e = decide(r, f, Mode::fallback);
  CHECK(texts(find(e, "network")).front() == "Landlock TCP and UDP rules");
  // The socket files are not the network: --net host leaves them out of reach.
  r.net = NetMode::host;
  CHECK(find(decide(r, f, Mode::fallback), "socket-files").kept());
}

TEST_CASE("published ports need a network namespace: fallback mode refuses them even with --best-effort") {
  RunRequest r = builtin();
  r.publishes = true;
  r.best_effort = true;
  CHECK(decide(r, modern(), Mode::full).ok());
  auto e = decide(r, modern(), Mode::fallback);
  REQUIRE_FALSE(e.ok());
  CHECK(e.problems.back() == "--publish needs a network namespace, which fallback mode does not have");
}

TEST_CASE("fallback on an old Landlock ABI loses egress and signal containment") {
  RunRequest r = builtin();
  r.no_namespaces = true;
  r.best_effort = true;
  auto f = modern();
  f.landlock_abi = 2;
  auto e = decide(r, f, Mode::fallback);
  CHECK_FALSE(find(e, "network").kept());
  CHECK(find(e, "network").note.find("ABI 4") != std::string::npos);
  CHECK_FALSE(find(e, "processes").kept());
  CHECK_FALSE(find(e, "writes").kept());  // truncate(2) is restricted only from ABI 3
  CHECK(find(e, "writes").note.find("truncate") != std::string::npos);
  CHECK(find(e, "homes").kept());
  f.landlock_abi = 3;
  CHECK(find(decide(r, f, Mode::fallback), "writes").kept());
}

TEST_CASE("--require holds even under --best-effort") {
  RunRequest r = builtin();
  r.best_effort = true;
  r.required = {Layer::landlock};
  auto f = modern();
  f.landlock_abi = 0;
  f.landlock_problem = "no Landlock";
  auto e = decide(r, f, Mode::full);
  CHECK_FALSE(e.ok());
  REQUIRE_FALSE(e.problems.empty());
  CHECK(e.problems[0].find("landlock") != std::string::npos);
}

TEST_CASE("without seccomp the kernel-surface promise is lost, and the run refused") {
  auto f = modern();
  f.seccomp = false;
  f.seccomp_problem = "no seccomp";
  auto e = decide(builtin(), f, Mode::full);
  CHECK_FALSE(e.ok());
  CHECK_FALSE(find(e, "kernel-surface").kept());
}

TEST_CASE("the setuid-files promise is kept by seccomp and the dropped capabilities, in both modes") {
  for (Mode mode : {Mode::full, Mode::fallback}) {
    auto f = modern();
    auto kept = find(decide(builtin(), f, mode), "setuid-files");
    CHECK(texts(kept) == std::vector<std::string>{"seccomp (setuid/setgid modes)",
                                                       "capabilities dropped (file capabilities)"});
    // The capabilities alone do not keep it: without seccomp the modes are not refused.
    f.seccomp = false;
    f.seccomp_problem = "no seccomp";
    auto e = decide(builtin(), f, mode);
    CHECK_FALSE(e.ok());
    CHECK_FALSE(find(e, "setuid-files").kept());
    CHECK(find(e, "setuid-files").note == "no seccomp");
  }
}

TEST_CASE("with --allow-nested the check after the run keeps the setuid-files promise too, where a mount can copy") {
  auto r = builtin();
  r.allow_nested = true;
  r.seccomp_groups = seccomp_rule_groups(builtin_seccomp_policy(), true);
  CHECK(texts(find(decide(r, modern(), Mode::full), "setuid-files")) ==
        std::vector<std::string>{"seccomp (setuid/setgid modes)", "capabilities dropped (file capabilities)",
                                 "confine (the check after the run: copies a mount inside made)"});
  // In fallback mode Landlock refuses every mount: there is nothing to check.
  CHECK(find(decide(r, modern(), Mode::fallback), "setuid-files").enforced_by.size() == 2);
}

TEST_CASE("missing Landlock in full mode is a warning, not a silent downgrade") {
  auto f = modern();
  f.landlock_abi = 0;
  f.landlock_problem = "not enabled";
  auto e = decide(builtin(), f, Mode::full);
  CHECK(e.ok());
  REQUIRE(e.warnings.size() == 1);
  CHECK(e.warnings[0].find("Landlock") != std::string::npos);
}

TEST_CASE("--net host turns the network promises off instead of losing them") {
  RunRequest r = builtin();
  r.net = NetMode::host;
  auto e = decide(r, modern(), Mode::full);
  CHECK(e.ok());
  CHECK_FALSE(find(e, "network").requested);
}

TEST_CASE("the seccomp promises are judged by the rules compiled: a policy without them loses them, the floor keeps them") {
  auto f = modern();
  RunRequest r;
  r.custom_seccomp = true;  // a policy that allows everything: no groups of its own
  auto bare = decide(r, f, Mode::full);
  CHECK_FALSE(find(bare, "kernel-surface").kept());
  CHECK_FALSE(find(bare, "setuid-files").kept());
  r.seccomp_groups = seccomp_rule_groups(seccomp_floor_policy(), false);
  auto floored = decide(r, f, Mode::full);
  CHECK(texts(find(floored, "kernel-surface")) == std::vector<std::string>{"seccomp (confine's floor: kernel interfaces)"});
  CHECK(find(floored, "setuid-files").kept());
  CHECK(find(decide(r, f, Mode::fallback), "network").kept());  // UDP, MPTCP and Fast Open are in the floor too
}

TEST_CASE("without --pids, explain says what bounds the number of processes, or that nothing does") {
  RunRequest r;
  r.default_process_bound = true;
  auto full_mode = decide(r, modern(), Mode::full);
  const auto& full = find(full_mode, "process-count");
  CHECK(full.kept());
  CHECK(full.text.find("4096") != std::string::npos);
  CHECK(full.enforced_by.front().by == Mechanism::nproc_limit);
  r.no_namespaces = true;
  auto refused = decide(r, modern(), Mode::fallback);
  CHECK_FALSE(find(refused, "process-count").kept());
  CHECK(find(refused, "process-count").note.find("needs a user namespace") != std::string::npos);
  r.best_effort = true;
  auto weakened = decide(r, modern(), Mode::fallback);
  CHECK(std::any_of(weakened.warnings.begin(), weakened.warnings.end(),
                    [](const std::string& w) { return w.find("processes and threads") != std::string::npos; }));
  r.default_process_bound = false;  // --pids: the limits promise speaks for it
  auto given = decide(r, modern(), Mode::fallback);
  CHECK(std::none_of(given.promises.begin(), given.promises.end(), [](const Promise& p) { return p.id == PromiseId::process_count; }));
}

TEST_CASE("host processes' command lines: hidden by the pid namespace, visible in fallback mode") {
  CHECK(find(decide(builtin(), modern(), Mode::full), "process-list").kept());
  auto r = builtin();
  r.best_effort = true;
  auto fallback = find(decide(r, modern(), Mode::fallback), "process-list");
  CHECK_FALSE(fallback.kept());
  CHECK(fallback.note.find("pid namespace") != std::string::npos);
}

TEST_CASE("a container that refuses a fresh /proc: the container's /proc stands in, the process list is lost") {
  auto f = modern();
  f.container.engine = ContainerEngine::podman;
  f.container.fresh_proc = false;
  auto refused = decide(builtin(), f, Mode::full);
  CHECK_FALSE(refused.ok());  // without --best-effort a lost promise refuses the run
  CHECK(refused.stand_ins.container_proc);
  REQUIRE(refused.lost().size() == 1);
  CHECK(refused.lost()[0].find("--security-opt unmask=ALL") != std::string::npos);  // the fix for this engine
  CHECK(find(refused, "processes").kept());  // signals: pid namespace; inspection: Landlock
  auto r = builtin();
  r.best_effort = true;
  auto e = decide(r, f, Mode::full);
  CHECK(e.ok());
  REQUIRE(e.warnings.size() == 1);
  f.landlock_abi = 0;  // without Landlock nothing keeps the container's processes from /proc/PID reads
  CHECK_FALSE(find(decide(r, f, Mode::full), "processes").kept());
  f.container.engine = ContainerEngine::docker;
  f.landlock_abi = 7;
  CHECK(decide(builtin(), f, Mode::full).lost()[0].find("systempaths=unconfined") != std::string::npos);
}

TEST_CASE("a refused hostname is cosmetic: kept as the container's, said with -v only") {
  auto f = modern();
  f.container.hostname = false;
  auto e = decide(builtin(), f, Mode::full);
  CHECK(e.ok());
  CHECK(e.stand_ins.keep_hostname);
  CHECK(e.warnings.empty());
  CHECK(e.notes.size() == 1);
}

TEST_CASE("root without idmapped mounts runs as the workspace's owner; root-files is lost only if that is root") {
  auto f = modern();
  f.container.engine = ContainerEngine::podman;
  f.container.idmap = false;
  auto r = builtin();
  r.run_by_root = true;
  auto owner = decide(r, f, Mode::full);
  CHECK(owner.ok());
  CHECK(owner.stand_ins.owner_identity);
  r.inside_root = true;
  auto root = decide(r, f, Mode::full);
  CHECK_FALSE(root.ok());
  CHECK_FALSE(find(root, "root-files").kept());
  CHECK(root.lost()[0].find("--cap-add SYS_ADMIN") != std::string::npos);
  f.container.rootless = true;  // rootless podman cannot idmap at all: no capability to suggest
  CHECK(decide(r, f, Mode::full).lost()[0].find("--cap-add") == std::string::npos);
  r.run_by_root = false;  // a user's sandbox needs no idmapped mount
  CHECK(decide(r, f, Mode::full).ok());
}

TEST_CASE("every promise id has a name of its own (explain --json and --report tell promises apart by it)") {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(PromiseId::writes); ++i) {  // writes: the last id
    std::string name = promise_id_name(static_cast<PromiseId>(i));
    CHECK(name != "?");
    CHECK(names.insert(name).second);
  }
  CHECK(names.size() == 25);
}

TEST_CASE("every mechanism that keeps a promise has a name of its own") {
  std::set<std::string> names;
  for (int m = 0; m <= static_cast<int>(Mechanism::proxy); ++m) {
    std::string name = mechanism_name(static_cast<Mechanism>(m));
    CHECK(name != "?");
    CHECK(names.insert(name).second);
  }
  CHECK(enforcer_text({Mechanism::mount_namespace, "(masks)"}) == "mount namespace (masks)");
  CHECK(enforcer_text({Mechanism::no_new_privs}) == "no_new_privs");
}
