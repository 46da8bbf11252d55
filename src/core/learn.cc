#include "core/learn.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <array>
#include <map>
#include <cstddef>
#include <tuple>
#include <utility>

#include "core/allowlist.h"
#include "core/json_text.h"

namespace confine {
namespace {

// The built-in profile for each program name; one table, read by base_profile_for.
constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kBaseByProgram = {{
    {"npm", "npm"}, {"npx", "npm"}, {"pip", "pip"}, {"pip3", "pip"}, {"cargo", "cargo"}, {"go", "go"},
    {"codex", "codex"}, {"claude", "claude"}, {"aider", "aider"}, {"gemini", "gemini"}, {"rustup", "cargo"},
}};

// The seccomp rule groups a profile key lifts (`[sandbox] allow_nested`: the namespaces and mounts an agent's own
// sandbox needs); every other refusal has no key.
constexpr std::array<std::string_view, 3> kNestedRuleGroups = {"new-namespaces", "join-namespaces", "mounts"};

// Valid UTF-8 (TOML text must be): no overlong forms, no surrogates, nothing past U+10FFFF.
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? c : c & (0x7f >> n);
    for (std::size_t k = 1; k < n; ++k) {
      auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

// Text for a `#` comment: one line, valid UTF-8. Names come from the sandbox, so a newline in one must not end
// the comment and start a key.
std::string comment_text(std::string_view s) {
  if (!valid_utf8(s)) {
    std::string out;
    for (char c : s) out += static_cast<unsigned char>(c) < 0x80 ? c : '?';
    return comment_text(out);
  }
  std::string out;
  for (char c : s) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return out;
}

// A TOML basic string holding exactly `s` (valid UTF-8): quotes, backslashes and control characters escaped.
// Written here rather than by toml++'s printer: that one picks a multi-line literal string for a value with a
// newline, and a name from the sandbox holding three single quotes would end it early.
std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') out += {'\\', c};
    else if (byte < 0x20 || byte == 0x7f) out += fmt::format("\\u{:04X}", byte);
    else out += c;
  }
  return out + "\"";
}

std::string joined(const std::vector<std::string>& words, std::string_view sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : std::string(sep)) + w;
  return out;
}

// One `key = [...]` of the profile: each value with the comment saying why it is there.
struct ArrayKey {
  std::string key;
  std::vector<std::pair<std::string, std::string>> values;  // TOML value text, comment
};

// One table of the profile, printed in the order its parts were added.
struct Section {
  std::string name;
  std::vector<std::string> comments;                                   // between the scalars and the arrays
  std::vector<std::tuple<std::string, std::string, std::string>> scalars;  // key, TOML value text, comment
  std::vector<ArrayKey> arrays;

  ArrayKey& array(const std::string& key) {
    for (auto& a : arrays)
      if (a.key == key) return a;
    return arrays.emplace_back(ArrayKey{key, {}});
  }
  void scalar(const std::string& key, std::string value, std::string comment) {
    for (const auto& s : scalars)
      if (std::get<0>(s) == key) return;  // set once: the base's copy or what the run needs, never both
    scalars.emplace_back(key, std::move(value), std::move(comment));
  }
  [[nodiscard]] bool empty() const { return comments.empty() && scalars.empty() && arrays.empty(); }
};

class ProfileWriter {
 public:
  Section& section(std::string_view name) {
    for (auto& s : sections_)
      if (s.name == name) return s;
    return sections_.emplace_back(Section{std::string(name), {}, {}, {}});
  }
  ArrayKey& array(ProfileKey key) {
    const auto& k = profile_key(key);
    return section(k.table).array(std::string(k.name));
  }
  void scalar(ProfileKey key, std::string value, std::string comment) {
    const auto& k = profile_key(key);
    section(k.table).scalar(std::string(k.name), std::move(value), std::move(comment));
  }

  [[nodiscard]] std::string text() const {
    std::string out;
    for (const auto& s : sections_) {
      if (s.empty()) continue;
      out += "\n[" + s.name + "]\n";
      for (const auto& [key, value, comment] : s.scalars) {
        if (!comment.empty()) out += "# " + comment + "\n";
        out += key + " = " + value + "\n";
      }
      for (const auto& c : s.comments) out += "# " + c + "\n";
      for (const auto& a : s.arrays) {
        out += a.key + " = [\n";
        for (const auto& [value, comment] : a.values) {
          if (!comment.empty()) out += "    # " + comment + "\n";
          out += "    " + value + ",\n";
        }
        out += "]\n";
      }
    }
    return out;
  }

