// What the egress proxy tells the sandbox and the user when a request does not get through: why an allowed
// destination could not be reached (the HTTP answer and the --net-log reason), and the bounded tables behind the
// exit summary. Pure, so each mapping has a unit test; src/net/proxy.cc does the I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace confine {

// Why connecting to an allowed destination failed. Each has its own --net-log reason and summary entry.
enum class ConnectFailure {
  unresolvable,  // the name has no address (no such name, or DNS could not answer)
  refused,       // the host answered the connection with a reset: nothing listens there
  unreachable,   // no route, host down, or any other error from connect
  timeout,       // no answer before the proxy's connect timeout
};

// The failure for a connect error (an errno value; 0 when the error is not a system error). `timed_out`: the
// proxy's own timer ended the attempt, whatever error the aborted connect then reported.
ConnectFailure classify_connect_error(int errno_value, bool timed_out);

// The word --net-log records as the reason, and the summary shows: "unresolvable", "refused", ...
std::string_view failure_reason(ConnectFailure f);

// Why the proxy or the DNS stub refused a destination: the denial log's "refusal" field, and what would allow it.
enum class NetRefusal {
  not_allowed,       // the name (or address) is not in the allowlist
  internal_address,  // allowed by name, but every address it resolves to is internal (loopback, private, …)
  request_rule,      // the host has method/path rules this request does not match, or that a tunnel would bypass
  sni_mismatch,      // --check-sni: the TLS server name is another host than the one allowed
  malformed,         // not a request the proxy can decide on
  not_carried,       // a way out confine never carries (a datagram, TCP Fast Open, a second use of a connection)
  placeholder,       // plain HTTP whose secret's value would go in clear text off this machine (not sent)
};
std::string_view refusal_name(NetRefusal r);  // "not_allowed", "internal_address", …

// The flag that would let HOST:PORT through (port 0: a name the DNS stub was asked for), for the denial log and
// the proxy's 403 answer; empty where no flag would (a malformed request, a TLS name that does not match).
std::string allow_hint(NetRefusal r, const std::string& host, std::uint16_t port);

struct HttpAnswer {
  int code;
  std::string_view status;
};
// 504 Gateway Timeout for a timeout, 502 Bad Gateway for the rest (RFC 9110 §15.6.3, §15.6.5).
HttpAnswer http_answer(ConnectFailure f);

// Counts per name ("host:port ..."), for an exit summary that stays one line: at most `max_names` names are kept
// with their own count, the rest only add to the total, so a sandbox trying a million names costs fixed memory.
class TargetTally {
 public:
  explicit TargetTally(std::size_t max_names) : max_names_(max_names) {}
  void add(const std::string& name);
  [[nodiscard]] int total() const { return total_; }
  // "a ×3, b ×1 and 4 more": the `top` most counted first (ties by name), then how many requests are not named.
  // Empty when nothing was added.
  [[nodiscard]] std::string top_list(std::size_t top) const;
  [[nodiscard]] const std::map<std::string, int>& counts() const { return counts_; }

 private:
  std::size_t max_names_;
  std::map<std::string, int> counts_;
  int total_ = 0;
};

}  // namespace confine
