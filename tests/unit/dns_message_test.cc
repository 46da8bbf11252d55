#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "allowlist_of.h"
#include "core/dns_message.h"
#include "core/dns_names.h"

using namespace confine;
using namespace confine::dns;

namespace {

using test::list;

std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  return out;
}

std::string u16(std::size_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v & 0xff)}; }

std::string wire(std::initializer_list<std::string> labels) {
  std::string out;
  for (const auto& l : labels) out += static_cast<char>(l.size()) + l;
  return out + '\0';
}

std::string header(unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns, unsigned ar) {
  return u16(id) + u16(flags) + u16(qd) + u16(an) + u16(ns) + u16(ar);
}

// An OPT record as dig sends it: payload 1232, version `version`, a DNS cookie option.
std::string opt(unsigned version = 0) {
  std::string cookie = u16(10) + u16(8) + "12345678";
  return std::string(1, '\0') + u16(kTypeOPT) + u16(1232) + std::string(1, '\0') + static_cast<char>(version) +
         u16(0) + u16(cookie.size()) + cookie;
}

std::string query(const std::string& name_wire, unsigned type, bool edns = false, unsigned qclass = kClassIN) {
  return header(0x1234, 0x0100, 1, 0, 0, edns ? 1 : 0) + name_wire + u16(type) + u16(qclass) + (edns ? opt() : "");
}

// The answer, read back independently of the code under test (but for the 12-byte header).
struct Reply {
  Header header;
  std::string question;  // the question section's bytes
  std::string address;   // dotted, when there is one A record
  bool has_opt = false;
  unsigned extended_rcode = 0;
  unsigned extended_error = 0;      // an Extended DNS Error's INFO-CODE (RFC 8914), when there is one
  std::string extended_error_text;  // and its EXTRA-TEXT
};

std::size_t name_end(const std::string& m, std::size_t at) {
  while (m.at(at) != 0) at += 1 + static_cast<unsigned char>(m.at(at));
  return at + 1;
}

Reply read_reply(const std::optional<std::string>& message) {
  REQUIRE(message.has_value());
  const std::string& m = *message;
  auto h = parse_header(m);
  REQUIRE(h.has_value());
  Reply r;
  r.header = *h;
  CHECK(h->is_response());
  std::size_t at = kHeaderSize;
  if (h->qdcount == 1) {
    auto end = name_end(m, at) + 4;
    r.question = m.substr(at, end - at);
    at = end;
  }
  if (h->ancount == 1) {
    REQUIRE(m.size() >= at + 16);
    CHECK(m.substr(at, 2) == u16(0xc00c));
    CHECK(m.substr(at + 2, 4) == u16(kTypeA) + u16(kClassIN));
    CHECK(m.substr(at + 10, 2) == u16(4));
    for (int i = 0; i < 4; ++i)
      r.address += (i ? "." : "") + std::to_string(static_cast<unsigned char>(m[at + 12 + i]));
    at += 16;
  }
  if (h->arcount == 1) {
    REQUIRE(m.size() >= at + 11);
    CHECK(m[at] == '\0');
    CHECK(m.substr(at + 1, 2) == u16(kTypeOPT));
    r.has_opt = true;
    r.extended_rcode = static_cast<unsigned char>(m[at + 5]);
    auto rdlen = static_cast<std::size_t>(static_cast<unsigned char>(m[at + 9]) << 8 | static_cast<unsigned char>(m[at + 10]));
    at += 11;
    REQUIRE(m.size() == at + rdlen);
    if (rdlen > 0) {  // one option: an Extended DNS Error
      REQUIRE(rdlen >= 6);
      CHECK(m.substr(at, 2) == u16(kOptionExtendedError));
      CHECK(m.substr(at + 2, 2) == u16(rdlen - 4));
      r.extended_error = static_cast<unsigned>(static_cast<unsigned char>(m[at + 4]) << 8 | static_cast<unsigned char>(m[at + 5]));
      r.extended_error_text = m.substr(at + 6, rdlen - 6);
    }
    at += rdlen;
  }
  CHECK(at == m.size());
  return r;
}

