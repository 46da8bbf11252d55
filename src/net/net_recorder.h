// The one writer of what the network doors saw: every connection the proxy, the brokers, the DNS stub, the
// direct-TCP listeners and the published ports decide on is one ConnectionRecord, given to the run's one
// NetRecorder, which writes its --net-log line, records what did not get through in the denial log, and keeps the
// tallies of the exit summary. Thread-safe: the proxy's loop, the publisher's and the supervisor's other threads
// record through the same one.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/log_budget.h"
#include "core/net_door.h"
#include "core/proxy_outcome.h"
#include "core/refusals.h"

namespace confine::net {

// One connection as --net-log records it: what was asked, what was decided, what moved.
struct ConnectionRecord {
  std::string method;  // a request's method (CONNECT, GET, …), or another door's word (core/net_door.h)
  std::string host;
  std::uint16_t port = 0;
  bool allowed = false;
  bool failed = false;  // allowed, but the destination could not be reached; `reason` says why, in one word
  std::string reason;
  NetRefusal refusal = NetRefusal::not_allowed;  // why, when not allowed
  std::uint64_t up = 0;    // from the side that opened the connection
  std::uint64_t down = 0;  // to it
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::vector<std::string> withheld;  // secrets whose placeholder went out as is (the host is not listed for them)
  // From the host into the sandbox (a published port): the host's connection, not the sandbox's, so --net-log only,
  // neither a refusal of the sandbox's nor in the exit summary.
  bool inbound = false;

  // A record of a connection to `host`:`port` through `door`, nothing decided yet (a request's method is set
  // once its head is read).
  static ConnectionRecord of(NetDoor door, std::string host, std::uint16_t port) {
    ConnectionRecord r;
    r.method = std::string(net_door_word(door));
    r.host = std::move(host);
    r.port = port;
    return r;
  }
};

// "OPENAI_API_KEY,GH_TOKEN": names as the log and the exit summary list them.
std::string comma_joined(const std::vector<std::string>& names);

// The record's one JSON line, newline included, at most kMaxLogLine bytes (long text cut, with a marker): written
// with one write() on an O_APPEND file, so two runs sharing a log interleave whole lines, never halves.
std::string net_log_line(const ConnectionRecord& r);

// The one line a refused HTTP request is answered with (the 403's body): what was refused, why, and the flag that
// would allow it (where the reason does not already say how: an internal address's names the address, a method/path
// rule's names the --allow).
std::string refusal_answer(const ConnectionRecord& r);

// A connection that did not get through, as the denial log records it: `what` is `target`, the summary's name.
Refusal network_refusal(const ConnectionRecord& r, const std::string& target);

class NetRecorder {
 public:
  // `log_fd`: --net-log's descriptor (-1: none), borrowed for the run; `refusals`: the denial log (none: not
  // recorded there); `caps`: how much --net-log takes this run.
  NetRecorder(int log_fd, RefusalSink* refusals, LogCaps caps = kNetLogCaps);
  NetRecorder(const NetRecorder&) = delete;
  NetRecorder& operator=(const NetRecorder&) = delete;

  void record(const ConnectionRecord& r);

  // The exit summary: a line for the denied requests ("network: 3 requests denied: evil.example:443 ×3"), one for
  // the allowed ones that got no connection ("network: 2 requests could not connect: api.example:443 allowed but
  // unresolvable ×2"), one for the requests that carried a secret's placeholder to a host not listed for it; none
  // when every request was allowed, connected and kept its placeholders to their hosts.
  [[nodiscard]] std::vector<std::string> exit_summary() const;

  // The end of the run: --net-log's line of what its cap dropped, if it dropped anything; nothing is written after.
  // Returns the warning for stderr (empty: nothing was dropped).
  std::string finish();

 private:
  mutable std::mutex mu_;
  int log_fd_;
  RefusalSink* refusals_;
  LogBudget budget_;
  TargetTally denied_;    // "host:port"
  TargetTally failed_;    // "host:port allowed but REASON"
  TargetTally withheld_;  // "host:port (NAME)": a placeholder sent to a host not listed for it
};

}  // namespace confine::net
