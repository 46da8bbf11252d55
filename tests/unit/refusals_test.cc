// The denial log's records (core/refusals.h), the seccomp program that hands refusals to confine and the rule it
// names (core/seccomp_verdict.h), whether a run records them (core/decisions.h), and the network's refusal names
// and hints (core/proxy_outcome.h).
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "core/decisions.h"
#include "core/proxy_outcome.h"
#include "core/refusals.h"
#include "core/seccomp_compile.h"
#include "core/seccomp_policy.h"
#include "core/seccomp_verdict.h"

using namespace confine;

namespace {

Refusal seccomp_refusal(const std::string& name, const std::string& comm) {
  Refusal r;
  r.what = name;
  r.detail = {{"syscall", name}, {"errno", "EPERM"}, {"rule", nullptr}, {"args", nlohmann::json::object()},
              {"pid", 7}, {"comm", comm}};
  return r;
}

std::vector<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  return keys;
}

SeccompCall call_of(const std::string& name, std::uint64_t arg0 = 0, std::uint64_t arg1 = 0) {
  SeccompCall c;
  c.nr = resolve_syscall(name);
  c.arch = seccomp_native_arch();
  c.args[0] = arg0;
  c.args[1] = arg1;
  return c;
}

std::uint32_t action_of(const std::vector<struct sock_filter>& prog, const SeccompCall& c) {
  auto v = seccomp_verdict(prog, c);
  REQUIRE(v);
  return *v & SECCOMP_RET_ACTION_FULL;
}

bool same_program(const std::vector<struct sock_filter>& a, const std::vector<struct sock_filter>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const sock_filter& x, const sock_filter& y) {
    return x.code == y.code && x.jt == y.jt && x.jf == y.jf && x.k == y.k;
  });
}

Policy workspace_policy() {
  Policy p;
  p.fs.workspace = "/srv/project";
  p.fs.workspace_inside = p.fs.workspace;
  p.fs.home = "/home/alice";
  p.proc.argv = {"true"};
  return p;
}

Enforcement full_mode() {
  Enforcement e;
  e.mode = Mode::full;
  e.use_seccomp = true;
  return e;
}

}  // namespace

TEST_CASE("refusal_line: the common fields first, then the layer's, allow_with last, one line") {
  auto r = seccomp_refusal("unshare", "sh");
  r.allow_with = "--allow-nested";
  auto line = refusal_line(r, 1700000000123);
  REQUIRE(line.back() == '\n');
  CHECK(std::count(line.begin(), line.end(), '\n') == 1);
  auto j = nlohmann::ordered_json::parse(line);
  CHECK(keys_of(j) == std::vector<std::string>{"time", "layer", "action", "what", "syscall", "errno", "rule", "args",
                                               "pid", "comm", "allow_with"});
  CHECK(j["time"] == 1700000000123);
  CHECK(j["layer"] == "seccomp");
  CHECK(j["action"] == "refused");
  CHECK(j["what"] == "unshare");
  CHECK(j["allow_with"] == "--allow-nested");
}

TEST_CASE("refusal_line: no allow_with when no flag would allow it") {
  auto j = nlohmann::json::parse(refusal_line(seccomp_refusal("bpf", "sh"), 1));
  CHECK_FALSE(j.contains("allow_with"));
}

TEST_CASE("refusal_line: a name from the sandbox stays a string of its own line") {
  // A process name the sandbox chose: a newline and a JSON object, then bytes that are not UTF-8.
  auto forged = refusal_line(seccomp_refusal("bpf", "\"}\n{\"forged\":1"), 1);
  CHECK(std::count(forged.begin(), forged.end(), '\n') == 1);
  auto j = nlohmann::json::parse(forged);
  CHECK(j["comm"] == "\"}\n{\"forged\":1");
  CHECK_FALSE(j.contains("forged"));

  auto invalid = refusal_line(seccomp_refusal("bpf", "\xff\xfe" "abc\xc3"), 1);
  CHECK(std::count(invalid.begin(), invalid.end(), '\n') == 1);
  auto k = nlohmann::json::parse(invalid);  // throws on invalid UTF-8
  CHECK(k["comm"] == "\xef\xbf\xbd\xef\xbf\xbd" "abc\xef\xbf\xbd");
}

