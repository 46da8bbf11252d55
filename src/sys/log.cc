#include "sys/log.h"

#include <unistd.h>

#include <string>

namespace confine::log {
namespace {
Level g_level = Level::normal;
}

void set_level(Level l) { g_level = l; }
Level level() { return g_level; }

void emit(const char* prefix, const std::string& message) {
  // One write per line so concurrent writers on the same terminal do not interleave mid-line.
  std::string line = prefix + message + "\n";
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace confine::log
