#include "net/relay.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace confine::net {
namespace {

constexpr int kSplicePipeBytes = 256 * 1024;
// Empty pipes kept for the next burst: a bulk transfer then makes no pipe per burst, and the idle ones cost at most
// twice this many descriptors, however many tunnels are open.
constexpr std::size_t kSparePipes = 8;

// Moves one splice()d chunk from the pipe to `to`, waiting while `to` is full. False when `to` is gone.
awaitable<bool> drain(SplicePipe& pipe, tcp::socket& to, std::size_t n) {
  error_code ec;
  while (n > 0) {
    auto m = ::splice(pipe.r, nullptr, to.native_handle(), nullptr, n, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (m < 0 && errno == EAGAIN) {
      co_await to.async_wait(tcp::socket::wait_write, on_error(ec));
      if (ec) co_return false;
      continue;
    }
    if (m <= 0) co_return false;
    n -= static_cast<std::size_t>(m);
  }
  co_return true;
}

enum class Burst {
  idle,         // the source has nothing more for now; the pipe is empty
  ended,        // end of stream, or an error on either side
  unsupported,  // the kernel cannot splice() these sockets; nothing was moved by this call, the pipe is empty
};

// Moves what `from` has now to `to` through `pipe`, zero-copy: the data never enters user space.
awaitable<Burst> splice_burst(SplicePipe& pipe, tcp::socket& from, tcp::socket& to, std::uint64_t& count) {
  for (;;) {
    auto n = ::splice(from.native_handle(), nullptr, pipe.w, nullptr, kSplicePipeBytes, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n < 0 && errno == EINTR) continue;
    // The pipe is empty here (each chunk is drained before the next), so EAGAIN can only mean `from` is.
    if (n < 0 && errno == EAGAIN) co_return Burst::idle;
    if (n < 0 && errno == EINVAL) co_return Burst::unsupported;
    if (n <= 0) co_return Burst::ended;
    if (!co_await drain(pipe, to, static_cast<std::size_t>(n))) co_return Burst::ended;
    count += static_cast<std::uint64_t>(n);
  }
}

// Copies one readable chunk from `from` to `to` through the loop's one scratch buffer: only the part a slow reader
// did not take is copied aside, because another connection reuses the scratch meanwhile. False when done.
awaitable<bool> copy_chunk(tcp::socket& from, tcp::socket& to, std::uint64_t& count, std::vector<char>& scratch) {
  error_code ec;
  std::size_t n = from.read_some(asio::buffer(scratch), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) co_return true;
  if (ec) co_return false;
  std::size_t sent = to.write_some(asio::buffer(scratch.data(), n), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) sent = 0, ec = {};
  if (ec) co_return false;
  if (sent < n) {
    std::vector<char> rest(scratch.begin() + static_cast<std::ptrdiff_t>(sent), scratch.begin() + static_cast<std::ptrdiff_t>(n));
    co_await asio::async_write(to, asio::buffer(rest), on_error(ec));
    if (ec) co_return false;
  }
  count += n;
  co_return true;
}

// One direction, until its source ends: spliced through a pipe from the pool; copied through the scratch buffer
// when the kernel cannot splice these sockets, or for a burst that found no pipe (out of descriptors).
awaitable<void> pump(tcp::socket& from, tcp::socket& to, std::uint64_t& count, RelayBuffers& buffers) {
  error_code ec;
  from.non_blocking(true, ec);
  to.non_blocking(true, ec);
  bool can_splice = true;
  for (;;) {
    co_await from.async_wait(tcp::socket::wait_read, on_error(ec));
    if (ec) break;
    if (can_splice) {
      SplicePipe pipe = buffers.take();
      if (pipe.ok()) {
        auto burst = co_await splice_burst(pipe, from, to, count);
        if (burst == Burst::ended) break;  // the pipe may hold bytes `to` refused: it is closed, not given back
        buffers.give_back_empty(std::move(pipe));
        if (burst == Burst::idle) continue;
        can_splice = false;
      }
    }
    if (!co_await copy_chunk(from, to, count, buffers.scratch())) break;
  }
  // Only now, with everything read from `from` written to `to`: the end of stream is passed on as a half-close.
  error_code ignored;
  to.shutdown(tcp::socket::shutdown_send, ignored);
  from.shutdown(tcp::socket::shutdown_receive, ignored);
}

}  // namespace

SplicePipe SplicePipe::make() {
  SplicePipe p;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return p;
  p.r = fds[0], p.w = fds[1];
  ::fcntl(p.w, F_SETPIPE_SZ, kSplicePipeBytes);  // best effort: fewer round trips per megabyte
  return p;
}

SplicePipe::SplicePipe(SplicePipe&& o) noexcept : r(std::exchange(o.r, -1)), w(std::exchange(o.w, -1)) {}

SplicePipe& SplicePipe::operator=(SplicePipe&& o) noexcept {
  std::swap(r, o.r);
  std::swap(w, o.w);
  return *this;
}

SplicePipe::~SplicePipe() {
  if (r >= 0) ::close(r);
  if (w >= 0) ::close(w);
}

SplicePipe RelayBuffers::take() {
  if (spare_.empty()) return SplicePipe::make();
  SplicePipe p = std::move(spare_.back());
  spare_.pop_back();
  return p;
}

void RelayBuffers::give_back_empty(SplicePipe p) {
  if (p.ok() && spare_.size() < kSparePipes) spare_.push_back(std::move(p));
}

awaitable<void> relay(std::shared_ptr<Pipe> p, std::uint64_t& up, std::uint64_t& down, RelayBuffers& buffers) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer done(ex, asio::steady_timer::time_point::max());
  bool other_finished = false;
  asio::co_spawn(ex, pump(p->b, p->a, down, buffers), [&](std::exception_ptr) {
    other_finished = true;  // one thread runs the loop: this cannot race with the check below
    done.cancel();
  });
  co_await pump(p->a, p->b, up, buffers);
  error_code ec;
  if (!other_finished) co_await done.async_wait(on_error(ec));  // woken by the cancel above
}

void reset(tcp::socket& client) {
  error_code ignored;
  client.set_option(asio::socket_base::linger(true, 0), ignored);
  client.close(ignored);
}

awaitable<void> back_off(const error_code& ec) {
  constexpr auto kExhaustedPause = std::chrono::milliseconds(100);  // out of descriptors: wait for some to close
  bool exhausted = ec == asio::error::no_descriptors || ec.value() == ENFILE || ec == asio::error::no_buffer_space ||
                   ec == asio::error::no_memory;
  asio::steady_timer pause(co_await asio::this_coro::executor, exhausted ? kExhaustedPause : std::chrono::milliseconds(1));
  co_await pause.async_wait(asio::use_awaitable);
}

}  // namespace confine::net
