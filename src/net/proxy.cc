#include "net/proxy.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <fmt/format.h>
#include <set>
#include <optional>
#include <thread>
#include <utility>

#include "core/admission.h"
#include "core/dns_message.h"
#include "core/dns_names.h"
#include "core/proxy_outcome.h"
#include "net/broker.h"
#include "core/report.h"
#include "core/tls_sni.h"
#include "net/relay.h"
#include "net/request_head.h"

namespace confine::net {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;

constexpr auto kConnectTimeout = std::chrono::seconds(15);
constexpr std::uint16_t kTlsPort = 443;

struct Target {
  std::string host;
  std::uint16_t port = 0;
  std::string origin_form;  // path?query, for plain HTTP
};

// "host:port" or "[v6]:port". No userinfo ("user@host", "host:port@evil"), no path, no empty parts.
std::optional<Target> parse_authority(std::string_view a, std::optional<std::uint16_t> default_port) {
  if (a.empty() || a.find_first_of("@/?#\\ \t") != std::string_view::npos) return std::nullopt;
  Target t;
  std::string_view host = a, port;
  if (a.front() == '[') {
    auto close = a.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = a.substr(1, close - 1);
    if (close + 1 < a.size()) {
      if (a[close + 1] != ':') return std::nullopt;
      port = a.substr(close + 2);
    }
  } else if (auto colon = a.find(':'); colon != std::string_view::npos) {
    host = a.substr(0, colon);
    port = a.substr(colon + 1);
  }
  if (host.empty()) return std::nullopt;
  t.host = std::string(host);
  if (port.empty()) {
    if (!default_port) return std::nullopt;
    t.port = *default_port;
  } else if (auto number = port_number(port)) {
    t.port = *number;
  } else {
    return std::nullopt;
  }
  return t;
}

// "http://authority/path?query" (absolute-form, RFC 9112 §3.2.2).
std::optional<Target> parse_absolute(std::string_view url) {
  constexpr std::string_view scheme = "http://";
  if (url.size() < scheme.size() || !std::equal(scheme.begin(), scheme.end(), url.begin(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == b;
      }))
    return std::nullopt;
  url.remove_prefix(scheme.size());
  auto slash = url.find_first_of("/?#");
  auto t = parse_authority(url.substr(0, slash), 80);
  if (!t) return std::nullopt;
  t->origin_form = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  if (t->origin_form.front() != '/') t->origin_form.insert(0, "/");
  return t;
}

using Record = ConnectionRecord;

}  // namespace

struct Proxy::State {
  ProxyConfig config;
  RelayBuffers buffers;  // shared by every relay: the loop has one thread
  std::set<Record*> open;  // connections in progress, logged as such if confine stops first
  // Destroyed at stop(), which closes every socket the sandbox made confine hold.
  std::optional<asio::io_context> io{std::in_place, 1};
  std::thread thread;
  AddressBook book;  // the DNS stub's: the address of each allowed name the sandbox asked for
  std::optional<BrokerServices> broker;    // what they use of this proxy
  bool stopped = false;

  explicit State(ProxyConfig c) : config(std::move(c)) {}

  // Registers a connection for the whole of its life, so stop() can log what is still open.
  struct Open {
    State& st;
    Record& rec;
    Open(State& s, Record& r) : st(s), rec(r) { st.open.insert(&rec); }
    ~Open() { st.open.erase(&rec); }
  };

  // The --net-log line, the denial log and the summary's tallies: the run's one recorder writes them all.
  void record(const Record& r) { config.recorder->record(r); }
};

namespace {


struct Resolved {
  bool resolved = false;               // false: the name has no address; `why` has the resolver's answer
  std::vector<tcp::endpoint> allowed;  // the addresses the allowlist accepts
  std::string why;                     // the resolver's error, or why the first address was refused
};

// Resolves the target and keeps only the addresses the allowlist accepts (no SSRF into internal addresses,
// and the connection goes to exactly the checked addresses, so DNS rebinding changes nothing).
awaitable<Resolved> resolve_allowed(const Allowlist& allow, const Target& t) {
  // An address literal is its own answer: no resolver thread to wake (the gate's connects to addresses).
  error_code literal_ec;
  auto literal = asio::ip::make_address(t.host, literal_ec);
  if (!literal_ec) {
    Resolved out;
    out.resolved = true;
    auto d = allow.check_literal(literal.to_string(), t.port);
    if (d.allowed) out.allowed.push_back(tcp::endpoint(literal, t.port));
    else out.why = d.reason;
    co_return out;
  }
  auto ex = co_await asio::this_coro::executor;
  tcp::resolver resolver(ex);
  error_code ec;
  auto results = co_await resolver.async_resolve(t.host, std::to_string(t.port), on_error(ec));
  Resolved out;
  if (ec) {
    out.why = "cannot resolve " + t.host + ": " + ec.message();
    co_return out;
  }
  out.resolved = true;
  for (const auto& r : results) {
    auto d = allow.check_address(r.endpoint().address().to_string(), t.port);
    if (d.allowed) out.allowed.push_back(r.endpoint());
    else if (out.why.empty()) out.why = d.reason;
  }
  co_return out;
}

// Why an allowed request got no connection.
struct Failure {
  ConnectFailure kind;
  std::string detail;             // the system's words, for the client
  bool at_upstream_proxy = false;  // the upstream proxy failed, not the destination

