#include "net/broker.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <optional>

#include "core/admission.h"
#include "net/relay.h"
#include "net/request_head.h"

namespace confine::net {
namespace {

using local_socket = asio::local::stream_protocol::socket;
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

// The TLS leg, run by confine-tls in a process of its own (so confine never loads OpenSSL): it gets the
// connection confine made and one end of a socketpair, and speaks in clear on that end.
struct TlsLeg {
  local_socket plain;
  pid_t pid = -1;
  int pidfd = -1;
};

extern "C" char** environ;

// Starts confine-tls HOST on `upstream`; the socketpair's other end is returned. Its signal mask is cleared
// (confine blocks the ones it forwards) and it inherits no descriptor but its two.
sys::Result<TlsLeg> start_tls_leg(asio::any_io_executor ex, const std::string& helper, tcp::socket& upstream,
                                  const std::string& host) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return sys::errno_error("socketpair");
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  // dup2 onto 3 and 4 from descriptors above them, so neither source is overwritten by the other's target.
  int up = ::fcntl(upstream.native_handle(), F_DUPFD_CLOEXEC, 10);
  int theirs = ::fcntl(pair[1], F_DUPFD_CLOEXEC, 10);
  posix_spawn_file_actions_adddup2(&files, up, 3);
  posix_spawn_file_actions_adddup2(&files, theirs, 4);
  // Asio opens its sockets without close-on-exec: a helper holding another connection's descriptor would keep
  // that connection from ever seeing its end.
  posix_spawn_file_actions_addclosefrom_np(&files, 5);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::string name = "confine-tls";
  char* argv[] = {name.data(), const_cast<char*>(host.c_str()), nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, helper.c_str(), &files, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  for (int fd : {up, theirs, pair[1]})
    if (fd >= 0) ::close(fd);
  if (rc != 0) {
    ::close(pair[0]);
    errno = rc;
    return sys::errno_error("start " + helper);
  }
  TlsLeg leg{local_socket(ex, asio::local::stream_protocol(), pair[0]), pid,
             static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))};
  return leg;
}

// Ends the leg: its work is over once the answer ended or the client left. Reaped through its pidfd, so the
// proxy's thread never blocks on it (and confine's own waits never see it).
awaitable<void> end_tls_leg(TlsLeg& leg) {
  error_code ignored;
  leg.plain.close(ignored);
  ::kill(leg.pid, SIGKILL);
  if (leg.pidfd < 0) {
    ::waitpid(leg.pid, nullptr, 0);
    co_return;
  }
  asio::posix::stream_descriptor exited(co_await asio::this_coro::executor, leg.pidfd);
  error_code ec;
  co_await exited.async_wait(asio::posix::stream_descriptor::wait_read, on_error(ec));
  siginfo_t info{};
  ::waitid(P_PIDFD, static_cast<id_t>(leg.pidfd), &info, WEXITED);
}

// The TLS leg's first line: "ok", or "error: WHY" (the chain, the name, the handshake), or nothing if it died.
awaitable<std::string> leg_status(local_socket& plain) {
  std::string line;
  error_code ec;
  co_await asio::async_read_until(plain, asio::dynamic_buffer(line, 1024), '\n', on_error(ec));
  auto end = line.find('\n');
  if (ec || end == std::string::npos) co_return "TLS handshake failed: confine-tls ended without an answer";
  line.resize(end);
  if (line == "ok") co_return std::string();
  co_return line.starts_with("error: ") ? line.substr(7) : line;
}

// TCP connect within the broker's time, from confine (the addresses are the ones the allowlist accepted).
awaitable<std::string> connect_upstream(tcp::socket& upstream, const std::vector<tcp::endpoint>& eps) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex, kConnectTimeout);
  timer.async_wait([&upstream](error_code ec) {
    if (!ec) upstream.close(ec);
  });
  error_code ec;
  co_await asio::async_connect(upstream, eps, on_error(ec));
  timer.cancel();
  if (ec) co_return "cannot connect: " + ec.message();
  co_return std::string();
}

