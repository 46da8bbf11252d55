#include "net/broker.h"

#include <openssl/ssl.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <optional>

#include "core/admission.h"
#include "net/relay.h"
#include "net/request_head.h"

namespace confine::net {
namespace {

namespace ssl = asio::ssl;
namespace beast = boost::beast;
namespace http = beast::http;

constexpr auto kConnectTimeout = std::chrono::seconds(15);  // TCP connect and TLS handshake together
constexpr std::size_t kChunk = 16 * 1024;

// Headers that are this hop's own: the broker sets Host and Connection itself, and a proxy's credentials or
// keep-alive settings mean nothing to the real host.
bool is_hop_header(beast::string_view name) {
  for (const char* hop : {"Host", "Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization"})
    if (beast::iequals(name, hop)) return true;
  return false;
}

// The request head as the real host gets it: origin-form target as sent (never substituted), header values with
// the placeholders of secrets listed for `host` replaced, one request per connection.
std::string upstream_head(const http::request<http::empty_body>& req, const std::string& host, std::uint16_t port,
                          const SecretSet& secrets, std::vector<std::string>& withheld) {
  std::string head = fmt::format("{} {} HTTP/1.1\r\n", sv(req.method_string()), sv(req.target()));
  RequestDestination to{host, port, true, {}};  // over TLS: the value is never in clear on the wire
  head += port == 443 ? fmt::format("Host: {}\r\n", host) : fmt::format("Host: {}:{}\r\n", host, port);
  for (const auto& f : req) {
    if (is_hop_header(f.name_string())) continue;
    auto s = secrets.substitute_header(sv(f.name_string()), sv(f.value()), to);
    withheld.insert(withheld.end(), s.withheld.begin(), s.withheld.end());
    head += fmt::format("{}: {}\r\n", sv(f.name_string()), s.value);
  }
  return head + "Connection: close\r\n\r\n";
}

// The addresses of `host` the allowlist accepts (internal ones need an address entry), or why there are none.
struct Addresses {
  std::vector<tcp::endpoint> allowed;
  std::string why;
  bool unresolvable = false;
};

awaitable<Addresses> allowed_addresses(const Allowlist& allow, const std::string& host, std::uint16_t port) {
  tcp::resolver resolver(co_await asio::this_coro::executor);
  error_code ec;
  auto results = co_await resolver.async_resolve(host, std::to_string(port), on_error(ec));
  Addresses out;
  if (ec) {
    out.unresolvable = true;
    out.why = "cannot resolve " + host + ": " + ec.message();
    co_return out;
  }
  for (const auto& r : results) {
    auto d = allow.check_address(r.endpoint().address().to_string(), port);
    if (d.allowed) out.allowed.push_back(r.endpoint());
    else if (out.why.empty()) out.why = d.reason;
  }
  co_return out;
}

// TCP connect and the TLS handshake, verifying the certificate's chain and name; empty, or why it failed.
awaitable<std::string> open_verified(ssl::stream<tcp::socket>& tls, const std::vector<tcp::endpoint>& eps,
                                     const std::string& host) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex, kConnectTimeout);
  timer.async_wait([&tls](error_code ec) {
    if (!ec) tls.next_layer().close(ec);
  });
  error_code ec;
  co_await asio::async_connect(tls.next_layer(), eps, on_error(ec));
  if (ec) {
    timer.cancel();
    co_return "cannot connect: " + ec.message();
  }
  // SNI names the host (an address is not sent as a server name, RFC 6066). OpenSSL checks the chain against
  // the trust store and the certificate's names against the host (or its address), so a refusal says which.
  auto* native = tls.native_handle();
  bool named = is_ip_literal(host) ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(native), host.c_str()) == 1
                                   : SSL_set_tlsext_host_name(native, host.c_str()) == 1 && SSL_set1_host(native, host.c_str()) == 1;
  if (!named) co_return "cannot set the name to verify";
  tls.set_verify_mode(ssl::verify_peer);
  co_await tls.async_handshake(ssl::stream_base::client, on_error(ec));
  timer.cancel();
  if (!ec) co_return std::string();
  auto verify = SSL_get_verify_result(tls.native_handle());
  if (verify != X509_V_OK) co_return std::string("certificate not trusted: ") + X509_verify_cert_error_string(verify);
  co_return "TLS handshake failed: " + ec.message();
}

// The request's body (and anything after it) up to the real host, until the client stops sending.
awaitable<void> pump_up(tcp::socket& client, ssl::stream<tcp::socket>& tls, std::uint64_t& count) {
  std::vector<char> chunk(kChunk);
  for (;;) {
    error_code ec;
    auto n = co_await client.async_read_some(asio::buffer(chunk), on_error(ec));
    if (ec) co_return;
    co_await asio::async_write(tls, asio::buffer(chunk.data(), n), on_error(ec));
    if (ec) co_return;
    count += n;
  }
}