TEST_CASE("refusal_line: every layer and action has its name") {
  Refusal r;
  r.layer = RefusalLayer::limits;
  r.action = RefusalAction::killed;
  r.what = "memory";
  auto j = nlohmann::json::parse(refusal_line(r, 1));
  CHECK(j["layer"] == "limits");
  CHECK(j["action"] == "killed");
  CHECK(std::string(layer_name(RefusalLayer::network)) == "network");
  CHECK(std::string(layer_name(RefusalLayer::files)) == "files");
  CHECK(std::string(layer_name(RefusalLayer::git)) == "git");
  CHECK(std::string(action_name(RefusalAction::failed)) == "failed");
  CHECK(std::string(action_name(RefusalAction::neutralised)) == "neutralised");
}

TEST_CASE("RefusalCounts::summary: nothing counted, nothing said") {
  RefusalCounts counts;
  CHECK(counts.total() == 0);
  CHECK(counts.summary().empty());
}

TEST_CASE("RefusalCounts::summary: per layer, the most refused first, the network left to the proxy's own line") {
  RefusalCounts counts;
  for (const char* name : {"bpf", "ptrace", "ptrace", "unshare"}) counts.add(seccomp_refusal(name, "sh"));
  Refusal net;
  net.layer = RefusalLayer::network;
  net.what = "evil.example:443";
  counts.add(net);
  Refusal memory;
  memory.layer = RefusalLayer::limits;
  memory.action = RefusalAction::killed;
  memory.what = "memory";
  counts.add(memory);
  CHECK(counts.total() == 6);
  CHECK(counts.summary() == "refused: syscalls ptrace ×2, bpf ×1, unshare ×1; limits reached memory ×1");
}

TEST_CASE("RefusalCounts::summary: five names per layer, then how many more") {
  RefusalCounts counts;
  for (const char* name : {"a", "b", "c", "d", "e", "f", "g", "g"}) counts.add(seccomp_refusal(name, "sh"));
  CHECK(counts.summary() == "refused: syscalls g ×2, a ×1, b ×1, c ×1, d ×1 and 2 more");
}

TEST_CASE("RefusalCounts::report_line: the totals and the count per name, per layer, the network included") {
  RefusalCounts counts;
  CHECK(nlohmann::json::parse(counts.report_line()) == nlohmann::json{{"event", "refusals"}, {"total", 0}});
  for (const char* name : {"bpf", "bpf", "unshare"}) counts.add(seccomp_refusal(name, "sh"));
  Refusal net;
  net.layer = RefusalLayer::network;
  net.what = "evil.example (DNS)";
  counts.add(net);
  auto line = counts.report_line();
  REQUIRE(line.back() == '\n');
  CHECK(std::count(line.begin(), line.end(), '\n') == 1);
  auto want = nlohmann::json::parse(R"json({"event":"refusals","total":4,
      "seccomp":{"total":3,"by_name":{"bpf":2,"unshare":1}},
      "network":{"total":1,"by_name":{"evil.example (DNS)":1}}})json");
  CHECK(nlohmann::json::parse(line) == want);
}

TEST_CASE("RefusalCounts::report_line: names stop at 1000 per layer, the totals count every refusal") {
  RefusalCounts counts;
  for (int i = 0; i < 1200; ++i) counts.add(seccomp_refusal("call" + std::to_string(i), "sh"));
  auto j = nlohmann::json::parse(counts.report_line());
  CHECK(j["total"] == 1200);
  CHECK(j["seccomp"]["total"] == 1200);
  CHECK(j["seccomp"]["by_name"].size() == 1000);
}

TEST_CASE("refusals_notified: only the errno returns become notifications (ENOSYS stays the kernel's), every other instruction is kept") {
  std::vector<struct sock_filter> prog = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 3, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 4, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
      BPF_STMT(BPF_RET | BPF_A, 0),  // returns what it computed: not an errno it can see
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  auto notified = refusals_notified(prog);
  REQUIRE(notified.size() == prog.size());
  for (std::size_t i = 0; i < prog.size(); ++i) {
    INFO("instruction " << i);
    bool was_errno = i == 2;  // 6 is ENOSYS: "no such call here", answered in the kernel
    CHECK(notified[i].code == prog[i].code);
    CHECK(notified[i].k == (was_errno ? SECCOMP_RET_USER_NOTIF : prog[i].k));
    CHECK(notified[i].jt == prog[i].jt);
    CHECK(notified[i].jf == prog[i].jf);
  }
}