  std::string reason() const {
    return (at_upstream_proxy ? "upstream proxy " : "") + std::string(failure_reason(kind));
  }
};

awaitable<std::optional<Failure>> connect_with_timeout(tcp::socket& s, const std::vector<tcp::endpoint>& eps) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex, kConnectTimeout);
  timer.async_wait([&s](error_code ec) {
    if (!ec) s.close(ec);
  });
  error_code ec;
  co_await asio::async_connect(s, eps, on_error(ec));
  // Read before cancel(): the timer's closing the socket is what ended an attempt that reports operation_aborted.
  bool timed_out = ec && asio::steady_timer::clock_type::now() >= timer.expiry();
  timer.cancel();
  if (!ec) co_return std::nullopt;
  int errno_value = ec.category() == boost::system::system_category() ? ec.value() : 0;
  auto kind = classify_connect_error(errno_value, timed_out);
  co_return Failure{kind, timed_out ? fmt::format("no answer within {} s", kConnectTimeout.count()) : ec.message()};
}

// Reads from `client` into `buf` until `decided(the bytes so far)` is true; false when the client stopped sending
// first, or `deadline` passed (the client is closed then). What was read stays in `buf`, to be sent on.
template <typename Decided>
awaitable<bool> read_until_decided(tcp::socket& client, beast::flat_buffer& buf,
                                   std::chrono::steady_clock::time_point deadline, Decided decided) {
  asio::steady_timer timer(co_await asio::this_coro::executor, deadline);
  timer.async_wait([&client](error_code ec) {
    if (!ec) client.close(ec);
  });
  for (;;) {
    auto bytes = buf.cdata();
    if (decided(std::string_view(static_cast<const char*>(bytes.data()), bytes.size()))) break;
    error_code ec;
    auto n = co_await client.async_read_some(buf.prepare(4096), on_error(ec));
    if (ec) co_return false;
    buf.commit(n);
  }
  timer.cancel();
  co_return true;
}

// --check-sni: reads the client's TLS ClientHello (into `buf`, which is then forwarded) and refuses a tunnel whose
// TLS session names another host than the one CONNECT was allowed for. Returns the refusal, or empty.
awaitable<std::string> check_sni(tcp::socket& client, beast::flat_buffer& buf, const std::string& host) {
  SniResult sni;
  auto decided = [&sni](std::string_view bytes) {
    sni = parse_client_hello_sni(bytes);
    return sni.kind != SniResult::Kind::need_more;
  };
  bool complete = co_await read_until_decided(client, buf, std::chrono::steady_clock::now() + kHeadTimeout, decided);
  if (!complete) co_return "the client sent no TLS ClientHello";
  if (sni.kind == SniResult::Kind::not_tls) co_return "--check-sni: the tunnel does not start with a TLS ClientHello";
  if (sni.kind == SniResult::Kind::no_sni) co_return "--check-sni: the TLS ClientHello names no server";
  if (normalize_host(sni.name) != host) co_return "--check-sni: the TLS server name `" + sni.name + "` is not `" + host + "`";
  co_return std::string();
}

// Connects to the upstream proxy; for CONNECT, asks it for a tunnel to the target and checks it said 200.
awaitable<std::optional<Failure>> open_upstream_tunnel(tcp::socket& s, const Upstream& up, const Target& t,
                                                       bool is_connect) {
  auto ex = co_await asio::this_coro::executor;
  tcp::resolver resolver(ex);
  error_code ec;
  auto results = co_await resolver.async_resolve(up.host, std::to_string(up.port), on_error(ec));
  if (ec) co_return Failure{ConnectFailure::unresolvable, "cannot resolve " + up.host + ": " + ec.message(), true};
  std::vector<tcp::endpoint> eps(results.begin(), results.end());
  auto failure = co_await connect_with_timeout(s, eps);
  if (failure) failure->at_upstream_proxy = true;
  if (failure || !is_connect) co_return failure;
  auto authority = fmt::format("{}:{}", t.host.find(':') != std::string::npos ? "[" + t.host + "]" : t.host, t.port);
  auto request = fmt::format("CONNECT {0} HTTP/1.1\r\nHost: {0}\r\n\r\n", authority);
  co_await asio::async_write(s, asio::buffer(request), on_error(ec));
  beast::flat_buffer buf;
  http::response_parser<http::empty_body> parser;
  parser.skip(true);  // a CONNECT response has no body
  if (!ec) co_await http::async_read_header(s, buf, parser, on_error(ec));
  if (ec) co_return Failure{ConnectFailure::unreachable, ec.message(), true};
  if (parser.get().result_int() != 200)
    co_return Failure{ConnectFailure::refused, fmt::format("it answered {}", parser.get().result_int()), true};
  co_return std::nullopt;
}

