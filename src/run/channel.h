// The parent <-> child channel: a SOCK_SEQPACKET pair. The parent sends one "go" message (with the trees it
// prepared, as SCM_RIGHTS); the child sends a ChildReport if a step fails. Both ends are close-on-exec, so the
// parent reads EOF once the command has been executed (or everything died).
#pragma once

#include <cstdint>

namespace confine::run {

// A message's kind. `listeners`, `refusal_files` and `seccomp_listener` hand descriptors over (SCM_RIGHTS); the
// others report a failed step.
enum class Phase : std::uint32_t { init = 1, command = 2, listeners = 3, refusal_files = 4, seccomp_listener = 5 };

struct ChildReport {
  Phase phase;
  std::uint32_t step;  // index into Plan::init_steps or Plan::command_steps
  std::int32_t err;    // errno
};

inline constexpr int kMaxPassedFds = 64;

// Child side, async-signal-safe.
void send_report(int channel, Phase phase, std::uint32_t step, int err);
// Child side: hands `count` descriptors to the parent (a ChildReport with `phase` and SCM_RIGHTS): the listening
// sockets pid 1 opened, the denial log's writable end and the masks' watch, the command's seccomp listener (none:
// not recorded).
// `detail` travels in the report's err field (Phase::refusal_files: which of them came).
int send_fds(int channel, Phase phase, const int* fds, int count, std::uint32_t detail);

// Phase::refusal_files: the descriptors handed over, in this order, each only if its bit is set.
inline constexpr std::uint32_t kHandsOverDenialLog = 1;  // the writable end of /run/confine/denials.jsonl
inline constexpr std::uint32_t kHandsOverMaskWatch = 2;  // an inotify watch on every mask, in plan order
inline constexpr std::uint32_t kHandsOverTmpfs = 4;      // then the writable tmpfs mounts, in plan order (the rest)
// Parent side: receives one message; fds passed with it go to `fds` (count in *fd_count). Returns recvmsg's value.
long receive_message(int channel, ChildReport& report, int* fds, int* fd_count);
// Parent side: the go message, with the trees the parent prepared (at most kMaxPassedFds).
int send_go(int channel, const int* fds, int count);
// Receives the go message; returns the number of fds stored in `fds` (<= kMaxPassedFds), or -1 on EOF/error.
int receive_go(int channel, int* fds);

}  // namespace confine::run
