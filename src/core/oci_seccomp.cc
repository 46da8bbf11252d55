#include "core/oci_seccomp.h"

#include "core/json_text.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <compare>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace confine {
namespace {

using nlohmann::json;
using sys::Result;

constexpr std::size_t kMaxBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxRules = 4096;
constexpr std::size_t kMaxNames = 4096;
constexpr std::size_t kMaxArgsPerRule = 64;
// A profile nests four deep. Walking or destroying a nlohmann::json value recurses, so bound it before parsing.
constexpr int kMaxDepth = 32;
constexpr std::uint64_t kMaxArgIndex = 5;
constexpr std::uint64_t kMaxErrno = 4095;  // the kernel's MAX_ERRNO
constexpr std::size_t kMaxGroupFromComment = 40;

// x86-64 as Docker's `arches` spell it (Go's GOARCH) and as libseccomp does.
constexpr std::string_view kNativeArches[] = {"amd64", "x86_64", "SCMP_ARCH_X86_64"};

constexpr std::pair<std::string_view, ArgCheck::Op> kOps[] = {
    {"SCMP_CMP_EQ", ArgCheck::Op::eq}, {"SCMP_CMP_NE", ArgCheck::Op::ne}, {"SCMP_CMP_LT", ArgCheck::Op::lt},
    {"SCMP_CMP_LE", ArgCheck::Op::le}, {"SCMP_CMP_GT", ArgCheck::Op::gt}, {"SCMP_CMP_GE", ArgCheck::Op::ge},
    {"SCMP_CMP_MASKED_EQ", ArgCheck::Op::masked_eq},
};

constexpr std::string_view kSupportedActions =
    "SCMP_ACT_ALLOW, SCMP_ACT_ERRNO, SCMP_ACT_KILL, SCMP_ACT_KILL_THREAD and SCMP_ACT_KILL_PROCESS";

struct KernelVersion {
  unsigned major = 0;
  unsigned minor = 0;
  auto operator<=>(const KernelVersion&) const = default;
};

struct Context {
  const std::string& source;
  std::string_view kernel_release;
  std::optional<KernelVersion> kernel;
  std::size_t names = 0;  // across all rules, for the limit
  // Syscall -> (action, rule index) of the rules without argument checks seen so far.
  std::map<std::string, std::pair<SeccompAction, std::size_t>> unconditional;

  sys::Error error(const std::string& where, const std::string& what) const {
    return sys::plain_error(source + ": " + where + ": " + what);
  }
};

std::string at_index(const std::string& where, std::size_t i) { return where + "[" + std::to_string(i) + "]"; }

// Text from the file, made safe to print in one line of an error message.
std::string shown(std::string_view text) {
  std::string out(text.substr(0, 64));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text.size() > 64 ? out + "..." : out;
}

// "6.18.0-1-amd64" -> 6.18; with `whole`, nothing may follow ("4.8" in minKernel). Like Docker, only the major and
// minor numbers count.
std::optional<KernelVersion> parse_version(std::string_view s, bool whole) {
  KernelVersion v;
  const char* end = s.data() + s.size();
  auto major = std::from_chars(s.data(), end, v.major);
  if (major.ec != std::errc() || major.ptr == end || *major.ptr != '.') return std::nullopt;
  auto minor = std::from_chars(major.ptr + 1, end, v.minor);
  if (minor.ec != std::errc() || (whole && minor.ptr != end)) return std::nullopt;
  return v;
}

// A member that is present and not null: Go's decoder, which Docker uses, reads null as absent.
const json* member(const json& obj, const char* key) {
  auto it = obj.find(key);
  return (it == obj.end() || it->is_null()) ? nullptr : &*it;
}

// Unknown keys are errors: a misspelt key in a security policy must not be silently dropped.
sys::Status only_keys(const Context& ctx, const std::string& where, const json& obj,
                      std::initializer_list<std::string_view> keys) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
      return ctx.error(where, "unknown key `" + shown(it.key()) + "`");
  return sys::ok_status();
}

Result<std::string> string_at(const Context& ctx, const std::string& where, const json& v) {
  if (!v.is_string()) return ctx.error(where, "must be a string");
  return v.get_ref<const std::string&>();
}

Result<std::uint64_t> uint_at(const Context& ctx, const std::string& where, const json& v) {
  if (!v.is_number_unsigned()) return ctx.error(where, "must be a non-negative integer");
  return v.get<std::uint64_t>();
}

