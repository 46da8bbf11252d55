// Docker/OCI seccomp profiles: moby's default profile converts and compiles to the filter it promises, each
// action and operator maps as in Docker, and malformed profiles fail with the JSON location, never a crash.
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bpf_eval.h"
#include "core/oci_seccomp.h"
#include "core/seccomp_compile.h"

using namespace confine;
using confine::test::run_bpf;
using confine::test::SeccompData;

namespace {

constexpr std::uint32_t kEperm = SECCOMP_RET_ERRNO | EPERM;
constexpr const char* kKernel = "6.1.0-28-amd64";

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

SeccompPolicy parse_ok(const std::string& text, std::string_view kernel = kKernel) {
  auto p = parse_oci_seccomp(text, "profile.json", kernel);
  INFO((p.ok() ? std::string() : p.error().message()));
  REQUIRE(p.ok());
  return *p;
}

std::string parse_error(const std::string& text, std::string_view kernel = kKernel) {
  auto p = parse_oci_seccomp(text, "profile.json", kernel);
  REQUIRE_FALSE(p.ok());
  return p.error().message();
}

struct Filter {
  SeccompProgram prog;
  std::uint32_t operator()(const char* name, std::uint64_t a0 = 0, std::uint64_t a1 = 0) const {
    SeccompData d;
    d.arch = AUDIT_ARCH_X86_64;
    d.nr = seccomp_syscall_resolve_name(name);
    d.args[0] = a0;
    d.args[1] = a1;
    return run_bpf(prog.code, d);
  }
};

Filter compiled(const SeccompPolicy& policy) {
  auto prog = compile_seccomp(policy, false);
  INFO((prog.ok() ? std::string() : prog.error().message()));
  REQUIRE(prog.ok());
  return Filter{*prog};
}

// A profile denying everything but `getpid` and the rule given.
std::string profile_with(const std::string& rule) {
  return R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
    {"names": ["getpid"], "action": "SCMP_ACT_ALLOW"}, )" + rule + "]}";
}