// What connecting an allowed target came to: `refusal` when every address it resolves to is refused (internal ones
// need an address entry), `failure` when it could not be reached; neither when `upstream` is connected.
struct Connected {
  std::string refusal;
  std::optional<Failure> failure;
};

// Resolves an allowed target, keeps the addresses the allowlist accepts and connects `upstream` to them, or asks
// the upstream proxy (--upstream-proxy) for it (a tunnel when `tunnel`). One path for the proxy and for the
// connections the sandbox makes without it, so both decide alike.
awaitable<Connected> connect_allowed(Proxy::State& st, const Target& target, bool tunnel, tcp::socket& upstream) {
  Connected out;
  auto resolved = co_await resolve_allowed(st.config.allow, target);
  // Behind an upstream proxy local DNS may not know the name; the internal-address check then falls to it.
  if (!resolved.resolved && !st.config.upstream) {
    out.failure = Failure{ConnectFailure::unresolvable, resolved.why};
    co_return out;
  }
  if (resolved.resolved && resolved.allowed.empty()) {
    out.refusal = resolved.why;
    co_return out;
  }
  std::optional<Failure> failure;
  if (st.config.upstream)
    failure = co_await open_upstream_tunnel(upstream, *st.config.upstream, target, tunnel);
  else
    failure = co_await connect_with_timeout(upstream, resolved.allowed);
  out.failure = failure;
  co_return out;
}

// A connection by name or by the gate that got none: refused (every address internal) or failed, recorded as such.
// False when it is connected.
bool record_no_connection(Proxy::State& st, Record& rec, const Connected& outcome) {
  if (outcome.refusal.empty() && !outcome.failure) return false;
  rec.allowed = outcome.refusal.empty();
  rec.failed = !!outcome.failure;
  rec.reason = rec.allowed ? outcome.failure->reason() : outcome.refusal;
  rec.refusal = NetRefusal::internal_address;
  st.record(rec);
  return true;
}

// An allowed request that got no connection: 502 or 504 with the reason, logged and counted as such (not denied).
awaitable<void> answer_failure(Proxy::State& st, tcp::socket& client, Record& rec, const Failure& f) {
  rec.allowed = true;
  rec.failed = true;
  rec.reason = f.reason();
  st.record(rec);
  auto answer = http_answer(f.kind);
  auto body = fmt::format("{}:{} allowed but {}: {}", rec.host, rec.port, rec.reason, f.detail);
  co_await reply_and_close(client, answer.code, answer.status, body);
}

// Header values carry a secret's real value to a host listed for it (never the target, never the body), in clear
// text only where it may go (may_substitute_in_clear): `address` is the peer the head is written to, empty when an
// upstream proxy carries it on. A secret whose value may not go there keeps its placeholder and is named in
// `refused`: such a head is not to be sent.
std::string forwarded_head(const http::request<http::empty_body>& req, const Target& t, const SecretSet& secrets,
                           const std::string& address, std::vector<std::string>& withheld,
                           std::vector<std::string>& refused) {
  RequestDestination to{t.host, t.port, false, address};
  std::string head = fmt::format("{} {} HTTP/1.1\r\n", sv(req.method_string()), t.origin_form);
  for (const auto& f : req) {
    auto name = f.name_string();
    if (beast::iequals(name, "Proxy-Connection") || beast::iequals(name, "Proxy-Authorization") ||
        beast::iequals(name, "Connection") || beast::iequals(name, "Keep-Alive"))
      continue;
    auto value = secrets.substitute_header(sv(name), sv(f.value()), to);
    withheld.insert(withheld.end(), value.withheld.begin(), value.withheld.end());
    for (auto& r : value.refused)
      if (std::find(refused.begin(), refused.end(), r) == refused.end()) refused.push_back(std::move(r));
    head += fmt::format("{}: {}\r\n", sv(name), value.value);
  }
  return head + "Connection: close\r\n\r\n";  // one request per connection: the next one is decided anew
}

// Plain HTTP: the absolute-URI host and the Host header must name the same place.
bool host_header_agrees(const http::request<http::empty_body>& req, const Target& t) {
  auto it = req.find(http::field::host);
  if (it == req.end()) return true;
  auto h = parse_authority(sv(it->value()), 80);
  return h && normalize_host(h->host) == normalize_host(t.host) && h->port == t.port;
}

