// The seccomp policy as data: parsed from seccomp/*.toml (format confine-seccomp/1), then selected for one run
// (--allow-nested, fallback mode). Pure: compiling it to BPF is seccomp_compile.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/result.h"

namespace confine {

struct SeccompAction {
  enum class Kind { allow, error, kill } kind = Kind::allow;
  int err = 0;        // for Kind::error
  std::string text;   // as written: "errno:EPERM"
};

// One comparison on one syscall argument.
struct ArgCheck {
  enum class Op { masked_eq, eq, ne, lt, le, gt, ge } op = Op::eq;
  unsigned arg = 0;
  std::uint64_t mask = 0;  // for masked_eq
  std::uint64_t value = 0;
};

// What a rule's `unless` or `only` names: "allow-nested" (--allow-nested is given), "no-namespaces" (fallback
// mode: no namespaces of the sandbox's own).
enum class RuleCondition { allow_nested, no_namespaces };

struct SeccompRule {
  std::string group;
  std::string why;
  SeccompAction action;
  std::vector<std::string> syscalls;  // names without the optional marker
  std::vector<bool> optional;         // parallel to syscalls: "name?" in the data
  // The rule matches when every check of any one alternative holds; no alternatives: always matches.
  std::vector<std::vector<ArgCheck>> alternatives;
  std::optional<RuleCondition> unless;  // dropped when it holds: allow-nested only
  std::optional<RuleCondition> only;    // dropped when it does not hold
  bool floor = false;  // part of the floor every run gets, a --seccomp policy too (built-in policy only)
};

struct SeccompPolicy {
  std::string source;  // file name, for messages
  SeccompAction default_action;
  std::vector<SeccompRule> rules;
  // Syscalls numbered above the newest one this policy or the built-in one names answer ENOSYS: a kernel newer than
  // the policy adds calls nobody placed, and ENOSYS, as from a kernel without them, makes callers fall back to an
  // older call the rules do judge. False for the floor, which only adds refusals beside another policy's program.
  bool newer_syscalls_enosys = true;
};

// A rule whose action is the policy's default compiles to nothing: it places its syscalls deliberately (its `why`
// says why they are allowed) and makes them known (see SeccompPolicy::newer_syscalls_enosys).
bool restates_default(const SeccompPolicy& policy, const SeccompRule& rule);

// Parses a policy; every problem is reported with the source name (one error, the first found).
sys::Result<SeccompPolicy> parse_seccomp_policy(std::string_view text, const std::string& source);

// Drops the rules that do not apply to this run.
SeccompPolicy select_seccomp_rules(const SeccompPolicy& policy, bool allow_nested, bool namespaces);

// The groups of the rules a run with this --allow-nested keeps, in either mode (fallback adds its own rules),
// leaving out those that restate the default.
std::vector<std::string> seccomp_rule_groups(const SeccompPolicy& policy, bool allow_nested);

// The built-in default policy (seccomp/default.toml, built into confine as a document), read once.
const SeccompPolicy& builtin_seccomp_policy();

// The built-in rules marked `floor`, with "allow" for everything else: installed beside a --seccomp policy, as a
// filter of its own, so no user policy can take them away (the kernel applies the stricter of two filters).
SeccompPolicy seccomp_floor_policy();

// Named constants used in the data (TIOCSTI, CLONE_NEWUSER, AF_INET, …); false if unknown.
bool lookup_seccomp_constant(std::string_view name, std::uint64_t& value);

}  // namespace confine