// Queries captured from glibc 2.36's resolver (getaddrinfo of "Api.Example.COM", AF_UNSPEC): A and AAAA, plain
// and with `options edns0 trust-ad` in resolv.conf; and an A query for "x.example.org".
const std::string kGlibcA = from_hex("fe2c0100000100000000000003417069074578616d706c6503434f4d0000010001");
const std::string kGlibcAAAA = from_hex("f2100100000100000000000003417069074578616d706c6503434f4d00001c0001");
const std::string kGlibcEdnsA =
    from_hex("812c0120000100000000000103417069074578616d706c6503434f4d000001000100002904b0000000000000");
const std::string kGlibcEdnsAAAA =
    from_hex("2c280120000100000000000103417069074578616d706c6503434f4d00001c000100002904b0000000000000");
const std::string kGlibcOtherA = from_hex("8d30010000010000000000000178076578616d706c65036f72670000010001");

}  // namespace

TEST_CASE("glibc's A query for an allowed name gets the name's address, the question echoed as sent") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  auto r = read_reply(respond(kGlibcA, allow, book));
  CHECK(r.header.id == 0xfe2c);
  CHECK(r.header.rcode() == 0);
  CHECK((r.header.flags & 0x0100) != 0);  // RD echoed
  CHECK(r.header.ancount == 1);
  CHECK(r.address == "127.77.0.1");
  CHECK(r.question == kGlibcA.substr(kHeaderSize));  // mixed case kept: clients check it (0x20 encoding)
  CHECK_FALSE(r.has_opt);
  CHECK(book.name_at(Ipv4{{127, 77, 0, 1}}) == "api.example.com");
}

TEST_CASE("AAAA, HTTPS and SVCB for an allowed name get NODATA at once, so nobody waits for a timeout") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  auto aaaa = read_reply(respond(kGlibcAAAA, allow, book));
  CHECK(aaaa.header.id == 0xf210);
  CHECK(aaaa.header.rcode() == 0);
  CHECK(aaaa.header.ancount == 0);
  for (std::uint16_t type : {kTypeHTTPS, kTypeSVCB, std::uint16_t{15} /*MX*/, std::uint16_t{16} /*TXT*/}) {
    auto r = read_reply(respond(query(wire({"api", "example", "com"}), type, true), allow, book));
    CHECK(r.header.rcode() == 0);
    CHECK(r.header.ancount == 0);
    CHECK(r.has_opt);
  }
  CHECK(book.size() == 0);  // only an A question takes an address
}

TEST_CASE("a query with EDNS0 (glibc edns0, dig's cookie option) gets a minimal OPT back") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  auto a = read_reply(respond(kGlibcEdnsA, allow, book));
  CHECK(a.header.id == 0x812c);
  CHECK(a.address == "127.77.0.1");
  CHECK(a.has_opt);
  CHECK(a.extended_rcode == 0);
  auto aaaa = read_reply(respond(kGlibcEdnsAAAA, allow, book));
  CHECK(aaaa.header.ancount == 0);
  CHECK(aaaa.has_opt);
  auto dig = read_reply(respond(query(wire({"API", "example", "com"}), kTypeA, true), allow, book));
  CHECK(dig.address == "127.77.0.1");  // same name, any case, same address
  CHECK(dig.has_opt);
}

TEST_CASE("an EDNS version other than 0 gets BADVERS") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  auto q = header(7, 0x0100, 1, 0, 0, 1) + wire({"api", "example", "com"}) + u16(kTypeA) + u16(kClassIN) + opt(1);
  auto r = read_reply(respond(q, allow, book));
  CHECK(r.header.rcode() == 0);
  CHECK(r.extended_rcode == 1);  // 16 >> 4
  CHECK(r.header.ancount == 0);
  CHECK(book.size() == 0);
}

TEST_CASE("a name not on the allowlist gets NXDOMAIN and no address, whatever its type") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  auto r = read_reply(respond(kGlibcOtherA, allow, book));
  CHECK(r.header.id == 0x8d30);
  CHECK(r.header.rcode() == 3);
  CHECK(r.header.ancount == 0);
  for (unsigned type : {kTypeAAAA, kTypeHTTPS, kTypeANY, kTypeAXFR})
    CHECK(read_reply(respond(query(wire({"exfil-data-1f2e", "attacker", "net"}), type), allow, book)).header.rcode() == 3);
  CHECK(book.size() == 0);
}

