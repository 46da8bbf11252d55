// The compiled default policy, checked against the policy data for every syscall number of x86-64, plus the
// argument-dependent rules over a set of interesting argument values, in both modes.
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "bpf_eval.h"
#include "core/seccomp_verdict.h"
#include "core/seccomp_compile.h"
#include "core/seccomp_policy.h"

using namespace confine;
using confine::test::run_bpf;
using confine::test::SeccompData;

namespace {

constexpr int kMaxSyscall = 1024;

std::uint32_t expected_ret(const SeccompAction& a) {
  switch (a.kind) {
    case SeccompAction::Kind::allow: return SECCOMP_RET_ALLOW;
    case SeccompAction::Kind::error: return SECCOMP_RET_ERRNO | static_cast<std::uint32_t>(a.err);
    case SeccompAction::Kind::kill: return SECCOMP_RET_KILL_PROCESS;
  }
  return 0;
}

// The newest syscall named by the built-in policy or `p`.
int newest_named(const SeccompPolicy& p) {
  int newest = 0;
  for (const auto* policy : {&builtin_seccomp_policy(), &p})
    for (const auto& r : policy->rules)
      for (const auto& name : r.syscalls) newest = std::max(newest, resolve_syscall(name));
  return newest;
}

// The verdicts the policy data allows: ENOSYS above the newest syscall named, else the actions of every rule
// naming the syscall whose checks hold, or the default when none does. (Where rules overlap, libseccomp may
// return either: the data must not mix allow and deny on one case, which check_every_syscall asserts.)
std::set<std::uint32_t> reference(const SeccompPolicy& p, int nr, const std::uint64_t (&args)[6]) {
  if (p.newer_syscalls_enosys && nr > newest_named(p)) return {SECCOMP_RET_ERRNO | ENOSYS};
  std::set<std::uint32_t> out;
  for (const auto& r : p.rules)
    for (const auto& name : r.syscalls)
      if (resolve_syscall(name) == nr && rule_matches(r, args)) out.insert(expected_ret(r.action));
  if (out.empty()) out.insert(expected_ret(p.default_action));
  return out;
}

// Values on both sides of every comparison in the policy, with stray upper bits too.
std::vector<std::uint64_t> interesting_values(const SeccompPolicy& p, unsigned arg) {
  std::set<std::uint64_t> v = {0, 1, 0xffffffff, ~0ULL, 0x100000000ULL};
  for (const auto& r : p.rules)
    for (const auto& alt : r.alternatives)
      for (const auto& c : alt)
        if (c.arg == arg)
          for (std::uint64_t x : std::initializer_list<std::uint64_t>{c.value, c.value - 1, c.value + 1, c.value | 0xdead00000000ULL, c.value | c.mask, c.mask})
            v.insert(x);
  return {v.begin(), v.end()};
}

// Argument-dependent syscall number -> the argument indices its rules compare (sorted).
std::map<int, std::vector<unsigned>> checked_args(const SeccompPolicy& p) {
  std::map<int, std::set<unsigned>> sets;
  for (const auto& r : p.rules)
    for (const auto& n : r.syscalls)
      for (const auto& alt : r.alternatives)
        for (const auto& c : alt) sets[resolve_syscall(n)].insert(c.arg);
  std::map<int, std::vector<unsigned>> out;
  for (const auto& [nr, args] : sets) out[nr] = {args.begin(), args.end()};
  return out;
}

// Calls fn with every combination that takes one value from each list.
template <typename Fn>
void for_each_combination(const std::vector<std::vector<std::uint64_t>>& lists, Fn fn,
                          std::vector<std::uint64_t> prefix = {}) {
  if (prefix.size() == lists.size()) return fn(prefix);
  for (auto v : lists[prefix.size()]) {
    prefix.push_back(v);
    for_each_combination(lists, fn, prefix);
    prefix.pop_back();
  }
}

SeccompPolicy default_policy(bool allow_nested, bool namespaces) {
  return select_seccomp_rules(builtin_seccomp_policy(), allow_nested, namespaces);
}

void check_every_syscall(const SeccompPolicy& policy) {
  auto prog = compile_seccomp(policy, false);
  REQUIRE(prog.ok());
  SeccompData d;
  d.arch = AUDIT_ARCH_X86_64;
  for (int nr = 0; nr < kMaxSyscall; ++nr) {
    d.nr = nr;
    std::fill(std::begin(d.args), std::end(d.args), 0);
    INFO("syscall " << nr);
    CHECK(reference(policy, nr, d.args).count(run_bpf(prog->code, d)) == 1);
  }
  // Every argument-dependent syscall, over every interesting combination of the arguments its rules check.
  for (const auto& [nr, checked] : checked_args(policy)) {
    std::vector<std::vector<std::uint64_t>> values;
    for (unsigned arg : checked) values.push_back(interesting_values(policy, arg));
    for_each_combination(values, [&](const std::vector<std::uint64_t>& combination) {
      d.nr = nr;
      std::fill(std::begin(d.args), std::end(d.args), 0);
      for (std::size_t i = 0; i < checked.size(); ++i) d.args[checked[i]] = combination[i];
      INFO("syscall " << nr << " args " << d.args[0] << " " << d.args[1] << " " << d.args[2] << " " << d.args[3]);
      auto allowed = reference(policy, nr, d.args);
      REQUIRE(allowed.count(run_bpf(prog->code, d)) == 1);
      REQUIRE((allowed.size() == 1 || allowed.count(SECCOMP_RET_ALLOW) == 0));
    });
  }
}

}  // namespace