// The address plain HTTP on `upstream` is written to, for may_substitute_in_clear; empty when an upstream proxy
// carries it on (the request then crosses whatever lies behind that proxy).
std::string clear_text_peer(const Proxy::State& st, const tcp::socket& upstream) {
  if (st.config.upstream) return {};
  error_code ec;
  auto peer = upstream.remote_endpoint(ec);
  return ec ? std::string() : peer.address().to_string();
}


// Plain HTTP that would carry a secret's value off this machine in clear text: nothing is sent, the placeholder
// stays with the sandbox, and the client is told why and what would let it through.
awaitable<void> refuse_in_clear(Proxy::State& st, tcp::socket& client, Record& rec,
                                const std::vector<std::string>& refused, const std::string& address) {
  rec.allowed = false;
  rec.refusal = NetRefusal::placeholder;
  rec.reason = fmt::format("not sent: plain HTTP carrying the placeholder of {}, whose value would cross the network in "
                           "clear text ({})",
                           comma_joined(refused), address.empty() ? "through the upstream proxy" : "to " + address);
  st.record(rec);
  co_await reply_and_close(client, 403, "Forbidden", refusal_answer(rec));
}

awaitable<void> serve_proxy_client(Proxy::State& st, tcp::socket client) {
  Record rec;
  Proxy::State::Open registered(st, rec);
  auto ex = co_await asio::this_coro::executor;
  beast::flat_buffer buf;
  RequestParser parser;
  error_code ec = co_await read_request_head(client, buf, parser, std::chrono::steady_clock::now() + kHeadTimeout);
  if (ec) {
    rec.method = "?";
    co_return co_await refuse_head(*st.config.recorder, client, rec, ec);
  }
  const auto& req = parser.get();
  rec.method = std::string(sv(req.method_string()));
  bool is_connect = req.method() == http::verb::connect;
  auto target = is_connect ? parse_authority(sv(req.target()), std::nullopt)
                           : parse_absolute(sv(req.target()));
  if (!target) {
    rec.reason = "bad request target `" + std::string(sv(req.target())) + "`";
    rec.refusal = NetRefusal::malformed;
    st.record(rec);
    co_return co_await reply_and_close(client, 400, "Bad Request", rec.reason);
  }
  rec.host = normalize_host(target->host);
  rec.port = target->port;
  // From here on the name is the normalised one (lower case, no trailing dot, punycode): what is checked is
  // exactly what is resolved.
  if (!rec.host.empty()) target->host = rec.host;
  if (!is_connect && !host_header_agrees(req, *target)) {
    rec.reason = "the Host header does not match the request target";
    rec.refusal = NetRefusal::malformed;
    st.record(rec);
    co_return co_await reply_and_close(client, 400, "Bad Request", rec.reason);
  }
  bool is_connect_answered = false;  // --check-sni answers CONNECT early, to read the ClientHello
  NetAsk ask{.host = target->host, .port = target->port, .unread_by = "a CONNECT tunnel"};
  if (!is_connect) {
    ask.method = rec.method;
    ask.target = target->origin_form;
  }
  auto admission = admit(st.config.allow, st.config.rules, ask);
  rec.reason = admission.reason;
  if (!admission.allowed) {
    rec.refusal = admission.refusal;
    st.record(rec);
    co_return co_await reply_and_close(client, 403, "Forbidden", refusal_answer(rec));
  }
  // Allowed by name from here on: a request still resolving or connecting when the sandbox ends is no denial.
  rec.allowed = true;
  tcp::socket upstream(ex);
  auto outcome = co_await connect_allowed(st, *target, is_connect, upstream);
  if (!outcome.refusal.empty()) {
    rec.allowed = false;
    rec.reason = outcome.refusal;
    rec.refusal = NetRefusal::internal_address;
    st.record(rec);
    co_return co_await reply_and_close(client, 403, "Forbidden", refusal_answer(rec));
  }
  if (outcome.failure) co_return co_await answer_failure(st, client, rec, *outcome.failure);
  if (is_connect && st.config.check_sni) {
    co_await asio::async_write(client, asio::buffer(std::string_view("HTTP/1.1 200 Connection established\r\n\r\n")), on_error(ec));
    // (no co_await inside ?: — GCC 12 miscompiles coroutine suspensions in conditional expressions)
    std::string refusal = ec.message();
    if (!ec) refusal = co_await check_sni(client, buf, rec.host);
    if (!refusal.empty()) {
      rec.allowed = false;
      rec.reason = refusal;
      rec.refusal = NetRefusal::sni_mismatch;
      st.record(rec);
      co_return;
    }
    is_connect_answered = true;
  }
  // Through an upstream proxy, plain HTTP stays in absolute-form: the upstream is a proxy too.
  Target forward = *target;
  if (st.config.upstream) forward.origin_form = std::string(sv(req.target()));
  std::string head = is_connect && !is_connect_answered ? "HTTP/1.1 200 Connection established\r\n\r\n" : "";
  if (!is_connect) {
    auto address = clear_text_peer(st, upstream);
    std::vector<std::string> refused;
    head = forwarded_head(req, forward, st.config.secrets, address, rec.withheld, refused);
    if (!refused.empty()) co_return co_await refuse_in_clear(st, client, rec, refused, address);
  }
  co_await asio::async_write(is_connect ? client : upstream, asio::buffer(head), on_error(ec));
  if (!is_connect) rec.up += head.size();
  if (!ec && buf.size() > 0) {  // bytes the client sent after the head (a TLS ClientHello, a body)
    co_await asio::async_write(upstream, buf.data(), on_error(ec));
    rec.up += buf.size();
  }
  if (!ec) {
    auto pipe = std::make_shared<Pipe>(std::move(client), std::move(upstream));
    co_await relay(pipe, rec.up, rec.down, st.buffers);
  }
  st.record(rec);
}

