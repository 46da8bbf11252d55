#include "core/dns_message.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/proxy_outcome.h"

namespace confine::dns {
namespace {

constexpr std::uint16_t kFlagResponse = 0x8000;
constexpr std::uint16_t kFlagOpcodeMask = 0x7800;
constexpr std::uint16_t kFlagAuthoritative = 0x0400;
constexpr std::uint16_t kFlagRecursionDesired = 0x0100;
constexpr std::uint16_t kFlagRecursionAvailable = 0x0080;
constexpr std::uint8_t kLabelTypeMask = 0xc0;  // 0b11: a compression pointer; 0b01, 0b10: obsolete label types
constexpr std::uint16_t kPointerToQuestionName = 0xc000 | kHeaderSize;

// Reads big-endian fields from untrusted bytes; every read checks the bounds first.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  [[nodiscard]] bool has(std::size_t n) const { return bytes_.size() - pos_ >= n; }
  [[nodiscard]] bool at_end() const { return pos_ == bytes_.size(); }
  std::optional<std::uint8_t> u8() {
    if (!has(1)) return std::nullopt;
    return static_cast<std::uint8_t>(bytes_[pos_++]);
  }
  std::optional<std::uint16_t> u16() {
    if (!has(2)) return std::nullopt;
    auto v = static_cast<std::uint16_t>((static_cast<std::uint8_t>(bytes_[pos_]) << 8) |
                                        static_cast<std::uint8_t>(bytes_[pos_ + 1]));
    pos_ += 2;
    return v;
  }
  std::optional<std::string_view> bytes(std::size_t n) {
    if (!has(n)) return std::nullopt;
    auto v = bytes_.substr(pos_, n);
    pos_ += n;
    return v;
  }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

void put_u16(std::string& out, std::uint16_t v) {
  out += static_cast<char>(v >> 8);
  out += static_cast<char>(v & 0xff);
}

void put_u32(std::string& out, std::uint32_t v) {
  put_u16(out, static_cast<std::uint16_t>(v >> 16));
  put_u16(out, static_cast<std::uint16_t>(v & 0xffff));
}

void put_header(std::string& out, const Header& h) {
  for (auto v : {h.id, h.flags, h.qdcount, h.ancount, h.nscount, h.arcount}) put_u16(out, v);
}

// ASCII letters, digits, `-` and `_` (as the allowlist accepts), spelled out: no locale may widen it.
bool host_name_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// The QNAME, label by label, into `q.wire_name` and (when every byte may be in a host name) `q.host`.
bool read_name(Reader& r, Question& q) {
  bool host_like = true;
  std::string host;
  for (;;) {
    auto length = r.u8();
    if (!length || (*length & kLabelTypeMask) != 0) return false;  // cut short, or a pointer in a query
    q.wire_name += static_cast<char>(*length);
    if (q.wire_name.size() + *length > kMaxNameWire) return false;
    if (*length == 0) break;
    auto label = r.bytes(*length);  // at most 63: the two type bits are clear
    if (!label) return false;
    q.wire_name += *label;
    host_like = host_like && std::all_of(label->begin(), label->end(), host_name_byte);
    if (!host.empty()) host += '.';
    host += *label;
  }
  if (host_like) {
    std::transform(host.begin(), host.end(), host.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    q.host = std::move(host);
  }
  return true;
}

// The OPT pseudo-record (RFC 6891): owner the root, then type, payload size, extended rcode, version, flags, and
// options, which are skipped (we echo none).
std::optional<std::uint8_t> read_opt(Reader& r) {
  auto owner = r.u8();
  auto type = r.u16();
  auto udp_size = r.u16();
  auto extended_rcode = r.u8();
  auto version = r.u8();
  auto flags = r.u16();
  auto rdlength = r.u16();
  if (!owner || *owner != 0 || !type || *type != kTypeOPT || !udp_size || !extended_rcode || !version || !flags ||
      !rdlength || !r.bytes(*rdlength))
    return std::nullopt;
  return *version;
}

ParsedQuery error(const Header& h, Rcode rcode) {
  ParsedQuery p;
  p.kind = ParsedQuery::Kind::error;
  p.query.header = h;
  p.error = rcode;
  return p;
}

Header response_header(const Header& query, Rcode rcode) {
  Header h;
  h.id = query.id;
  h.flags = static_cast<std::uint16_t>(kFlagResponse | (query.flags & (kFlagOpcodeMask | kFlagRecursionDesired)) |
                                       kFlagRecursionAvailable | (static_cast<std::uint16_t>(rcode) & 0xf));
  return h;
}

// A name that is not allowed but lies above one that is (`example.com` under `*.example.com` or `api.example.com`)
// exists without records of its own; NXDOMAIN would tell a caching resolver that nothing below it exists either
// (RFC 8020) and so hide the allowed names.
bool above_an_allowed_name(std::string_view host, const Allowlist& allowlist) {
  return std::any_of(allowlist.entries().begin(), allowlist.entries().end(), [&](const AllowEntry& e) {
    if (e.kind == AllowEntry::Kind::address) return false;
    if (e.kind == AllowEntry::Kind::wildcard && e.host == host) return true;
    return e.host.size() > host.size() + 1 && e.host.ends_with(host) && e.host[e.host.size() - host.size() - 1] == '.';
  });
}

}  // namespace

std::optional<Header> parse_header(std::string_view message) {
  Reader r(message);
  Header h;
  for (auto* field : {&h.id, &h.flags, &h.qdcount, &h.ancount, &h.nscount, &h.arcount}) {
    auto v = r.u16();
    if (!v) return std::nullopt;
    *field = *v;
  }
  return h;
}

ParsedQuery parse_query(std::string_view packet) {
  auto header = parse_header(packet);
  // Never answer a response: two stubs (or a spoofed source) would bounce messages off each other forever.
  if (!header || header->is_response()) return {};
  if (header->opcode() != 0) return error(*header, Rcode::notimp);
  if (header->qdcount != 1 || header->ancount != 0 || header->nscount != 0 || header->arcount > 1)
    return error(*header, Rcode::formerr);
  Reader r(packet.substr(kHeaderSize));
  ParsedQuery p;
  p.kind = ParsedQuery::Kind::query;
  p.query.header = *header;
  auto& q = p.query.question;
  if (!read_name(r, q)) return error(*header, Rcode::formerr);
  auto type = r.u16();
  auto qclass = r.u16();
  if (!type || !qclass) return error(*header, Rcode::formerr);
  q.type = *type;
  q.qclass = *qclass;
  if (header->arcount == 1) {
    p.query.edns_version = read_opt(r);
    if (!p.query.edns_version) return error(*header, Rcode::formerr);
  }
  if (!r.at_end()) return error(*header, Rcode::formerr);
  return p;
}

Answer decide(const Question& question, const Allowlist& allowlist, AddressBook& book) {
  // Only Internet-class host names are served: the root, other classes (CHAOS `version.bind`) and names with
  // bytes a host name never has are refused rather than denied, since they are no name at all to us.
  if (question.qclass != kClassIN || question.host.empty()) return {Rcode::refused, {}, {}};
  if (!allowlist.allows_name_on_some_port(question.host)) {
    if (above_an_allowed_name(question.host, allowlist)) return {Rcode::noerror, {}, {}};
    return {Rcode::nxdomain, {}, fmt::format("confine: {} is not in the allowlist; to allow it: {}", question.host,
                                             allow_hint(NetRefusal::not_allowed, question.host, 0))};
  }
  switch (question.type) {
    case kTypeA:
    case kTypeANY: {  // ANY: the A record alone, as RFC 8482 allows
      auto address = book.address_for(question.host);
      if (!address) return {Rcode::servfail, {}, {}};
      return {Rcode::noerror, address, {}};
    }
    case kTypeAXFR:
    case kTypeIXFR:
      return {Rcode::refused, {}, {}};
    default:
      // AAAA, HTTPS, SVCB and the rest: the name exists and has no such record (NODATA), at once, so a client
      // asking for A and AAAA together uses the A answer without waiting for a timeout.
      return {Rcode::noerror, {}, {}};
  }
}

namespace {

// The OPT record's RDATA length and options: an Extended DNS Error carrying `text` (at most kMaxRefusalText bytes,
// so the answer stays well inside the smallest EDNS payload), or none.
void put_extended_error(std::string& out, std::string_view text) {
  constexpr std::size_t kMaxRefusalText = 400;
  text = text.substr(0, kMaxRefusalText);
  if (text.empty()) return put_u16(out, 0);
  put_u16(out, static_cast<std::uint16_t>(6 + text.size()));
  put_u16(out, kOptionExtendedError);
  put_u16(out, static_cast<std::uint16_t>(2 + text.size()));
  put_u16(out, kExtendedErrorProhibited);
  out += text;
}

}  // namespace

std::string build_response(const Query& query, const Answer& answer) {
  Header h = response_header(query.header, answer.rcode);
  h.flags |= kFlagAuthoritative;  // the stub is the only source of these answers
  h.qdcount = 1;
  h.ancount = answer.address ? 1 : 0;
  h.arcount = query.edns_version ? 1 : 0;
  std::string out;
  put_header(out, h);
  out += query.question.wire_name;
  put_u16(out, query.question.type);
  put_u16(out, query.question.qclass);
  if (answer.address) {
    put_u16(out, kPointerToQuestionName);
    put_u16(out, kTypeA);
    put_u16(out, kClassIN);
    put_u32(out, kAnswerTtl);
    put_u16(out, 4);
    for (auto octet : answer.address->octets) out += static_cast<char>(octet);
  }
  // RFC 6891: a query with OPT gets one back; its TTL field carries the rcode's upper 8 bits (1 for BADVERS).
  if (query.edns_version) {
    out += '\0';
    put_u16(out, kTypeOPT);
    put_u16(out, kOurUdpSize);
    put_u32(out, static_cast<std::uint32_t>(static_cast<std::uint16_t>(answer.rcode) >> 4) << 24);
    put_extended_error(out, answer.refusal_text);
  }
  return out;
}

std::string build_error(const Header& query_header, Rcode rcode) {
  std::string out;
  put_header(out, response_header(query_header, rcode));
  return out;
}

std::optional<std::string> respond(std::string_view packet, const Allowlist& allowlist, AddressBook& book) {
  auto parsed = parse_query(packet);
  switch (parsed.kind) {
    case ParsedQuery::Kind::drop:
      return std::nullopt;
    case ParsedQuery::Kind::error:
      return build_error(parsed.query.header, parsed.error);
    case ParsedQuery::Kind::query:
      break;
  }
  // Only EDNS version 0 exists; a client speaking a later one is told so and retries with 0.
  if (parsed.query.edns_version.value_or(0) != 0) return build_response(parsed.query, {Rcode::badvers, {}, {}});
  return build_response(parsed.query, decide(parsed.query.question, allowlist, book));
}

}  // namespace confine::dns