TEST_CASE("the default policy's BPF matches its data for every syscall (full mode)") {
  check_every_syscall(default_policy(false, true));
}

TEST_CASE("the default policy's BPF matches its data for every syscall (fallback mode, --allow-nested)") {
  check_every_syscall(default_policy(true, false));
}

TEST_CASE("the default policy blocks what it promises") {
  auto policy = default_policy(false, true);
  auto prog = compile_seccomp(policy, false);
  REQUIRE(prog.ok());
  auto verdict = [&](const char* name, std::uint64_t a0 = 0, std::uint64_t a1 = 0, std::uint64_t a2 = 0,
                     std::uint64_t a3 = 0) {
    SeccompData d;
    d.arch = AUDIT_ARCH_X86_64;
    d.nr = seccomp_syscall_resolve_name(name);
    d.args[0] = a0;
    d.args[1] = a1;
    d.args[2] = a2;
    d.args[3] = a3;
    return run_bpf(prog->code, d);
  };
  constexpr auto eperm = SECCOMP_RET_ERRNO | EPERM;
  CHECK(verdict("ioctl", 0, 0x5412) == eperm);                   // TIOCSTI
  CHECK(verdict("ioctl", 0, 0xffffffff00005412ULL) == eperm);    // upper bits cannot smuggle it past
  CHECK(verdict("ioctl", 0, 0x541C) == eperm);                   // TIOCLINUX
  CHECK(verdict("ioctl", 0, 0x5401) == SECCOMP_RET_ALLOW);       // TCGETS
  CHECK(verdict("io_uring_setup") == (SECCOMP_RET_ERRNO | ENOSYS));
  CHECK(verdict("clone3") == (SECCOMP_RET_ERRNO | ENOSYS));
  CHECK(verdict("clone", 0x10000000 | 17) == eperm);             // CLONE_NEWUSER|SIGCHLD
  CHECK(verdict("clone", 0x003d0f00) == SECCOMP_RET_ALLOW);      // pthread_create's flags
  CHECK(verdict("unshare", 0x00020000) == eperm);
  CHECK(verdict("keyctl") == eperm);
  CHECK(verdict("socket", 17) == (SECCOMP_RET_ERRNO | EAFNOSUPPORT));  // AF_PACKET
  CHECK(verdict("socket", 40) == (SECCOMP_RET_ERRNO | EAFNOSUPPORT));  // AF_VSOCK
  CHECK(verdict("socket", 2) == SECCOMP_RET_ALLOW);
  CHECK(verdict("personality", 0xffffffff) == SECCOMP_RET_ALLOW);
  CHECK(verdict("personality", 0x0040000) == eperm);             // ADDR_NO_RANDOMIZE
  CHECK(verdict("personality", 8) == SECCOMP_RET_ALLOW);         // PER_LINUX32
  CHECK(verdict("getppid") == SECCOMP_RET_ALLOW);
}