TEST_CASE("with EDNS, a name not on the allowlist says why in an Extended DNS Error, and which flag allows it") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  auto r = read_reply(respond(query(wire({"evil", "example"}), kTypeA, true), allow, book));
  CHECK(r.header.rcode() == 3);
  CHECK(r.extended_error == kExtendedErrorProhibited);
  CHECK(r.extended_error_text ==
        "confine: evil.example is not in the allowlist; to allow it: --allow evil.example (a profile: [network] allow)");
  auto allowed = read_reply(respond(kGlibcEdnsA, allow, book));
  CHECK(allowed.extended_error_text.empty());  // an answer has nothing to explain
  auto plain = read_reply(respond(kGlibcOtherA, allow, book));
  CHECK_FALSE(plain.has_opt);  // without EDNS there is no place for it (RFC 6891: no OPT unless asked)
}

TEST_CASE("wildcards cover names below, not the suffix itself; names above an allowed one exist without records") {
  auto allow = list({"*.npmjs.org", "api.example.com"});
  AddressBook book;
  auto rcode = [&](std::initializer_list<std::string> labels) {
    return read_reply(respond(query(wire(labels), kTypeA), allow, book));
  };
  auto registry = rcode({"registry", "npmjs", "org"});
  CHECK(registry.header.rcode() == 0);
  CHECK(registry.address == "127.77.0.1");
  CHECK(rcode({"REGISTRY", "NpmJS", "org"}).address == "127.77.0.1");
  CHECK(rcode({"a", "b", "npmjs", "org"}).address == "127.77.0.2");
  for (auto above : {rcode({"npmjs", "org"}), rcode({"org"}), rcode({"example", "com"}), rcode({"com"})}) {
    CHECK(above.header.rcode() == 0);
    CHECK(above.header.ancount == 0);
  }
  CHECK(rcode({"evilnpmjs", "org"}).header.rcode() == 3);
  CHECK(rcode({"npmjs", "org", "evil"}).header.rcode() == 3);
  CHECK(rcode({"x", "api", "example", "com"}).header.rcode() == 3);  // exact means exact
  CHECK(book.size() == 2);
}

TEST_CASE("an entry for some other port still gives the name an address; address entries give no name one") {
  auto allow = list({"git.example.com:22", "127.0.0.1:11434", "10.1.2.3:*"});
  AddressBook book;
  CHECK(read_reply(respond(query(wire({"git", "example", "com"}), kTypeA), allow, book)).address == "127.77.0.1");
  CHECK(read_reply(respond(query(wire({"127", "0", "0", "1"}), kTypeA), allow, book)).header.rcode() == 3);
  CHECK(read_reply(respond(query(wire({"10", "1", "2", "3"}), kTypeA), allow, book)).header.rcode() == 3);
}

TEST_CASE("a label holding a dot or any byte no host name has is refused, never read as the allowed name") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  for (auto name : {wire({"api.example", "com"}), wire({"api.example.com"}), wire({std::string("api\0", 4), "example", "com"}),
                    wire({"api", "example", "com "}), wire({"b\xc3\xbc" "cher", "example", "com"}), std::string(1, '\0')}) {
    auto r = read_reply(respond(query(name, kTypeA), allow, book));
    CHECK(r.header.rcode() == 5);
    CHECK(r.header.ancount == 0);
  }
  CHECK(read_reply(respond(query(wire({"api", "example", "com"}), kTypeA, false, 3 /*CHAOS*/), allow, book)).header.rcode() == 5);
  CHECK(read_reply(respond(query(wire({"api", "example", "com"}), kTypeAXFR), allow, book)).header.rcode() == 5);
  CHECK(book.size() == 0);
}