Result<std::vector<std::string>> strings_at(const Context& ctx, const std::string& where, const json& v) {
  if (!v.is_array()) return ctx.error(where, "must be an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto s = string_at(ctx, at_index(where, i), v[i]);
    if (!s) return s.error();
    out.push_back(std::move(*s));
  }
  return out;
}

// An optional non-negative integer member, `fallback` when absent.
Result<std::uint64_t> uint_member(const Context& ctx, const std::string& prefix, const json& obj, const char* key,
                                  std::uint64_t fallback) {
  const json* v = member(obj, key);
  return v == nullptr ? Result<std::uint64_t>(fallback) : uint_at(ctx, prefix + key, *v);
}

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  return "errno:" + (name != nullptr ? std::string(name) : std::to_string(err));
}

bool same_action(const SeccompAction& a, const SeccompAction& b) {
  return a.kind == b.kind && (a.kind != SeccompAction::Kind::error || a.err == b.err);
}

Result<SeccompAction::Kind> action_kind(const Context& ctx, const std::string& where, const std::string& name) {
  if (name == "SCMP_ACT_ALLOW") return SeccompAction::Kind::allow;
  if (name == "SCMP_ACT_ERRNO") return SeccompAction::Kind::error;
  // confine kills the whole process even for KILL_THREAD: a process with a thread silently gone is not one to
  // keep running.
  if (name == "SCMP_ACT_KILL" || name == "SCMP_ACT_KILL_THREAD" || name == "SCMP_ACT_KILL_PROCESS")
    return SeccompAction::Kind::kill;
  bool known = name == "SCMP_ACT_TRAP" || name == "SCMP_ACT_TRACE" || name == "SCMP_ACT_LOG" ||
               name == "SCMP_ACT_NOTIFY";
  return ctx.error(where, (known ? "action `" + name + "` is not supported" : "unknown action `" + shown(name) + "`") +
                              " (confine supports " + std::string(kSupportedActions) + ")");
}

// `obj[action_key]` with `obj[errno_key]`: the rule's action, or the default one. An errno given with another
// action is an error, as the runtime spec asks.
Result<SeccompAction> parse_action(const Context& ctx, const std::string& prefix, const json& obj,
                                   const char* action_key, const char* errno_key) {
  const json* a = member(obj, action_key);
  if (a == nullptr) return ctx.error(prefix + action_key, "missing");
  auto name = string_at(ctx, prefix + action_key, *a);
  if (!name) return name.error();
  auto kind = action_kind(ctx, prefix + action_key, *name);
  if (!kind) return kind.error();
  auto err = uint_member(ctx, prefix, obj, errno_key, EPERM);
  if (!err) return err.error();
  if (*err > kMaxErrno) return ctx.error(prefix + errno_key, "must be at most 4095");
  if (*kind != SeccompAction::Kind::error && member(obj, errno_key) != nullptr)
    return ctx.error(prefix + errno_key, "only SCMP_ACT_ERRNO returns an errno, not " + *name);
  SeccompAction out;
  out.kind = *kind;
  if (out.kind == SeccompAction::Kind::error) out.err = static_cast<int>(*err);
  out.text = out.kind == SeccompAction::Kind::allow  ? "allow"
             : out.kind == SeccompAction::Kind::kill ? "kill"
                                                     : errno_text(out.err);
  return out;
}

sys::Status check_unsupported(const Context& ctx, const json& doc) {
  if (const json* f = member(doc, "flags")) {
    auto flags = strings_at(ctx, "flags", *f);
    if (!flags) return flags.error();
    if (!flags->empty()) {
      std::string hint = flags->front() == "SECCOMP_FILTER_FLAG_LOG" ? " (use --seccomp-log)" : "";
      return ctx.error("flags[0]", "`" + shown(flags->front()) + "` is not supported" + hint);
    }
  }
  for (const char* key : {"listenerPath", "listenerMetadata"}) {
    const json* v = member(doc, key);
    if (v == nullptr) continue;
    auto s = string_at(ctx, key, *v);
    if (!s) return s.error();
    if (!s->empty()) return ctx.error(key, "seccomp notification listeners (SCMP_ACT_NOTIFY) are not supported");
  }
  return sys::ok_status();
}