// Which side of a new connection speaks first: HTTP is the client's to start, a greeting (SSH, SMTP, MySQL) the
// server's. True when the client has bytes (or has closed) before the server says anything; nothing is read.
awaitable<bool> client_speaks_first(tcp::socket& client, tcp::socket& upstream) {
  struct Race {
    asio::steady_timer done;
    int first = 0;  // 1: the client, 2: the server
    int waiting = 2;
  };
  auto ex = co_await asio::this_coro::executor;
  auto race = std::make_shared<Race>(Race{asio::steady_timer(ex, asio::steady_timer::time_point::max())});
  auto ready = [race](int who) {
    return [race, who](error_code ec) {
      --race->waiting;
      if (!ec && race->first == 0) race->first = who;
      race->done.cancel();
    };
  };
  client.async_wait(tcp::socket::wait_read, ready(1));
  upstream.async_wait(tcp::socket::wait_read, ready(2));
  error_code ec;
  co_await race->done.async_wait(on_error(ec));
  if (race->waiting > 0) {  // the other side's wait is still out: end it, and wait for its handler
    (race->first == 1 ? upstream : client).cancel(ec);
    co_await race->done.async_wait(on_error(ec));
  }
  co_return race->first == 1;
}

// A door that is no proxy (a loopback forward, a connection by name) to `t.host`, which a secret is listed for.
// When the client starts with an HTTP/1 request, its head is read with the proxy's limits, its header values
// substituted (forwarded_head) and sent on with Connection: close — one request per connection, as through the
// proxy — and the relay carries the rest. Anything else (TLS, a server that speaks first, bytes that start no HTTP/1
// request) goes on untouched. False when the connection ends here: refused (recorded, answered) or gone.
// (`to` by reference: with a Target by value, GCC 12's coroutine frame freed a bad pointer on the early return.)
awaitable<bool> put_secrets_in(Proxy::State& st, tcp::socket& client, tcp::socket& upstream, Record& rec,
                               const Target& to) {
  bool client_first = co_await client_speaks_first(client, upstream);
  if (!client_first) co_return true;
  auto deadline = std::chrono::steady_clock::now() + kHeadTimeout;
  beast::flat_buffer buf;
  auto start = RequestStart::need_more;
  auto decided = [&start](std::string_view bytes) {
    // A request line longer than the head's limit is HTTP for the parser to refuse.
    start = bytes.size() >= kHeaderLimit ? RequestStart::http : classify_request_start(bytes);
    return start != RequestStart::need_more;
  };
  bool complete = co_await read_until_decided(client, buf, deadline, decided);
  if (!complete && !client.is_open()) {
    co_await refuse_head(*st.config.recorder, client, rec, asio::error::timed_out);
    co_return false;
  }
  error_code ec;
  if (start == RequestStart::http) {
    RequestParser parser;
    ec = co_await read_request_head(client, buf, parser, deadline);
    if (ec) {
      co_await refuse_head(*st.config.recorder, client, rec, ec);
      co_return false;
    }
    Target t = to;
    t.origin_form = std::string(sv(parser.get().target()));  // as sent: the door's destination is fixed
    auto address = clear_text_peer(st, upstream);
    std::vector<std::string> refused;
    auto head = forwarded_head(parser.get(), t, st.config.secrets, address, rec.withheld, refused);
    if (!refused.empty()) {
      co_await refuse_in_clear(st, client, rec, refused, address);
      co_return false;
    }
    co_await asio::async_write(upstream, asio::buffer(head), on_error(ec));
    rec.up += head.size();
  }
  if (!ec && buf.size() > 0) {  // a body's first bytes, or what a client of another protocol sent first
    co_await asio::async_write(upstream, buf.data(), on_error(ec));
    rec.up += buf.size();
  }
  if (ec) st.record(rec);  // the server went away: nothing to relay
  co_return !ec;
}

