#include "core/ids.h"

#include <charconv>

namespace confine {

std::optional<std::uint32_t> parse_id(std::string_view text) {
  std::uint64_t id = 0;
  // from_chars takes a leading '-' for signed types only; a digit first also refuses "+1" and " 1".
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc{} || end != text.data() + text.size() || !is_valid_id(id)) return std::nullopt;
  return static_cast<std::uint32_t>(id);
}

sys::Result<UserIds> parse_user_spec(std::string_view spec, const std::string& flag) {
  auto colon = spec.find(':');
  auto uid = parse_id(spec.substr(0, colon));
  auto gid = colon == std::string_view::npos ? uid : parse_id(spec.substr(colon + 1));
  if (!uid || !gid)
    return sys::plain_error(flag + " `" + std::string(spec) + "`: expected numeric UID[:GID], each from 0 to " +
                            std::to_string(kMaxId) + " (" + std::to_string(kMaxId + 1ull) + " means \"no id\" to the kernel)");
  return UserIds{*uid, *gid};
}

}  // namespace confine