sys::Status check_arch_map(const Context& ctx, const json& map) {
  if (!map.is_array()) return ctx.error("archMap", "must be an array");
  for (std::size_t i = 0; i < map.size(); ++i) {
    std::string where = at_index("archMap", i);
    if (!map[i].is_object()) return ctx.error(where, "must be an object");
    if (auto s = only_keys(ctx, where, map[i], {"architecture", "subArchitectures"}); !s) return s;
    const json* arch = member(map[i], "architecture");
    if (arch == nullptr) return ctx.error(where + ".architecture", "missing");
    if (auto s = string_at(ctx, where + ".architecture", *arch); !s) return s.error();
    if (const json* sub = member(map[i], "subArchitectures"))
      if (auto s = strings_at(ctx, where + ".subArchitectures", *sub); !s) return s.error();
  }
  return sys::ok_status();
}

// The ABIs a profile lists do not change the filter: confine allows native x86-64 syscalls only, and
// compile_seccomp kills the process on a syscall of any other ABI (i386, x32). These keys are only checked.
sys::Status check_architectures(const Context& ctx, const json& doc) {
  const json* list = member(doc, "architectures");
  const json* map = member(doc, "archMap");
  if (list != nullptr)
    if (auto s = strings_at(ctx, "architectures", *list); !s) return s.error();
  if (map != nullptr)
    if (auto s = check_arch_map(ctx, *map); !s) return s;
  if (list != nullptr && map != nullptr && !list->empty() && !map->empty())
    return ctx.error("top level", "has both `architectures` and `archMap`; use one");
  return sys::ok_status();
}

struct Filter {
  std::vector<std::string> caps;
  std::vector<std::string> arches;
  std::optional<KernelVersion> min_kernel;
};

Result<Filter> parse_filter(const Context& ctx, const std::string& where, const json* obj) {
  Filter f;
  if (obj == nullptr) return f;
  if (!obj->is_object()) return ctx.error(where, "must be an object");
  if (auto s = only_keys(ctx, where, *obj, {"caps", "arches", "minKernel"}); !s) return s.error();
  for (auto [key, list] : {std::pair{"caps", &f.caps}, std::pair{"arches", &f.arches}}) {
    const json* v = member(*obj, key);
    if (v == nullptr) continue;
    auto strings = strings_at(ctx, where + "." + key, *v);
    if (!strings) return strings.error();
    *list = std::move(*strings);
  }
  if (const json* k = member(*obj, "minKernel")) {
    auto s = string_at(ctx, where + ".minKernel", *k);
    if (!s) return s.error();
    f.min_kernel = parse_version(*s, true);
    if (!f.min_kernel) return ctx.error(where + ".minKernel", "must look like \"4.8\" (major.minor)");
  }
  return f;
}

bool lists_native(const std::vector<std::string>& arches) {
  return std::any_of(arches.begin(), arches.end(), [](const std::string& a) {
    return std::find(std::begin(kNativeArches), std::end(kNativeArches), a) != std::end(kNativeArches);
  });
}

// Docker's includes/excludes, decided for confine's process: every capability dropped, x86-64, this kernel.
Result<bool> rule_applies(const Context& ctx, const std::string& where, const Filter& inc, const Filter& exc) {
  // A rule for a capability holder never applies; a capability confine never keeps never excludes (exc.caps).
  if (!inc.caps.empty()) return false;
  if (!inc.arches.empty() && !lists_native(inc.arches)) return false;
  if (lists_native(exc.arches)) return false;
  if (!inc.min_kernel && !exc.min_kernel) return true;
  if (!ctx.kernel)
    return ctx.error(where, "minKernel: cannot read the kernel version from `" + shown(ctx.kernel_release) + "`");
  if (inc.min_kernel && *ctx.kernel < *inc.min_kernel) return false;
  return !(exc.min_kernel && *ctx.kernel >= *exc.min_kernel);
}