std::string arg_rule(const std::string& op, std::uint64_t value, std::uint64_t value_two = 0) {
  return R"({"names": ["personality"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": )" +
         std::to_string(value) + R"(, "valueTwo": )" + std::to_string(value_two) + R"(, "op": ")" + op + R"("}]})";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("looks_like_oci_seccomp tells JSON from TOML") {
  CHECK(looks_like_oci_seccomp("{}"));
  CHECK(looks_like_oci_seccomp(" \n\t{\"defaultAction\": 1}"));
  CHECK_FALSE(looks_like_oci_seccomp("format = \"confine-seccomp/1\"\n"));
  CHECK_FALSE(looks_like_oci_seccomp("# {\n"));
  CHECK_FALSE(looks_like_oci_seccomp(""));
}

TEST_CASE("moby's default profile converts, compiles and filters as Docker's does") {
  auto text = slurp(std::filesystem::path(CONFINE_SOURCE_DIR) / "tests/fixtures/docker-default-seccomp.json");
  REQUIRE(looks_like_oci_seccomp(text));
  auto policy = parse_ok(text);
  CHECK(policy.default_action.kind == SeccompAction::Kind::error);
  CHECK(policy.default_action.err == EPERM);
  CHECK(policy.default_action.text == "errno:EPERM");
  auto verdict = compiled(policy);
  CHECK(verdict("read") == SECCOMP_RET_ALLOW);
  CHECK(verdict("execve") == SECCOMP_RET_ALLOW);
  CHECK(verdict("arch_prctl") == SECCOMP_RET_ALLOW);  // includes.arches lists amd64
  CHECK(verdict("ptrace") == SECCOMP_RET_ALLOW);      // includes.minKernel 4.8 <= 6.1
  CHECK(verdict("kexec_load") == kEperm);
  CHECK(verdict("open_by_handle_at") == kEperm);  // only with CAP_DAC_READ_SEARCH
  CHECK(verdict("mount") == kEperm);              // only with CAP_SYS_ADMIN
  CHECK(verdict("clone3") == (SECCOMP_RET_ERRNO | ENOSYS));
  CHECK(verdict("clone", 0x10000000 | 17) == kEperm);            // CLONE_NEWUSER
  CHECK(verdict("clone", 0x003d0f00) == SECCOMP_RET_ALLOW);      // pthread_create's flags
  CHECK(verdict("socket", 40) == kEperm);                        // AF_VSOCK (SCMP_CMP_NE 40)
  CHECK(verdict("socket", 2) == SECCOMP_RET_ALLOW);
  for (std::uint64_t persona : {0ULL, 8ULL, 0x20000ULL, 0x20008ULL, 0xffffffffULL})
    CHECK(verdict("personality", persona) == SECCOMP_RET_ALLOW);
  for (std::uint64_t persona : {1ULL, 0x0040000ULL, 0x1ffffffffULL}) CHECK(verdict("personality", persona) == kEperm);
  for (const auto& r : policy.rules)
    for (bool optional : r.optional) CHECK(optional);  // names this libseccomp does not know are skipped
}

TEST_CASE("includes.minKernel is compared with the running kernel") {
  auto text = profile_with(R"({"names": ["ptrace"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "4.8"}})");
  CHECK(compiled(parse_ok(text, "6.1.0"))("ptrace") == SECCOMP_RET_ALLOW);
  CHECK(compiled(parse_ok(text, "4.8.0-1-generic"))("ptrace") == SECCOMP_RET_ALLOW);
  CHECK(compiled(parse_ok(text, "4.7.10"))("ptrace") == kEperm);
  CHECK(compiled(parse_ok(text, "4.10.0"))("ptrace") == SECCOMP_RET_ALLOW);  // numerically, not as text
  auto excluded = profile_with(R"({"names": ["ptrace"], "action": "SCMP_ACT_ALLOW", "excludes": {"minKernel": "5.0"}})");
  CHECK(compiled(parse_ok(excluded, "4.19.0"))("ptrace") == SECCOMP_RET_ALLOW);
  CHECK(compiled(parse_ok(excluded, "5.0.0"))("ptrace") == kEperm);
  CHECK(contains(parse_error(text, "unknown"), "cannot read the kernel version"));
  CHECK(contains(parse_error(profile_with(R"({"names": ["ptrace"], "action": "SCMP_ACT_ALLOW",
                                             "includes": {"minKernel": "4"}})")),
                 "syscalls[1].includes.minKernel"));
}

TEST_CASE("capability and architecture filters are decided for confine's process") {
  auto caps = profile_with(R"({"names": ["mount"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_ADMIN"]}},
                              {"names": ["chroot"], "action": "SCMP_ACT_ALLOW", "excludes": {"caps": ["CAP_SYS_CHROOT"]}})");
  auto p = parse_ok(caps);
  CHECK(p.rules.size() == 2);  // getpid and chroot: the includes.caps rule is gone
  auto verdict = compiled(p);
  CHECK(verdict("mount") == kEperm);
  CHECK(verdict("chroot") == SECCOMP_RET_ALLOW);
  for (const char* native : {"amd64", "x86_64", "SCMP_ARCH_X86_64"}) {
    auto arches = profile_with(std::string(R"({"names": ["iopl"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": [")") +
                               native + R"("]}}, {"names": ["ioperm"], "action": "SCMP_ACT_ALLOW", "excludes": {"arches": [")" +
                               native + R"("]}})");
    auto v = compiled(parse_ok(arches));
    CHECK(v("iopl") == SECCOMP_RET_ALLOW);
    CHECK(v("ioperm") == kEperm);
  }
  auto other = profile_with(R"({"names": ["iopl"], "action": "SCMP_ACT_ALLOW", "includes": {"arches": ["s390x"]}},
                               {"names": ["ioperm"], "action": "SCMP_ACT_ALLOW", "excludes": {"arches": ["arm64"]}})");
  auto v = compiled(parse_ok(other));
  CHECK(v("iopl") == kEperm);
  CHECK(v("ioperm") == SECCOMP_RET_ALLOW);
}

