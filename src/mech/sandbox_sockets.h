// Sockets made in the sandbox's network namespace, on confine's request, while the sandbox runs.
//
// A socket belongs to the namespace it was made in, whoever holds it later: a socket made inside and handed to
// confine listens on (or connects from) the sandbox's own loopback, while confine serves it from outside. pid 1
// makes the sockets known before the command starts (Plan::listeners); these are the ones needed later (a
// listener for a name the DNS stub has just given an address, a connection to a published port).
//
// confine cannot enter the sandbox's network namespace itself: without root, setns() into it needs CAP_SYS_ADMIN
// in confine's own user namespace. A child of confine can: it joins the sandbox's user namespace first, which its
// owner may, and there it holds every capability over the sandbox's network namespace. That child (the socket
// maker) does nothing else: it makes a socket of the asked family and type and passes it back. It is confine's own
// process, outside the sandbox's pid namespace, so nothing in the sandbox can see, signal or trace it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>

#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::mech {

class SandboxSockets {
 public:
  // Forks the socket maker for the sandbox whose pid 1 is `sandbox_pid`. Call while pid 1 is still dumpable
  // (before it runs its steps): its namespaces are opened through /proc, which a non-dumpable process refuses.
  static sys::Result<SandboxSockets> start(pid_t sandbox_pid);

  SandboxSockets(SandboxSockets&&) noexcept;
  SandboxSockets& operator=(SandboxSockets&&) noexcept;
  ~SandboxSockets();

  // A new socket (SOCK_STREAM or SOCK_DGRAM, AF_INET or AF_INET6) in the sandbox's network namespace, non-blocking
  // and close-on-exec. Binding it to a low port works: confine owns the sandbox's user namespace. Safe to call from
  // several threads (the proxy's and the published ports'): one request and its reply at a time.
  [[nodiscard]] sys::Result<sys::UniqueFd> make(int family, int type) const;

 private:
  SandboxSockets(pid_t maker, sys::UniqueFd channel)
      : maker_(maker), channel_(std::move(channel)), asking_(std::make_unique<std::mutex>()) {}
  void stop();
  pid_t maker_ = -1;
  sys::UniqueFd channel_;
  // Two threads asking at once would each read the other's reply (a socket of the other's type): held from a
  // request's send to its reply's receipt. Behind a pointer so the helper stays movable.
  std::unique_ptr<std::mutex> asking_;
};

}  // namespace confine::mech
