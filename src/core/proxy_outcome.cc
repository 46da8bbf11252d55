#include "core/proxy_outcome.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace confine {

ConnectFailure classify_connect_error(int errno_value, bool timed_out) {
  if (timed_out || errno_value == ETIMEDOUT) return ConnectFailure::timeout;
  // A reset in answer to the SYN is how a host says that no one listens on the port.
  if (errno_value == ECONNREFUSED || errno_value == ECONNRESET) return ConnectFailure::refused;
  return ConnectFailure::unreachable;
}

std::string_view failure_reason(ConnectFailure f) {
  switch (f) {
    case ConnectFailure::unresolvable: return "unresolvable";
    case ConnectFailure::refused: return "refused";
    case ConnectFailure::unreachable: return "unreachable";
    case ConnectFailure::timeout: return "timeout";
  }
  return "unreachable";
}

HttpAnswer http_answer(ConnectFailure f) {
  if (f == ConnectFailure::timeout) return {504, "Gateway Timeout"};
  return {502, "Bad Gateway"};
}

std::string_view refusal_name(NetRefusal r) {
  switch (r) {
    case NetRefusal::not_allowed: return "not_allowed";
    case NetRefusal::internal_address: return "internal_address";
    case NetRefusal::request_rule: return "request_rule";
    case NetRefusal::sni_mismatch: return "sni_mismatch";
    case NetRefusal::malformed: return "malformed";
    case NetRefusal::not_carried: return "not_carried";
    case NetRefusal::placeholder: return "placeholder";
  }
  return "";
}

std::string allow_hint(NetRefusal r, const std::string& host, std::uint16_t port) {
  // An IPv6 address in brackets, as --allow reads it: "::1:443" would be another address, on every port.
  auto name = host.find(':') == std::string::npos ? host : fmt::format("[{}]", host);
  auto target = port == 0 ? name : fmt::format("{}:{}", name, port);
  switch (r) {
    case NetRefusal::not_allowed: return fmt::format("--allow {} (a profile: [network] allow)", target);
    case NetRefusal::internal_address:
      return fmt::format("--allow ADDRESS:{} for the internal address {} resolves to", port, host);
    case NetRefusal::request_rule: return fmt::format("--allow 'METHOD {}/PATH' for the request, or a --broker", host);
    case NetRefusal::placeholder:
      return fmt::format("a --broker for HTTPS to {}, or --for http://{} if that port speaks only plain HTTP", name, target);
    case NetRefusal::sni_mismatch:
    case NetRefusal::malformed:
    case NetRefusal::not_carried: return "";
  }
  return "";
}

void TargetTally::add(const std::string& name) {
  ++total_;
  if (auto it = counts_.find(name); it != counts_.end()) ++it->second;
  else if (counts_.size() < max_names_) counts_.emplace(name, 1);
}

std::string TargetTally::top_list(std::size_t top) const {
  // counts_ is ordered by name, and the sort is stable: equal counts stay in name order.
  std::vector<std::pair<std::string, int>> sorted(counts_.begin(), counts_.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  sorted.resize(std::min(top, sorted.size()));
  std::string list;
  int rest = total_;
  for (const auto& [name, count] : sorted) {
    list += fmt::format("{}{} ×{}", list.empty() ? "" : ", ", name, count);
    rest -= count;
  }
  if (rest > 0) list += fmt::format("{}{} more", list.empty() ? "" : " and ", rest);
  return list;
}

}  // namespace confine