// The answer down to the client as it arrives (a streamed answer stays streamed), until the real host ends it.
awaitable<void> pump_down(ssl::stream<tcp::socket>& tls, tcp::socket& client, std::uint64_t& count) {
  std::vector<char> chunk(kChunk);
  for (;;) {
    error_code ec;
    auto n = co_await tls.async_read_some(asio::buffer(chunk), on_error(ec));
    if (n > 0) {
      error_code wec;
      co_await asio::async_write(client, asio::buffer(chunk.data(), n), on_error(wec));
      if (wec) co_return;
      count += n;
    }
    if (ec) co_return;
  }
}

// Both directions; the answer's end ends the connection (one request per connection).
awaitable<void> relay(tcp::socket& client, ssl::stream<tcp::socket>& tls, ConnectionRecord& rec) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer done(ex, asio::steady_timer::time_point::max());
  bool up_finished = false;
  asio::co_spawn(ex, pump_up(client, tls, rec.up), [&](std::exception_ptr) {
    up_finished = true;  // one thread runs the loop: this cannot race with the check below
    done.cancel();
  });
  co_await pump_down(tls, client, rec.down);
  error_code ignored;
  client.shutdown(tcp::socket::shutdown_send, ignored);
  // The client may keep its side open waiting for more: its pending read is cancelled, so pump_up ends.
  client.cancel(ignored);
  error_code ec;
  if (!up_finished) co_await done.async_wait(on_error(ec));
}

}  // namespace

ssl::context make_broker_tls_context() {
  ssl::context tls(ssl::context::tls_client);
  tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  // OpenSSL's default paths honour SSL_CERT_FILE and SSL_CERT_DIR (read from confine's own environment).
  tls.set_default_verify_paths();
  return tls;
}

awaitable<void> serve_broker_client(BrokerServices& services, tcp::socket client, std::string host,
                                    std::uint16_t port) {
  auto rec = ConnectionRecord::of("?", host, port);
  auto ex = co_await asio::this_coro::executor;
  beast::flat_buffer buf;
  RequestParser parser;
  auto ec = co_await read_request_head(client, buf, parser, std::chrono::steady_clock::now() + kHeadTimeout);
  if (ec) co_return co_await refuse_head(services.recorder, client, rec, ec);
  const auto& req = parser.get();
  rec.method = std::string(sv(req.method_string()));
  // Origin-form only: an absolute URI or an authority would name another place than the endpoint's host.
  if (req.target().empty() || req.target().front() != '/' || req.method() == http::verb::connect) {
    rec.reason = "bad request target `" + std::string(sv(req.target())) + "` (a brokered endpoint takes /PATH)";
    rec.refusal = NetRefusal::malformed;
    services.recorder.record(rec);
    co_return co_await reply_and_close(client, 400, "Bad Request", rec.reason);
  }
  auto admission = admit(services.allow, services.rules,
                         NetAsk{.host = host, .port = port, .method = rec.method, .target = sv(req.target())});
  if (!admission.allowed) {
    rec.reason = admission.reason;
    rec.refusal = admission.refusal;
    services.recorder.record(rec);
    co_return co_await reply_and_close(client, 403, "Forbidden", refusal_answer(rec));
  }
  auto addresses = co_await allowed_addresses(services.allow, host, port);
  if (addresses.allowed.empty()) {
    rec.allowed = addresses.unresolvable;  // an allowed name without addresses failed; an internal one is refused
    rec.failed = addresses.unresolvable;
    rec.reason = addresses.unresolvable ? "unresolvable" : addresses.why;
    rec.refusal = NetRefusal::internal_address;
    services.recorder.record(rec);
    co_return co_await reply_and_close(client, addresses.unresolvable ? 502 : 403,
                              addresses.unresolvable ? "Bad Gateway" : "Forbidden",
                              fmt::format("{}:{} {}", host, port, addresses.why));
  }
  rec.allowed = true;
  ssl::stream<tcp::socket> tls(ex, services.tls);
  auto refusal = co_await open_verified(tls, addresses.allowed, host);
  if (!refusal.empty()) {
    rec.failed = true;
    rec.reason = refusal;
    services.recorder.record(rec);
    co_return co_await reply_and_close(client, 502, "Bad Gateway", fmt::format("{}:{} over TLS: {}", host, port, refusal));
  }
  rec.reason = "brokered over TLS (" + admission.reason + ")";
  auto head = upstream_head(req, host, port, services.secrets, rec.withheld);
  co_await asio::async_write(tls, asio::buffer(head), on_error(ec));
  if (!ec && buf.size() > 0) co_await asio::async_write(tls, buf.data(), on_error(ec));  // the body's first bytes
  rec.up += head.size() + buf.size();
  if (!ec) co_await relay(client, tls, rec);
  services.recorder.record(rec);
}

}  // namespace confine::net
