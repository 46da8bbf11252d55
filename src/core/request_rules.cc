#include "core/request_rules.h"

#include <algorithm>
#include <fmt/format.h>

#include "core/allowlist.h"

namespace confine {
namespace {

bool is_method_token(std::string_view m) {
  if (m == "*") return true;
  return !m.empty() && m.size() <= 16 && std::all_of(m.begin(), m.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte that the escape starting at text[i] ('%') stands for; -1 when it is not '%' and two hex digits.
int escaped_byte(std::string_view text, std::size_t i) {
  if (i + 2 >= text.size()) return -1;
  int high = hex_digit(text[i + 1]), low = hex_digit(text[i + 2]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

bool is_unreserved(int b) {  // RFC 3986 §2.3: the same character whether escaped or not
  return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-' || b == '.' ||
         b == '_' || b == '~';
}

// Bytes as text for a message: printable ASCII as is, anything else as \xHH (one line, whatever was sent).
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text)
    out += c > 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  return out;
}

// What a single escape or raw byte can make a server read: the escape's own text named, empty if nothing.
std::string byte_problem(std::string_view path, std::size_t i) {
  auto c = static_cast<unsigned char>(path[i]);
  if (c == '\\') return "a \\ (some servers read it as /)";
  if (c <= 0x20 || c >= 0x7f) return fmt::format("a byte outside printable ASCII ({})", printable(path.substr(i, 1)));
  if (c != '%') return {};
  auto escape = printable(path.substr(i, 3));
  int b = escaped_byte(path, i);
  if (b < 0) return fmt::format("a malformed % escape (`{}`)", escape);
  if (b == '%')
    return fmt::format("an encoded % (`{}`): double encoding, another path to a server that decodes twice", escape);
  if (b >= 0x80)
    return fmt::format("an encoded byte above 0x7f (`{}`): a lenient UTF-8 decoder reads overlong forms as . or /",
                       escape);
  if (b == '/' || b == '\\')
    return fmt::format("an encoded {} (`{}`): a separator once decoded", static_cast<char>(b), escape);
  if (b < 0x20 || b == 0x7f) return fmt::format("an encoded control byte (`{}`)", escape);
  return {};
}

// A segment decoded once. Its escapes have passed byte_problem: each is '%' and two hex digits.
std::string decoded(std::string_view segment) {
  std::string out;
  for (std::size_t i = 0; i < segment.size(); ++i) {
    int b = segment[i] == '%' ? escaped_byte(segment, i) : -1;
    out += b < 0 ? segment[i] : static_cast<char>(b);
    if (b >= 0) i += 2;
  }
  return out;
}

// What a segment means to a server that resolves dot segments and strips parameters, which it does on the decoded
// segment (`%2e%2e` is `..` to it), so this looks at the decoded one.
std::string segment_problem(std::string_view raw, std::string_view plain) {
  auto spelled = raw == plain ? fmt::format("`{}`", raw) : fmt::format("`{}`, `{}` once decoded", raw, plain);
  if (plain == "." || plain == "..") return fmt::format("a dot segment ({})", spelled);
  if (plain.find(';') != std::string_view::npos)
    return fmt::format("a ; parameter in a segment ({}): Tomcat, Spring and Jetty drop it, so `..;` is `..` to them",
                       spelled);
  return {};
}

// The segment's normal spelling: unreserved characters unescaped, every other escape in upper case.
std::string canonical(std::string_view segment) {
  std::string out;
  for (std::size_t i = 0; i < segment.size(); ++i) {
    int b = segment[i] == '%' ? escaped_byte(segment, i) : -1;
    if (b < 0)
      out += segment[i];
    else
      out += is_unreserved(b) ? std::string(1, static_cast<char>(b)) : fmt::format("%{:02X}", b);
    if (b >= 0) i += 2;
  }
  return out;
}

bool matches(const RequestRule& r, std::string_view method, std::string_view path) {
  if (r.method != "*" && r.method != method) return false;
  return r.prefix ? path.starts_with(r.path) : path == r.path;
}

}  // namespace

sys::Result<std::string> normalize_request_path(std::string_view path) {
  if (path.empty() || path.front() != '/') return sys::plain_error("a path that does not start with /");
  // Why this order: escapes are judged on the raw text first, before anything is decoded. A malformed one has no
  // decoded form, and `%252e` decodes once to `%2e`, which no segment check would see as the `.` that a server
  // decoding twice reads. Only then are segments decoded and judged, since servers resolve `..` and strip `;` after
  // decoding; splitting at the raw '/' is splitting the decoded path, as an encoded '/' has been refused.
  for (std::size_t i = 0; i < path.size(); ++i)
    if (auto problem = byte_problem(path, i); !problem.empty()) return sys::plain_error(problem);
  std::string out;
  for (std::string_view rest = path.substr(1);;) {
    auto slash = rest.find('/');
    auto segment = rest.substr(0, slash);
    if (auto problem = segment_problem(segment, decoded(segment)); !problem.empty()) return sys::plain_error(problem);
    out += '/';
    out += canonical(segment);
    if (slash == std::string_view::npos) return out;
    rest.remove_prefix(slash + 1);
  }
}

bool is_request_rule(std::string_view spec) { return spec.find(' ') != std::string_view::npos; }

sys::Result<RequestRule> parse_request_rule(std::string_view spec) {
  auto bad = [&](std::string_view why) {
    return sys::plain_error("--allow `" + std::string(spec) + "`: " + std::string(why) +
                            " (expected METHOD HOST[:PORT]/PATH, e.g. 'POST api.openai.com/v1/responses')");
  };
  auto space = spec.find(' ');
  RequestRule r;
  r.text = std::string(spec);
  r.method = std::string(spec.substr(0, space));
  if (!is_method_token(r.method)) return bad("the method must be upper-case letters or *");
  auto rest = spec.substr(space + 1);
  auto slash = rest.find('/');
  if (slash == std::string_view::npos) return bad("a path is missing");
  auto authority = rest.substr(0, slash);
  auto entry = parse_allow_entry(authority);
  if (!entry || entry->kind != AllowEntry::Kind::exact || entry->ports.size() != 1)
    return bad("the host must be one name with at most one port");
  r.host = entry->host;
  r.port = entry->ports.front();
  auto path = rest.substr(slash);
  if (path.ends_with("/*")) {
    r.prefix = true;
    path.remove_suffix(1);
  }
  if (path.find_first_of("?#* \t") != std::string_view::npos)
    return bad("the path must be plain (no query; * only as /* at the end)");
  auto normal = normalize_request_path(path);
  if (!normal) return bad("the path holds " + normal.error().message());
  r.path = std::move(*normal);
  return r;
}

bool RequestRules::restricts(std::string_view host, std::uint16_t port) const {
  return std::any_of(rules_.begin(), rules_.end(), [&](const RequestRule& r) { return r.host == host && r.port == port; });
}

std::string RequestRules::refusal(std::string_view method, std::string_view host, std::uint16_t port,
                                  std::string_view target) const {
  if (!restricts(host, port)) return {};
  auto path = target.substr(0, target.find_first_of("?#"));
  auto where = port == 443 ? std::string(host) : fmt::format("{}:{}", host, port);
  auto normal = normalize_request_path(path);
  if (!normal)
    return fmt::format("{} {}{} is refused on a host with method/path rules: its path holds {}", method, where,
                       printable(path), normal.error().message());
  bool allowed = std::any_of(rules_.begin(), rules_.end(), [&](const RequestRule& r) {
    return r.host == host && r.port == port && matches(r, method, *normal);
  });
  if (allowed) return {};
  return fmt::format("{} {}{} is not allowed: {} allows only the requests of its --allow rules; "
                     "--allow '{} {}{}' would allow it", method, where, printable(path), where, method, where, *normal);
}

}  // namespace confine
