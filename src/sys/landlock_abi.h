// Landlock's user-space ABI, declared here because distribution headers lag the kernel (Debian 12's
// linux/landlock.h stops at ABI 2). One table: every value confine uses, with the ABI and the Linux release that
// brought it. Values from the kernel's include/uapi/linux/landlock.h (ABI 8-10 read in linux-next's). The releases
// of ABI 8-10 (Linux 7.0, 7.1, 7.2) follow the dates of the commits that brought them, not a release tag.
#pragma once

#include <cstdint>

namespace confine::sys::landlock {

struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;  // ABI 4
  std::uint64_t scoped;              // ABI 6
  // ABI 10 appends quiet_access_fs, quiet_access_net and quiet_scoped (audit-log quieting per object): not used,
  // see kRestrictSelfLogSameExecOff. The kernel takes a shorter struct as "those fields are zero".
};

struct __attribute__((packed)) PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};

inline constexpr int kRulePathBeneath = 1;
inline constexpr std::uint32_t kCreateRulesetVersion = 1U << 0;

// Filesystem rights.
inline constexpr std::uint64_t kFsExecute = 1ULL << 0;        // ABI 1, Linux 5.13
inline constexpr std::uint64_t kFsWriteFile = 1ULL << 1;      // ABI 1
inline constexpr std::uint64_t kFsReadFile = 1ULL << 2;       // ABI 1
inline constexpr std::uint64_t kFsReadDir = 1ULL << 3;        // ABI 1
inline constexpr std::uint64_t kFsRemoveDir = 1ULL << 4;      // ABI 1
inline constexpr std::uint64_t kFsRemoveFile = 1ULL << 5;     // ABI 1
inline constexpr std::uint64_t kFsMakeChar = 1ULL << 6;       // ABI 1
inline constexpr std::uint64_t kFsMakeDir = 1ULL << 7;        // ABI 1
inline constexpr std::uint64_t kFsMakeReg = 1ULL << 8;        // ABI 1
inline constexpr std::uint64_t kFsMakeSock = 1ULL << 9;       // ABI 1
inline constexpr std::uint64_t kFsMakeFifo = 1ULL << 10;      // ABI 1
inline constexpr std::uint64_t kFsMakeBlock = 1ULL << 11;     // ABI 1
inline constexpr std::uint64_t kFsMakeSym = 1ULL << 12;       // ABI 1
inline constexpr std::uint64_t kFsRefer = 1ULL << 13;         // ABI 2, Linux 5.19
inline constexpr std::uint64_t kFsTruncate = 1ULL << 14;      // ABI 3, Linux 6.2
inline constexpr std::uint64_t kFsIoctlDev = 1ULL << 15;      // ABI 5, Linux 6.10
inline constexpr std::uint64_t kFsResolveUnix = 1ULL << 16;   // ABI 9, Linux 7.1: connect()/sendmsg() to a
                                                              // pathname unix socket made outside the domain

// Network rights (port rules; confine allows no port, so no rule type for them is needed).
inline constexpr std::uint64_t kNetBindTcp = 1ULL << 0;          // ABI 4, Linux 6.7
inline constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;       // ABI 4
inline constexpr std::uint64_t kNetBindUdp = 1ULL << 2;          // ABI 10, Linux 7.2
inline constexpr std::uint64_t kNetConnectSendUdp = 1ULL << 3;   // ABI 10: connect(), or a send naming a peer

// Scopes.
inline constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6, Linux 6.12
inline constexpr std::uint64_t kScopeSignal = 1ULL << 1;              // ABI 6

// landlock_restrict_self() flags.
// ABI 7, Linux 6.15: no audit record for what the domain refuses while the restricting program still runs. The
// only denials confine's own code meets there are expected ones (execvp trying each $PATH directory); after the
// command's execve, denials are logged only with LOG_NEW_EXEC_ON, which confine does not set. So this one flag
// keeps confine's expected denials out of the audit log, and ABI 10's per-object quiet flags add nothing.
inline constexpr std::uint32_t kRestrictSelfLogSameExecOff = 1U << 0;
// ABI 8, Linux 7.0, LANDLOCK_RESTRICT_SELF_TSYNC (1U << 3): restrict every thread of the process at once. Not
// used: confine restricts only the command, in a process that clone() made with one thread, before its execve.

// ABI 6's erratum 2: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_ERRATA = 1U << 1) sets bit 1 when it
// is fixed (bit N-1 for erratum N). Before the fix the signal scope also refused signals between threads of one
// process that sit in different domains. Not queried: the unfixed scope is stricter, never weaker, and confine's
// domain never splits a process (every thread of the command descends from it), so the scope keeps its promise
// either way; the kernel's documentation warns against weakening a sandbox on an erratum bit.

}  // namespace confine::sys::landlock
