#include "net/request_head.h"

#include <fmt/format.h>

#include "net/relay.h"

namespace confine::net {

namespace http = boost::beast::http;

asio::awaitable<error_code> read_request_head(asio::ip::tcp::socket& client, boost::beast::flat_buffer& buf,
                                              RequestParser& parser, std::chrono::steady_clock::time_point deadline) {
  asio::steady_timer timer(co_await asio::this_coro::executor, deadline);
  timer.async_wait([&client](error_code ec) {
    if (!ec) client.close(ec);
  });
  parser.header_limit(kHeaderLimit);
  error_code ec;
  co_await http::async_read_header(client, buf, parser, on_error(ec));
  timer.cancel();
  co_return ec;
}

std::string head_failure(const error_code& ec) {
  return ec == http::error::header_limit ? "request head too large" : "malformed request: " + ec.message();
}

bool can_answer(const asio::ip::tcp::socket& client, const error_code& ec) {
  return client.is_open() && ec != http::error::end_of_stream && ec != asio::error::connection_reset;
}

awaitable<void> refuse_head(NetRecorder& recorder, tcp::socket& client, ConnectionRecord& rec, error_code ec) {
  rec.allowed = false;
  rec.reason = head_failure(ec);
  rec.refusal = NetRefusal::malformed;
  recorder.record(rec);
  if (!can_answer(client, ec)) co_return;
  bool too_large = ec == http::error::header_limit;
  co_await reply_and_close(client, too_large ? 431 : 400, too_large ? "Request Header Fields Too Large" : "Bad Request",
                           rec.reason);
}

awaitable<void> reply_and_close(tcp::socket& client, int code, std::string_view status, const std::string& why) {
  auto body = "confine: " + why + "\n";
  auto text = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                          code, status, body.size(), body);
  error_code ec;
  co_await asio::async_write(client, asio::buffer(text), on_error(ec));
  client.shutdown(tcp::socket::shutdown_both, ec);
}

}  // namespace confine::net
