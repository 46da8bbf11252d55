#include "net/publish.h"

#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cerrno>
#include <chrono>
#include <fmt/format.h>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "core/proxy_outcome.h"
#include "net/relay.h"

namespace confine::net {
namespace {

// The sandbox's own loopback: a server inside on 127.0.0.1 or 0.0.0.0 both take it.
constexpr const char* kInsideAddress = "127.0.0.1";
// A server whose listen backlog is full drops the SYN; the client on the host is not kept waiting forever.
constexpr auto kConnectTimeout = std::chrono::seconds(15);
constexpr int kBacklog = 128;

sys::Error listen_error(const PublishedPort& port, int err) {
  auto where = port.host_endpoint();
  if (err == EADDRINUSE) return sys::plain_error(fmt::format("--publish {}: {} is in use", port.spec, where));
  if (err == EADDRNOTAVAIL)
    return sys::plain_error(fmt::format("--publish {}: the host has no address {}", port.spec, port.host_address));
  if (err == EACCES)
    return sys::plain_error(fmt::format("--publish {}: {} needs root (ports below net.ipv4.ip_unprivileged_port_start "
                                        "are privileged); publish a higher host port", port.spec, where));
  errno = err;
  return sys::errno_error(fmt::format("--publish {}: cannot listen on {}", port.spec, where));
}

}  // namespace

sys::Result<HostListener> listen_on_host(const PublishedPort& port) {
  int family = port.host_ipv6 ? AF_INET6 : AF_INET;
  sys::UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return listen_error(port, errno);
  int on = 1;
  // A connection of a previous run in TIME_WAIT does not keep the port; a listening socket still does (EADDRINUSE).
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  // [::] means IPv6 only, as written: 0.0.0.0 is published by its own spec.
  if (port.host_ipv6) ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
  auto endpoint = tcp::endpoint(asio::ip::make_address(port.host_address), port.host_port);
  if (::bind(fd.get(), endpoint.data(), static_cast<socklen_t>(endpoint.size())) != 0 || ::listen(fd.get(), kBacklog) != 0)
    return listen_error(port, errno);
  return HostListener{std::move(fd), port};
}

struct Publisher::State {
  const mech::SandboxSockets& sockets;
  NetRecorder& recorder;
  // Declared before the loop, so they outlive it: destroying the loop destroys the connections' coroutines, which
  // still unregister themselves and hold pipes.
  RelayBuffers buffers;              // shared by every relay: the loop has one thread
  std::set<ConnectionRecord*> open;  // connections in progress, logged as such if confine stops first
  asio::io_context io{1};
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;  // closed by stop(); gone before the loop they belong to
  std::thread thread;
  bool stopped = false;

  State(const mech::SandboxSockets& s, NetRecorder& r) : sockets(s), recorder(r) {}

  void record(const ConnectionRecord& r) const { recorder.record(r); }

  // Registers a connection for the whole of its life, so stop() can log what is still open.
  struct Open {
    State& st;
    ConnectionRecord& rec;
    Open(State& s, ConnectionRecord& r) : st(s), rec(r) { st.open.insert(&rec); }
    ~Open() { st.open.erase(&rec); }
  };
};

namespace {

// Connects a socket of the sandbox's network namespace to the port on its loopback; the errno and whether the
// timeout ended it, on failure.
awaitable<std::optional<ConnectFailure>> connect_inside(tcp::socket& s, std::uint16_t port) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex, kConnectTimeout);
  timer.async_wait([&s](error_code ec) {
    if (!ec) s.close(ec);
  });
  error_code ec;
  co_await s.async_connect(tcp::endpoint(asio::ip::make_address(kInsideAddress), port), on_error(ec));
  // Read before cancel(): the timer's closing the socket is what ended an attempt that reports operation_aborted.
  bool timed_out = ec && asio::steady_timer::clock_type::now() >= timer.expiry();
  timer.cancel();
  if (!ec) co_return std::nullopt;
  co_return classify_connect_error(ec.category() == boost::system::system_category() ? ec.value() : 0, timed_out);
}

awaitable<void> serve_connection(Publisher::State& st, tcp::socket client, const PublishedPort& port) {
  auto rec = ConnectionRecord::of(NetDoor::publish, kInsideAddress, port.port);
  Publisher::State::Open registered(st, rec);
  rec.inbound = true;
  rec.allowed = true;  // the user published it: every connection from the host side is let in
  error_code ec;
  auto peer = client.remote_endpoint(ec);
  rec.reason = fmt::format("published at {}, from {}", port.host_endpoint(), ec ? "?" : peer.address().to_string());
  auto ex = co_await asio::this_coro::executor;
  tcp::socket inside(ex);
  // Made by the socket maker in the sandbox's network namespace: 127.0.0.1 there is the sandbox's own loopback.
  auto made = st.sockets.make(AF_INET, SOCK_STREAM);
  std::optional<ConnectFailure> failure = ConnectFailure::unreachable;
  if (made) {
    inside.assign(tcp::v4(), made->release(), ec);
    if (!ec) failure = co_await connect_inside(inside, port.port);
  }
  if (failure) {
    rec.failed = true;
    rec.reason = std::string(failure_reason(*failure));
    st.record(rec);
    reset(client);
    co_return;
  }
  auto pipe = std::make_shared<Pipe>(std::move(client), std::move(inside));
  co_await relay(pipe, rec.up, rec.down, st.buffers);
  st.record(rec);
}

}  // namespace

Publisher::Publisher(const mech::SandboxSockets& sockets, NetRecorder& recorder)
    : state_(std::make_unique<State>(sockets, recorder)) {}

Publisher::~Publisher() { stop(); }

void Publisher::start(std::vector<HostListener> listeners) {
  for (auto& l : listeners) {
    auto acceptor = std::make_unique<tcp::acceptor>(state_->io);
    acceptor->assign(l.port.host_ipv6 ? tcp::v6() : tcp::v4(), l.fd.release());
    asio::co_spawn(state_->io, accept_loop(*acceptor, [&st = *state_, port = std::move(l.port)](tcp::socket s) {
      return serve_connection(st, std::move(s), port);
    }), asio::detached);
    state_->acceptors.push_back(std::move(acceptor));
  }
  state_->thread = std::thread([this] {
    // splice() into a socket whose peer is gone raises SIGPIPE (it has no MSG_NOSIGNAL), which would kill confine.
    // Blocked in this thread only, the call fails with EPIPE instead and the signal stays pending here, unseen.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    state_->io.run();
  });
}

void Publisher::stop() {
  if (state_->stopped) return;
  state_->stopped = true;
  state_->io.stop();
  if (state_->thread.joinable()) state_->thread.join();
  // The loop is stopped, not destroyed: closing the listeners now frees the host's ports at once.
  for (auto& a : state_->acceptors) {
    error_code ignored;
    a->close(ignored);
  }
  for (ConnectionRecord* r : state_->open) {
    r->reason += " (still open when the sandbox ended)";
    state_->record(*r);
  }
}

}  // namespace confine::net