 private:
  std::deque<Section> sections_;  // a deque: a Section& stays valid while others are added
};

// Sections in the order confine-profile(5) documents them.
ProfileWriter empty_writer() {
  ProfileWriter w;
  for (const auto& k : profile_keys()) w.section(k.table);
  return w;
}

// --- the base, when it is copied rather than extended --------------------------------------------------------

// Published ports are inbound; a forward and a DNS answer follow from the entries the connections need.
bool outbound(const NetRecord& r) {
  auto door = r.door();
  return door != NetDoor::publish && door != NetDoor::forward && door != NetDoor::dns;
}

// A profile may not change a setting of the one it extends: a base whose network mode is not the proxy can be
// extended only by a run that used no network.
bool extendable(const Profile& base, const std::vector<NetRecord>& log) {
  bool proxy = base.net.value_or(NetChoice{NetMode::proxy}) == NetChoice{NetMode::proxy};
  return proxy || std::none_of(log.begin(), log.end(), outbound);
}

// Every key of the base (the table of core/profile_keys.h, so none is forgotten) but the network mode, the run's
// own below, and the `set` variables, which may hold what the user keeps out of a file they review.
void copy_base(const Profile& base, const std::string& base_name, ProfileWriter& w) {
  std::string why = "from the `" + comment_text(base_name) + "` profile";
  for (const auto& k : profile_keys()) {
    if (k.key == ProfileKey::network_mode || k.key == ProfileKey::environment_set) continue;
    if (is_list(k.value)) {
      for (const auto& v : base.list(k.key)) w.array(k.key).values.emplace_back(toml_string(v), why);
    } else if (const auto* setting = base.setting(k.key)) {
      w.scalar(k.key, k.value == ProfileValue::boolean ? setting->value : toml_string(setting->value), why);
    }
  }
  if (!base.list(ProfileKey::environment_set).empty() || !base.credentials.empty())
    w.section(profile_key(ProfileKey::environment_set).table).comments.push_back("the `" + comment_text(base_name) + "` profile's `set` variables and "
                                                "credentials are not copied: add them here if the tool needs them");
}

// --- network ---------------------------------------------------------------------------------------------------

struct Tally {
  unsigned count = 0;
  std::vector<std::string> reasons;  // distinct, in order seen
  void add(const std::string& reason) {
    ++count;
    if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(reason);
  }
};

// How the run's line reads in a comment: "reached" (a connection was made) or the failure it met.
bool reached(const NetRecord& r) { return r.reason.starts_with("allowed by") || r.reason.starts_with("recorded by"); }

// The allow entry for host:port as a profile writes it: port 443 is the entry's default, an IPv6 address in [].
std::string allow_entry(const std::string& host, std::uint16_t port) {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return port == 443 ? h : h + ":" + std::to_string(port);
}

// The entry that would let a refused destination through: the address itself, the internal address the name
// resolved to as the refusal names it ("resolves to an internal address (10.0.0.5); …"), else the name.
std::string address_entry(const std::string& host, std::uint16_t port, const Tally& t) {
  if (is_ip_literal(host)) return allow_entry(host, port);
  constexpr std::string_view kResolves = "internal address (";
  for (const auto& reason : t.reasons)
    if (auto at = reason.find(kResolves); at != std::string::npos) {
      auto start = at + kResolves.size();
      auto address = reason.substr(start, reason.find(')', start) - start);
      if (is_ip_literal(address)) return allow_entry(address, port);
    }
  return allow_entry(host, port);
}