Result<ArgCheck> parse_arg(const Context& ctx, const std::string& where, const json& a) {
  if (!a.is_object()) return ctx.error(where, "must be an object");
  if (auto s = only_keys(ctx, where, a, {"index", "value", "valueTwo", "op"}); !s) return s.error();
  const json* index = member(a, "index");
  if (index == nullptr) return ctx.error(where + ".index", "missing");
  auto i = uint_at(ctx, where + ".index", *index);
  if (!i) return i.error();
  if (*i > kMaxArgIndex) return ctx.error(where + ".index", "must be 0 to 5 (a syscall has six arguments)");
  auto value = uint_member(ctx, where + ".", a, "value", 0);
  if (!value) return value.error();
  auto value_two = uint_member(ctx, where + ".", a, "valueTwo", 0);
  if (!value_two) return value_two.error();
  const json* op = member(a, "op");
  if (op == nullptr) return ctx.error(where + ".op", "missing");
  auto op_name = string_at(ctx, where + ".op", *op);
  if (!op_name) return op_name.error();
  auto it = std::find_if(std::begin(kOps), std::end(kOps), [&](const auto& o) { return o.first == *op_name; });
  if (it == std::end(kOps))
    return ctx.error(where + ".op", "unknown operator `" + shown(*op_name) +
                                        "` (expected SCMP_CMP_EQ, NE, LT, LE, GT, GE or MASKED_EQ)");
  ArgCheck c{it->second, static_cast<unsigned>(*i), 0, *value};
  // MASKED_EQ, as in libseccomp: `value` is the mask, `valueTwo` what the masked argument must equal.
  if (c.op == ArgCheck::Op::masked_eq) {
    c.mask = *value;
    c.value = *value_two;
  }
  return c;
}

Result<std::vector<ArgCheck>> parse_args(const Context& ctx, const std::string& where, const json* args) {
  std::vector<ArgCheck> out;
  if (args == nullptr) return out;
  if (!args->is_array()) return ctx.error(where, "must be an array");
  if (args->size() > kMaxArgsPerRule) return ctx.error(where, "more than 64 argument checks");
  for (std::size_t i = 0; i < args->size(); ++i) {
    auto c = parse_arg(ctx, at_index(where, i), (*args)[i]);
    if (!c) return c.error();
    out.push_back(*c);
  }
  return out;
}

// runc (Docker's runtime) ANDs a rule's checks, except when one argument index is compared more than once: then
// each check is a rule of its own (OR). Profiles written for Docker rely on that, so it is kept.
std::vector<std::vector<ArgCheck>> alternatives(const std::vector<ArgCheck>& checks) {
  if (checks.empty()) return {};
  bool index_repeats = false;
  for (std::size_t i = 0; i < checks.size(); ++i)
    for (std::size_t j = i + 1; j < checks.size(); ++j) index_repeats |= checks[i].arg == checks[j].arg;
  if (!index_repeats) return {checks};
  std::vector<std::vector<ArgCheck>> out;
  for (const auto& c : checks) out.push_back({c});
  return out;
}

Result<std::vector<std::string>> parse_names(Context& ctx, const std::string& where, const json& rule) {
  const json* names = member(rule, "names");
  const json* name = member(rule, "name");
  if (names != nullptr && name != nullptr) return ctx.error(where, "has both `name` and `names`; use `names`");
  if (names == nullptr && name == nullptr) return ctx.error(where + ".names", "missing");
  std::vector<std::string> out;
  if (name != nullptr) {
    auto s = string_at(ctx, where + ".name", *name);
    if (!s) return s.error();
    out.push_back(std::move(*s));
  } else {
    auto list = strings_at(ctx, where + ".names", *names);
    if (!list) return list.error();
    out = std::move(*list);
  }
  if (out.empty()) return ctx.error(where + ".names", "is empty");
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].empty()) return ctx.error(at_index(where + ".names", i), "empty syscall name");
  ctx.names += out.size();
  if (ctx.names > kMaxNames) return ctx.error(where, "more than 4096 syscall names in the profile");
  return out;
}

