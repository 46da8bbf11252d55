// An Allowlist from --allow specs, for tests; a spec that does not parse fails the test.
#pragma once

#include <catch2/catch.hpp>
#include <initializer_list>
#include <utility>
#include <vector>

#include "core/allowlist.h"

namespace confine::test {

inline Allowlist list(std::initializer_list<const char*> specs) {
  std::vector<AllowEntry> entries;
  for (const char* s : specs) {
    auto e = parse_allow_entry(s);
    REQUIRE(e.ok());
    entries.push_back(*e);
  }
  return Allowlist(std::move(entries));
}

}  // namespace confine::test