// The destinations the strict run must allow (and those learn itself refused), from the run's net log.
void add_network(const std::vector<NetRecord>& log, const Profile& base, ProfileWriter& w) {
  std::vector<AllowEntry> base_entries;
  for (const auto& spec : base.list(ProfileKey::network_allow))
    if (auto e = parse_allow_entry(spec)) base_entries.push_back(*e);
  Allowlist base_list(std::move(base_entries));
  std::map<std::pair<std::string, std::uint16_t>, Tally> reached_targets, failed_targets, refused_targets, covered;
  std::vector<std::string> unnamed;
  for (const auto& r : log) {
    if (!outbound(r)) continue;
    auto host = normalize_host(r.host);
    if (host.empty()) {
      unnamed.push_back(comment_text(r.host));
      continue;
    }
    auto key = std::pair{host, r.port};
    if (!r.allowed) refused_targets[key].add(r.reason);
    else if (base_list.check_name(host, r.port).allowed) covered[key].add(r.reason);
    else if (reached(r)) reached_targets[key].add(r.reason);
    else failed_targets[key].add(r.reason);
  }
  auto& net = w.section(profile_key(ProfileKey::network_mode).table);
  bool used = !reached_targets.empty() || !failed_targets.empty() || !covered.empty() || !refused_targets.empty();
  if (used) w.scalar(ProfileKey::network_mode, toml_string("proxy"), "through confine's proxy, to the hosts below only");
  auto& allow = w.array(ProfileKey::network_allow);
  for (const auto& [key, t] : reached_targets)
    allow.values.emplace_back(toml_string(allow_entry(key.first, key.second)),
                              fmt::format("reached {}:{} ×{}{}", key.first, key.second, t.count,
                                          key.first == "127.0.0.1" || key.first == "::1"
                                              ? ", a service on this machine's loopback" : ""));
  for (const auto& [key, t] : failed_targets)
    allow.values.emplace_back(toml_string(allow_entry(key.first, key.second)),
                              fmt::format("tried {}:{} ×{}, which did not answer ({})", key.first, key.second, t.count,
                                          comment_text(joined(t.reasons, ", "))));
  if (allow.values.empty()) net.arrays.clear();
  for (const auto& [key, t] : covered)
    net.comments.push_back(fmt::format("{}:{} ×{}: already allowed by the base profile", key.first, key.second, t.count));
  // An internal address is never allowed by learn: the user decides, with the flag that would allow it.
  for (const auto& [key, t] : refused_targets)
    net.comments.push_back(fmt::format("refused during the run: {}:{} ×{} ({}); not added: if you trust it, "
                                       "--allow {} allows it", key.first, key.second, t.count,
                                       comment_text(joined(t.reasons, "; ")), address_entry(key.first, key.second, t)));
  for (const auto& name : unnamed)
    net.comments.push_back("refused during the run: `" + name + "`, which is no host name; nothing can allow it");
}

// --- files below $HOME -----------------------------------------------------------------------------------------

