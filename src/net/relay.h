// Relaying a TCP connection both ways on a Boost.Asio loop with one thread: bytes move with splice() through a
// kernel pipe (never through user space), or are copied when the kernel cannot splice those sockets; a half-close
// is passed on as a half-close. Shared by the egress proxy and the published ports.
#pragma once

#include <utility>  // boost/asio/awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace confine::net {

// The names of Asio every door of confine's network side uses.
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using asio::awaitable;
using boost::system::error_code;

// A completion token that puts the error into `ec` instead of throwing.
inline auto on_error(error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

// A kernel pipe for splice(); both ends close with it.
struct SplicePipe {
  int r = -1, w = -1;
  SplicePipe() = default;
  static SplicePipe make();
  SplicePipe(SplicePipe&& o) noexcept;
  SplicePipe& operator=(SplicePipe&& o) noexcept;
  ~SplicePipe();
  [[nodiscard]] bool ok() const { return r >= 0; }
};

// What every relay on one loop's thread shares: the pipes of the directions moving data right now, and one scratch
// buffer for copies. A direction takes a pipe when data arrives and gives it back, empty, when its source has
// nothing more for now: an idle tunnel holds its two sockets and no pipe, so 200 open tunnels need 400
// descriptors, not 1200.
class RelayBuffers {
 public:
  // An empty pipe, or one that is not ok() when none can be made (out of descriptors: the caller copies instead).
  SplicePipe take();
  // `p` must be empty: the next direction to take it would otherwise send another tunnel's bytes.
  void give_back_empty(SplicePipe p);
  std::vector<char>& scratch() { return scratch_; }

 private:
  std::vector<SplicePipe> spare_;
  std::vector<char> scratch_ = std::vector<char>(64 * 1024);
};

// The two sockets of one relayed connection, kept alive by the relay for as long as either direction runs.
struct Pipe {
  boost::asio::ip::tcp::socket a;
  boost::asio::ip::tcp::socket b;
  Pipe(boost::asio::ip::tcp::socket x, boost::asio::ip::tcp::socket y) : a(std::move(x)), b(std::move(y)) {}
};

// Relays until each side is done: `up` counts the bytes from a to b, `down` those from b to a.
boost::asio::awaitable<void> relay(std::shared_ptr<Pipe> p, std::uint64_t& up, std::uint64_t& down, RelayBuffers& buffers);

// Closes an accepted connection with a reset, not an end of stream: its client's connect already succeeded (to
// confine's listener), so a reset is the one way left to say that the connection behind it failed or was refused.
void reset(boost::asio::ip::tcp::socket& client);

// After a failed accept: out of descriptors or memory, accept fails at once for as long as the connection waits in
// the queue, so retrying at once would spin; this waits a moment (100 ms; 1 ms for other errors) so open
// connections can finish, and the listener stays up for everyone else.
boost::asio::awaitable<void> back_off(const boost::system::error_code& ec);

// Serves each connection `acceptor` takes with `serve` (a function of the socket that returns its coroutine), each
// on its own, until the acceptor is closed.
template <typename Serve>
awaitable<void> accept_loop(tcp::acceptor& acceptor, Serve serve) {
  auto ex = co_await asio::this_coro::executor;
  for (;;) {
    error_code ec;
    tcp::socket s = co_await acceptor.async_accept(on_error(ec));
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      co_await back_off(ec);
      continue;
    }
    asio::co_spawn(ex, serve(std::move(s)), asio::detached);
  }
}

}  // namespace confine::net