TEST_CASE("refusals_notified: the built-in program refuses the same calls, through confine, and allows the rest") {
  auto plain = builtin_seccomp_program(true, false).code;
  auto notified = refusals_notified(plain);
  // Refused: each one is handed to confine, which answers with the plain program's errno.
  for (const auto& c : {call_of("bpf"), call_of("unshare", CLONE_NEWUSER), call_of("chmod", 0, 04755), call_of("keyctl")}) {
    INFO("syscall " << c.nr);
    CHECK(action_of(plain, c) == SECCOMP_RET_ERRNO);
    CHECK(action_of(notified, c) == SECCOMP_RET_USER_NOTIF);
  }
  // Compatibility answers (ENOSYS: the caller falls back to a call the filter checks) never leave the kernel.
  for (const auto& c : {call_of("io_uring_setup"), call_of("clone3"), call_of("openat2")}) {
    INFO("syscall " << c.nr);
    CHECK(action_of(plain, c) == SECCOMP_RET_ERRNO);
    CHECK(action_of(notified, c) == SECCOMP_RET_ERRNO);
  }
  // Allowed: unchanged, never leaving the kernel.
  for (const auto& c : {call_of("getppid"), call_of("unshare", CLONE_FILES), call_of("chmod", 0, 0644)}) {
    INFO("syscall " << c.nr);
    CHECK(action_of(plain, c) == SECCOMP_RET_ALLOW);
    CHECK(action_of(notified, c) == SECCOMP_RET_ALLOW);
  }
  // Another ABI still kills: there is no errno to answer with.
  auto x32 = call_of("getppid");
  x32.arch = AUDIT_ARCH_I386;
  CHECK(action_of(notified, x32) == action_of(plain, x32));
  CHECK(action_of(notified, x32) != SECCOMP_RET_USER_NOTIF);
}

TEST_CASE("refusing_rule: the first refusing rule whose argument checks hold, or none for the default") {
  const auto& policy = builtin_seccomp_policy();
  std::uint64_t newuser[6] = {CLONE_NEWUSER};
  const auto* r = refusing_rule(policy, resolve_syscall("unshare"), newuser);
  REQUIRE(r);
  CHECK(r->group == "new-namespaces");
  CHECK(r->unless == RuleCondition::allow_nested);

  std::uint64_t setuid_mode[6] = {0, 04755};
  r = refusing_rule(policy, resolve_syscall("chmod"), setuid_mode);
  REQUIRE(r);
  CHECK(r->group == "setuid-files");

  std::uint64_t none[6] = {};
  r = refusing_rule(policy, resolve_syscall("io_uring_setup"), none);
  REQUIRE(r);
  CHECK(r->group == "io-uring");

  // Checks that do not hold: no rule refused it.
  std::uint64_t plain_mode[6] = {0, 0644};
  CHECK(refusing_rule(policy, resolve_syscall("chmod"), plain_mode) == nullptr);
  std::uint64_t files[6] = {CLONE_FILES};
  CHECK(refusing_rule(policy, resolve_syscall("unshare"), files) == nullptr);
  CHECK(refusing_rule(policy, resolve_syscall("getppid"), none) == nullptr);
}

TEST_CASE("refusing_rule: allow rules are skipped, and a policy's default refuses with no rule named") {
  auto policy = parse_seccomp_policy(R"(format = "confine-seccomp/1"
default = "errno:EPERM"

[[rule]]
group = "allowed-ptrace"
why = "a test"
action = "allow"
syscalls = [
  "ptrace",
]

[[rule]]
group = "refused-ptrace"
why = "a test"
action = "errno:EACCES"
syscalls = [
  "ptrace",
]
)", "test.toml");
  REQUIRE(policy);
  std::uint64_t none[6] = {};
  const auto* r = refusing_rule(*policy, resolve_syscall("ptrace"), none);
  REQUIRE(r);
  CHECK(r->group == "refused-ptrace");
  CHECK(refusing_rule(*policy, resolve_syscall("getppid"), none) == nullptr);
}