bool short_line(const std::string& s) {
  return !s.empty() && s.size() <= kMaxGroupFromComment &&
         std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

// One entry of `syscalls`, fully checked; nothing when its includes/excludes leave it out for confine.
Result<std::optional<SeccompRule>> parse_rule(Context& ctx, const json& r, std::size_t index) {
  std::string where = at_index("syscalls", index);
  if (!r.is_object()) return ctx.error(where, "must be an object");
  auto keys = only_keys(ctx, where, r, {"names", "name", "action", "errnoRet", "args", "comment", "includes", "excludes"});
  if (!keys) return keys.error();
  auto names = parse_names(ctx, where, r);
  if (!names) return names.error();
  auto action = parse_action(ctx, where + ".", r, "action", "errnoRet");
  if (!action) return action.error();
  auto checks = parse_args(ctx, where + ".args", member(r, "args"));
  if (!checks) return checks.error();
  std::string comment;
  if (const json* c = member(r, "comment")) {
    auto s = string_at(ctx, where + ".comment", *c);
    if (!s) return s.error();
    comment = std::move(*s);
  }
  auto inc = parse_filter(ctx, where + ".includes", member(r, "includes"));
  if (!inc) return inc.error();
  auto exc = parse_filter(ctx, where + ".excludes", member(r, "excludes"));
  if (!exc) return exc.error();
  auto applies = rule_applies(ctx, where, *inc, *exc);
  if (!applies) return applies.error();
  if (!*applies) return std::optional<SeccompRule>();
  SeccompRule out;
  out.group = short_line(comment) ? comment : "oci[" + std::to_string(index) + "]";
  out.why = comment.empty() ? "from " + ctx.source : comment;
  out.action = *action;
  out.syscalls = std::move(*names);
  // Docker skips the names its libseccomp does not know, so a profile written for a newer kernel still loads.
  out.optional.assign(out.syscalls.size(), true);
  out.alternatives = alternatives(*checks);
  return std::optional<SeccompRule>(std::move(out));
}

// Two actions for one syscall without argument checks: libseccomp refuses the second, and which one a container
// runtime keeps depends on it, so the profile is ambiguous. Name both rules.
sys::Status check_conflicts(Context& ctx, const SeccompRule& rule, std::size_t index) {
  if (!rule.alternatives.empty()) return sys::ok_status();
  for (const auto& name : rule.syscalls) {
    auto [it, fresh] = ctx.unconditional.try_emplace(name, rule.action, index);
    if (!fresh && !same_action(it->second.first, rule.action))
      return ctx.error(at_index("syscalls", index),
                       "`" + shown(name) + "` is " + rule.action.text + " here but " + it->second.first.text + " in " +
                           at_index("syscalls", it->second.second) + ", both without argument checks");
  }
  return sys::ok_status();
}

Result<SeccompPolicy> convert(Context& ctx, const json& doc) {
  if (!doc.is_object()) return ctx.error("top level", "must be a JSON object");
  auto keys = only_keys(ctx, "top level", doc,
                        {"defaultAction", "defaultErrnoRet", "architectures", "archMap", "syscalls", "flags",
                         "listenerPath", "listenerMetadata"});
  if (!keys) return keys.error();
  if (auto s = check_unsupported(ctx, doc); !s) return s.error();
  if (auto s = check_architectures(ctx, doc); !s) return s.error();
  SeccompPolicy p;
  p.source = ctx.source;
  auto def = parse_action(ctx, "", doc, "defaultAction", "defaultErrnoRet");
  if (!def) return def.error();
  p.default_action = *def;
  const json* calls = member(doc, "syscalls");
  if (calls == nullptr) return p;
  if (!calls->is_array()) return ctx.error("syscalls", "must be an array");
  if (calls->size() > kMaxRules) return ctx.error("syscalls", "more than 4096 rules");
  for (std::size_t i = 0; i < calls->size(); ++i) {
    auto rule = parse_rule(ctx, (*calls)[i], i);
    if (!rule) return rule.error();
    if (!*rule) continue;
    if (auto s = check_conflicts(ctx, **rule, i); !s) return s.error();
    // libseccomp refuses a rule whose action is the default one (runc skips them too); it changes nothing.
    if (!same_action((*rule)->action, p.default_action)) p.rules.push_back(std::move(**rule));
  }
  return p;
}

}  // namespace

bool looks_like_oci_seccomp(std::string_view text) {
  auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

Result<SeccompPolicy> parse_oci_seccomp(std::string_view text, const std::string& source,
                                        std::string_view kernel_release) {
  Context ctx{source, kernel_release, parse_version(kernel_release, false), 0, {}};
  if (text.size() > kMaxBytes) return ctx.error("file", "larger than 1 MiB");
  auto doc = parse_bounded_json(text, source, kMaxDepth);
  if (!doc) return doc.error();
  // Every access in convert() checks the type first, so nothing should throw; this keeps a library exception
  // from ever leaving the parser.
  try {
    return convert(ctx, *doc);
  } catch (const json::exception& e) {
    return ctx.error("invalid JSON", e.what());
  }
}

}  // namespace confine
