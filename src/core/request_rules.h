// Method and path rules (--allow 'POST api.openai.com/v1/responses'): for a host that has any, only the requests
// that match one pass. Checked where confine sees requests in clear: the brokers and plain HTTP through the proxy;
// a CONNECT tunnel to such a host is refused (its requests would be out of sight). Pure, parsed once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sys/result.h"

namespace confine {

struct RequestRule {
  std::string method;  // upper case; "*": any
  std::string host;    // normalised
  std::uint16_t port = 443;
  std::string path;    // starts with '/'; with `prefix`, without the trailing '*'
  bool prefix = false; // "/v1/*": every path below /v1/
  std::string text;    // as given, for messages
};

// A request path (no query) as a server reads it, for matching against rules. Refused, the error one phrase naming
// the problem, when a server could read it as another path than the one checked: once decoded, a `.` or `..`
// segment or a `;` parameter (Tomcat, Spring and Jetty read `..;` as `..`); `%25` (double encoding), an encoded
// byte above 0x7f (overlong UTF-8), an encoded `/`, `\` or control byte, a malformed `%` escape; a raw `\` or
// a byte outside printable ASCII. Otherwise its normal form: escapes of unreserved characters (RFC 3986 §2.3)
// decoded, the others kept in upper case, so every spelling of one path is one string. Idempotent.
sys::Result<std::string> normalize_request_path(std::string_view path);

// True for the rule form of an --allow entry: a method, a space, then HOST[:PORT]/PATH.
bool is_request_rule(std::string_view spec);
// "METHOD HOST[:PORT]/PATH" or "METHOD HOST[:PORT]/PREFIX/*"; METHOD may be "*".
sys::Result<RequestRule> parse_request_rule(std::string_view spec);

class RequestRules {
 public:
  RequestRules() = default;
  explicit RequestRules(std::vector<RequestRule> rules) : rules_(std::move(rules)) {}

  [[nodiscard]] bool restricts(std::string_view host, std::uint16_t port) const;
  // Empty when the request may pass (the host has no rules, or one matches); else one line saying why not and
  // which --allow would let it through. `target` is the origin-form target (path and query).
  [[nodiscard]] std::string refusal(std::string_view method, std::string_view host, std::uint16_t port,
                                    std::string_view target) const;
  [[nodiscard]] const std::vector<RequestRule>& rules() const { return rules_; }

 private:
  std::vector<RequestRule> rules_;
};

}  // namespace confine
