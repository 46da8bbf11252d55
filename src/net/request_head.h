// Reading an HTTP request head from the sandbox, one way for every place confine reads one (the proxy, the
// brokers, the doors that put secrets into plain HTTP): Beast's parser with the caller's size limit, and a
// deadline after which the client is closed (a head that trickles in holds nothing for long).
#pragma once

#include <utility>  // boost/asio/awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <string>
#include <string_view>

#include "net/net_recorder.h"

namespace confine::net {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::empty_body>;

// Slowloris: a request head must arrive within this time of its first byte being awaited.
inline constexpr auto kHeadTimeout = std::chrono::seconds(10);
// Header floods and overlong lines are refused (431, or 400 for a line the parser cannot take).
inline constexpr std::size_t kHeaderLimit = 16 * 1024;

// Reads the head into `parser`, at most kHeaderLimit bytes of it, by `deadline` (bytes after it stay in `buf`);
// empty, or why it could not.
boost::asio::awaitable<boost::system::error_code> read_request_head(boost::asio::ip::tcp::socket& client,
                                                                    boost::beast::flat_buffer& buf, RequestParser& parser,
                                                                    std::chrono::steady_clock::time_point deadline);

// The reason a head could not be read, as the log says it ("request head too large", "malformed request: …").
std::string head_failure(const boost::system::error_code& ec);
// True when the client is still there to be told (it did not just close or reset).
bool can_answer(const boost::asio::ip::tcp::socket& client, const boost::system::error_code& ec);

// A request head that could not be read (`ec` from read_request_head): recorded as malformed and, if the client
// is still there, answered with 431 or 400.
boost::asio::awaitable<void> refuse_head(NetRecorder& recorder, boost::asio::ip::tcp::socket& client,
                                         ConnectionRecord& rec, boost::system::error_code ec);

// Answers the client with `code` `status` and the one-line body "confine: `why`", then ends the connection.
boost::asio::awaitable<void> reply_and_close(boost::asio::ip::tcp::socket& client, int code, std::string_view status,
                                             const std::string& why);

// Beast's string view as the standard's.
inline std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

}  // namespace confine::net