TEST_CASE("compression pointers, pointer loops and obsolete label types in a query are FORMERR") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  auto formerr = [&](const std::string& name_bytes) {
    auto r = read_reply(respond(header(0x4242, 0x0100, 1, 0, 0, 0) + name_bytes + u16(kTypeA) + u16(kClassIN), allow, book));
    CHECK(r.header.id == 0x4242);
    CHECK(r.header.rcode() == 1);
    CHECK(r.header.qdcount == 0);
    CHECK(r.header.ancount == 0);
  };
  formerr(std::string("\xc0\x0c", 2));                                   // points at itself
  formerr(std::string("\x03" "api\xc0\x0c", 6));                         // a loop through a label
  formerr(std::string("\x03" "api\xc0\x00", 6));                         // at the header
  formerr(std::string("\x03" "api\x40\x01" "a\x00", 8));                 // extended label type
  formerr(std::string("\x03" "api\x80\x01" "a\x00", 8));                 // reserved label type
  // A pointer (0xc0 0x0c) followed by bytes that would make a well-formed name were 0xc0 read as a length.
  formerr(std::string("\xc0\x0c", 2) + std::string(191, 'a') + '\0');
  CHECK(book.size() == 0);
}

TEST_CASE("labels of 63 bytes and names of 255 are taken; one byte more is FORMERR") {
  auto allow = list({"*.example.com"});
  AddressBook book;
  std::string l63(63, 'a');
  CHECK(read_reply(respond(query(wire({l63, "example", "com"}), kTypeA), allow, book)).header.rcode() == 0);
  // 64 does not fit in six bits: its length byte reads as an obsolete label type.
  CHECK(read_reply(respond(query(wire({std::string(64, 'a'), "example", "com"}), kTypeA), allow, book)).header.rcode() == 1);
  // Wire bytes: 3 x (1 + 63) + (1 + fill) + 8 ("example") + 4 ("com") + 1 (the root) = 206 + fill.
  auto name = [&](std::size_t fill) { return wire({l63, l63, l63, std::string(fill, 'b'), "example", "com"}); };
  REQUIRE(name(49).size() == kMaxNameWire);
  CHECK(read_reply(respond(query(name(49), kTypeA), allow, book)).header.rcode() == 0);
  CHECK(read_reply(respond(query(name(50), kTypeA), allow, book)).header.rcode() == 1);
}

TEST_CASE("bad headers: responses and scraps are dropped, other opcodes NOTIMP, wrong counts FORMERR") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  auto name = wire({"api", "example", "com"}) + u16(kTypeA) + u16(kClassIN);
  CHECK_FALSE(respond("", allow, book));
  CHECK_FALSE(respond(kGlibcA.substr(0, 11), allow, book));
  CHECK_FALSE(respond(header(1, 0x8100, 1, 0, 0, 0) + name, allow, book));  // a response: never answered
  auto rcode_of = [&](const std::string& q) { return read_reply(respond(q, allow, book)).header.rcode(); };
  CHECK(rcode_of(header(1, 0x1000, 1, 0, 0, 0) + name) == 4);  // STATUS
  CHECK(rcode_of(header(1, 0x2800, 1, 0, 0, 0) + name) == 4);  // UPDATE
  CHECK(rcode_of(header(1, 0x0100, 0, 0, 0, 0)) == 1);
  CHECK(rcode_of(header(1, 0x0100, 2, 0, 0, 0) + name + name) == 1);
  CHECK(rcode_of(header(1, 0x0100, 1, 1, 0, 0) + name) == 1);
  CHECK(rcode_of(header(1, 0x0100, 1, 0, 1, 0) + name) == 1);
  CHECK(rcode_of(header(1, 0x0100, 1, 0, 0, 2) + name + opt() + opt()) == 1);
  CHECK(rcode_of(header(1, 0x0100, 1, 0, 0, 0) + name + "x") == 1);  // trailing bytes
  // An additional record that is not OPT (a TSIG-like record owned by a name) is not understood.
  CHECK(rcode_of(header(1, 0x0100, 1, 0, 0, 1) + name + wire({"key"}) + u16(250) + u16(255) + u16(0) + u16(0) + u16(0)) == 1);
  CHECK(book.size() == 0);
}