TEST_CASE("the default policy refuses setuid and setgid modes on every path a mode arrives by") {
  auto prog = compile_seccomp(default_policy(false, true), false);
  REQUIRE(prog.ok());
  auto verdict = [&](int nr, std::uint64_t a1, std::uint64_t a2 = 0, std::uint64_t a3 = 0) {
    SeccompData d;
    d.arch = AUDIT_ARCH_X86_64;
    d.nr = nr;
    d.args[0] = 3, d.args[1] = a1, d.args[2] = a2, d.args[3] = a3;
    return run_bpf(prog->code, d);
  };
  constexpr auto eperm = SECCOMP_RET_ERRNO | EPERM;
  constexpr std::uint64_t o_creat = 0100, o_tmpfile = 020200000, s_ifreg = 0100000, rdwr = 2;
  // fchmodat2 (Linux 6.6) is in the filter even where libseccomp's table predates it.
  REQUIRE(resolve_syscall("fchmodat2") == 452);
  for (std::uint64_t bad : {04755ULL, 02755ULL, 06755ULL, 04000ULL, 0xffff0000ULL | 02000}) {
    INFO("mode " << std::oct << bad);
    CHECK(verdict(SCMP_SYS(chmod), bad) == eperm);
    CHECK(verdict(SCMP_SYS(fchmod), bad) == eperm);
    CHECK(verdict(SCMP_SYS(creat), bad) == eperm);
    CHECK(verdict(SCMP_SYS(mknod), s_ifreg | bad) == eperm);
    CHECK(verdict(SCMP_SYS(fchmodat), 0, bad) == eperm);
    CHECK(verdict(452, 0, bad) == eperm);
    CHECK(verdict(SCMP_SYS(mknodat), 0, s_ifreg | bad) == eperm);
    CHECK(verdict(SCMP_SYS(open), o_creat | rdwr, bad) == eperm);
    CHECK(verdict(SCMP_SYS(open), o_tmpfile | rdwr, bad) == eperm);
    CHECK(verdict(SCMP_SYS(openat), 0, o_creat | rdwr, bad) == eperm);
    CHECK(verdict(SCMP_SYS(openat), 0, o_tmpfile | rdwr, bad) == eperm);
    // Without O_CREAT or O_TMPFILE the kernel ignores the mode: those opens stay allowed.
    CHECK(verdict(SCMP_SYS(open), rdwr, bad) == SECCOMP_RET_ALLOW);
    CHECK(verdict(SCMP_SYS(openat), 0, rdwr, bad) == SECCOMP_RET_ALLOW);
  }
  for (std::uint64_t fine : {0755ULL, 0644ULL, 01777ULL, 0777ULL, 0ULL}) {
    INFO("mode " << std::oct << fine);
    CHECK(verdict(SCMP_SYS(chmod), fine) == SECCOMP_RET_ALLOW);
    CHECK(verdict(SCMP_SYS(fchmod), fine) == SECCOMP_RET_ALLOW);
    CHECK(verdict(SCMP_SYS(creat), fine) == SECCOMP_RET_ALLOW);
    CHECK(verdict(SCMP_SYS(fchmodat), 0, fine) == SECCOMP_RET_ALLOW);
    CHECK(verdict(452, 0, fine) == SECCOMP_RET_ALLOW);
    CHECK(verdict(SCMP_SYS(mknodat), 0, s_ifreg | fine) == SECCOMP_RET_ALLOW);
    CHECK(verdict(SCMP_SYS(openat), 0, o_creat | rdwr, fine) == SECCOMP_RET_ALLOW);
  }
  // openat2's mode is in a struct seccomp cannot read: callers are sent back to openat.
  CHECK(verdict(SCMP_SYS(openat2), 0) == (SECCOMP_RET_ERRNO | ENOSYS));
}