TEST_CASE("each supported action maps to confine's") {
  auto action_of = [](const std::string& rule) {
    auto p = parse_ok(R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [)" + rule + "]}");
    REQUIRE(p.rules.size() == 1);
    return std::pair{p.rules[0].action, compiled(p)("getpid")};
  };
  auto [errno_default, errno_ret] = action_of(R"({"names": ["getpid"], "action": "SCMP_ACT_ERRNO"})");
  CHECK(errno_default.text == "errno:EPERM");
  CHECK(errno_ret == kEperm);
  auto [enosys, enosys_ret] = action_of(R"({"names": ["getpid"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38})");
  CHECK(enosys.text == "errno:ENOSYS");
  CHECK(enosys_ret == (SECCOMP_RET_ERRNO | ENOSYS));
  auto [unnamed, unnamed_ret] = action_of(R"({"names": ["getpid"], "action": "SCMP_ACT_ERRNO", "errnoRet": 4000})");
  CHECK(unnamed.text == "errno:4000");
  CHECK(unnamed_ret == (SECCOMP_RET_ERRNO | 4000));
  for (const char* kill : {"SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_KILL_PROCESS"}) {
    auto [a, ret] = action_of(std::string(R"({"names": ["getpid"], "action": ")") + kill + "\"}");
    CHECK(a.text == "kill");
    CHECK(ret == SECCOMP_RET_KILL_PROCESS);
  }
  // defaultErrnoRet sets the default's errno; a rule's SCMP_ACT_ERRNO without errnoRet is EPERM (runtime spec).
  auto p = parse_ok(R"({"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 38, "syscalls": [
                       {"names": ["getpid"], "action": "SCMP_ACT_ALLOW"}, {"names": ["kill"], "action": "SCMP_ACT_ERRNO"}]})");
  CHECK(p.default_action.text == "errno:ENOSYS");
  auto v = compiled(p);
  CHECK(v("getppid") == (SECCOMP_RET_ERRNO | ENOSYS));
  CHECK(v("kill") == kEperm);
  // A rule with the default's action changes nothing and is dropped (libseccomp would refuse it).
  auto same = parse_ok(profile_with(R"({"names": ["kill"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1})"));
  CHECK(same.rules.size() == 1);
}

