// "Did you mean": the known name closest to a mistyped one (a profile, an option), by edit distance.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name in `names` closest to `word`, if it is close enough to be a typo of it (a third of the word's length,
// at least one edit); nullopt when none is, or when `word` is itself one of them. Ties go to the first.
std::optional<std::string> closest_name(std::string_view word, const std::vector<std::string>& names);

// "; did you mean `NAME`?" for the closest name, or nothing.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& names);

}  // namespace confine