TEST_CASE("with --allow-nested, xattr writes are refused (a nested user namespace holds CAP_SETFCAP)") {
  for (bool namespaces : {true, false}) {
    auto nested = compile_seccomp(default_policy(true, namespaces), false);
    auto plain = compile_seccomp(default_policy(false, namespaces), false);
    REQUIRE(nested.ok());
    REQUIRE(plain.ok());
    // setxattrat (Linux 6.13) by number: libseccomp 2.5 does not know it.
    for (int nr : {SCMP_SYS(setxattr), SCMP_SYS(lsetxattr), SCMP_SYS(fsetxattr), 463}) {
      SeccompData d;
      d.arch = AUDIT_ARCH_X86_64;
      d.nr = nr;
      INFO("syscall " << nr);
      CHECK(run_bpf(nested->code, d) == (SECCOMP_RET_ERRNO | EPERM));
      CHECK(run_bpf(plain->code, d) == SECCOMP_RET_ALLOW);
    }
  }
}

TEST_CASE("other ABIs are killed: no bypass through int 0x80 or x32") {
  auto prog = compile_seccomp(default_policy(false, true), false);
  REQUIRE(prog.ok());
  SeccompData d;
  for (int nr = 0; nr < kMaxSyscall; ++nr) {
    d.nr = nr;
    d.arch = AUDIT_ARCH_I386;
    CHECK(run_bpf(prog->code, d) == SECCOMP_RET_KILL_PROCESS);
    d.arch = AUDIT_ARCH_X86_64;
    d.nr = nr | 0x40000000;  // __X32_SYSCALL_BIT
    CHECK(run_bpf(prog->code, d) == SECCOMP_RET_KILL_PROCESS);
  }
}

TEST_CASE("seccomp policy errors name the file and the problem") {
  auto bad = [](const std::string& text, const std::string& needle) {
    auto p = parse_seccomp_policy(text, "my.toml");
    std::string message;
    if (p.ok()) {
      auto prog = compile_seccomp(*p, false);
      REQUIRE_FALSE(prog.ok());
      message = prog.error().message();
    } else {
      message = p.error().message();
    }
    INFO(message);
    CHECK(message.find("my.toml") != std::string::npos);
    CHECK(message.find(needle) != std::string::npos);
  };
  const std::string head = "format = \"confine-seccomp/1\"\ndefault = \"allow\"\n";
  bad("format = \"nope\"\n", "format");
  bad(head + "[[rule]]\ngroup = \"x\"\naction = \"errno:EPERM\"\nsyscalls = [\"no_such_call\"]\n", "no_such_call");
  bad(head + "[[rule]]\ngroup = \"x\"\naction = \"errno:EWHAT\"\nsyscalls = [\"getpid\"]\n", "EWHAT");
  bad(head + "[[rule]]\ngroup = \"x\"\naction = \"errno:EPERM\"\nsyscalls = [\"ioctl\"]\narg1_in = [\"NOPE\"]\n", "NOPE");
  bad(head + "[[rule]]\ngroup = \"x\"\naction = \"errno:EPERM\"\nsyscalls = [\"getpid\"]\ncolour = 1\n", "colour");
  bad(head + "[[rule]\n", "my.toml:3");
  auto optional = parse_seccomp_policy(head + "[[rule]]\ngroup = \"x\"\naction = \"errno:EPERM\"\nsyscalls = [\"no_such_call?\"]\n", "my.toml");
  REQUIRE(optional.ok());
  CHECK(compile_seccomp(*optional, false).ok());
}