awaitable<void> serve_forward_client(Proxy::State& st, tcp::socket client, std::string host, std::uint16_t port) {
  auto rec = Record::of(NetDoor::forward, host, port);
  Proxy::State::Open registered(st, rec);
  auto ex = co_await asio::this_coro::executor;
  tcp::socket upstream(ex);
  std::vector<tcp::endpoint> eps = {tcp::endpoint(asio::ip::make_address(host), port)};
  rec.allowed = true;
  if (auto failure = co_await connect_with_timeout(upstream, eps)) {
    rec.failed = true;
    rec.reason = failure->reason();
    st.record(rec);
    reset(client);
    co_return;
  }
  rec.reason = "allowed by address (loopback forward)";
  // A secret listed for the forward's address, or for localhost (the same loopback), goes into its plain HTTP.
  std::string listed = st.config.secrets.lists(host) ? host : st.config.secrets.lists("localhost") ? "localhost" : "";
  bool go_on = true;
  Target target{listed, port, {}};
  if (!listed.empty()) go_on = co_await put_secrets_in(st, client, upstream, rec, target);
  if (!go_on) co_return;
  auto pipe = std::make_shared<Pipe>(std::move(client), std::move(upstream));
  co_await relay(pipe, rec.up, rec.down, st.buffers);
  st.record(rec);
}

// A connection the sandbox made without the proxy, to the address the DNS stub gave `name`, on `port`: decided by
// the same allowlist as a CONNECT to name:port, connected the same way, then relayed byte for byte (any TCP
// protocol). --check-sni holds on the TLS port: the ClientHello must name `name`.
awaitable<void> serve_direct_client(Proxy::State& st, tcp::socket client, std::string name, std::uint16_t port) {
  auto rec = Record::of(NetDoor::tcp, name, port);
  Proxy::State::Open registered(st, rec);
  auto admission = admit(st.config.allow, st.config.rules, NetAsk{.host = name, .port = port});
  rec.reason = admission.reason;
  if (!admission.allowed) {
    rec.refusal = admission.refusal;
    st.record(rec);
    co_return reset(client);
  }
  rec.allowed = true;
  beast::flat_buffer hello;  // the ClientHello read for --check-sni, forwarded once connected
  if (st.config.check_sni && port == kTlsPort) {
    auto refusal = co_await check_sni(client, hello, name);
    if (!refusal.empty()) {
      rec.allowed = false;
      rec.reason = refusal;
      rec.refusal = NetRefusal::sni_mismatch;
      st.record(rec);
      co_return reset(client);
    }
  }
  tcp::socket upstream(co_await asio::this_coro::executor);
  Target target{name, port, {}};
  auto outcome = co_await connect_allowed(st, target, true, upstream);
  if (record_no_connection(st, rec, outcome)) co_return reset(client);
  error_code ec;
  if (hello.size() > 0) {
    co_await asio::async_write(upstream, hello.data(), on_error(ec));
    rec.up += hello.size();
  } else if (st.config.secrets.lists(name)) {  // plain HTTP to a host a secret is listed for
    bool go_on = co_await put_secrets_in(st, client, upstream, rec, target);
    if (!go_on) co_return;
  }
  if (!ec) {
    auto pipe = std::make_shared<Pipe>(std::move(client), std::move(upstream));
    co_await relay(pipe, rec.up, rec.down, st.buffers);
  }
  st.record(rec);
}

// The caller's own socket connected inside the sandbox's namespace, by confine, to exactly the address it read:
// the caller's thread could change its memory or descriptor table after the read, so the kernel is never asked
// to redo the call. A blocking socket is made non-blocking for the attempt (confine's thread must not wait in the
// kernel) and waited for here, and so is a non-blocking one's when `wait`; its flags are restored before the answer.
awaitable<int> connect_inside(GatedConnect& call, bool wait) {
  int fd = call.socket.get();
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) co_return errno;
  if (!call.nonblocking) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int err = ::connect(fd, reinterpret_cast<const sockaddr*>(call.raw_address.data()),
                      static_cast<socklen_t>(call.raw_address.size())) == 0 ? 0 : errno;
  if (err == EINPROGRESS && (wait || !call.nonblocking)) {
    auto ex = co_await asio::this_coro::executor;
    asio::posix::stream_descriptor waiter(ex, ::dup(fd));
    asio::steady_timer timer(ex, kConnectTimeout);
    timer.async_wait([&waiter](error_code ec) {
      if (!ec) waiter.cancel(ec);
    });
    error_code ec;
    co_await waiter.async_wait(asio::posix::stream_descriptor::wait_write, on_error(ec));
    timer.cancel();
    socklen_t len = sizeof err;
    if (ec) err = ETIMEDOUT;
    else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  }
  if (!call.nonblocking) ::fcntl(fd, F_SETFL, flags);
  co_return err;
}