std::vector<std::string> split_path(const std::string& rel) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= rel.size()) {
    auto slash = rel.find('/', start);
    if (slash == std::string::npos) slash = rel.size();
    if (slash > start) parts.push_back(rel.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

// The directory a written file is kept in: the tool's own directory, one level below the shared ones ($HOME,
// ~/.cache, ~/.config, ~/.local/share, ~/.local/state), or the shared one itself for a file written directly in it.
// Empty: a file directly in $HOME, which no directory entry can keep without taking all of $HOME.
std::string keeping_directory(const std::vector<std::string>& parts) {
  std::size_t depth = 1;
  if (parts[0] == ".cache" || parts[0] == ".config") depth = 2;
  if (parts[0] == ".local" && parts.size() > 1 && (parts[1] == "share" || parts[1] == "state")) depth = 3;
  depth = std::min(depth, parts.size() - 1);
  if (depth == 0) return {};
  std::vector<std::string> kept(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(depth));
  return "~/" + joined(kept, "/");
}

// The base profile's entry that already keeps `path` (`~/…`), if any.
std::string base_entry_for(const std::string& path, const Profile& base) {
  auto covers = [&](std::string entry) {
    if (entry.size() > 2 && entry.ends_with('/')) entry.pop_back();
    return path == entry || path.starts_with(entry + "/");
  };
  for (const auto& d : base.list(ProfileKey::filesystem_private))
    if (covers(d)) return "private " + d;
  for (const auto* list : {&base.list(ProfileKey::filesystem_rw), &base.list(ProfileKey::filesystem_ro),
                           &base.list(ProfileKey::filesystem_copy), &base.list(ProfileKey::filesystem_tmpfs)})
    for (const auto& e : *list)
      if (covers(e)) return e;
  return {};
}

// `path` is `dir` or below it (both `~/…` or both absolute).
bool at_or_below(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

// The bound path (given with --ro, or by the base) that a private `dir` would hide: `dir` itself or one below it.
std::string hidden_bind(const std::string& dir, const std::vector<std::string>& bound) {
  for (const auto& b : bound)
    if (at_or_below(b, dir)) return b;
  return {};
}

// What the run was given below $HOME: the command line's binds and the base's own.
std::vector<std::string> bound_in_home(const std::vector<std::string>& given, const Profile& base) {
  std::vector<std::string> out;
  for (const auto* list : {&given, &base.list(ProfileKey::filesystem_ro), &base.list(ProfileKey::filesystem_rw)})
    for (auto e : *list) {
      if (e.size() > 2 && e.ends_with('/')) e.pop_back();
      if (e.starts_with("~/")) out.push_back(std::move(e));
    }
  return out;
}

void add_home_writes(const LearnRecords& records, const Profile& base, ProfileWriter& w) {
  struct Kept {
    unsigned count = 0;
    std::string example;
  };
  std::map<std::string, Kept> to_keep, by_base;
  std::map<std::string, Kept> would_hide;  // by the directory that would hide a bind
  std::vector<std::string> in_home, unnameable;
  auto bound = bound_in_home(records.bound, base);
  for (const auto& rel : records.home_writes) {
    auto parts = split_path(rel);
    if (parts.empty()) continue;
    if (!valid_utf8(rel)) {
      unnameable.push_back(comment_text(rel));
      continue;
    }
    auto path = "~/" + joined(parts, "/");
    // The directories confine made to mount a bind on, in the run's home: its own, not the command's.
    if (std::any_of(bound.begin(), bound.end(), [&](const std::string& b) { return at_or_below(b, path); })) continue;
    if (auto entry = base_entry_for(path, base); !entry.empty()) {
      auto& k = by_base[entry];
      if (k.count++ == 0) k.example = path;
      continue;
    }
    auto dir = keeping_directory(parts);
    if (dir.empty()) {
      in_home.push_back(path);
      continue;
    }
    // Never a private directory over what the user bound: it would hide it from the strict run.
    if (!hidden_bind(dir, bound).empty()) {
      auto& k = would_hide[dir];
      if (k.count++ == 0) k.example = path;
      continue;
    }
    auto& k = to_keep[dir];
    if (k.count++ == 0) k.example = path;
  }
  auto& fs = w.section(profile_key(ProfileKey::filesystem_private).table);
  for (const auto& [dir, k] : to_keep)
    w.array(ProfileKey::filesystem_private).values.emplace_back(
        toml_string(dir), comment_text(fmt::format("wrote {} file{} there ({}): the sandbox's own {}, kept between runs "
                                                   "by confine; yours stays invisible and untouched (never `rw`: what "
                                                   "a tool keeps there may run later)",
                                                   k.count, k.count == 1 ? "" : "s", k.example, dir)));
  for (const auto& [entry, k] : by_base)
    fs.comments.push_back(comment_text(fmt::format("wrote {} file{} under {} (e.g. {}): kept by the base profile",
                                                   k.count, k.count == 1 ? "" : "s", entry, k.example)));
  for (const auto& path : in_home)
    fs.comments.push_back(comment_text("wrote " + path + " directly in $HOME: the strict run has it too, in a home "
                                       "discarded at exit; no entry keeps one file without all of $HOME"));
  for (const auto& name : unnameable)
    fs.comments.push_back("wrote `~/" + name + "`, whose name is not UTF-8: a profile cannot name it");
  for (const auto& [dir, k] : would_hide)
    fs.comments.push_back(comment_text(fmt::format("wrote {} file{} under {} ({}): not kept: a private {} would hide "
                                                   "{}, which the run was given", k.count, k.count == 1 ? "" : "s",
                                                   dir, k.example, dir, hidden_bind(dir, bound))));
}

// --- files read outside the run's view --------------------------------------------------------------------------

// The path's components after `~` or `/`.
std::vector<std::string> components(const std::string& path) {
  return split_path(path.starts_with("~/") ? path.substr(2) : path);
}

std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

// A directory the files read in it may be shown as: below a tool's own level, never $HOME, the shared ~/.config,
// ~/.cache, ~/.local (and its share, state), the root, a directory at the top of it or another user's home.
bool groupable(const std::string& dir) {
  if (dir == "~") return false;
  auto parts = components(dir);
  // Another home (/home/USER, /root) is never shown whole either.
  if (!dir.starts_with("~/")) return parts.size() >= (parts.empty() || parts[0] != "home" ? 2U : 3U);
  std::size_t shared = 1;
  if (!parts.empty() && (parts[0] == ".config" || parts[0] == ".cache" || parts[0] == ".local")) shared = 2;
  if (parts.size() > 1 && parts[0] == ".local" && (parts[1] == "share" || parts[1] == "state")) shared = 3;
  return parts.size() >= shared;
}

// Where a home keeps credentials by convention, besides the names the secret scan knows (which are a
// workspace's): a read there is named, never an entry.
constexpr std::array<std::string_view, 10> kCredentialHomes = {
    "~/.ssh", "~/.aws", "~/.gnupg", "~/.kube", "~/.docker", "~/.azure", "~/.config/gh", "~/.config/gcloud",
    "~/.password-store", "~/.local/share/keyrings"};

bool credential_home(const std::string& path) {
  return std::any_of(kCredentialHomes.begin(), kCredentialHomes.end(),
                     [&](std::string_view dir) { return at_or_below(path, std::string(dir)); });
}

void add_reads(const std::vector<ReadRecord>& reads, const Profile& base, ProfileWriter& w) {
  struct Group {
    std::vector<std::string> files;
    bool beside_secret = false;
  };
  std::map<std::string, Group> by_dir;  // the files read, by their directory
  std::vector<std::string> comments;
  for (const auto& r : reads) {
    if (!valid_utf8(r.path)) {
      comments.push_back("looked up `" + comment_text(r.path) + "`, whose name is not UTF-8: a profile cannot name it");
      continue;
    }
    if (!base_entry_for(r.path, base).empty()) continue;  // the base shows it already
    if (r.secret || credential_home(r.path)) {
      comments.push_back("read " + r.path + ", which may hold a credential: not added; add it to `ro` "
                         "yourself if the tool needs it");
      continue;
    }
    if (r.directory) {
      // A directory looked up on the way to what was read in it says nothing of its own.
      bool on_the_way = std::any_of(reads.begin(), reads.end(), [&](const ReadRecord& o) {
        return o.path.size() > r.path.size() && at_or_below(o.path, r.path);
      });
      if (!on_the_way)
        comments.push_back("looked in " + r.path + " and read nothing there: not added; add it to `ro` if the tool "
                           "needs what it holds");
      continue;
    }
    auto& g = by_dir[parent_of(r.path)];
    g.files.push_back(r.path);
    g.beside_secret = g.beside_secret || r.beside_secret;
  }
  auto& fs = w.section(profile_key(ProfileKey::filesystem_ro).table);
  for (const auto& [dir, g] : by_dir) {
    if (g.files.size() > 1 && !g.beside_secret && groupable(dir)) {
      w.array(ProfileKey::filesystem_ro).values.emplace_back(
          toml_string(dir), comment_text(fmt::format("read {} files there ({}), which the sandbox does not show",
                                                     g.files.size(), g.files[0])));
      continue;
    }
    for (const auto& f : g.files)
      w.array(ProfileKey::filesystem_ro).values.emplace_back(toml_string(f), comment_text("read " + f + ", which the sandbox does not show"));
  }
  for (auto& c : comments) fs.comments.push_back(comment_text(c));
}

// --- environment, seccomp --------------------------------------------------------------------------------------

void add_dropped_env(std::vector<std::string> names, const Profile& base, ProfileWriter& w) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<std::string> passable, by_base;
  for (const auto& n : names) {
    const auto& pass = base.list(ProfileKey::environment_pass);
    bool passed = std::find(pass.begin(), pass.end(), n) != pass.end();
    (passed ? by_base : passable).push_back(comment_text(n));
  }
  auto& env = w.section(profile_key(ProfileKey::environment_pass).table);
  if (!passable.empty()) {
    env.comments.push_back("the scrub kept these variables out (they look like credentials), and learn never passes "
                           "one in; to let one in, uncomment and keep only what the tool needs:");
    env.comments.push_back(std::string(profile_key(ProfileKey::environment_pass).name) + " = [" + joined([&] {
      std::vector<std::string> quoted;
      for (const auto& n : passable) quoted.push_back("\"" + n + "\"");
      return quoted;
    }(), ", ") + "]");
  }
  if (!by_base.empty())
    env.comments.push_back("kept out during learn, passed by the base profile when set: " + joined(by_base, ", "));
}

void add_seccomp(const std::vector<SeccompRecord>& refusals, ProfileWriter& w) {
  std::map<std::string, std::map<std::string, unsigned>> by_rule;  // rule → syscall → count
  for (const auto& r : refusals) ++by_rule[r.rule][r.syscall];
  auto& sandbox = w.section(profile_key(ProfileKey::sandbox_allow_nested).table);
  std::vector<std::string> nested;  // what allow_nested lets through, by rule
  for (const auto& [rule, calls] : by_rule) {
    std::vector<std::string> seen;
    for (const auto& [call, n] : calls) seen.push_back(fmt::format("{} ×{}", comment_text(call), n));
    auto what = joined(seen, ", ") + " (rule `" + comment_text(rule) + "`)";
    if (std::find(kNestedRuleGroups.begin(), kNestedRuleGroups.end(), rule) != kNestedRuleGroups.end())
      nested.push_back(what);
    else
      sandbox.comments.push_back("seccomp refused " + what + ": no profile key allows it");
  }
  if (!nested.empty())
    w.scalar(ProfileKey::sandbox_allow_nested, "true", "seccomp refused " + joined(nested, "; ") +
                                               ": the tool builds a sandbox of its own; this lets it make namespaces "
                                               "and mounts inside");
}

std::string header(const LearnRecords& r, const std::string& base_name, bool extends) {
  auto command = comment_text(joined(r.command, " "));
  auto base = comment_text(base_name);
  std::string out = "# Learned by `confine learn` from one run of: " + command + "\n"
                    "# This is a record of a run you trusted: what it did is allowed below. Review every entry before\n"
                    "# you use it (confine --profile FILE -- ...), and remove what the tool does not need.\n";
  out += extends ? "# Base: the `" + base + "` profile, extended.\n"
                 : "# Base: the `" + base + "` profile, copied (it sets a network mode a profile extending it could "
                   "not change).\n";
  out += "format = \"confine-profile/1\"\n";
  out += "description = " + toml_string("learned from: " + command) + "\n";
  if (extends) out += "extends = " + toml_string(base) + "\n";
  return out;
}

// Each line of a JSON-lines log that is an object; the others are skipped.
template <typename Visit>
void for_each_json_object(std::string_view text, Visit visit) {
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    auto json = parse_bounded_json(text.substr(start, end - start), "log line", 2);
    start = end + 1;
    if (json && json->is_object()) visit(*json);
  }
}

const std::string* string_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

}  // namespace

