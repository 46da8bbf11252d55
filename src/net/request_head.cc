#include "net/request_head.h"

namespace confine::net {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

asio::awaitable<error_code> read_request_head(asio::ip::tcp::socket& client, boost::beast::flat_buffer& buf,
                                              RequestParser& parser, std::chrono::steady_clock::time_point deadline) {
  asio::steady_timer timer(co_await asio::this_coro::executor, deadline);
  timer.async_wait([&client](error_code ec) {
    if (!ec) client.close(ec);
  });
  error_code ec;
  co_await http::async_read_header(client, buf, parser, asio::redirect_error(asio::use_awaitable, ec));
  timer.cancel();
  co_return ec;
}

std::string head_failure(const error_code& ec) {
  return ec == http::error::header_limit ? "request head too large" : "malformed request: " + ec.message();
}

bool can_answer(const asio::ip::tcp::socket& client, const error_code& ec) {
  return client.is_open() && ec != http::error::end_of_stream && ec != asio::error::connection_reset;
}

}  // namespace confine::net