// A connection the gate routed to the host: connected there (the name resolved on the host, its addresses checked
// as a CONNECT's are), and that socket handed to the caller in place of its own. confine reads none of its bytes.
awaitable<void> connect_from_host(Proxy::State& st, GatedConnect& call, Record& rec) {
  tcp::socket upstream(co_await asio::this_coro::executor);
  Target target{rec.host, rec.port, {}};  // a named local: GCC 12 frees a temporary in a co_await too early
  auto outcome = co_await connect_allowed(st, target, true, upstream);
  if (record_no_connection(st, rec, outcome))
    co_return call.answer(rec.allowed && outcome.failure->kind == ConnectFailure::timeout ? ETIMEDOUT : ECONNREFUSED);
  rec.reason += "; connected directly (the kernel carries the bytes)";
  st.record(rec);
  error_code ec;
  upstream.non_blocking(false, ec);  // the caller's own flags are set by hand_over
  call.hand_over(sys::UniqueFd(upstream.release(ec)));
}

awaitable<void> serve_gated_connect(Proxy::State& st, GatedConnect call) {
  GatePolicy policy{st.config.allow, st.config.rules, st.config.secrets, st.config.check_sni,
                    st.config.upstream.has_value(), st.config.own_ports};
  auto route = route_connect(policy, st.book, call.to);
  auto rec = Record::of(NetDoor::tcp, route.host, route.port);
  switch (route.kind) {
    case ConnectRoute::Kind::refused:
      rec.reason = route.reason;
      rec.refusal = route.refusal;
      st.record(rec);
      co_return call.answer(ECONNREFUSED);
    case ConnectRoute::Kind::inside: {
      // A refusal to record is waited for, a non-blocking caller's too (it then sees 0 or the error at once).
      int err = co_await connect_inside(call, route.unallowed_if_refused || route.host_if_refused);
      if (err == ECONNREFUSED && route.host_if_refused) {
        rec.allowed = true;
        rec.reason = st.config.allow.check_name(route.host, route.port).reason;
        co_return co_await connect_from_host(st, call, rec);
      }
      if (err == ECONNREFUSED && route.unallowed_if_refused) {
        rec.reason = route.reason;
        rec.refusal = route.refusal;
        st.record(rec);
      }
      co_return call.answer(err);
    }
    case ConnectRoute::Kind::host:
      rec.allowed = true;
      rec.reason = st.config.allow.check_name(route.host, route.port).reason;
      co_return co_await connect_from_host(st, call, rec);
  }
}

// The shared accept loop, over an acceptor it owns: destroying the loop's coroutines at stop() closes it.
template <typename Serve>
awaitable<void> accept_loop(tcp::acceptor acceptor, Serve serve) {
  auto loop = net::accept_loop(acceptor, std::move(serve));
  co_await std::move(loop);
}

// A listener at `address`:`port` in the sandbox's network namespace, on a socket the maker made there.
std::optional<tcp::acceptor> listen_in_sandbox(Proxy::State& st, Ipv4 address, std::uint16_t port, std::string& why) {
  auto fd = st.config.sockets->make(AF_INET, SOCK_STREAM);
  if (!fd) {
    why = fd.error().message();
    return std::nullopt;
  }
  tcp::acceptor a(*st.io);
  error_code ec;
  a.assign(tcp::v4(), fd->release(), ec);
  if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) a.bind(tcp::endpoint(asio::ip::address_v4(address.octets), port), ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    why = ec.message();
    return std::nullopt;
  }
  return a;
}

// A name the DNS stub has just given `address`: confine listens there on each port the allowlist grants the name,
// before the answer goes out, so a connection made as soon as it arrives finds the listener.
void listen_for_name(Proxy::State& st, const std::string& name, Ipv4 address) {
  for (auto port : st.config.allow.transparent_ports(name)) {
    std::string why;
    auto acceptor = listen_in_sandbox(st, address, port, why);
    if (!acceptor) {
      auto rec = Record::of(NetDoor::tcp, name, port);
      rec.allowed = rec.failed = true;
      rec.reason = "confine could not listen for it inside: " + why;
      st.record(rec);
      continue;
    }
    asio::co_spawn(*st.io, accept_loop(std::move(*acceptor), [&st, name, port](tcp::socket s) {
      return serve_direct_client(st, std::move(s), name, port);
    }), asio::detached);
  }
}