TEST_CASE("a rule's `unless` and `only` are read once, as conditions the run is checked against") {
  const std::string head = "format = \"confine-seccomp/1\"\ndefault = \"allow\"\n";
  auto rule = [](const std::string& group, const std::string& condition) {
    return "[[rule]]\ngroup = \"" + group + "\"\naction = \"errno:EPERM\"\nsyscalls = [\"getpid\"]\n" + condition + "\n";
  };
  auto refused = [&](const std::string& condition, const std::string& needle) {
    auto p = parse_seccomp_policy(head + rule("x", condition), "my.toml");
    REQUIRE_FALSE(p.ok());
    INFO(p.error().message());
    CHECK(p.error().message() == "my.toml: rule 1: " + needle);
  };
  refused("unless = \"sometimes\"", "unknown `unless` value `sometimes` (expected allow-nested)");
  refused("unless = \"no-namespaces\"", "unknown `unless` value `no-namespaces` (expected allow-nested)");
  refused("only = \"sometimes\"", "unknown `only` value `sometimes` (expected no-namespaces or allow-nested)");
  refused("only = 1", "`only` must be a string");

  auto p = parse_seccomp_policy(head + rule("always", "") + rule("unless-nested", "unless = \"allow-nested\"") +
                                    rule("only-fallback", "only = \"no-namespaces\"") +
                                    rule("only-nested", "only = \"allow-nested\""),
                                "my.toml");
  REQUIRE(p.ok());
  auto groups = [&](bool allow_nested, bool namespaces) {
    std::vector<std::string> out;
    for (const auto& r : select_seccomp_rules(*p, allow_nested, namespaces).rules) out.push_back(r.group);
    return out;
  };
  using Groups = std::vector<std::string>;
  CHECK(groups(false, true) == Groups{"always", "unless-nested"});
  CHECK(groups(false, false) == Groups{"always", "unless-nested", "only-fallback"});
  CHECK(groups(true, true) == Groups{"always", "only-nested"});
  CHECK(groups(true, false) == Groups{"always", "only-fallback", "only-nested"});
}

TEST_CASE("the rule groups listed at build time are the built-in policy's") {
  for (bool nested : {true, false}) CHECK(builtin_seccomp_rule_groups(nested) == seccomp_rule_groups(builtin_seccomp_policy(), nested));
}

TEST_CASE("the programs precompiled at build time are the built-in policy, compiled") {
  for (bool namespaces : {true, false})
    for (bool nested : {true, false}) {
      auto expected = compile_seccomp(select_seccomp_rules(builtin_seccomp_policy(), nested, namespaces), false);
      REQUIRE(expected.ok());
      auto built = builtin_seccomp_program(namespaces, nested);
      REQUIRE(built.code.size() == expected->code.size());
      CHECK(std::equal(built.code.begin(), built.code.end(), expected->code.begin(), [](const auto& a, const auto& b) {
        return a.code == b.code && a.jt == b.jt && a.jf == b.jf && a.k == b.k;
      }));
    }
}

namespace {

std::uint32_t verdict_of(const SeccompProgram& prog, int nr, std::uint32_t arch = AUDIT_ARCH_X86_64) {
  SeccompData d;
  d.arch = arch;
  d.nr = nr;
  return run_bpf(prog.code, d);
}

constexpr auto kEnosys = SECCOMP_RET_ERRNO | ENOSYS;

}  // namespace

