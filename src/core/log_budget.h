// Bounded log files: what confine writes for every refusal (--log, the sandbox's denial log) and every network
// decision (--net-log) comes from the sandbox's own actions, so a command can make confine write as much as it
// likes. Each line is cut to at most kMaxLogLine bytes (long text fields lose their end, with a marker saying how
// much), and each file gets at most so many lines and bytes per run; past that one line says the cap was reached,
// and one at the end of the run says how much was dropped. Pure: run/refusal_log.cc and net/net_recorder.cc write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

// The longest line written, its newline included.
inline constexpr std::size_t kMaxLogLine = 4096;

// "…[cut 15012 bytes]": what stands at the end of a text field that lost `removed` bytes.
std::string cut_marker(std::size_t removed);

// `text` cut to its first `max_bytes` bytes (at a character's start) and the marker, when it is longer.
std::string cut_text(const std::string& text, std::size_t max_bytes);

// A name the exit summary and --report count (a host, a path): as long as a DNS name may be (253), with room.
inline constexpr std::size_t kMaxCountedName = 256;

// `render()` makes a JSON line from the strings `fields` point to. While the line is longer than `max_bytes`, the
// fields that take most of it are cut to take one length, by just what is too long (at a UTF-8 character's start,
// their end replaced by cut_marker), and the line made again: the short fields stay whole, and the fields keep
// what is left. A field is cut at most to its marker; a line that is still too long then (more fields than
// `max_bytes` has room for) is returned as it is, and the caller does not write it.
std::string fit_line(const std::vector<std::string*>& fields, const std::function<std::string()>& render,
                     std::size_t max_bytes = kMaxLogLine);

// How much one log file takes per run.
struct LogCaps {
  std::size_t lines = 0;
  std::uint64_t bytes = 0;
};

// --log and the sandbox's denial log: 100000 lines (a command looping on a refused call is seen for a long while,
// and an ordinary run refuses far fewer), 32 MiB (the sandbox's file is in memory; 100000 ordinary lines of
// ~200 bytes are ~20 MB, so only long lines meet this cap first: 8192 of the longest).
inline constexpr LogCaps kRefusalLogCaps{100000, 32u << 20};
// --net-log: a line per connection, allowed ones too. 100000 is far more connections than an ordinary agent's run
// makes (a large `npm install` makes a few thousand), and a loop of connections makes them in seconds; 32 MiB for
// the same reason as the denial log's, and `confine learn` reads a run's --net-log and --log whole (at most 64 MiB).
inline constexpr LogCaps kNetLogCaps{100000, 32u << 20};

// A test build's CONFINE_TEST_LOG_CAPS: "lines=N,bytes=N" (either may be left out: the standard one stays).
// nullopt when the text is not that.
std::optional<LogCaps> parse_log_caps(std::string_view text, LogCaps standard);

// What one file has taken this run, and what it may still take. Not thread-safe: the writer holds its own lock.
class LogBudget {
 public:
  explicit LogBudget(LogCaps caps) : caps_(caps) {}

  // What to write for `line` (a whole line, newline included) at `time_ms`: the line itself; or, once it would
  // pass a cap, one line saying so, {"time":…,"event":"log_cap_reached","cap":"lines"|"bytes","max_lines":…,
  // "max_bytes":…}; after that nothing (the line is counted as dropped). A line longer than kMaxLogLine is dropped.
  std::string take(const std::string& line, std::int64_t time_ms);

  // The end of the run's line, {"time":…,"event":"log_dropped","lines":N,"bytes":N}, when something was dropped;
  // else empty. Once: the budget takes nothing more after it.
  std::string finish(std::int64_t time_ms);

  [[nodiscard]] std::size_t dropped_lines() const { return dropped_lines_; }
  [[nodiscard]] std::uint64_t dropped_bytes() const { return dropped_bytes_; }
  [[nodiscard]] LogCaps caps() const { return caps_; }

 private:
  LogCaps caps_;
  std::size_t lines_ = 0;
  std::uint64_t bytes_ = 0;
  bool capped_ = false;
  bool finished_ = false;
  std::size_t dropped_lines_ = 0;
  std::uint64_t dropped_bytes_ = 0;
};

// "--log: 2000 lines (8.0 MiB) not written after the cap of 100000 lines or 32.0 MiB; the counts have them all":
// the stderr line for a budget that dropped something (empty when none was), for the file `what`.
std::string dropped_warning(const std::string& what, const LogBudget& budget);

}  // namespace confine