// The DNS stub's answer to one query (see core/dns_message.h). A refused name is recorded like a refused request:
// the sandbox asked for it, and the user should see that it did.
std::optional<std::string> answer_query(Proxy::State& st, std::string_view packet) {
  auto before = st.book.size();
  auto reply = dns::respond(packet, st.config.allow, st.book);
  auto parsed = dns::parse_query(packet);
  if (!reply || parsed.kind != dns::ParsedQuery::Kind::query) return reply;
  const auto& question = parsed.query.question;
  if (st.book.size() > before) {
    auto name = normalize_host(question.host);
    if (auto address = st.book.address_for(name)) listen_for_name(st, name, *address);
  } else if (question.type == dns::kTypeA && dns::parse_header(*reply)->rcode() == unsigned(dns::Rcode::nxdomain)) {
    auto rec = Record::of(NetDoor::dns, question.host, 0);
    rec.reason = "not in the allowlist";
    st.record(rec);
  }
  return reply;
}

awaitable<void> dns_loop(Proxy::State& st, asio::ip::udp::socket sock) {
  std::array<char, 4096> buf{};  // larger than any query a client sends over UDP (512, or 1232 with EDNS)
  for (;;) {
    asio::ip::udp::endpoint from;
    error_code ec;
    auto n = co_await sock.async_receive_from(asio::buffer(buf), from, on_error(ec));
    if (ec == asio::error::operation_aborted || !sock.is_open()) co_return;
    if (ec) continue;
    auto reply = answer_query(st, std::string_view(buf.data(), n));
    if (reply) co_await sock.async_send_to(asio::buffer(*reply), from, on_error(ec));
  }
}

tcp::acceptor adopt(asio::io_context& io, int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  tcp::acceptor a(io);
  a.assign(ss.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), fd);
  return a;
}

}  // namespace

Proxy::Proxy(ProxyConfig config) : state_(std::make_unique<State>(std::move(config))) {}

Proxy::~Proxy() { stop(); }

void Proxy::start(std::vector<Listener> listeners) {
  auto& st = *state_;
  if (std::any_of(listeners.begin(), listeners.end(), [](const Listener& l) { return l.service == Listener::Service::broker; }))
    st.broker.emplace(BrokerServices{st.config.allow, st.config.secrets, st.config.rules, tls_helper_path(), *st.config.recorder});
  for (auto& l : listeners) {
    switch (l.service) {
      case Listener::Service::http_proxy:
        asio::co_spawn(*st.io, accept_loop(adopt(*st.io, l.fd.release()), [&st](tcp::socket s) {
          return serve_proxy_client(st, std::move(s));
        }), asio::detached);
        break;
      case Listener::Service::forward:
        asio::co_spawn(*st.io, accept_loop(adopt(*st.io, l.fd.release()), [&st, host = l.forward_host, port = l.forward_port](tcp::socket s) {
          return serve_forward_client(st, std::move(s), host, port);
        }), asio::detached);
        break;
      case Listener::Service::broker:
        asio::co_spawn(*st.io, accept_loop(adopt(*st.io, l.fd.release()), [&st, host = l.forward_host, port = l.forward_port](tcp::socket s) {
          return serve_broker_client(*st.broker, std::move(s), host, port);
        }), asio::detached);
        break;
      case Listener::Service::dns:
        // Without the socket maker there is nowhere to listen for the names it answers: it answers none.
        if (st.config.sockets == nullptr) break;
        asio::co_spawn(*st.io, dns_loop(st, asio::ip::udp::socket(*st.io, asio::ip::udp::v4(), l.fd.release())), asio::detached);
        break;
    }
  }
  state_->thread = std::thread([this] {
    // splice() into a socket whose peer is gone raises SIGPIPE (it has no MSG_NOSIGNAL), which would kill confine.
    // Blocked in this thread only, the call fails with EPIPE instead and the signal stays pending here, unseen.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    state_->io->run();
  });
}

void Proxy::stop() {
  if (state_->stopped) return;
  state_->stopped = true;
  state_->io->stop();
  if (state_->thread.joinable()) state_->thread.join();
  // The loop is stopped, not destroyed: the records of connections still open are alive, and get their line.
  for (Record* r : state_->open) {
    r->reason += r->reason.empty() ? "still open when the sandbox ended" : " (still open when the sandbox ended)";
    state_->record(*r);
  }
  // Then destroyed, with every coroutine it held: each socket and pipe is closed now, however many names or
  // tunnels the sandbox made confine hold, and the checks after the run have descriptors to work with.
  state_->open.clear();
  state_->io.reset();
}

void Proxy::gate_connect(GatedConnect call) {
  auto& st = *state_;
  asio::co_spawn(*st.io, serve_gated_connect(st, std::move(call)), asio::detached);
}

void Proxy::record_refused_call(NetDoor door, std::string host, std::uint16_t port, std::string reason) {
  auto rec = Record::of(door, std::move(host), port);
  rec.reason = std::move(reason);
  rec.refusal = NetRefusal::not_carried;
  state_->record(rec);  // the recorder takes records from any thread
}

}  // namespace confine::net
