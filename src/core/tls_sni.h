// Reads the server name (SNI) out of a TLS ClientHello, for `--check-sni`: the name a CONNECT tunnel's TLS
// session asks for must be the host the tunnel was allowed for. Hand-written and facing the sandbox's bytes, so it
// is bounds-checked at every step and has a fuzz target (tests/fuzz/sni_fuzz.cc).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace confine {

struct SniResult {
  enum class Kind { need_more, not_tls, no_sni, found } kind = Kind::need_more;
  std::string name;  // for found
};

// `data` is what the client sent so far. The ClientHello may span several TLS records; at most `kMaxClientHello`
// bytes are examined (not_tls beyond that).
SniResult parse_client_hello_sni(std::string_view data);

inline constexpr std::size_t kMaxClientHello = 16 * 1024;

}  // namespace confine
