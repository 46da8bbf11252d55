// What confine serves on a socket it listens on for the sandbox: one type for the Plan that places the socket
// (core/plan.h) and the proxy that serves it (net/proxy.h).
#pragma once

namespace confine {

enum class ListenerService {
  http_proxy,  // TCP: confine's allowlist proxy (HTTP requests and CONNECT)
  forward,     // TCP: a plain forward to an allowed address on the host's loopback (forward_host:forward_port)
  dns,         // UDP: confine's DNS stub (at kDnsStubAddress); each allowed name gets an address in
               // kSyntheticNetwork, where confine then listens for it
  broker,      // TCP: plain HTTP in, forwarded over verified TLS to forward_host:forward_port (--broker)
};

}  // namespace confine
