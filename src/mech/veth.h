// --net veth: the proxy is reached over a veth pair instead of a socket on the sandbox's loopback.
//
// The pair joins the sandbox's network namespace to a second, private one that confine makes for the purpose and
// that holds nothing but the proxy's listening socket: the sandbox sees a real interface and a routable proxy
// address, yet there is no host service, interface or route on the other side to reach. Both namespaces belong
// to confine's processes only, so the kernel deletes the pair when confine or the sandbox goes, SIGKILL included.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::mech {

struct VethLink {
  sys::UniqueFd listener;      // TCP, listening on the proxy end (kVethProxyAddress:port)
  sys::UniqueFd proxy_netns;   // the private namespace of the proxy end (kept for as long as the sandbox runs)
};

// Needs CAP_NET_ADMIN and CAP_SYS_ADMIN in the host's user namespace (root). The calling thread must be the only
// one that makes sockets meanwhile: it visits both namespaces and comes back to its own.
sys::Result<VethLink> connect_sandbox_by_veth(pid_t sandbox_pid, std::uint16_t port);

}  // namespace confine::mech