TEST_CASE("unsupported actions are errors naming the action and where it is") {
  for (const char* action : {"SCMP_ACT_TRAP", "SCMP_ACT_TRACE", "SCMP_ACT_LOG", "SCMP_ACT_NOTIFY", "SCMP_ACT_WHATEVER"}) {
    INFO(action);
    auto rule_error = parse_error(profile_with(std::string(R"({"names": ["kill"], "action": ")") + action + "\"}"));
    CHECK(contains(rule_error, "profile.json: syscalls[1].action"));
    CHECK(contains(rule_error, action));
    auto default_error = parse_error(std::string(R"({"defaultAction": ")") + action + "\"}");
    CHECK(contains(default_error, "profile.json: defaultAction"));
    CHECK(contains(default_error, action));
  }
  CHECK(contains(parse_error(profile_with(R"({"names": ["kill"], "action": "SCMP_ACT_ALLOW", "errnoRet": 1})")),
                 "syscalls[1].errnoRet"));
  CHECK(contains(parse_error(R"({"defaultAction": "SCMP_ACT_ALLOW", "flags": ["SECCOMP_FILTER_FLAG_SPEC_ALLOW"]})"),
                 "SECCOMP_FILTER_FLAG_SPEC_ALLOW"));
  CHECK(contains(parse_error(R"({"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "/run/agent.sock"})"), "listenerPath"));
  CHECK(parse_ok(R"({"defaultAction": "SCMP_ACT_ALLOW", "flags": [], "listenerPath": "", "architectures": ["SCMP_ARCH_X86_64"]})")
            .rules.empty());
}

TEST_CASE("each comparison operator maps to the same comparison in the BPF") {
  struct Case {
    const char* op;
    std::uint64_t value, value_two;
    std::vector<std::pair<std::uint64_t, bool>> expect;  // argument -> allowed
  };
  const Case cases[] = {
      {"SCMP_CMP_EQ", 8, 0, {{8, true}, {7, false}, {9, false}, {0x100000008ULL, false}}},
      {"SCMP_CMP_NE", 8, 0, {{8, false}, {7, true}, {9, true}}},
      {"SCMP_CMP_LT", 8, 0, {{7, true}, {8, false}, {9, false}, {0, true}}},
      {"SCMP_CMP_LE", 8, 0, {{7, true}, {8, true}, {9, false}}},
      {"SCMP_CMP_GT", 8, 0, {{7, false}, {8, false}, {9, true}, {0x100000000ULL, true}}},
      {"SCMP_CMP_GE", 8, 0, {{7, false}, {8, true}, {9, true}}},
      // value is the mask, valueTwo the masked argument's value
      {"SCMP_CMP_MASKED_EQ", 0xf0, 0x20, {{0x20, true}, {0x2f, true}, {0x30, false}, {0x120, true}, {0x10, false}}},
  };
  for (const auto& c : cases) {
    auto verdict = compiled(parse_ok(profile_with(arg_rule(c.op, c.value, c.value_two))));
    for (auto [arg, allowed] : c.expect) {
      INFO(c.op << " arg " << arg);
      CHECK(verdict("personality", arg) == (allowed ? SECCOMP_RET_ALLOW : kEperm));
    }
  }
}

TEST_CASE("a rule's argument checks are ANDed, or ORed when one argument is compared twice (as runc does)") {
  auto both = compiled(parse_ok(profile_with(R"({"names": ["kill"], "action": "SCMP_ACT_ALLOW", "args": [
      {"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}, {"index": 1, "value": 9, "op": "SCMP_CMP_EQ"}]})")));
  CHECK(both("kill", 1, 9) == SECCOMP_RET_ALLOW);
  CHECK(both("kill", 1, 15) == kEperm);
  CHECK(both("kill", 2, 9) == kEperm);
  auto either = compiled(parse_ok(profile_with(R"({"names": ["kill"], "action": "SCMP_ACT_ALLOW", "args": [
      {"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}, {"index": 0, "value": 3, "op": "SCMP_CMP_EQ"}]})")));
  CHECK(either("kill", 1) == SECCOMP_RET_ALLOW);
  CHECK(either("kill", 3) == SECCOMP_RET_ALLOW);
  CHECK(either("kill", 2) == kEperm);
}

TEST_CASE("rules carry their index or comment, every name is optional, and `name` is accepted") {
  auto p = parse_ok(profile_with(R"({"name": "no_such_syscall_anywhere", "action": "SCMP_ACT_ALLOW", "comment": "future"})"));
  REQUIRE(p.rules.size() == 2);
  CHECK(p.rules[0].group == "oci[0]");
  CHECK(p.rules[0].why == "from profile.json");
  CHECK(p.rules[1].group == "future");
  CHECK(p.rules[1].why == "future");
  CHECK(p.rules[1].optional == std::vector<bool>{true});
  CHECK(compile_seccomp(p, false).ok());  // an unknown name is skipped, as Docker does
}

TEST_CASE("conflicting unconditional actions for one syscall are an error naming it") {
  auto message = parse_error(R"({"defaultAction": "SCMP_ACT_KILL", "syscalls": [
      {"names": ["getpid", "ptrace"], "action": "SCMP_ACT_ALLOW"},
      {"names": ["ptrace"], "action": "SCMP_ACT_ERRNO"}]})");
  CHECK(contains(message, "syscalls[1]"));
  CHECK(contains(message, "`ptrace`"));
  CHECK(contains(message, "syscalls[0]"));
  // The same action twice, or different actions under argument checks, are fine.
  auto fine = compiled(parse_ok(R"({"defaultAction": "SCMP_ACT_KILL", "syscalls": [
      {"names": ["ptrace"], "action": "SCMP_ACT_ALLOW"}, {"names": ["ptrace"], "action": "SCMP_ACT_ALLOW"},
      {"names": ["kill"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 1, "value": 0, "op": "SCMP_CMP_EQ"}]},
      {"names": ["kill"], "action": "SCMP_ACT_ERRNO", "args": [{"index": 1, "value": 9, "op": "SCMP_CMP_EQ"}]}]})"));
  CHECK(fine("ptrace") == SECCOMP_RET_ALLOW);
  CHECK(fine("kill", 1, 0) == SECCOMP_RET_ALLOW);
  CHECK(fine("kill", 1, 9) == kEperm);
  CHECK(fine("kill", 1, 15) == SECCOMP_RET_KILL_PROCESS);
}

