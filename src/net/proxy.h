// The egress proxy: an HTTP proxy (CONNECT for TLS, absolute-form for plain HTTP) and plain TCP forwards for
// allowed addresses on the host's loopback. It runs in confine's supervisor, outside the sandbox, on one thread
// with a Boost.Asio event loop; the sandbox reaches it through listening sockets that pid 1 created inside the
// sandbox's network namespace (a socket keeps the namespace it was made in), so no veth and no privilege is needed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/allowlist.h"
#include "core/connect_gate.h"
#include "core/listener_service.h"
#include "core/request_rules.h"
#include "core/secrets.h"
#include "mech/sandbox_sockets.h"
#include "net/net_recorder.h"
#include "sys/unique_fd.h"

namespace confine::net {

struct Upstream {
  std::string host;
  std::uint16_t port = 0;
};

struct ProxyConfig {
  Allowlist allow;
  NetRecorder* recorder = nullptr;  // required, and outlives the Proxy: where every decision is recorded
  std::optional<Upstream> upstream; // --upstream-proxy: every allowed request goes through it
  bool check_sni = false;           // CONNECT: the TLS ClientHello's server name must be the CONNECT host
  SecretSet secrets;                // --secret: put into plain HTTP and brokered request headers for listed hosts
  RequestRules rules;               // --allow 'METHOD HOST/PATH': for plain HTTP and brokered requests
  // The DNS stub's listeners for the names it gives addresses to are made here (needed with a `dns` Listener).
  const mech::SandboxSockets* sockets = nullptr;
  std::vector<std::uint16_t> own_ports;  // confine's listeners on the sandbox's 127.0.0.1 (the proxy, the brokers)
};

// A socket from the sandbox and what to do with what arrives on it.
struct Listener {
  using Service = ListenerService;
  sys::UniqueFd fd;
  Service service = Service::http_proxy;
  std::string forward_host;
  std::uint16_t forward_port = 0;
};

// A connect() the sandbox made on a TCP socket of its own, taken out of the kernel's hands by the seccomp gate
// (src/run/connect_gate.h) and decided here, on the proxy's thread, by the same rules as every other door.
struct GatedConnect {
  sys::UniqueFd socket;       // confine's duplicate of the caller's socket (in the sandbox's network namespace)
  std::string raw_address;    // the socket address as read, once, from the caller's memory
  SocketAddress to;           // what it says
  bool nonblocking = false;   // the caller's socket is O_NONBLOCK
  std::function<void(int error)> answer;                // 0, or an errno the caller's connect() returns
  std::function<void(sys::UniqueFd socket)> hand_over;  // a connected host socket in place of the caller's, then 0
};

class Proxy {
 public:
  explicit Proxy(ProxyConfig config);
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  // Starts serving on its own thread.
  void start(std::vector<Listener> listeners);
  // Decides and serves a connect() from inside (thread-safe: it runs on the proxy's thread). Until stop().
  void gate_connect(GatedConnect call);
  // A call on the network that the gate refused by itself (a datagram outside the sandbox, a socket confine
  // connected being connected again or bound, TCP Fast Open): one record, like every refusal of the network.
  void record_refused_call(NetDoor door, std::string host, std::uint16_t port, std::string reason);
  // (recorded as NetRefusal::not_carried: no flag lets them through)

  // Stops and joins the thread, then records the connections still open; safe to call twice. The exit summary
  // is the recorder's (NetRecorder::exit_summary), complete once this returns.
  void stop();

  struct State;  // the event loop and the connections in progress; defined in proxy.cc

 private:
  std::unique_ptr<State> state_;
};

}  // namespace confine::net
