#include "core/tls_sni.h"

#include <cstdint>

namespace confine {
namespace {

constexpr std::uint8_t kHandshakeRecord = 0x16;
constexpr std::uint8_t kClientHello = 0x01;
constexpr std::uint16_t kServerNameExtension = 0x0000;
constexpr std::uint8_t kHostName = 0x00;

// A cursor over untrusted bytes: every read checks the bounds first; a failed read poisons the cursor.
class Reader {
 public:
  explicit Reader(std::string_view d) : d_(d) {}
  bool ok() const { return ok_; }
  std::size_t left() const { return ok_ ? d_.size() - pos_ : 0; }
  std::uint32_t number(std::size_t bytes) {
    if (!ok_ || left() < bytes) return fail();
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i) v = (v << 8) | static_cast<std::uint8_t>(d_[pos_++]);
    return v;
  }
  std::string_view take(std::size_t n) {
    if (!ok_ || left() < n) return fail(), std::string_view{};
    auto s = d_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  void skip(std::size_t n) { take(n); }

 private:
  std::uint32_t fail() {
    ok_ = false;
    return 0;
  }
  std::string_view d_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

// Concatenates the payloads of consecutive handshake records (a ClientHello may be fragmented).
// Returns false if a non-handshake record appears; sets `complete` when all records present are whole.
bool handshake_bytes(std::string_view data, std::string& out, bool& complete) {
  Reader r(data);
  complete = true;
  while (r.left() > 0) {
    if (r.left() < 5) return complete = false, true;
    if (r.number(1) != kHandshakeRecord) return false;
    if (r.number(1) != 0x03) return false;  // TLS major version
    r.skip(1);
    auto len = r.number(2);
    if (len == 0 || len > (1U << 14)) return false;
    if (r.left() < len) {
      out.append(r.take(r.left()));
      return complete = false, true;
    }
    out.append(r.take(len));
  }
  return true;
}

SniResult sni_from_extensions(Reader& r) {
  auto total = r.number(2);
  auto ext = Reader(r.take(total));
  if (!r.ok()) return {SniResult::Kind::not_tls, {}};
  while (ext.ok() && ext.left() > 0) {
    auto type = ext.number(2);
    auto body = Reader(ext.take(ext.number(2)));
    if (!ext.ok()) break;
    if (type != kServerNameExtension) continue;
    auto list = Reader(body.take(body.number(2)));
    while (list.ok() && list.left() > 0) {
      auto name_type = list.number(1);
      auto name = list.take(list.number(2));
      if (list.ok() && name_type == kHostName && !name.empty()) return {SniResult::Kind::found, std::string(name)};
    }
    return {SniResult::Kind::not_tls, {}};  // a server_name extension without a host name is malformed
  }
  return ext.ok() ? SniResult{SniResult::Kind::no_sni, {}} : SniResult{SniResult::Kind::not_tls, {}};
}

}  // namespace

SniResult parse_client_hello_sni(std::string_view data) {
  if (data.size() > kMaxClientHello) data = data.substr(0, kMaxClientHello);
  std::string hs;
  bool complete = false;
  if (!handshake_bytes(data, hs, complete)) return {SniResult::Kind::not_tls, {}};
  Reader r(hs);
  if (r.left() < 4) return {complete && data.size() >= kMaxClientHello ? SniResult::Kind::not_tls : SniResult::Kind::need_more, {}};
  if (r.number(1) != kClientHello) return {SniResult::Kind::not_tls, {}};
  auto len = r.number(3);
  if (r.left() < len) {
    bool can_grow = data.size() < kMaxClientHello;
    return {can_grow ? SniResult::Kind::need_more : SniResult::Kind::not_tls, {}};
  }
  Reader hello(r.take(len));
  hello.skip(2 + 32);                  // client_version, random
  hello.skip(hello.number(1));         // session_id
  hello.skip(hello.number(2));         // cipher_suites
  hello.skip(hello.number(1));         // compression_methods
  if (!hello.ok()) return {SniResult::Kind::not_tls, {}};
  if (hello.left() == 0) return {SniResult::Kind::no_sni, {}};
  return sni_from_extensions(hello);
}

}  // namespace confine