std::vector<NetRecord> parse_net_log(std::string_view text) {
  std::vector<NetRecord> out;
  for_each_json_object(text, [&](const nlohmann::json& j) {
    auto text_field = [&](const char* key) { return string_field(j, key); };
    const auto* method = text_field("method");
    const auto* host = text_field("host");
    const auto* reason = text_field("reason");
    auto port = j.find("port");
    auto allowed = j.find("allowed");
    if (method == nullptr || host == nullptr || reason == nullptr || port == j.end() || !port->is_number_unsigned() ||
        port->get<std::uint64_t>() > 65535 || allowed == j.end() || !allowed->is_boolean())
      return;
    out.push_back({*method, *host, static_cast<std::uint16_t>(port->get<std::uint64_t>()), allowed->get<bool>(), *reason});
  });
  return out;
}

std::vector<SeccompRecord> parse_seccomp_denials(std::string_view text) {
  std::vector<SeccompRecord> out;
  for_each_json_object(text, [&](const nlohmann::json& j) {
    const auto* layer = string_field(j, "layer");
    const auto* syscall = string_field(j, "syscall");
    const auto* rule = string_field(j, "rule");
    const auto* err = string_field(j, "errno");
    if (layer == nullptr || *layer != "seccomp" || syscall == nullptr || rule == nullptr || err == nullptr) return;
    out.push_back({*syscall, *rule, *err});
  });
  return out;
}

std::string base_profile_for(const std::vector<std::string>& command) {
  if (command.empty()) return "default";
  std::string_view program = command.front();
  if (auto slash = program.rfind('/'); slash != std::string_view::npos) program.remove_prefix(slash + 1);
  for (const auto& [name, profile] : kBaseByProgram)
    if (program == name) return std::string(profile);
  return "default";
}

std::string learned_profile(const LearnRecords& records, const std::string& base_name, const Profile& base) {
  bool extends = extendable(base, records.network);
  auto w = empty_writer();
  if (!extends) copy_base(base, base_name, w);
  // Extended or copied, the base's entries apply: what they cover already is named, not repeated.
  add_home_writes(records, base, w);
  add_reads(records.reads, base, w);
  add_dropped_env(records.dropped_env, base, w);
  add_network(records.network, base, w);
  add_seccomp(records.seccomp, w);
  return header(records, base_name, extends) + w.text();
}

}  // namespace confine
