#include "core/landlock_rules.h"

#include <fmt/format.h>

#include "core/toml_document.h"

#include "sys/landlock_abi.h"

namespace confine {
namespace {

namespace ll = sys::landlock;

constexpr std::uint64_t kReadRights = ll::kFsReadFile | ll::kFsReadDir;
constexpr std::uint64_t kWriteRights = ll::kFsWriteFile | ll::kFsRemoveDir | ll::kFsRemoveFile | ll::kFsMakeChar |
                                       ll::kFsMakeDir | ll::kFsMakeReg | ll::kFsMakeSock | ll::kFsMakeFifo |
                                       ll::kFsMakeBlock | ll::kFsMakeSym | ll::kFsRefer | ll::kFsTruncate;
constexpr std::uint64_t kTcpRights = ll::kNetBindTcp | ll::kNetConnectTcp;
constexpr std::uint64_t kUdpRights = ll::kNetBindUdp | ll::kNetConnectSendUdp;

// The ABI ladder: each ABI whose restrictions confine uses, the Linux release that brought it, and what is lost
// without it. ABI 7 and 8 add no restriction (sys/landlock_abi.h says what confine does with them).
struct Step {
  int abi;
  const char* linux_release;
  const char* missing;
  bool fallback_only;  // full mode's namespaces keep what it restricts
};
constexpr Step kLadder[] = {
    {2, "5.19", "renames and links across directories, always refused without REFER", false},
    {3, "6.2", "truncate", false},
    {4, "6.7", "TCP bind/connect", false},
    {5, "6.10", "device ioctls", false},
    {6, "6.12", "abstract unix socket and signal scoping", false},
    {9, "7.1", "connecting to unix socket files", true},
    {10, "7.2", "UDP bind/connect/send", true},
};

std::string expand(const std::string& path, const LandlockRequest& req) {
  if (path == "$WORKSPACE") return req.workspace;
  if (path == "$HOME") return req.home;
  if (path == "$RUN_DIR") return req.run_dir;
  return path;
}

sys::Result<std::vector<LandlockPath>> parse_section(const toml::table& t, const std::string& where) {
  std::vector<LandlockPath> out;
  for (const auto& [key, node] : t) {
    std::string_view k = key.str();
    AccessClass access;
    if (k == "ro") access = AccessClass::ro;
    else if (k == "rx") access = AccessClass::rx;
    else if (k == "rw") access = AccessClass::rw;
    else if (k == "dev") access = AccessClass::dev;
    else return sys::plain_error(where + ": unknown access class `" + std::string(k) + "` (ro, rx, rw, dev)");
    const auto* arr = node.as_array();
    if (arr == nullptr) return sys::plain_error(where + "." + std::string(k) + ": must be an array of paths");
    for (const auto& p : *arr) {
      auto path = p.value<std::string>().value_or("");
      bool optional = path.ends_with("?");
      if (optional) path.pop_back();
      if (path.empty() || (path.front() != '/' && path.front() != '$'))
        return sys::plain_error(where + "." + std::string(k) + ": `" + path + "` is not an absolute path");
      out.push_back({path, access, optional});
    }
  }
  return out;
}

}  // namespace

namespace {

sys::Result<LandlockData> landlock_data_from(const toml::table& doc, const std::string& source) {
  LandlockData data;
  for (const auto& [key, node] : doc) {
    std::string_view k = key.str();
    if (k == "format") continue;
    if ((k != "sandbox" && k != "fallback") || !node.is_table())
      return sys::plain_error(source + ": unknown section `" + std::string(k) + "` (sandbox, fallback)");
    auto paths = parse_section(*node.as_table(), source + ": [" + std::string(k) + "]");
    if (!paths) return paths.error();
    (k == "sandbox" ? data.sandbox : data.fallback) = std::move(*paths);
  }
  return data;
}

}  // namespace

sys::Result<LandlockData> parse_landlock_data(std::string_view text, const std::string& source) {
  auto parsed = parse_toml_document(text, source, "confine-landlock/1");
  if (!parsed) return parsed.error();
  return landlock_data_from(*parsed, source);
}

const LandlockData& builtin_landlock_data() {
  static const LandlockData data = [] {
    auto d = landlock_data_from(builtin_landlock_document(), "landlock/default.toml");
    if (!d) std::abort();  // built-in data: the `data` test suite keeps it valid
    return std::move(*d);
  }();
  return data;
}

std::uint64_t handled_fs_rights(int abi) {
  if (abi <= 0) return 0;
  std::uint64_t r = (ll::kFsMakeSym << 1) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) r |= ll::kFsRefer;
  if (abi >= 3) r |= ll::kFsTruncate;
  if (abi >= 5) r |= ll::kFsIoctlDev;
  if (abi >= 9) r |= ll::kFsResolveUnix;
  return r;
}