// The request's body (and anything after it) up to the real host, until the client stops sending.
awaitable<void> pump_up(tcp::socket& client, local_socket& leg, std::uint64_t& count) {
  std::vector<char> chunk(kChunk);
  for (;;) {
    error_code ec;
    auto n = co_await client.async_read_some(asio::buffer(chunk), on_error(ec));
    if (ec) break;
    co_await asio::async_write(leg, asio::buffer(chunk.data(), n), on_error(ec));
    if (ec) co_return;
    count += n;
  }
  error_code ignored;
  leg.shutdown(local_socket::shutdown_send, ignored);  // the request ended: the leg stops reading it
}

// The answer down to the client as it arrives (a streamed answer stays streamed), until the real host ends it.
awaitable<void> pump_down(local_socket& leg, tcp::socket& client, std::uint64_t& count) {
  std::vector<char> chunk(kChunk);
  for (;;) {
    error_code ec;
    auto n = co_await leg.async_read_some(asio::buffer(chunk), on_error(ec));
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
awaitable<void> relay(tcp::socket& client, local_socket& leg, ConnectionRecord& rec) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer done(ex, asio::steady_timer::time_point::max());
  bool up_finished = false;
  asio::co_spawn(ex, pump_up(client, leg, rec.up), [&](std::exception_ptr) {
    up_finished = true;  // one thread runs the loop: this cannot race with the check below
    done.cancel();
  });
  co_await pump_down(leg, client, rec.down);
  error_code ignored;
  client.shutdown(tcp::socket::shutdown_send, ignored);
  // The client may keep its side open waiting for more: its pending read is cancelled, so pump_up ends.
  client.cancel(ignored);
  error_code ec;
  if (!up_finished) co_await done.async_wait(on_error(ec));
}

}  // namespace

std::string tls_helper_path() {
  // Beside confine (the build tree, a copied pair), else where the package installs it.
  char self[4096];
  auto n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<std::size_t>(n));
    dir.resize(dir.rfind('/') + 1);
    if (::access((dir + "confine-tls").c_str(), X_OK) == 0) return dir + "confine-tls";
  }
  return CONFINE_LIBEXECDIR "/confine-tls";
}

awaitable<void> serve_broker_client(BrokerServices& services, tcp::socket client, std::string host,
                                    std::uint16_t port) {
  auto rec = ConnectionRecord::of(NetDoor::request, host, port);
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
  tcp::socket upstream(ex);
  auto refusal = co_await connect_upstream(upstream, addresses.allowed);
  std::optional<TlsLeg> leg;
  if (refusal.empty()) {
    auto started = start_tls_leg(ex, services.tls_helper, upstream, host);
    if (started) leg.emplace(std::move(*started));
    else refusal = started.error().message();
  }
  upstream.close(ec);  // the leg holds its own copy
  if (leg && refusal.empty()) refusal = co_await leg_status(leg->plain);
  if (!refusal.empty()) {
    if (leg) co_await end_tls_leg(*leg);
    rec.failed = true;
    rec.reason = refusal;
    services.recorder.record(rec);
    co_return co_await reply_and_close(client, 502, "Bad Gateway", fmt::format("{}:{} over TLS: {}", host, port, refusal));
  }
  rec.reason = "brokered over TLS (" + admission.reason + ")";
  auto head = upstream_head(req, host, port, services.secrets, rec.withheld);
  co_await asio::async_write(leg->plain, asio::buffer(head), on_error(ec));
  if (!ec && buf.size() > 0) co_await asio::async_write(leg->plain, buf.data(), on_error(ec));  // the body's first bytes
  rec.up += head.size() + buf.size();
  if (!ec) co_await relay(client, leg->plain, rec);
  co_await end_tls_leg(*leg);
  services.recorder.record(rec);
}

}  // namespace confine::net
