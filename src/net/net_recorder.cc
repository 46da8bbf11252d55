#include "net/net_recorder.h"

#include <unistd.h>

#include <fmt/format.h>

#include "core/report.h"

namespace confine::net {
namespace {

constexpr std::size_t kMaxSummaryNames = 1000;  // per summary table: names kept with their own count
constexpr std::size_t kSummaryTargets = 5;      // named in each exit summary line

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The name the exit summary and the denial log count a record by, its host as long as a name may be.
std::string target_of(const ConnectionRecord& r, const std::string& host) {
  return host.empty()  ? std::string("(malformed requests)")
         : r.port == 0 ? fmt::format("{} (DNS)", host)
                       : fmt::format("{}:{}", host, r.port);
}

std::string plural(int n) { return n == 1 ? "" : "s"; }

}  // namespace

std::string comma_joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::string refusal_answer(const ConnectionRecord& r) {
  if (r.refusal == NetRefusal::request_rule) return r.reason;
  auto hint = r.refusal == NetRefusal::internal_address ? std::string() : allow_hint(r.refusal, r.host, r.port);
  return fmt::format("{}:{} {}{}", r.host, r.port, r.reason, hint.empty() ? "" : "; to allow it: " + hint);
}

std::string net_log_line(const ConnectionRecord& r) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - r.start).count();
  auto time = now_ms();
  auto method = r.method, host = r.host, reason = r.reason, withheld = comma_joined(r.withheld);
  return fit_line({&method, &host, &reason, &withheld}, [&] {
    auto line = fmt::format(R"({{"time":{},"method":{},"host":{},"port":{},"allowed":{},"reason":{},"bytes_up":{},"bytes_down":{},"duration_ms":{}}})" "\n",
                            time, json_string(method), json_string(host), r.port, r.allowed, json_string(reason), r.up,
                            r.down, ms);
    if (!r.withheld.empty())  // the placeholder went out as is; the line says whose
      line.insert(line.size() - 2, fmt::format(R"(,"placeholder_not_substituted":{})", json_string(withheld)));
    return line;
  });
}

Refusal network_refusal(const ConnectionRecord& r, const std::string& target) {
  Refusal out;
  out.layer = RefusalLayer::network;
  out.action = r.allowed ? RefusalAction::failed : RefusalAction::refused;
  out.what = target;
  out.detail = {{"method", r.method}, {"host", r.host}, {"port", r.port},
                {"refusal", r.allowed ? std::string("unreachable") : std::string(refusal_name(r.refusal))}, {"reason", r.reason}};
  if (!r.allowed) out.allow_with = allow_hint(r.refusal, r.host, r.port);
  return out;
}

NetRecorder::NetRecorder(int log_fd, RefusalSink* refusals, LogCaps caps)
    : log_fd_(log_fd), refusals_(refusals), budget_(caps), denied_(kMaxSummaryNames), failed_(kMaxSummaryNames),
      withheld_(kMaxSummaryNames) {}

void NetRecorder::record(const ConnectionRecord& r) {
  auto line = log_fd_ >= 0 ? net_log_line(r) : std::string();
  bool refused = !r.inbound && (!r.allowed || r.failed);
  auto host = cut_text(r.host, kMaxCountedName);
  auto target = refused ? target_of(r, host) : std::string();
  // The denial log has its own lock and budget; it is not called with this one held.
  if (refused && refusals_ != nullptr) refusals_->record(network_refusal(r, target));
  std::lock_guard lock(mu_);
  if (!r.inbound) {
    if (!r.allowed) denied_.add(target);
    else if (r.failed) failed_.add(fmt::format("{}:{} allowed but {}", host, r.port, r.reason));
    if (!r.withheld.empty()) withheld_.add(fmt::format("{}:{} ({})", host, r.port, comma_joined(r.withheld)));
  }
  if (log_fd_ < 0) return;
  // One write() per line on an O_APPEND file: two runs sharing a log interleave whole lines, never halves.
  if (auto out = budget_.take(line, now_ms()); !out.empty()) [[maybe_unused]] auto n = ::write(log_fd_, out.data(), out.size());
}

std::vector<std::string> NetRecorder::exit_summary() const {
  // The most frequent first, a few of them: one short line each however many names the sandbox tried.
  std::lock_guard lock(mu_);
  std::vector<std::string> lines;
  if (denied_.total() > 0)
    lines.push_back(fmt::format("network: {} request{} denied: {}", denied_.total(), plural(denied_.total()),
                                denied_.top_list(kSummaryTargets)));
  if (failed_.total() > 0)
    lines.push_back(fmt::format("network: {} request{} could not connect: {}", failed_.total(),
                                plural(failed_.total()), failed_.top_list(kSummaryTargets)));
  if (withheld_.total() > 0)
    lines.push_back(fmt::format("network: {} request{} carried a secret's placeholder to a host not listed for it "
                                "(sent as is, not the value): {}",
                                withheld_.total(), plural(withheld_.total()), withheld_.top_list(kSummaryTargets)));
  return lines;
}

std::string NetRecorder::finish() {
  std::lock_guard lock(mu_);
  auto out = budget_.finish(now_ms());
  if (log_fd_ >= 0 && !out.empty()) [[maybe_unused]] auto n = ::write(log_fd_, out.data(), out.size());
  return dropped_warning("--net-log", budget_);
}

}  // namespace confine::net
