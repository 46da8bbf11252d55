#include "core/admission.h"

namespace confine {

Admission admit(const Allowlist& allow, const RequestRules& rules, const NetAsk& ask) {
  auto decision = allow.check_name(ask.host, ask.port);
  if (!decision.allowed) return {false, std::move(decision.reason), NetRefusal::not_allowed};
  if (!ask.method || !ask.target) {
    // Method/path rules need the requests in clear: bytes passed on unread would bypass them.
    if (rules.restricts(ask.host, ask.port))
      return {false,
              std::string(ask.host) + " has method/path rules, which " + std::string(ask.unread_by) +
                  " would bypass: send its requests as plain HTTP through the proxy, or over TLS through a --broker",
              NetRefusal::request_rule};
    return {true, std::move(decision.reason)};
  }
  if (auto refusal = rules.refusal(*ask.method, ask.host, ask.port, *ask.target); !refusal.empty())
    return {false, std::move(refusal), NetRefusal::request_rule};
  return {true, std::move(decision.reason)};
}

}  // namespace confine
