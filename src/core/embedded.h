// Data files compiled into the binary by scripts/embed.py (the generated embedded_data.cc defines them).
#pragma once

#include <span>
#include <string_view>

namespace confine {

struct EmbeddedFile {
  std::string_view name;  // the file name without its extension ("codex" for profiles/codex.toml)
  std::string_view text;
};

std::span<const EmbeddedFile> builtin_profiles();  // profiles/*.toml

}  // namespace confine
