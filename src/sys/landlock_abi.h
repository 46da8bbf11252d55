// Landlock's user-space ABI, declared here because distribution headers lag the kernel (Debian 12's
// linux/landlock.h stops at ABI 2). Values from the kernel's include/uapi/linux/landlock.h.
#pragma once

#include <cstdint>

namespace confine::sys::landlock {

struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;  // ABI 4
  std::uint64_t scoped;              // ABI 6
};

struct __attribute__((packed)) PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};

inline constexpr int kRulePathBeneath = 1;
inline constexpr std::uint32_t kCreateRulesetVersion = 1U << 0;

// Filesystem rights, with the ABI that introduced each.
inline constexpr std::uint64_t kFsExecute = 1ULL << 0;
inline constexpr std::uint64_t kFsWriteFile = 1ULL << 1;
inline constexpr std::uint64_t kFsReadFile = 1ULL << 2;
inline constexpr std::uint64_t kFsReadDir = 1ULL << 3;
inline constexpr std::uint64_t kFsRemoveDir = 1ULL << 4;
inline constexpr std::uint64_t kFsRemoveFile = 1ULL << 5;
inline constexpr std::uint64_t kFsMakeChar = 1ULL << 6;
inline constexpr std::uint64_t kFsMakeDir = 1ULL << 7;
inline constexpr std::uint64_t kFsMakeReg = 1ULL << 8;
inline constexpr std::uint64_t kFsMakeSock = 1ULL << 9;
inline constexpr std::uint64_t kFsMakeFifo = 1ULL << 10;
inline constexpr std::uint64_t kFsMakeBlock = 1ULL << 11;
inline constexpr std::uint64_t kFsMakeSym = 1ULL << 12;
inline constexpr std::uint64_t kFsRefer = 1ULL << 13;     // ABI 2
inline constexpr std::uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
inline constexpr std::uint64_t kFsIoctlDev = 1ULL << 15;  // ABI 5

inline constexpr std::uint64_t kNetBindTcp = 1ULL << 0;     // ABI 4
inline constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;  // ABI 4

inline constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
inline constexpr std::uint64_t kScopeSignal = 1ULL << 1;              // ABI 6

}  // namespace confine::sys::landlock