TEST_CASE("every truncation of a real query is dropped or FORMERR, never an answer") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  for (const auto& q : {kGlibcA, kGlibcEdnsA}) {
    for (std::size_t n = 0; n < q.size(); ++n) {
      auto out = respond(q.substr(0, n), allow, book);
      if (n < kHeaderSize) {
        CHECK_FALSE(out);
        continue;
      }
      auto r = read_reply(out);
      CHECK(r.header.rcode() == 1);
      CHECK(r.header.ancount == 0);
    }
  }
  CHECK(book.size() == 0);
}

TEST_CASE("mangled queries never crash, and an answer with an address is only ever for an allowed name") {
  auto allow = list({"api.example.com"});
  AddressBook book;
  std::mt19937 rng(16);
  const std::string seeds[] = {kGlibcA, kGlibcEdnsA, kGlibcOtherA};
  for (int i = 0; i < 20000; ++i) {
    auto m = seeds[i % 3];
    for (int e = 0, n = 1 + static_cast<int>(rng() % 4); e < n; ++e) {
      auto pos = rng() % m.size();
      switch (rng() % 3) {
        case 0: m[pos] = static_cast<char>(rng()); break;
        case 1: m.erase(pos, 1 + rng() % 3); break;
        default: m.insert(pos, 1, static_cast<char>(rng())); break;
      }
      if (m.empty()) break;
    }
    auto out = respond(m, allow, book);
    if (!out) continue;
    auto h = parse_header(*out);
    REQUIRE(h);
    CHECK(h->is_response());
    CHECK(h->id == parse_header(m)->id);
  }
  REQUIRE(book.size() <= 1);  // only "api.example.com" (in any case) may ever get an address
  if (book.size() == 1) CHECK(book.name_at(Ipv4{{127, 77, 0, 1}}) == "api.example.com");
}

TEST_CASE("the address book: one stable address per name, the way back, nothing for addresses it never gave") {
  AddressBook book;
  auto a = book.address_for("a.example");
  auto b = book.address_for("b.example");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->text() == "127.77.0.1");
  CHECK(b->text() == "127.77.0.2");
  CHECK(book.address_for("a.example") == a);
  CHECK(book.name_at(*a) == "a.example");
  CHECK(book.name_at(*b) == "b.example");
  CHECK_FALSE(book.name_at(Ipv4{{127, 77, 0, 0}}));
  CHECK_FALSE(book.name_at(Ipv4{{127, 77, 0, 3}}));
  CHECK_FALSE(book.name_at(Ipv4{{127, 78, 0, 1}}));
  CHECK_FALSE(book.name_at(Ipv4{{10, 77, 0, 1}}));
  CHECK(book.size() == 2);
}

TEST_CASE("the address book is bounded: past it new names get SERVFAIL, known names keep their address") {
  auto allow = list({"*.example.com"});
  AddressBook book(2);
  CHECK(read_reply(respond(query(wire({"a", "example", "com"}), kTypeA), allow, book)).address == "127.77.0.1");
  CHECK(read_reply(respond(query(wire({"b", "example", "com"}), kTypeA), allow, book)).address == "127.77.0.2");
  auto full = read_reply(respond(query(wire({"c", "example", "com"}), kTypeA), allow, book));
  CHECK(full.header.rcode() == 2);
  CHECK(full.header.ancount == 0);
  CHECK(read_reply(respond(query(wire({"A", "example", "com"}), kTypeA), allow, book)).address == "127.77.0.1");
  CHECK(book.size() == 2);
  CHECK_FALSE(book.name_at(Ipv4{{127, 77, 0, 3}}));

  CHECK(AddressBook().capacity() == AddressBook::kDefaultCapacity);
  AddressBook whole(1'000'000);
  REQUIRE(whole.capacity() == AddressBook::kRangeSize);
  std::optional<Ipv4> last;
  for (std::size_t i = 0; i <= AddressBook::kRangeSize; ++i) {
    auto got = whole.address_for("n" + std::to_string(i) + ".example");
    if (i < AddressBook::kRangeSize) last = got;
    else CHECK_FALSE(got);
  }
  REQUIRE(last);
  CHECK(last->text() == "127.77.255.254");  // never the /16's last address
  CHECK(whole.name_at(*last) == "n65533.example");
}
