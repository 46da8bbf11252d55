// Answers the calls the command's seccomp filter refuses (SECCOMP_RET_USER_NOTIF, see core/seccomp_verdict.h)
// with the errno the policy gives each, and records each refusal: which call, the arguments the rule checked, the
// errno, the process. Only refused calls reach it; allowed ones never leave the kernel.
#pragma once

#include <linux/seccomp.h>

#include <functional>
#include <memory>

#include "core/seccomp_compile.h"
#include "core/seccomp_policy.h"
#include "run/fd_watch.h"
#include "run/refusal_log.h"
#include "sys/unique_fd.h"

namespace confine::run {

class SeccompWatch {
 public:
  // Serves `listener` from `watches` (the supervisor's loop) until every process using the filter is gone. `program` (its `code`,
  // and `floor`) gives the errno of each call; `rules` (called once, at the first refusal) the policy's rules, to
  // name the one that refused. Both must outlive the watch.
  // `let_through`: confine learn's record mode, where a call refused by a rule outside the floor proceeds (and is
  // recorded as such); the floor's still fail.
  // `network`: the gate for the network calls the filter hands over (SeccompProgram::gates_network), given the
  // listener; it answers them itself. None: every notification is a refusal.
  using NetworkGate = std::function<bool(const struct seccomp_notif&)>;
  SeccompWatch(FdWatches& watches, sys::UniqueFd listener, const SeccompProgram& program,
               std::function<SeccompPolicy()> rules, RefusalLog& log, bool let_through,
               std::function<NetworkGate(int listener)> network = {});
  SeccompWatch(const SeccompWatch&) = delete;
  SeccompWatch& operator=(const SeccompWatch&) = delete;
  // Stops serving (the sandbox is gone by then).
  ~SeccompWatch();

 private:
  struct State;
  FdWatches& watches_;
  std::unique_ptr<State> state_;
};

}  // namespace confine::run
