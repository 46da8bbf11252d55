// "Did you mean": edit distance and the closest name.
#include <catch2/catch.hpp>

#include "core/suggest.h"

using namespace confine;

TEST_CASE("edit_distance counts inserts, deletes, substitutions and swaps of neighbours") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("codex", "codex") == 0);
  CHECK(edit_distance("codx", "codex") == 1);      // a letter left out
  CHECK(edit_distance("codexx", "codex") == 1);    // one too many
  CHECK(edit_distance("cidex", "codex") == 1);     // one wrong
  CHECK(edit_distance("cdoex", "codex") == 1);     // two swapped
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("closest_name suggests a near name, not a far one, and nothing for an exact one") {
  const std::vector<std::string> profiles = {"default", "read-only", "codex", "claude", "aider", "go"};
  CHECK(closest_name("codx", profiles) == "codex");
  CHECK(closest_name("claud", profiles) == "claude");
  CHECK(closest_name("raed-only", profiles) == "read-only");
  CHECK_FALSE(closest_name("zzzzzz", profiles));
  CHECK_FALSE(closest_name("codex", profiles));
  CHECK_FALSE(closest_name("x", {}));
  CHECK(closest_name("--jsn", {"--json", "--help"}) == "--json");
  CHECK(did_you_mean("codx", profiles) == "; did you mean `codex`?");
  CHECK(did_you_mean("zzzzzz", profiles).empty());
}
