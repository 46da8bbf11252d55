// Compiles a SeccompPolicy to a BPF program with libseccomp (in the parent; the child only installs it).
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/seccomp_policy.h"
#include "sys/result.h"

namespace confine {

struct SeccompProgram {
  std::vector<struct sock_filter> code;
  // With a --seccomp policy in `code`: confine's floor (seccomp_floor_policy), a filter of its own installed first.
  // The kernel answers with the stricter action of the two, so no policy can allow what the floor refuses.
  std::vector<struct sock_filter> floor;
  bool log_denials = false;  // install with SECCOMP_FILTER_FLAG_LOG
  // Refusals recorded: `code` with its errno returns turned into user notifications (refusals_notified), installed
  // in its place with a listener that confine answers with `code`'s errno, and records. Empty: `code` is installed
  // and the kernel refuses by itself, unseen.
  std::vector<struct sock_filter> notifying;
  // `notifying` also hands confine the network calls (network_calls_notified), which Landlock's TCP rules leave to
  // confine alone: installed without its listener, the command could connect nowhere (the install fails instead).
  bool gates_network = false;
  // `notifying` also hands confine the path lookups that read (path_lookups_notified): `confine learn` records them.
  bool records_lookups = false;
  // `confine learn`: a refused call is recorded and let through, so that the run goes on to show what else it needs.
  bool let_through = false;
  // The rules a refused call is matched against, to name its rule in the record: the run's policy (a --seccomp
  // one, else the built-in), selected for the mode and --allow-nested as `code` was. See rules_of.
  struct RuleSource {
    std::shared_ptr<const SeccompPolicy> custom;  // null: the built-in policy
    bool allow_nested = false;
    bool namespaces = true;
  };
  RuleSource rules;
};

// The rules of `source`, selected. Built when asked (the first refusal of a run): the built-in policy is parsed then,
// never by a run that is refused nothing.
SeccompPolicy rules_of(const SeccompProgram::RuleSource& source);

// Only the native ABI is allowed: syscalls from another ABI (i386 through int 0x80, x32) kill the process,
// so no rule can be bypassed through a second syscall table.
sys::Result<SeccompProgram> compile_seccomp(const SeccompPolicy& policy, bool log_denials);

// The built-in policy precompiled at build time (src/tools/bpfgen.cc), for a mode and --allow-nested.
SeccompProgram builtin_seccomp_program(bool namespaces, bool allow_nested);
// seccomp_rule_groups(builtin_seccomp_policy(), allow_nested), listed at build time by the same tool.
std::vector<std::string> builtin_seccomp_rule_groups(bool allow_nested);

// The native syscall number of NAME: libseccomp's table, then the syscalls newer than it; __NR_SCMP_ERROR if
// unknown.
int resolve_syscall(const std::string& name);

// The newest syscall the built-in policy or `policy` names on this architecture: the compiled program answers
// ENOSYS above it (SeccompPolicy::newer_syscalls_enosys). The built-in policy counts for every policy, so that a
// --seccomp policy naming a few old calls does not bound the newer ones it never meant to.
std::uint32_t newest_known_syscall(const SeccompPolicy& policy);

// The native architecture, as seccomp_data.arch holds it (AUDIT_ARCH_*).
std::uint32_t seccomp_native_arch();

// Syscall names in the policy that resolve_syscall does not know and that are not marked optional.
std::vector<std::string> unknown_syscalls(const SeccompPolicy& policy);

}  // namespace confine
