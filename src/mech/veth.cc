#include "mech/veth.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "core/policy.h"

namespace confine::mech {
namespace {

using sys::errno_error;
using sys::plain_error;
using sys::UniqueFd;

struct NlSockFree { void operator()(nl_sock* s) const { nl_socket_free(s); } };
struct LinkFree { void operator()(rtnl_link* l) const { rtnl_link_put(l); } };
struct AddrFree { void operator()(rtnl_addr* a) const { rtnl_addr_put(a); } };
struct NlAddrFree { void operator()(nl_addr* a) const { nl_addr_put(a); } };
using NlSock = std::unique_ptr<nl_sock, NlSockFree>;
using Link = std::unique_ptr<rtnl_link, LinkFree>;

sys::Error netlink_error(const std::string& what, int nl_err) { return plain_error(what + ": " + nl_geterror(nl_err)); }

// A route-netlink socket, bound to the network namespace the calling thread is in now.
sys::Result<NlSock> route_socket() {
  NlSock sock(nl_socket_alloc());
  if (!sock) return plain_error("netlink: out of memory");
  if (int rc = nl_connect(sock.get(), NETLINK_ROUTE); rc < 0) return netlink_error("netlink connect", rc);
  return sock;
}

UniqueFd open_netns(const std::string& path) { return UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)); }

// Switches the calling thread to another network namespace and always back, whatever happens in between.
class NetnsVisit {
 public:
  explicit NetnsVisit(int home) : home_(home) {}
  NetnsVisit(const NetnsVisit&) = delete;
  NetnsVisit& operator=(const NetnsVisit&) = delete;
  ~NetnsVisit() {
    // Failing to come back would leave the proxy's outgoing connections in the wrong namespace: not survivable.
    if (::setns(home_, CLONE_NEWNET) != 0) ::abort();
  }

 private:
  int home_;
};

sys::Status add_address(nl_sock* sock, int ifindex, const char* address) {
  std::unique_ptr<rtnl_addr, AddrFree> addr(rtnl_addr_alloc());
  nl_addr* local_raw = nullptr;
  auto cidr = std::string(address) + "/" + std::to_string(kVethPrefixLength);
  if (!addr || nl_addr_parse(cidr.c_str(), AF_INET, &local_raw) < 0) return plain_error("netlink: cannot build " + cidr);
  std::unique_ptr<nl_addr, NlAddrFree> local(local_raw);
  rtnl_addr_set_ifindex(addr.get(), ifindex);
  rtnl_addr_set_family(addr.get(), AF_INET);
  if (int rc = rtnl_addr_set_local(addr.get(), local.get()); rc < 0) return netlink_error("netlink: address " + cidr, rc);
  if (int rc = rtnl_addr_add(sock, addr.get(), 0); rc < 0) return netlink_error("adding " + cidr, rc);
  return sys::ok_status();
}

sys::Status set_up(nl_sock* sock, const char* name) {
  rtnl_link* raw = nullptr;
  if (int rc = rtnl_link_get_kernel(sock, 0, name, &raw); rc < 0) return netlink_error(std::string("finding ") + name, rc);
  Link link(raw), change(rtnl_link_alloc());
  if (!change) return plain_error("netlink: out of memory");
  rtnl_link_set_flags(change.get(), IFF_UP);
  if (int rc = rtnl_link_change(sock, link.get(), change.get(), 0); rc < 0)
    return netlink_error(std::string("bringing ") + name + " up", rc);
  return sys::ok_status();
}

// Gives an interface of the current namespace its address and brings it up.
sys::Status configure(const char* name, const char* address) {
  auto sock = route_socket();
  if (!sock) return sock.error();
  if (auto s = set_up(sock->get(), name); !s) return s;
  int ifindex = static_cast<int>(::if_nametoindex(name));
  if (ifindex == 0) return errno_error(std::string("finding ") + name);
  return add_address(sock->get(), ifindex, address);
}

sys::Status create_pair(int sandbox_netns) {
  auto sock = route_socket();
  if (!sock) return sock.error();
  Link veth(rtnl_link_veth_alloc());
  if (!veth) return plain_error("netlink: out of memory");
  rtnl_link_set_name(veth.get(), kVethProxyInterface);
  rtnl_link* peer = rtnl_link_veth_get_peer(veth.get());
  rtnl_link_set_name(peer, kVethSandboxInterface);
  rtnl_link_set_ns_fd(peer, sandbox_netns);  // created straight into the sandbox's namespace
  rtnl_link_put(peer);
  if (int rc = rtnl_link_add(sock->get(), veth.get(), NLM_F_CREATE | NLM_F_EXCL); rc < 0)
    return netlink_error("creating the veth pair", rc);
  return sys::ok_status();
}

sys::Result<UniqueFd> listen_on(const char* address, std::uint16_t port) {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return errno_error("socket");
  struct sockaddr_in a {};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, address, &a.sin_addr);
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(s.get(), 256) != 0)
    return errno_error(std::string("listening on ") + address + ":" + std::to_string(port));
  return s;
}

}  // namespace

sys::Result<VethLink> connect_sandbox_by_veth(pid_t sandbox_pid, std::uint16_t port) {
  auto home = open_netns("/proc/thread-self/ns/net");
  auto sandbox = open_netns("/proc/" + std::to_string(sandbox_pid) + "/ns/net");
  if (!home.valid() || !sandbox.valid()) return errno_error("--net veth: opening the network namespaces");
  VethLink link;
  {
    NetnsVisit back(home.get());
    // The proxy end lives in a namespace of its own: made here, holding only the pair's end and the listener.
    if (::unshare(CLONE_NEWNET) != 0) return errno_error("--net veth: creating the proxy's network namespace");
    link.proxy_netns = open_netns("/proc/thread-self/ns/net");
    if (!link.proxy_netns.valid()) return errno_error("--net veth: opening the proxy's network namespace");
    if (auto s = create_pair(sandbox.get()); !s) return s.error().wrap("--net veth");
    if (auto s = configure(kVethProxyInterface, kVethProxyAddress); !s) return s.error().wrap("--net veth");
    // The socket keeps the namespace it was made in, wherever the thread goes next.
    auto listener = listen_on(kVethProxyAddress, port);
    if (!listener) return listener.error().wrap("--net veth");
    link.listener = std::move(*listener);
  }
  {
    NetnsVisit back(home.get());
    if (::setns(sandbox.get(), CLONE_NEWNET) != 0) return errno_error("--net veth: entering the sandbox's network namespace");
    if (auto s = configure(kVethSandboxInterface, kVethSandboxAddress); !s) return s.error().wrap("--net veth");
  }
  return link;
}

}  // namespace confine::mech
