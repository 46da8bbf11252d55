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

namespace confine::net {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::empty_body>;

// Reads the head into `parser` (bytes after it stay in `buf`); empty, or why it could not.
boost::asio::awaitable<boost::system::error_code> read_request_head(boost::asio::ip::tcp::socket& client,
                                                                    boost::beast::flat_buffer& buf, RequestParser& parser,
                                                                    std::chrono::steady_clock::time_point deadline);

// The reason a head could not be read, as the log says it ("request head too large", "malformed request: …").
std::string head_failure(const boost::system::error_code& ec);
// True when the client is still there to be told (it did not just close or reset).
bool can_answer(const boost::asio::ip::tcp::socket& client, const boost::system::error_code& ec);

}  // namespace confine::net