TEST_CASE("seccomp_for: refusals are recorded, except with --allow-nested or a policy that refuses the handover") {
  auto p = workspace_policy();
  auto recorded = seccomp_for(p, full_mode());
  REQUIRE(recorded);
  CHECK_FALSE(recorded->notifying.empty());
  CHECK(same_program(recorded->notifying, refusals_notified(recorded->code)));

  p.protection.allow_nested = true;  // a nested sandbox may need the one listener a filter chain can have
  auto nested = seccomp_for(p, full_mode());
  REQUIRE(nested);
  CHECK(nested->notifying.empty());

  p.protection.allow_nested = false;
  for (const char* refused : {"sendmsg", "close"}) {
    INFO(refused);
    auto policy = parse_seccomp_policy(std::string(R"(format = "confine-seccomp/1"
default = "allow"

[[rule]]
group = "no-handover"
why = "a test"
action = "errno:EPERM"
syscalls = [
  ")") + refused + "\",\n]\n",
                                       "test.toml");
    REQUIRE(policy);
    p.protection.custom_seccomp = *policy;
    auto custom = seccomp_for(p, full_mode());
    REQUIRE(custom);
    CHECK_FALSE(custom->code.empty());
    CHECK(custom->notifying.empty());  // the command would wait for an answer from a listener it holds itself
  }

  auto allow_all = parse_seccomp_policy("format = \"confine-seccomp/1\"\ndefault = \"allow\"\n", "allow-all.toml");
  REQUIRE(allow_all);
  p.protection.custom_seccomp = *allow_all;
  auto custom = seccomp_for(p, full_mode());
  REQUIRE(custom);
  CHECK_FALSE(custom->notifying.empty());
  CHECK(same_program(custom->notifying, refusals_notified(custom->code)));
}

TEST_CASE("refusal_name: the log's word for each network refusal") {
  CHECK(refusal_name(NetRefusal::not_allowed) == "not_allowed");
  CHECK(refusal_name(NetRefusal::internal_address) == "internal_address");
  CHECK(refusal_name(NetRefusal::request_rule) == "request_rule");
  CHECK(refusal_name(NetRefusal::sni_mismatch) == "sni_mismatch");
  CHECK(refusal_name(NetRefusal::malformed) == "malformed");
  CHECK(refusal_name(NetRefusal::placeholder) == "placeholder");
}

TEST_CASE("allow_hint: the flag that would let it through, none where no flag would") {
  CHECK(allow_hint(NetRefusal::not_allowed, "evil.example", 443) == "--allow evil.example:443 (a profile: [network] allow)");
  // An IPv6 address is bracketed: --allow ::1:443 would name the address ::1:443 (on every port).
  CHECK(allow_hint(NetRefusal::not_allowed, "::1", 443) == "--allow [::1]:443 (a profile: [network] allow)");
  CHECK(allow_hint(NetRefusal::not_allowed, "::ffff:127.0.0.1", 80) ==
        "--allow [::ffff:127.0.0.1]:80 (a profile: [network] allow)");
  // Port 0: a name the DNS stub was asked for.
  CHECK(allow_hint(NetRefusal::not_allowed, "evil.example", 0) == "--allow evil.example (a profile: [network] allow)");
  CHECK(allow_hint(NetRefusal::internal_address, "localhost", 8080) ==
        "--allow ADDRESS:8080 for the internal address localhost resolves to");
  CHECK(allow_hint(NetRefusal::request_rule, "api.example", 443) ==
        "--allow 'METHOD api.example/PATH' for the request, or a --broker");
  CHECK(allow_hint(NetRefusal::sni_mismatch, "api.example", 443).empty());
  CHECK(allow_hint(NetRefusal::malformed, "", 0).empty());
  CHECK(allow_hint(NetRefusal::placeholder, "api.example", 443) ==
        "a --broker for HTTPS to api.example, or --for http://api.example:443 if that port speaks only plain HTTP");
}
