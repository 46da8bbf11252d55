// Brokered endpoints (--broker PORT=https://HOST[:PORT]): plain HTTP on the sandbox's loopback, which confine
// terminates and forwards over TLS to the real host, verifying its certificate (the system's trust store, or
// SSL_CERT_FILE/SSL_CERT_DIR as OpenSSL reads them; SNI; the host name). The request is in clear here, so a
// secret's placeholder in a header becomes the real value for a host listed for it (core/secrets.h), which the
// sandbox never holds. Runs on the proxy's event loop; the proxy owns the tallies and the log.
#pragma once

#include <utility>  // before Asio: its awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/allowlist.h"
#include "core/proxy_outcome.h"
#include "core/request_rules.h"
#include "core/secrets.h"

namespace confine::net {

// One brokered request, as the proxy logs and counts it.
struct BrokerRecord {
  std::string method = "?";
  std::string host;
  std::uint16_t port = 0;
  bool allowed = false;
  bool failed = false;                // allowed, but no verified connection; `reason` says why, in a few words
  std::string reason;
  NetRefusal refusal = NetRefusal::not_allowed;  // why, when not allowed
  std::vector<std::string> withheld;  // secrets whose placeholder went out as is (the host is not listed)
  std::uint64_t up = 0;
  std::uint64_t down = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

// What a broker connection uses of the proxy: its decisions, the secrets, the TLS settings and its log.
struct BrokerServices {
  const Allowlist& allow;
  const SecretSet& secrets;
  const RequestRules& rules;
  boost::asio::ssl::context& tls;
  std::function<void(const BrokerRecord&)> record;
};

// A TLS client context that verifies peers against the default trust store.
boost::asio::ssl::context make_broker_tls_context();

// Serves one connection to a brokered endpoint: one request, forwarded to host:port over TLS, its answer relayed.
boost::asio::awaitable<void> serve_broker_client(BrokerServices& services, boost::asio::ip::tcp::socket client,
                                                 std::string host, std::uint16_t port);

}  // namespace confine::net
