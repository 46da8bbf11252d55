// The DNS stub's messages: a query read from the sandbox's untrusted bytes, and the answer confine gives without
// asking anyone. An allowed name gets an address from the address book (src/core/dns_names.h), every other name
// NXDOMAIN, and nothing is ever forwarded, so a query name cannot carry data out. Pure and bounds-checked at every
// step; fuzzed by tests/fuzz/dns_fuzz.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/allowlist.h"
#include "core/dns_names.h"

namespace confine::dns {

inline constexpr std::uint16_t kTypeA = 1;
inline constexpr std::uint16_t kTypeAAAA = 28;
inline constexpr std::uint16_t kTypeOPT = 41;
inline constexpr std::uint16_t kTypeSVCB = 64;
inline constexpr std::uint16_t kTypeHTTPS = 65;
inline constexpr std::uint16_t kTypeIXFR = 251;
inline constexpr std::uint16_t kTypeAXFR = 252;
inline constexpr std::uint16_t kTypeANY = 255;
inline constexpr std::uint16_t kClassIN = 1;

inline constexpr std::size_t kHeaderSize = 12;
inline constexpr std::size_t kMaxLabel = 63;
inline constexpr std::size_t kMaxNameWire = 255;  // the whole QNAME, length bytes and the final zero included
inline constexpr std::uint32_t kAnswerTtl = 300;  // addresses are stable for the run: any TTL is right
inline constexpr std::uint16_t kOptionExtendedError = 15;  // RFC 8914
inline constexpr std::uint16_t kExtendedErrorProhibited = 18;
inline constexpr std::uint16_t kOurUdpSize = 1232;  // the EDNS payload size we advertise (DNS flag day 2020)

enum class Rcode : std::uint16_t { noerror = 0, formerr = 1, servfail = 2, nxdomain = 3, notimp = 4, refused = 5,
                                   badvers = 16 /* EDNS only: the low 4 bits in the header, the rest in OPT */ };

struct Header {
  std::uint16_t id = 0, flags = 0, qdcount = 0, ancount = 0, nscount = 0, arcount = 0;
  [[nodiscard]] bool is_response() const { return (flags & 0x8000) != 0; }
  [[nodiscard]] unsigned opcode() const { return (flags >> 11) & 0xf; }
  [[nodiscard]] unsigned rcode() const { return flags & 0xf; }  // the header's 4 bits only
};

// The first 12 bytes of any DNS message; nullopt when there are fewer.
std::optional<Header> parse_header(std::string_view message);

struct Question {
  std::string wire_name;  // the QNAME as sent (labels and the final zero), echoed unchanged in the answer
  std::string host;       // dotted and lower case; empty for the root or a name with a byte no host name has
  std::uint16_t type = 0, qclass = 0;
};

struct Query {
  Header header;
  Question question;
  std::optional<std::uint8_t> edns_version;  // set when the query carried an OPT record
};

struct ParsedQuery {
  // drop: not worth an answer (too short to hold an id, or itself a response). error: answered with `error`
  // and the header only, since the question could not be trusted.
  enum class Kind { query, drop, error } kind = Kind::drop;
  Query query;  // query: all of it; error: the header
  Rcode error = Rcode::formerr;
};

// One question, no compression pointers (a query has nothing earlier to point at), labels of at most 63 bytes, a
// name of at most 255, empty answer and authority sections, at most an OPT record in the additional one, and
// nothing after it. Opcodes other than QUERY: NOTIMP.
ParsedQuery parse_query(std::string_view packet);

struct Answer {
  Rcode rcode = Rcode::refused;
  std::optional<Ipv4> address;  // an A record, for noerror
  // Why a name does not exist, and the flag that would allow it: an Extended DNS Error (RFC 8914, "Prohibited")
  // in the OPT record, for a query that carried one (dig shows it). Empty: none.
  std::string refusal_text;
};

// What a question gets: see docs/design.md, "DNS stub (message handling)".
Answer decide(const Question& question, const Allowlist& allowlist, AddressBook& book);

std::string build_response(const Query& query, const Answer& answer);
std::string build_error(const Header& query_header, Rcode rcode);

// The whole exchange: the bytes to send back, or nullopt to send nothing.
std::optional<std::string> respond(std::string_view packet, const Allowlist& allowlist, AddressBook& book);

}  // namespace confine::dns
