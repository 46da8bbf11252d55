// libFuzzer target for the DNS stub's query parser and answers (built with -Dfuzz=true and clang; see
// tests/fuzz/meson.build): any bytes are parsed; a query is answered, and the answer must itself read back as a
// response to that query, with an address only ever for the one allowed name.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/dns_message.h"

namespace {

const confine::Allowlist& allowlist() {
  static const confine::Allowlist list({confine::parse_allow_entry("api.example.com").value(),
                                        confine::parse_allow_entry("*.npmjs.org").value()});
  return list;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  confine::AddressBook book(4);
  auto answer = confine::dns::respond(bytes, allowlist(), book);
  auto parsed = confine::dns::parse_query(bytes);
  if (parsed.kind == confine::dns::ParsedQuery::Kind::drop) {
    if (answer) __builtin_trap();
    return 0;
  }
  if (!answer) __builtin_trap();
  auto header = confine::dns::parse_header(*answer);
  if (!header || !header->is_response() || header->id != parsed.query.header.id || header->ancount > 1) __builtin_trap();
  if (header->ancount == 1) {
    auto name = book.name_at(confine::Ipv4{{127, 77, 0, 1}});
    if (book.size() != 1 || !name || !allowlist().allows_name_on_some_port(*name)) __builtin_trap();
  }
  return 0;
}
