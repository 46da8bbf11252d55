#include "sys/result.h"

#include <cstring>

namespace confine::sys {

std::string Error::message() const {
  if (err == 0) return what;
  return what + ": " + std::strerror(err);
}

}  // namespace confine::sys
