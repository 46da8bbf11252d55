// The one decision every door of the network side takes for what the sandbox asks (an HTTP request through the
// proxy or a broker, a CONNECT tunnel, a connection by name or to an address): the allowlist, then the method/path
// rules. Where the bytes go next (internal addresses, secrets, --check-sni) is decided once the peer is known, by the
// door, with the functions it names. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/allowlist.h"
#include "core/proxy_outcome.h"
#include "core/request_rules.h"

namespace confine {

// What the sandbox asked for.
struct NetAsk {
  std::string_view host;  // a normalised name, or an address literal
  std::uint16_t port = 0;
  // An HTTP request confine reads: its method and origin-form target. Absent for bytes confine passes on unread
  // (a CONNECT tunnel, a direct connection), which method/path rules cannot see into.
  std::optional<std::string_view> method;
  std::optional<std::string_view> target;
  std::string_view unread_by = "a direct connection";  // what passes the bytes unread, for the refusal's text
};

struct Admission {
  bool allowed = false;
  std::string reason;  // "allowed by *.npmjs.org", "not in the allowlist", the rule that refused, …
  NetRefusal refusal = NetRefusal::not_allowed;  // why, when not allowed
};

Admission admit(const Allowlist& allow, const RequestRules& rules, const NetAsk& ask);

}  // namespace confine
