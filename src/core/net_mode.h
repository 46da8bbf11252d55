// --net: the words it takes and what each means, in one table read by the command line, `confine run`, resolve()
// and the reports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sys/result.h"

namespace confine {

// none: a network namespace with only loopback. proxy: the same, egress through confine's allowlist proxy. host:
// the host's network, no isolation.
enum class NetMode { none, host, proxy };

// What one --net word asks for.
struct NetChoice {
  NetMode mode = NetMode::none;
  bool over_veth = false;  // proxy only: reached over a veth pair (--net veth), not on the sandbox's loopback
  friend bool operator==(const NetChoice&, const NetChoice&) = default;
};

// "veth" -> {proxy, over_veth}; an unknown word is refused with the words there are.
sys::Result<NetChoice> parse_net(std::string_view word);
// The word that asks for `choice` ("veth").
std::string_view net_word(NetChoice choice);
// "`none`, `proxy`, `veth` or `host`": every word, for an error.
std::string net_words_text();
// Every word, in the order help and errors list them.
std::vector<std::string> net_words();

}  // namespace confine