TEST_CASE("malformed profiles fail with the location, never a crash") {
  struct Case {
    std::string text, where;
  };
  const std::string head = R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [)";
  const Case cases[] = {
      {R"({"defaultAction": "SCMP_ACT_ERRNO",)", "invalid JSON: parse error at line 1"},
      {"{\"defaultAction\": \"SCMP_ACT_ERRNO\"\n  \"syscalls\": []}", "line 2"},
      {"[]", "top level: must be a JSON object"},
      {R"({"syscalls": []})", "defaultAction: missing"},
      {R"({"defaultAction": 1})", "defaultAction: must be a string"},
      {R"({"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": -1})", "defaultErrnoRet: must be a non-negative integer"},
      {R"({"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 70000})", "defaultErrnoRet: must be at most 4095"},
      {R"({"defaultAction": "SCMP_ACT_ERRNO", "syscall": []})", "top level: unknown key `syscall`"},
      {R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": {}})", "syscalls: must be an array"},
      {head + R"({"names": "read", "action": "SCMP_ACT_ALLOW"}]})", "syscalls[0].names: must be an array of strings"},
      {head + R"({"names": ["read", 3], "action": "SCMP_ACT_ALLOW"}]})", "syscalls[0].names[1]: must be a string"},
      {head + R"({"names": [], "action": "SCMP_ACT_ALLOW"}]})", "syscalls[0].names: is empty"},
      {head + R"({"action": "SCMP_ACT_ALLOW"}]})", "syscalls[0].names: missing"},
      {head + R"({"name": "read", "names": ["read"], "action": "SCMP_ACT_ALLOW"}]})", "syscalls[0]: has both"},
      {head + R"({"names": ["read"]}]})", "syscalls[0].action: missing"},
      {head + R"({"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": "0", "value": 1, "op": "SCMP_CMP_EQ"}]}]})",
       "syscalls[0].args[0].index: must be a non-negative integer"},
      {head + R"({"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 6, "value": 1, "op": "SCMP_CMP_EQ"}]}]})",
       "syscalls[0].args[0].index: must be 0 to 5"},
      {head + R"({"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 1.5, "op": "SCMP_CMP_EQ"}]}]})",
       "syscalls[0].args[0].value: must be a non-negative integer"},
      {head + R"({"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_LIKE"}]}]})",
       "syscalls[0].args[0].op: unknown operator `SCMP_CMP_LIKE`"},
      {head + R"({"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 1}]}]})",
       "syscalls[0].args[0].op: missing"},
      {head + R"({"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": {"index": 0}}]})", "syscalls[0].args: must be an array"},
      {head + R"({"names": ["read"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": "CAP_X"}}]})",
       "syscalls[0].includes.caps: must be an array of strings"},
      {head + R"({"names": ["read"], "action": "SCMP_ACT_ALLOW", "includes": {"kernel": "5.0"}}]})",
       "syscalls[0].includes: unknown key `kernel`"},
      {head + "7]}", "syscalls[0]: must be an object"},
      {R"({"defaultAction": "SCMP_ACT_ERRNO", "archMap": [{"architecture": 1}]})", "archMap[0].architecture: must be a string"},
      {R"({"defaultAction": "SCMP_ACT_ERRNO", "architectures": ["SCMP_ARCH_X86_64"], "archMap": [{"architecture": "SCMP_ARCH_X86_64"}]})",
       "has both `architectures` and `archMap`"},
      {std::string(40, '[') + std::string(40, ']'), "nested more than 32 levels deep"},
      {std::string(1, '{') + std::string(1 << 20, ' ') + "}", "larger than 1 MiB"},
  };
  for (const auto& c : cases) {
    INFO(c.text.substr(0, 200));
    auto message = parse_error(c.text);
    INFO(message);
    CHECK(message.starts_with("profile.json: "));
    CHECK(contains(message, c.where));
  }
}

TEST_CASE("the limits on rules and names hold") {
  std::string many_rules = R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [)";
  for (int i = 0; i < 4097; ++i) many_rules += std::string(i ? "," : "") + R"({"names": ["read"], "action": "SCMP_ACT_ALLOW"})";
  CHECK(contains(parse_error(many_rules + "]}"), "syscalls: more than 4096 rules"));
  std::string many_names = R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": [)";
  for (int i = 0; i < 4097; ++i) many_names += std::string(i ? "," : "") + "\"read\"";
  CHECK(contains(parse_error(many_names + R"(], "action": "SCMP_ACT_ALLOW"}]})"), "more than 4096 syscall names"));
}
