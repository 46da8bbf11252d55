#include "core/seccomp_policy.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include "core/toml_document.h"
#include <utility>

namespace confine {
namespace {

using sys::Result;

// The one table of symbolic values the policy data may use.
constexpr std::pair<std::string_view, std::uint64_t> kConstants[] = {
    {"TIOCSTI", 0x5412}, {"TIOCLINUX", 0x541C},
    // Terminal and console state that outlives the sandbox (seccomp/default.toml, "terminal-state").
    {"TIOCEXCL", 0x540C}, {"TIOCSETD", 0x5423}, {"TIOCVHANGUP", 0x5437}, {"TIOCCONS", 0x541D},
    {"TIOCSLCKTRMIOS", 0x5457}, {"TIOCSSERIAL", 0x541F}, {"TIOCSERCONFIG", 0x5453},
    {"KDSETMODE", 0x4B3A}, {"KDSKBMODE", 0x4B45}, {"KDSKBMETA", 0x4B63}, {"KDSKBENT", 0x4B47}, {"KDSKBSENT", 0x4B49},
    {"KDSKBDIACR", 0x4B4B}, {"KDSKBDIACRUC", 0x4BFB}, {"KDSETKEYCODE", 0x4B4D}, {"KDSKBLED", 0x4B65},
    {"KDSETLED", 0x4B32}, {"KDSIGACCEPT", 0x4B4E}, {"KDFONTOP", 0x4B72}, {"PIO_FONT", 0x4B61}, {"PIO_FONTX", 0x4B6C},
    {"PIO_FONTRESET", 0x4B6D}, {"PIO_CMAP", 0x4B71}, {"PIO_SCRNMAP", 0x4B41}, {"PIO_UNISCRNMAP", 0x4B6A},
    {"PIO_UNIMAP", 0x4B67}, {"PIO_UNIMAPCLR", 0x4B68},
    {"VT_SETMODE", 0x5602}, {"VT_ACTIVATE", 0x5606}, {"VT_SETACTIVATE", 0x560F}, {"VT_DISALLOCATE", 0x5608},
    {"VT_RESIZE", 0x5609}, {"VT_RESIZEX", 0x560A}, {"VT_LOCKSWITCH", 0x560B}, {"VT_UNLOCKSWITCH", 0x560C},
    {"CLONE_NEWTIME", 0x00000080}, {"CLONE_NEWNS", 0x00020000}, {"CLONE_NEWCGROUP", 0x02000000},
    {"CLONE_NEWUTS", 0x04000000}, {"CLONE_NEWIPC", 0x08000000}, {"CLONE_NEWUSER", 0x10000000},
    {"CLONE_NEWPID", 0x20000000}, {"CLONE_NEWNET", 0x40000000},
    {"AF_UNSPEC", 0}, {"AF_UNIX", 1}, {"AF_INET", 2}, {"AF_INET6", 10}, {"AF_NETLINK", 16}, {"AF_PACKET", 17},
    {"AF_BLUETOOTH", 31}, {"AF_ALG", 38}, {"AF_VSOCK", 40},
    {"SOCK_STREAM", 1}, {"SOCK_DGRAM", 2}, {"SOCK_RAW", 3}, {"SOCK_SEQPACKET", 5},
    {"IPPROTO_MPTCP", 262}, {"IPPROTO_TCP", 6}, {"TCP_FASTOPEN_CONNECT", 30}, {"MSG_FASTOPEN", 0x20000000},
    {"UNAME26", 0x0020000}, {"ADDR_NO_RANDOMIZE", 0x0040000}, {"FDPIC_FUNCPTRS", 0x0080000},
    {"MMAP_PAGE_ZERO", 0x0100000}, {"ADDR_COMPAT_LAYOUT", 0x0200000}, {"READ_IMPLIES_EXEC", 0x0400000},
    {"ADDR_LIMIT_32BIT", 0x0800000}, {"SHORT_INODE", 0x1000000}, {"WHOLE_SECONDS", 0x2000000},
    {"STICKY_TIMEOUTS", 0x4000000}, {"ADDR_LIMIT_3GB", 0x8000000},
    // personality(0xffffffff) only queries the persona.
    {"PERSONALITY_QUERY", 0xffffffff},
    {"PER_LINUX", 0}, {"PER_LINUX32", 8}, {"PER_LINUX32_UNAME26", 0x20008},
    {"AF_KEY", 15}, {"AF_CAN", 29}, {"AF_TIPC", 30},
    {"S_ISUID", 04000}, {"S_ISGID", 02000},
    // O_TMPFILE includes O_DIRECTORY: the kernel refuses one bit without the other.
    {"O_CREAT", 0100}, {"O_TMPFILE", 020200000},
};

constexpr std::array<std::pair<std::string_view, int>, 9> kErrnos = {{
    {"EPERM", EPERM}, {"EACCES", EACCES}, {"ENOSYS", ENOSYS}, {"EAFNOSUPPORT", EAFNOSUPPORT}, {"EINVAL", EINVAL},
    {"ENOTSUP", ENOTSUP}, {"EOPNOTSUPP", EOPNOTSUPP}, {"EPROTONOSUPPORT", EPROTONOSUPPORT}, {"ENOENT", ENOENT},
}};

constexpr std::uint64_t kLow32 = 0xffffffff;
constexpr std::uint64_t kSockTypeMask = 0xf;

struct Context {
  const std::string& source;
  sys::Error error(const std::string& where, const std::string& what) const {
    return sys::plain_error(source + ": " + where + ": " + what);
  }
};

Result<SeccompAction> parse_action(const Context& ctx, const std::string& where, std::string_view text) {
  SeccompAction a;
  a.text = std::string(text);
  if (text == "allow") return a;
  if (text == "kill") {
    a.kind = SeccompAction::Kind::kill;
    return a;
  }
  if (text.starts_with("errno:")) {
    auto name = text.substr(6);
    auto it = std::find_if(kErrnos.begin(), kErrnos.end(), [&](const auto& e) { return e.first == name; });
    if (it != kErrnos.end()) {
      a.kind = SeccompAction::Kind::error;
      a.err = it->second;
      return a;
    }
  }
  return ctx.error(where, "unknown action `" + a.text + "` (expected allow, kill or errno:NAME)");
}

Result<std::vector<std::uint64_t>> constants(const Context& ctx, const std::string& where, const toml::array& arr) {
  std::vector<std::uint64_t> out;
  for (const auto& node : arr) {
    auto name = node.value<std::string>();
    std::uint64_t v = 0;
    if (!name || !lookup_seccomp_constant(*name, v))
      return ctx.error(where, "unknown constant `" + name.value_or("?") + "`");
    out.push_back(v);
  }
  if (out.empty()) return ctx.error(where, "empty list");
  return out;
}

// Covers the 32-bit range [lo, hi] with aligned power-of-two blocks, each one masked comparison
// ((arg & mask) == prefix). The kernel reads these arguments as 32-bit ints, so upper bits are ignored here too.
void cover_range(unsigned arg, std::uint64_t lo, std::uint64_t hi, std::vector<ArgCheck>& out) {
  while (lo <= hi) {
    std::uint64_t size = 1;
    while (size <= kLow32 && (lo & (size * 2 - 1)) == 0 && lo + size * 2 - 1 <= hi) size *= 2;
    out.push_back({ArgCheck::Op::masked_eq, arg, kLow32 & ~(size - 1), lo});
    lo += size;
  }
}

// Comparisons that hold exactly for the 32-bit values not in `allowed`.
std::vector<ArgCheck> complement(unsigned arg, std::vector<std::uint64_t> allowed) {
  std::sort(allowed.begin(), allowed.end());
  allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
  std::vector<ArgCheck> out;
  std::uint64_t next = 0;
  for (auto v : allowed) {
    if (v > next) cover_range(arg, next, v - 1, out);
    next = v + 1;
  }
  if (next <= kLow32) cover_range(arg, next, kLow32, out);
  return out;
}

// One argument key ("arg1_in", …) -> the alternatives it allows (any one matching).
Result<std::vector<ArgCheck>> parse_arg_key(const Context& ctx, const std::string& where, std::string_view key,
                                            const toml::array& arr) {
  unsigned arg = static_cast<unsigned>(key[3] - '0');
  auto suffix = key.substr(4);
  auto values = constants(ctx, where + "." + std::string(key), arr);
  if (!values) return values.error();
  std::vector<ArgCheck> out;
  if (suffix == "_not_in") return complement(arg, *values);
  for (auto v : *values) {
    if (suffix == "_in")
      out.push_back({ArgCheck::Op::masked_eq, arg, kLow32, v});  // the kernel reads these as 32-bit ints
    else if (suffix == "_type_in")
      out.push_back({ArgCheck::Op::masked_eq, arg, kSockTypeMask, v});  // SOCK_NONBLOCK etc. live above the type
    else if (suffix == "_any_flag")
      out.push_back({ArgCheck::Op::masked_eq, arg, v, v});
    else
      return ctx.error(where, "unknown key `" + std::string(key) + "`");
  }
  return out;
}

// The rule's checks: AND across argument keys, OR within one key -> the product, as alternatives.
std::vector<std::vector<ArgCheck>> product(const std::vector<std::vector<ArgCheck>>& keys) {
  std::vector<std::vector<ArgCheck>> out;
  if (keys.empty()) return out;
  out.push_back({});
  for (const auto& choices : keys) {
    std::vector<std::vector<ArgCheck>> next;
    for (const auto& partial : out)
      for (const auto& c : choices) {
        auto p = partial;
        p.push_back(c);
        next.push_back(std::move(p));
      }
    out = std::move(next);
  }
  return out;
}

struct ConditionWord {
  std::string_view word;
  RuleCondition condition;
  bool in_unless;  // `unless` takes it too (`only` takes every one)
};

constexpr ConditionWord kConditionWords[] = {
    {"no-namespaces", RuleCondition::no_namespaces, false},
    {"allow-nested", RuleCondition::allow_nested, true},
};

// `unless` or `only` (`key`): one of kConditionWords's words; an unknown one is refused with the words it takes.
Result<RuleCondition> parse_condition(const Context& ctx, const std::string& where, std::string_view key,
                                      const toml::node& node) {
  auto word = node.value<std::string>();
  if (!word) return ctx.error(where, "`" + std::string(key) + "` must be a string");
  std::vector<std::string_view> accepted;
  for (const auto& c : kConditionWords) {
    if (key == "unless" && !c.in_unless) continue;
    if (c.word == *word) return c.condition;
    accepted.push_back(c.word);
  }
  std::string expected;
  for (std::size_t i = 0; i < accepted.size(); ++i)
    expected += (i == 0 ? "" : i + 1 == accepted.size() ? " or " : ", ") + std::string(accepted[i]);
  return ctx.error(where, "unknown `" + std::string(key) + "` value `" + *word + "` (expected " + expected + ")");
}

// Whether `condition` holds for a run with these settings.
bool condition_holds(RuleCondition condition, bool allow_nested, bool namespaces) {
  switch (condition) {
    case RuleCondition::allow_nested: return allow_nested;
    case RuleCondition::no_namespaces: return !namespaces;
  }
  return false;
}

bool is_arg_key(std::string_view k) { return k.size() > 4 && k.starts_with("arg") && k[3] >= '0' && k[3] <= '5' && k[4] == '_'; }

Result<SeccompRule> parse_rule(const Context& ctx, const toml::table& t, std::size_t index) {
  std::string where = "rule " + std::to_string(index + 1);
  SeccompRule r;
  std::vector<std::vector<ArgCheck>> arg_keys;
  for (const auto& [key, node] : t) {
    std::string_view k = key.str();
    if (k == "group" || k == "why") {
      auto v = node.value<std::string>();
      if (!v) return ctx.error(where, "`" + std::string(k) + "` must be a string");
      (k == "group" ? r.group : r.why) = *v;
    } else if (k == "unless" || k == "only") {
      auto condition = parse_condition(ctx, where, k, node);
      if (!condition) return condition.error();
      (k == "unless" ? r.unless : r.only) = *condition;
    } else if (k == "floor") {
      auto v = node.value<bool>();
      if (!v) return ctx.error(where, "`floor` must be true or false");
      r.floor = *v;
    } else if (k == "action") {
      auto a = parse_action(ctx, where, node.value<std::string>().value_or("?"));
      if (!a) return a.error();
      r.action = *a;
    } else if (k == "syscalls" && node.is_array()) {
      for (const auto& s : *node.as_array()) {
        auto name = s.value<std::string>().value_or("");
        bool optional = name.ends_with("?");
        if (optional) name.pop_back();
        if (name.empty()) return ctx.error(where, "empty syscall name");
        r.syscalls.push_back(name);
        r.optional.push_back(optional);
      }
    } else if (is_arg_key(k) && node.is_array()) {
      auto checks = parse_arg_key(ctx, where, k, *node.as_array());
      if (!checks) return checks.error();
      arg_keys.push_back(*checks);
    } else {
      return ctx.error(where, "unknown key `" + std::string(k) + "`");
    }
  }
  if (r.group.empty() || r.syscalls.empty() || r.action.text.empty())
    return ctx.error(where, "needs `group`, `action` and `syscalls`");
  r.alternatives = product(arg_keys);
  return r;
}

}  // namespace

bool lookup_seccomp_constant(std::string_view name, std::uint64_t& value) {
  auto it = std::find_if(std::begin(kConstants), std::end(kConstants), [&](const auto& c) { return c.first == name; });
  if (it == std::end(kConstants)) return false;
  value = it->second;
  return true;
}

namespace {

Result<SeccompPolicy> seccomp_policy_from(const toml::table& doc, const std::string& source) {
  Context ctx{source};
  SeccompPolicy p;
  p.source = source;
  auto def = parse_action(ctx, "default", doc["default"].value<std::string>().value_or("?"));
  if (!def) return def.error();
  p.default_action = *def;
  for (const auto& [key, node] : doc)
    if (key.str() != "format" && key.str() != "default" && key.str() != "rule")
      return ctx.error("top level", "unknown key `" + std::string(key.str()) + "`");
  if (auto* rules = doc["rule"].as_array()) {
    for (std::size_t i = 0; i < rules->size(); ++i) {
      auto* t = (*rules)[i].as_table();
      if (t == nullptr) return ctx.error("rule", "each [[rule]] must be a table");
      auto r = parse_rule(ctx, *t, i);
      if (!r) return r.error();
      p.rules.push_back(std::move(*r));
    }
  }
  return p;
}

}  // namespace

Result<SeccompPolicy> parse_seccomp_policy(std::string_view text, const std::string& source) {
  auto parsed = parse_toml_document(text, source, "confine-seccomp/1");
  if (!parsed) return parsed.error();
  return seccomp_policy_from(*parsed, source);
}

bool restates_default(const SeccompPolicy& policy, const SeccompRule& rule) {
  return rule.action.kind == policy.default_action.kind && rule.action.err == policy.default_action.err;
}

SeccompPolicy seccomp_floor_policy() {
  SeccompPolicy floor;
  floor.source = "confine's floor (seccomp/default.toml)";
  floor.default_action = SeccompAction{SeccompAction::Kind::allow, 0, "allow"};
  floor.newer_syscalls_enosys = false;
  for (const auto& r : builtin_seccomp_policy().rules)
    if (r.floor) floor.rules.push_back(r);
  return floor;
}

const SeccompPolicy& builtin_seccomp_policy() {
  static const SeccompPolicy policy = [] {
    auto p = seccomp_policy_from(builtin_seccomp_document(), "seccomp/default.toml (built in)");
    if (!p) std::abort();  // the data test suite keeps the built-in policy valid
    return std::move(*p);
  }();
  return policy;
}

std::vector<std::string> seccomp_rule_groups(const SeccompPolicy& policy, bool allow_nested) {
  std::vector<std::string> groups;
  for (const auto& r : select_seccomp_rules(policy, allow_nested, false).rules)
    if (!restates_default(policy, r)) groups.push_back(r.group);
  return groups;
}

SeccompPolicy select_seccomp_rules(const SeccompPolicy& policy, bool allow_nested, bool namespaces) {
  SeccompPolicy out = policy;
  std::erase_if(out.rules, [&](const SeccompRule& r) {
    return (r.unless && condition_holds(*r.unless, allow_nested, namespaces)) ||
           (r.only && !condition_holds(*r.only, allow_nested, namespaces));
  });
  return out;
}

}  // namespace confine
