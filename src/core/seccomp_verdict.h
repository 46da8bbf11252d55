// What a seccomp program decides for one call, computed in user space: confine answers the calls its filter hands
// it (SECCOMP_RET_USER_NOTIF) with the errno the same program, in its plain form, returns for them; and names the
// rule of the policy data that refused.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "core/seccomp_policy.h"

namespace confine {

// The kernel's struct seccomp_data, as a filter reads it.
struct SeccompCall {
  int nr = 0;
  std::uint32_t arch = 0;
  std::uint64_t ip = 0;
  std::uint64_t args[6] = {};
};

// The program's return value (SECCOMP_RET_* | data) for `call`, as the kernel computes it; nullopt for a program
// the kernel would not load (an unknown instruction, a jump or load out of bounds, no return at the end).
std::optional<std::uint32_t> seccomp_verdict(const std::vector<struct sock_filter>& program, const SeccompCall& call);

// The same program with every SECCOMP_RET_ERRNO return turned into SECCOMP_RET_USER_NOTIF: the same calls are
// refused, but the kernel hands each to the listener instead of failing it itself. Every other return (allow,
// kill on another ABI) is unchanged, so allowed calls cost what they did (the kernel still caches them).
// ENOSYS answers stay the kernel's too: they say "this kernel has no such call" (clone3, openat2, io_uring), and
// the caller falls back to a call the filter can check. That is normal behaviour, not a refusal worth a round
// trip, a record or a warning: threaded programs call clone3 on every thread they start.
std::vector<struct sock_filter> refusals_notified(std::vector<struct sock_filter> program);

// Whether the rule's argument checks hold for `args`: every check of any one alternative (none: always).
bool rule_matches(const SeccompRule& rule, const std::uint64_t (&args)[6]);

// The first rule of `policy` that names syscall `nr`, refuses (error or kill) and whose argument checks hold for
// `args`; nullptr when none does (the policy's default refused it).
const SeccompRule* refusing_rule(const SeccompPolicy& policy, int nr, const std::uint64_t (&args)[6]);

}  // namespace confine
