#include "core/log_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/limits.h"

namespace confine {
namespace {

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

std::size_t decimal_digits(std::size_t n) {
  std::size_t d = 1;
  while (n >= 10) n /= 10, ++d;
  return d;
}

std::optional<std::uint64_t> number(std::string_view s) {
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return n;
}

// How much of `text` a cut to `max_bytes` keeps: never a character's first bytes without the rest (a run of stray
// continuation bytes is not followed far).
std::size_t kept_bytes(const std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  auto kept = max_bytes;
  for (int back = 0; back < 3 && kept > 0 && continuation_byte(text[kept]); ++back) --kept;
  return kept;
}

// A field as it was given, how much of it is kept, and how many bytes of the line it takes now.
struct Cut {
  std::string* field;
  std::string original;
  std::size_t kept;
  std::size_t in_line;
};

}  // namespace

std::string cut_marker(std::size_t removed) { return fmt::format("…[cut {} bytes]", removed); }

std::string cut_text(const std::string& text, std::size_t max_bytes) {
  auto kept = kept_bytes(text, max_bytes);
  return kept == text.size() ? text : text.substr(0, kept) + cut_marker(text.size() - kept);
}

std::string fit_line(const std::vector<std::string*>& fields, const std::function<std::string()>& render,
                     std::size_t max_bytes) {
  std::vector<Cut> cuts;
  cuts.reserve(fields.size());
  for (auto* f : fields) cuts.push_back({f, *f, f->size(), 0});
  auto line = render();
  // One round is enough for text that escapes evenly; more for text that does not (a prefix of control characters,
  // six bytes each in the line, then plain letters).
  for (int round = 0; round < 16 && line.size() > max_bytes; ++round) {
    // What each field takes in the line now: the line less the line without it.
    for (auto& c : cuts) {
      auto value = std::move(*c.field);
      c.field->clear();
      c.in_line = line.size() - render().size();
      *c.field = std::move(value);
    }
    std::vector<Cut*> longest;
    for (auto& c : cuts) longest.push_back(&c);
    std::stable_sort(longest.begin(), longest.end(), [](const Cut* a, const Cut* b) { return a->in_line > b->in_line; });
    // The n fields that take most room are cut to take one length, for the smallest n where that length is no
    // less than the next field takes: the longest lose most, and no field keeps less than another that was cut.
    auto excess = static_cast<long long>(line.size() - max_bytes);
    long long sum = 0, level = 0;
    std::size_t n = 0;
    while (n < longest.size()) {
      sum += static_cast<long long>(longest[n++]->in_line);
      auto next = n < longest.size() ? static_cast<long long>(longest[n]->in_line) : 0;
      level = (sum - excess) / static_cast<long long>(n);
      if (sum - excess >= 0 && level >= next) break;
      level = 0;
    }
    bool cut = false;
    for (std::size_t k = 0; k < n; ++k) {
      auto& c = *longest[k];
      if (c.kept == 0 || c.in_line <= static_cast<std::size_t>(level)) continue;
      // The room for the text: the level less the marker (the longest it can be). The text's bytes take the same
      // share of the line each, as far as it is known: those that escape longer are not told apart.
      auto marker = cut_marker(0).size() - 1 + decimal_digits(c.original.size());
      auto old_marker = c.kept == c.original.size() ? 0 : cut_marker(c.original.size() - c.kept).size();
      auto text_in_line = c.in_line > old_marker ? c.in_line - old_marker : 0;
      auto room = static_cast<std::size_t>(level) > marker ? static_cast<std::size_t>(level) - marker : 0;
      auto keep = text_in_line == 0 ? 0 : room * c.kept / text_in_line;
      c.kept = kept_bytes(c.original, std::min(keep, c.kept - 1));
      *c.field = c.original.substr(0, c.kept) + cut_marker(c.original.size() - c.kept);
      cut = true;
    }
    if (!cut) break;  // every field is down to its marker
    line = render();
  }
  return line;
}

std::optional<LogCaps> parse_log_caps(std::string_view text, LogCaps standard) {
  auto caps = standard;
  for (;;) {
    auto comma = text.find(',');
    auto item = text.substr(0, comma);
    auto eq = item.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    auto key = item.substr(0, eq);
    auto value = number(item.substr(eq + 1));
    if (!value || *value == 0) return std::nullopt;
    if (key == "lines") caps.lines = static_cast<std::size_t>(*value);
    else if (key == "bytes") caps.bytes = *value;
    else return std::nullopt;
    if (comma == std::string_view::npos) return caps;
    text = text.substr(comma + 1);
  }
}

std::string LogBudget::take(const std::string& line, std::int64_t time_ms) {
  if (finished_) return {};
  // Once a cap is reached the file ends there for this run, even for a line that would still fit.
  const char* cap = capped_ || line.size() > kMaxLogLine ? nullptr
                    : lines_ + 1 > caps_.lines ? "lines"
                    : bytes_ + line.size() > caps_.bytes ? "bytes"
                                                         : "";
  if (cap != nullptr && *cap == '\0') {
    ++lines_;
    bytes_ += line.size();
    return line;
  }
  ++dropped_lines_;
  dropped_bytes_ += line.size();
  if (capped_ || cap == nullptr) return {};
  capped_ = true;
  return fmt::format(R"({{"time":{},"event":"log_cap_reached","cap":"{}","max_lines":{},"max_bytes":{}}})" "\n",
                     time_ms, cap, caps_.lines, caps_.bytes);
}

std::string LogBudget::finish(std::int64_t time_ms) {
  if (finished_) return {};
  finished_ = true;
  if (dropped_lines_ == 0) return {};
  return fmt::format(R"({{"time":{},"event":"log_dropped","lines":{},"bytes":{}}})" "\n", time_ms, dropped_lines_,
                     dropped_bytes_);
}

std::string dropped_warning(const std::string& what, const LogBudget& budget) {
  if (budget.dropped_lines() == 0) return {};
  auto caps = budget.caps();
  return fmt::format("{}: {} line{} ({}) not written, past the cap of {} lines or {} per run", what,
                     budget.dropped_lines(), budget.dropped_lines() == 1 ? "" : "s",
                     format_bytes(budget.dropped_bytes()), caps.lines, format_bytes(caps.bytes));
}

}  // namespace confine