std::uint64_t class_rights(AccessClass access, int abi) {
  std::uint64_t r = 0;
  switch (access) {
    case AccessClass::ro: r = kReadRights; break;
    case AccessClass::rx: r = kReadRights | ll::kFsExecute; break;
    // Only writable places may hold a socket file of the host's that the command may reach: the system's (D-Bus,
    // journald under /run, /var) stay out of reach.
    case AccessClass::rw: r = kReadRights | ll::kFsExecute | kWriteRights | ll::kFsResolveUnix; break;
    case AccessClass::dev: r = ll::kFsReadFile | ll::kFsWriteFile | ll::kFsTruncate | ll::kFsIoctlDev; break;
    case AccessClass::dev_read: r = ll::kFsReadFile | ll::kFsIoctlDev; break;
  }
  return r & handled_fs_rights(abi);
}

std::vector<LandlockGap> landlock_gaps(int abi) {
  if (abi < 1) return {{"all of Landlock (ABI 1, Linux 5.13)", false}};
  std::vector<LandlockGap> out;
  for (const auto& step : kLadder)
    if (step.abi > abi)
      out.push_back({fmt::format("{} (ABI {}, Linux {})", step.missing, step.abi, step.linux_release), step.fallback_only});
  return out;
}

std::vector<std::string> landlock_rights_missing(int abi, bool fallback) {
  std::vector<std::string> out;
  for (auto& gap : landlock_gaps(abi))
    if (fallback || !gap.fallback_only) out.push_back(std::move(gap.text));
  return out;
}

LandlockPlan make_landlock_plan(const LandlockRequest& req) {
  LandlockPlan plan;
  plan.abi = req.abi;
  if (req.abi <= 0) return plan;
  plan.handled_fs = req.filesystem ? handled_fs_rights(req.abi) : 0;
  if (req.writes_only) plan.handled_fs &= ~(ll::kFsReadFile | ll::kFsReadDir | ll::kFsTruncate);
  if (!req.socket_files) plan.handled_fs &= ~ll::kFsResolveUnix;
  if (req.deny_tcp && req.abi >= 4) plan.handled_net |= kTcpRights;
  if (req.deny_udp && req.abi >= 10) plan.handled_net |= kUdpRights;
  if (req.abi >= 6) {
    if (req.scope_abstract_sockets) plan.scoped |= ll::kScopeAbstractUnixSocket;
    if (req.scope_signals) plan.scoped |= ll::kScopeSignal;
  }
  for (const auto& p : req.paths) {
    auto path = expand(p.path, req);
    if (path.empty()) continue;  // $HOME unset, or no $RUN_DIR (full mode)
    auto access = class_rights(p.access, req.abi) & plan.handled_fs;
    if (access != 0) plan.rules.push_back({path, access, p.optional});
  }
  // Nothing handled (no filesystem rights on a kernel without scopes): no domain at all, which the kernel would
  // refuse to make anyway.
  if (plan.handled_fs == 0 && plan.handled_net == 0 && plan.scoped == 0) plan.abi = 0;
  if (plan.abi >= 7) plan.restrict_flags = ll::kRestrictSelfLogSameExecOff;
  return plan;
}

}  // namespace confine
