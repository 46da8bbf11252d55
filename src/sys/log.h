// User-facing messages on stderr, prefixed "confine: ". Parent side only (uses fmt, allocates).
#pragma once

#include <fmt/core.h>

namespace confine::log {

enum class Level { quiet = 0, normal = 1, verbose = 2 };
void set_level(Level level);
Level level();

void emit(const char* prefix, const std::string& message);

template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  emit("confine: ", fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::normal) emit("confine: warning: ", fmt::format(f, std::forward<Args>(args)...));
}
// Said at the normal level, not a warning: what confine did with what the user asked (a flag over a profile's key).
template <typename... Args>
void note(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::normal) emit("confine: ", fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() >= Level::verbose) emit("confine: ", fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace confine::log
