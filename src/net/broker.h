// Brokered endpoints (--broker PORT=https://HOST[:PORT]): plain HTTP on the sandbox's loopback, which confine
// terminates and forwards over TLS to the real host, verifying its certificate (the system's trust store, or
// SSL_CERT_FILE/SSL_CERT_DIR as OpenSSL reads them; SNI; the host name). The TLS itself runs in confine-tls
// (src/tools/confine_tls.cc), one process per request, so confine never loads OpenSSL. The request is in clear here, so a
// secret's placeholder in a header becomes the real value for a host listed for it (core/secrets.h), which the
// sandbox never holds. Runs on the proxy's event loop; each request is recorded like the proxy's, by the run's
// NetRecorder.
#pragma once

#include <utility>  // before Asio: its awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <cstdint>
#include <string>

#include "core/allowlist.h"
#include "core/proxy_outcome.h"
#include "core/request_rules.h"
#include "core/secrets.h"
#include "net/net_recorder.h"

namespace confine::net {

// What a broker connection uses of the proxy: its decisions, the secrets, the TLS helper and its recorder.
struct BrokerServices {
  const Allowlist& allow;
  const SecretSet& secrets;
  const RequestRules& rules;
  std::string tls_helper;  // confine-tls's path
  NetRecorder& recorder;
};

// Where confine-tls is: beside confine's own binary, else where the package installs it.
std::string tls_helper_path();

// Serves one connection to a brokered endpoint: one request, forwarded to host:port over TLS, its answer relayed.
boost::asio::awaitable<void> serve_broker_client(BrokerServices& services, boost::asio::ip::tcp::socket client,
                                                 std::string host, std::uint16_t port);

}  // namespace confine::net