TEST_CASE("syscalls newer than the policy answer ENOSYS; other ABIs and x32 are still killed") {
  // listns (Linux 6.19) is the newest syscall the built-in policy places.
  REQUIRE(newest_known_syscall(builtin_seccomp_policy()) == 470);
  for (bool namespaces : {true, false}) {
    auto prog = compile_seccomp(default_policy(false, namespaces), false);
    REQUIRE(prog.ok());
    CHECK(verdict_of(*prog, 470) == SECCOMP_RET_ALLOW);
    for (int nr : {471, 512, 600, 1023, 0x3fffffff}) {
      INFO("syscall " << nr);
      CHECK(verdict_of(*prog, nr) == kEnosys);
      CHECK(verdict_of(*prog, nr, AUDIT_ARCH_I386) == SECCOMP_RET_KILL_PROCESS);
    }
    CHECK(verdict_of(*prog, 0x40000000 | 600) == SECCOMP_RET_KILL_PROCESS);  // x32, not a newer native call
    CHECK(verdict_of(*prog, -1) != kEnosys);  // the "no syscall" of a tracer is the kernel's to answer
  }
}

TEST_CASE("a --seccomp policy keeps the built-in bound; the floor beside it has none") {
  auto p = parse_seccomp_policy("format = \"confine-seccomp/1\"\ndefault = \"allow\"\n"
                                "[[rule]]\ngroup = \"x\"\naction = \"errno:EPERM\"\nsyscalls = [\"ptrace\"]\n",
                                "my.toml");
  REQUIRE(p.ok());
  auto prog = compile_seccomp(*p, false);
  REQUIRE(prog.ok());
  CHECK(verdict_of(*prog, SCMP_SYS(ptrace)) == (SECCOMP_RET_ERRNO | EPERM));
  CHECK(verdict_of(*prog, 457) == SECCOMP_RET_ALLOW);  // statmount: newer than ptrace, known to the built-in policy
  CHECK(verdict_of(*prog, 600) == kEnosys);
  // The floor only adds refusals: a bound there would refuse what the user's policy allows.
  auto floor = compile_seccomp(select_seccomp_rules(seccomp_floor_policy(), false, true), false);
  REQUIRE(floor.ok());
  CHECK(verdict_of(*floor, 600) == SECCOMP_RET_ALLOW);
}

TEST_CASE("a rule restating the default compiles to nothing and is not listed") {
  const std::string head = "format = \"confine-seccomp/1\"\ndefault = \"allow\"\n";
  auto placed = parse_seccomp_policy(head + "[[rule]]\ngroup = \"placed\"\naction = \"allow\"\nsyscalls = [\"getpid\"]\n", "my.toml");
  auto empty = parse_seccomp_policy(head, "my.toml");
  REQUIRE(placed.ok());
  REQUIRE(empty.ok());
  auto a = compile_seccomp(*placed, false), b = compile_seccomp(*empty, false);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->code.size() == b->code.size());
  CHECK(seccomp_rule_groups(*placed, false).empty());
}

TEST_CASE("every syscall added since Linux 6.8 is placed by a rule with its why") {
  // 457 (statmount) to the newest placed: none is allowed by default alone.
  for (int nr = 457; nr <= 470; ++nr) {
    INFO("syscall " << nr);
    auto names = [&](const SeccompRule& r) {
      return std::any_of(r.syscalls.begin(), r.syscalls.end(), [&](const std::string& s) { return resolve_syscall(s) == nr; });
    };
    const auto& rules = builtin_seccomp_policy().rules;
    auto rule = std::find_if(rules.begin(), rules.end(), names);
    REQUIRE(rule != rules.end());
    CHECK_FALSE(rule->why.empty());
  }
  auto full = compile_seccomp(default_policy(false, true), false);
  auto nested = compile_seccomp(default_policy(true, true), false);
  REQUIRE(full.ok());
  REQUIRE(nested.ok());
  CHECK(verdict_of(*full, 467) == (SECCOMP_RET_ERRNO | EPERM));  // open_tree_attr: with the mounts
  CHECK(verdict_of(*nested, 467) == SECCOMP_RET_ALLOW);
  for (int allowed : {457, 458, 460, 462, 466, 468, 469, 470}) {
    INFO("syscall " << allowed);
    CHECK(verdict_of(*full, allowed) == SECCOMP_RET_ALLOW);
  }
}
