// Numeric user and group ids, read the same way by every parser of confine: --user, `confine run -u`, an OCI
// bundle's process.user and the lookup in an image's /etc/passwd.
//
// (uid_t)-1 is not an id: setresuid/setresgid read it as "leave this one unchanged" (so root would stay root)
// and the kernel refuses it in a user namespace's id map. It, and anything larger, is refused here. The
// kernel's overflow id 65534 ("nobody") is an ordinary id that images and users rely on, and is accepted.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sys/result.h"

namespace confine {

inline constexpr std::uint32_t kMaxId = 4294967294;  // 2^32 - 2: (uid_t)-1 is the kernel's "no id"

[[nodiscard]] constexpr bool is_valid_id(std::uint64_t id) { return id <= kMaxId; }

// Decimal digits only, no sign, no spaces, at most kMaxId.
std::optional<std::uint32_t> parse_id(std::string_view text);

struct UserIds {
  uid_t uid = 0;
  gid_t gid = 0;
};

// UID or UID:GID (GID defaults to UID). `flag` names the source in the error: "--user `4294967295`: ...".
sys::Result<UserIds> parse_user_spec(std::string_view spec, const std::string& flag);

}  // namespace confine
