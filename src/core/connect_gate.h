// The network calls confine takes out of the kernel's hands under `--net proxy`/`--net veth` (see the "One door"
// section of docs/design.md): which calls the command's filter hands to confine, and what a call's socket address
// says. Pure: the supervisor's gate (src/run/connect_gate.cc) does the I/O.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/admission.h"
#include "core/allowlist.h"
#include "core/dns_names.h"
#include "core/proxy_outcome.h"
#include "core/request_rules.h"
#include "core/secrets.h"

namespace confine {

// `program` (a filter whose refusals are already notified) behind a prefix that hands confine every connect, bind
// and listen, and every sendto/sendmsg/sendmmsg with MSG_FASTOPEN (a connection without connect()) or, for
// sendto, a destination address (a datagram to somewhere). Checked on the native ABI only: another ABI falls
// through to `program`, which kills it. Every other call reaches `program` unchanged.
std::vector<struct sock_filter> network_calls_notified(const std::vector<struct sock_filter>& program);

// `confine learn`: `program` behind a prefix that hands confine every path lookup that reads (open and openat
// without a write, create or truncate flag; stat, lstat, newfstatat, statx; access, faccessat, faccessat2), so
// it can record the names the command looked for outside its view. Confine lets each run as made; a call that
// could write goes to `program`, which checks a created file's mode. Native ABI only, as above.
std::vector<struct sock_filter> path_lookups_notified(const std::vector<struct sock_filter>& program);

// A socket address the command passed, read from its memory: untrusted bytes.
struct SocketAddress {
  enum class Kind {
    unspecified,  // AF_UNSPEC: dissolves a connection (TCP) or an association (UDP)
    ipv4,
    ipv6,
    other,  // a family confine does not route (unix, netlink, …): the kernel decides
    malformed,  // too short for its family
  } kind = Kind::malformed;
  std::string address;  // "127.0.0.1", "::1"; an IPv4-mapped IPv6 address as its IPv4 form
  std::uint16_t port = 0;
  bool mapped = false;  // an IPv4 address written as IPv6 (::ffff:a.b.c.d)
};
SocketAddress read_socket_address(std::string_view bytes);

// The sandbox's loopback addresses, as confine reads them (0.0.0.0 and :: included: a connect there reaches this
// host itself).
bool is_loopback(std::string_view address);
// An address the DNS stub gives names (127.77.0.0/16).
bool is_name_address(std::string_view address);

// What confine must see of the connections to a destination: the run's network rules as one connect() reads them.
struct GatePolicy {
  const Allowlist& allow;
  const RequestRules& rules;
  const SecretSet& secrets;
  bool check_sni = false;
  bool upstream = false;  // --upstream-proxy: every connection goes through it, so through confine's relay
  std::vector<std::uint16_t> own_ports;  // confine's listeners on the sandbox's 127.0.0.1: the proxy, the brokers
};

// Where a TCP connect() from inside goes. One decision for the door every direct connection takes: the same
// allowlist, rules and secrets as the proxy's.
struct ConnectRoute {
  enum class Kind {
    // Connected inside the sandbox's own network namespace: a server of the sandbox's own, or confine's listener
    // there, which reads the bytes (a secret to put in, method/path rules, --check-sni, an upstream proxy).
    inside,
    // To `host`:`port` from the host, and that socket put in the caller's place: the kernel moves the bytes.
    host,
    refused,  // ECONNREFUSED, recorded with `reason` and `allow_with`
  } kind = Kind::refused;
  std::string host;  // the name or address meant (a name the DNS stub gave this address)
  std::uint16_t port = 0;
  // inside, at a loopback port no rule allows: if nothing of the sandbox's listens there, the refusal is recorded
  // as not allowed (the port may be the host's), with `allow_with`.
  bool unallowed_if_refused = false;
  // inside, learning (`confine learn`): if nothing of the sandbox's listens there, the host's port, recorded.
  bool host_if_refused = false;
  NetRefusal refusal = NetRefusal::not_allowed;
  std::string reason;
  std::string allow_with;
};
ConnectRoute route_connect(const GatePolicy& policy, const AddressBook& book, const SocketAddress& to);

}  // namespace confine
