// The one door out for connections the sandbox makes itself (see "One door" in docs/design.md). Under
// `--net proxy`/`--net veth` the command's filter hands confine every connect, bind and listen, and every send
// with TCP Fast Open or (sendto) a destination; Landlock refuses every TCP connect and bind the command makes by
// itself, so the kernel never redoes one of these calls on a descriptor or an address the caller changed after
// confine read it. The gate reads the call once, answers what needs no decision, and passes TCP connects to the
// proxy's thread, which decides them by the run's one set of rules.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include "net/proxy.h"

namespace confine::run {

// The inode of the network namespace `socket` was made in; 0 when confine may not ask (SIOCGSKNS needs
// CAP_NET_ADMIN over that namespace: confine has it over the sandbox's, which its user namespace owns).
ino_t socket_netns(int socket);

class ConnectGate {
 public:
  // `listener`: the seccomp listener (borrowed); `sandbox_netns`: the inode of the sandbox's network namespace
  // (socket_netns of a socket made there).
  ConnectGate(int listener, ino_t sandbox_netns, net::Proxy& proxy);

  // True when `request` is one of the network calls; the gate then answers it (now, or from the proxy's thread).
  bool take(const struct seccomp_notif& request);

 private:
  int listener_;
  ino_t sandbox_netns_ = 0;
  net::Proxy& proxy_;
};

}  // namespace confine::run
