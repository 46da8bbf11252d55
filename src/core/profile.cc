#include "core/profile.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tuple>

#include "core/limits.h"
#include "core/net_mode.h"
#include "core/suggest.h"
#include "core/toml_document.h"

namespace confine {
namespace {

constexpr std::string_view kFormat = "confine-profile/1";

// The keys a profile may have, by table; anything else is an error (a typo must not silently weaken a sandbox).
const std::vector<std::pair<std::string, std::vector<std::string>>>& known_keys() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> keys = {
      {"", {"format", "description", "extends", "filesystem", "secrets", "credentials", "environment", "network", "limits",
            "sandbox", "checkpoint", "config"}},
      {"secrets", {"mask", "skip", "walk"}},
      {"filesystem", {"ro", "rw", "private", "copy", "tmpfs", "mask", "workspace"}},
      {"environment", {"pass", "set"}},
      {"network", {"mode", "allow"}},
      {"limits", {"memory", "memory_swap", "pids", "cpus", "tmpfs_size", "shm_size"}},
      {"sandbox", {"allow_nested"}},
      {"checkpoint", {"exclude"}},
      {"config", {"file", "providers"}},
      {"credentials", {}},  // its keys are the credentials' names, each a table of the keys below
      {"credentials.NAME", {"for", "source", "broker", "set", "endpoint", "endpoint_key"}},
  };
  return keys;
}

const std::vector<std::string>& table_keys(std::string_view table) {
  const auto& all = known_keys();
  return std::find_if(all.begin(), all.end(), [&](const auto& k) { return k.first == table; })->second;
}

bool is_section(std::string_view key) {
  const auto& all = known_keys();
  return std::any_of(all.begin() + 1, all.end(), [&](const auto& k) { return k.first == key; });
}

std::string dotted(const std::string& table, const std::string& key) { return table.empty() ? key : table + "." + key; }

std::vector<std::string> dotted_keys(const std::string& table, const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(dotted(table, k));
  return out;
}

struct Reader {
  std::string origin;
  std::vector<std::string>& errors;

  std::string at(const toml::node& n) const { return origin + ":" + std::to_string(n.source().begin.line); }
  void error(const toml::node& n, const std::string& what) { errors.push_back(at(n) + ": " + what); }

  void check_keys(const toml::table& t, const std::string& table) {
    const auto& all = known_keys();
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& k) { return k.first == table; });
    for (const auto& [key, node] : t) {
      std::string k(key.str());
      if (std::find(it->second.begin(), it->second.end(), k) == it->second.end())
        error(node, "unknown key `" + dotted(table, k) + "`" + did_you_mean(dotted(table, k), dotted_keys(table, it->second)));
      else if (table.empty() && is_section(k) && !node.is_table())
        error(node, "`" + k + "` must be a table ([" + k + "])");
    }
  }

  void strings(const toml::table& t, const char* key, const std::string& name, std::vector<std::string>& out) {
    const toml::node* n = t.get(key);
    if (n == nullptr) return;
    const toml::array* a = n->as_array();
    if (a == nullptr) return error(*n, "`" + name + "` must be an array of strings");
    for (const auto& item : *a) {
      if (auto s = item.value<std::string>(); s && !s->empty()) out.push_back(*s);
      else error(item, "`" + name + "` must hold non-empty strings");
    }
  }

  // A path below $HOME (`~/...`, no `..`): where a private directory or a copy goes, which must be in the
  // sandbox's own home, never at a host path.
  void home_paths(const toml::table& t, const char* key, const std::string& name, std::vector<std::string>& out) {
    const toml::array* a = t.get(key) == nullptr ? nullptr : t.get(key)->as_array();
    if (a == nullptr) return strings(t, key, name, out);  // absent, or the type error strings() reports
    for (const auto& item : *a) {
      auto s = item.value<std::string>();
      bool below_home = s && s->starts_with("~/") && s->size() > 2 && s->find("/../") == std::string::npos &&
                        !s->ends_with("/..");
      if (below_home) out.push_back(*s);
      else error(item, "`" + name + "` entry " + (s ? "`" + *s + "`" : std::string("here")) +
                           " must be a path below your home, starting with `~/`");
    }
  }

  enum class Kind { text, text_or_number, boolean };

  void scalar(const toml::table& t, const char* key, const std::string& name, Profile& p, Kind kind) {
    const toml::node* n = t.get(key);
    if (n == nullptr) return;
    std::string v;
    if (auto s = n->as_string(); s && kind != Kind::boolean) v = s->get();
    else if (auto i = n->as_integer(); i && kind == Kind::text_or_number) v = std::to_string(i->get());
    else if (auto f = n->as_floating_point(); f && kind == Kind::text_or_number) v = fmt::format("{}", f->get());
    else if (auto b = n->as_boolean(); b && kind == Kind::boolean) v = b->get() ? "true" : "false";
    else
      return error(*n, "`" + name + "` must be " +
                            (kind == Kind::boolean ? "true or false" : kind == Kind::text ? "a string" : "a string or a number"));
    p.settings.push_back({name, {v, at(*n)}});
  }
};

// NAME = "value" entries of a table, as "NAME=value".
void read_assignments(Reader& r, const toml::node& set, const std::string& name, std::vector<std::string>& out) {
  auto* t = set.as_table();
  if (t == nullptr) return r.error(set, "`" + name + "` must be a table of NAME = \"value\"");
  for (const auto& [k, v] : *t) {
    if (auto s = v.value<std::string>()) out.push_back(std::string(k.str()) + "=" + *s);
    else r.error(v, "`" + name + "." + std::string(k.str()) + "` must be a string");
  }
}

// [credentials.NAME]: for = ["HOST", …], source = "env:VAR" (optional), broker = "PORT=https://HOST", set = {…},
// endpoint = "VAR" (optional: the variable of `set` that the user may point elsewhere), endpoint_key = "KEY" (the
// same endpoint in the [config] file).
void read_credentials(Reader& r, const toml::table& credentials, Profile& p) {
  for (const auto& [key, node] : credentials) {
    std::string name(key.str());
    auto* t = node.as_table();
    if (t == nullptr) {
      r.error(node, "`credentials." + name + "` must be a table ([credentials." + name + "])");
      continue;
    }
    r.check_keys(*t, "credentials.NAME");
    Options::ProfileCredential c;
    std::vector<std::string> hosts;
    r.strings(*t, "for", "credentials." + name + ".for", hosts);
    if (hosts.empty()) r.error(node, "`credentials." + name + ".for` must name the hosts that receive the value");
    for (const auto& h : hosts) c.hosts += (c.hosts.empty() ? "" : ",") + h;
    c.secret = name;
    for (auto [field, out] : {std::pair{"source", &c.secret}, {"broker", &c.broker}, {"endpoint", &c.endpoint},
                               {"endpoint_key", &c.endpoint_key}}) {
      const toml::node* n = t->get(field);
      if (n == nullptr) continue;
      if (auto s = n->value<std::string>(); s && !s->empty())
        *out = field == std::string_view("source") ? name + "=" + *s : *s;
      else r.error(*n, "`credentials." + name + "." + field + "` must be a string");
    }
    if (const toml::node* set = t->get("set")) read_assignments(r, *set, "credentials." + name + ".set", c.set_env);
    if (!c.endpoint_key.empty() && c.endpoint.empty())
      r.error(node, "`credentials." + name + ".endpoint_key` needs `endpoint`, the variable it stands beside");
    p.credentials.push_back(std::move(c));
  }
}

struct Parsed {
  Profile profile;
  std::string extends;
};

void read_tables(Reader& r, const toml::table& doc, Profile& p) {
  r.check_keys(doc, "");
  if (auto* fs = doc["filesystem"].as_table()) {
    r.check_keys(*fs, "filesystem");
    r.strings(*fs, "ro", "filesystem.ro", p.ro);
    r.strings(*fs, "rw", "filesystem.rw", p.rw);
    std::vector<std::string> private_dirs;
    r.home_paths(*fs, "private", "filesystem.private", private_dirs);
    for (auto& d : private_dirs) p.private_dirs.push_back({std::move(d), p.name});
    r.home_paths(*fs, "copy", "filesystem.copy", p.copies);
    r.strings(*fs, "tmpfs", "filesystem.tmpfs", p.tmpfs);
    r.strings(*fs, "mask", "filesystem.mask", p.mask);
    r.scalar(*fs, "workspace", "filesystem.workspace", p, Reader::Kind::text);
  }
  if (auto* secrets = doc["secrets"].as_table()) {
    r.check_keys(*secrets, "secrets");
    r.strings(*secrets, "mask", "secrets.mask", p.secret_masks);
    r.strings(*secrets, "skip", "secrets.skip", p.scan_skip);
    r.strings(*secrets, "walk", "secrets.walk", p.scan_walk);
  }
  if (auto* env = doc["environment"].as_table()) {
    r.check_keys(*env, "environment");
    r.strings(*env, "pass", "environment.pass", p.pass_env);
    if (const toml::node* set = env->get("set")) {
      if (auto* t = set->as_table()) {
        for (const auto& [k, v] : *t) {
          if (auto s = v.value<std::string>()) p.set_env.push_back(std::string(k.str()) + "=" + *s);
          else r.error(v, "`environment.set." + std::string(k.str()) + "` must be a string");
        }
      } else {
        r.error(*set, "`environment.set` must be a table of NAME = \"value\"");
      }
    }
  }
  if (auto* credentials = doc["credentials"].as_table()) read_credentials(r, *credentials, p);
  if (auto* net = doc["network"].as_table()) {
    r.check_keys(*net, "network");
    r.scalar(*net, "mode", "network.mode", p, Reader::Kind::text);
    r.strings(*net, "allow", "network.allow", p.allow);
  }
  if (auto* lim = doc["limits"].as_table()) {
    r.check_keys(*lim, "limits");
    for (const auto& k : table_keys("limits")) r.scalar(*lim, k.c_str(), "limits." + k, p, Reader::Kind::text_or_number);
  }
  if (auto* cp = doc["checkpoint"].as_table()) {
    r.check_keys(*cp, "checkpoint");
    r.strings(*cp, "exclude", "checkpoint.exclude", p.checkpoint_exclude);
  }
  if (auto* config = doc["config"].as_table()) {
    r.check_keys(*config, "config");
    r.scalar(*config, "file", "config.file", p, Reader::Kind::text);
    r.scalar(*config, "providers", "config.providers", p, Reader::Kind::text);
  }
  if (auto* sb = doc["sandbox"].as_table()) {
    r.check_keys(*sb, "sandbox");
    r.scalar(*sb, "allow_nested", "sandbox.allow_nested", p, Reader::Kind::boolean);
  }
}

// Parses one file; problems go to `errors` (the caller reports them all).
Parsed parse_one(const std::string& name, const ProfileSource& src, std::vector<std::string>& errors) {
  Parsed out;
  out.profile.name = name;
  auto doc = parse_toml_document(src.text, src.origin, kFormat);
  if (!doc) {
    errors.push_back(doc.error().what);
    return out;
  }
  Reader r{src.origin, errors};
  if (auto d = (*doc)["description"].value<std::string>()) out.profile.description = *d;
  if (const toml::node* e = doc->get("extends")) {
    if (auto s = e->value<std::string>()) out.extends = *s;
    else r.error(*e, "`extends` must be a profile name");
  }
  read_tables(r, *doc, out.profile);
  return out;
}

// The child's lists follow the parent's; a scalar the parent set may not change.
void merge_into(Profile& base, const Profile& child, std::vector<std::string>& errors) {
  for (auto [to, from] : {std::pair{&base.ro, &child.ro}, {&base.rw, &child.rw}, {&base.tmpfs, &child.tmpfs},
                          {&base.mask, &child.mask}, {&base.pass_env, &child.pass_env}, {&base.set_env, &child.set_env},
                          {&base.allow, &child.allow}, {&base.copies, &child.copies},
                          {&base.secret_masks, &child.secret_masks}, {&base.scan_skip, &child.scan_skip},
                          {&base.scan_walk, &child.scan_walk}, {&base.checkpoint_exclude, &child.checkpoint_exclude}})
    to->insert(to->end(), from->begin(), from->end());
  base.private_dirs.insert(base.private_dirs.end(), child.private_dirs.begin(), child.private_dirs.end());
  for (const auto& c : child.credentials) {
    auto name = c.secret.substr(0, c.secret.find('='));
    std::erase_if(base.credentials, [&](const Options::ProfileCredential& old) {
      return old.secret.substr(0, old.secret.find('=')) == name;
    });
    base.credentials.push_back(c);
  }
  for (const auto& [key, s] : child.settings) {
    const ProfileSetting* old = base.setting(key);
    if (old == nullptr) base.settings.push_back({key, s});
    else if (old->value != s.value)
      errors.push_back(s.origin + ": `" + key + "` is already `" + old->value + "` (" + old->origin +
                       "): a profile may only add to the one it extends");
  }
  base.name = child.name;
  if (!child.description.empty()) base.description = child.description;
}

std::string expand_home(const std::string& path, const std::string& home) {
  if (path == "~") return home;
  if (path.starts_with("~/")) return home + path.substr(1);
  return path;
}

// The network mode, hosts and credentials of the profile, unless --net chose a mode without the proxy: then the
// command line wins, and the profile's hosts and credentials (which need the proxy) are set aside, said in one line.
sys::Status apply_network(const Profile& p, Options& o) {
  const auto* mode = p.setting("network.mode");
  std::optional<NetChoice> profile_net;
  if (mode != nullptr) {
    auto parsed = parse_net(mode->value);
    if (!parsed) return sys::plain_error(fmt::format("{}: `network.mode` `{}`: expected {}", mode->origin, mode->value, net_words_text()));
    profile_net = *parsed;
  }
  if (profile_net && !o.net_given) o.net = *profile_net;
  if (o.net_given && profile_net && *profile_net != o.net) {
    if (o.net.mode != NetMode::proxy) {
      std::vector<std::string> unused;
      if (!p.allow.empty()) unused.push_back(fmt::format("its allowed hosts ({})", fmt::join(p.allow, ", ")));
      if (!p.credentials.empty()) unused.push_back("its credentials");
      if (!unused.empty())  // a mode alone changed is what --net says; nothing of the profile's is set aside
        o.profile_overrides.push_back(fmt::format("--net {} replaces profile `{}`'s network.mode = \"{}\" ({}): {} are not used",
                                                  net_word(o.net), p.name, mode->value, mode->origin, fmt::join(unused, " and ")));
      return sys::ok_status();
    }
  }
  o.allow.insert(o.allow.begin(), p.allow.begin(), p.allow.end());
  o.profile_credentials = p.credentials;
  return sys::ok_status();
}

// [config]: the agent's configuration file, one of the profile's copies (the sandbox's copy is the one confine
// points at its brokers; the host's file is only read).
sys::Status apply_agent_config(const Profile& p, const std::string& home, Options& o) {
  const auto* file = p.setting("config.file");
  const auto* providers = p.setting("config.providers");
  bool keyed = std::any_of(p.credentials.begin(), p.credentials.end(),
                           [](const Options::ProfileCredential& c) { return !c.endpoint_key.empty(); });
  if (file == nullptr) {
    if (providers != nullptr) return sys::plain_error(providers->origin + ": `config.providers` needs `config.file`");
    if (keyed) return sys::plain_error("profile `" + p.name + "`: a credential's `endpoint_key` needs `config.file`");
    return sys::ok_status();
  }
  if (std::find(p.copies.begin(), p.copies.end(), file->value) == p.copies.end())
    return sys::plain_error(fmt::format("{}: `config.file` `{}` must be one of `filesystem.copy` (the sandbox's copy is "
                                        "the one pointed at confine's brokers)", file->origin, file->value));
  o.agent_config = Options::AgentConfig{p.name, expand_home(file->value, home), providers ? providers->value : "", {}};
  return sys::ok_status();
}

// The profile's limits where the command line gave none, each checked here, where its file and line are known: an
// error names them and the key, not a flag the user never typed.
sys::Status apply_limits(const Profile& p, Options& o) {
  LimitNames names;
  std::vector<std::pair<std::string, std::string*>> sizes;  // (what to call it, value) of the profile's sizes
  for (auto [key, field, name] :
       {std::tuple{"limits.memory", &o.memory, &names.memory}, {"limits.memory_swap", &o.memory_swap, &names.memory_swap},
        {"limits.pids", &o.pids, &names.pids}, {"limits.cpus", &o.cpus, &names.cpus},
        {"limits.tmpfs_size", &o.tmpfs_size, nullptr}, {"limits.shm_size", &o.shm_size, nullptr}}) {
    const auto* s = p.setting(key);
    if (s == nullptr || !field->empty()) continue;
    *field = s->value;
    auto what = fmt::format("{}: `{}`", s->origin, key);
    if (name != nullptr) *name = what;
    else sizes.emplace_back(what, field);
  }
  if (auto l = parse_limits(o.memory, o.memory_swap, o.pids, o.cpus, names); !l) return l.error();
  for (const auto& [what, value] : sizes)
    if (auto b = parse_size(what, *value); !b) return b.error();
  return sys::ok_status();
}

}  // namespace

const ProfileSetting* Profile::setting(std::string_view key) const {
  for (const auto& [k, s] : settings)
    if (k == key) return &s;
  return nullptr;
}

sys::Result<Profile> load_profile(const std::string& name, const ProfileLookup& lookup, const ProfileNames& names) {
  std::vector<std::string> errors;
  std::vector<Parsed> chain;  // child first
  std::set<std::string> seen;
  std::string next = name, wanted_by;
  while (!next.empty()) {
    if (!seen.insert(next).second) {
      errors.push_back(wanted_by + ": `extends = \"" + next + "\"` makes a cycle");
      break;
    }
    auto src = lookup(next);
    if (!src) {
      errors.push_back((wanted_by.empty() ? std::string("--profile") : wanted_by) + ": no profile named `" + next +
                       "` (built-in, ~/.config/confine/profiles/, /etc/confine/profiles/, or a path to a .toml file)" +
                       (names ? did_you_mean(next, names()) : std::string()));
      break;
    }
    chain.push_back(parse_one(next, *src, errors));
    wanted_by = src->origin;
    next = chain.back().extends;
  }
  Profile merged;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) merge_into(merged, it->profile, errors);
  if (!errors.empty()) {
    // One problem fits on one line; several are listed below the profile's name, one line each.
    std::string all;
    for (const auto& e : errors) all += (all.empty() ? "" : "\n") + e;
    return sys::plain_error("profile `" + name + "`:" + (errors.size() == 1 ? " " : "\n") + all);
  }
  return merged;
}

sys::Status apply_profile(const Profile& p, const std::string& home, Options& o) {
  auto under = [](std::vector<std::string> first, const std::vector<std::string>& then) {
    first.insert(first.end(), then.begin(), then.end());
    return first;
  };
  std::vector<std::string> ro, rw;
  for (const auto& s : p.ro) ro.push_back(expand_home(s, home));
  for (const auto& s : p.rw) {
    auto path = expand_home(s, home);
    if (path.size() > 1 && path.ends_with('/')) o.state_dirs.push_back(path.substr(0, path.size() - 1));
    else rw.push_back(path);
  }
  o.optional_ro_binds = under(ro, o.optional_ro_binds);
  o.optional_rw_binds = under(rw, o.optional_rw_binds);
  for (const auto& d : p.private_dirs) o.private_dirs.push_back({d.profile, expand_home(d.path, home)});
  for (const auto& s : p.copies) o.private_copies.push_back(expand_home(s, home));
  o.tmpfs = under(p.tmpfs, o.tmpfs);
  std::vector<std::string> masks;
  for (const auto& s : p.mask) masks.push_back(expand_home(s, home));
  o.masks = under(masks, o.masks);
  o.pass_env = under(p.pass_env, o.pass_env);
  o.secret_masks = under(p.secret_masks, o.secret_masks);
  o.scan_skip = under(p.scan_skip, o.scan_skip);
  o.scan_walk = under(p.scan_walk, o.scan_walk);
  o.checkpoint_exclude = under(p.checkpoint_exclude, o.checkpoint_exclude);
  o.set_env = under(p.set_env, o.set_env);
  o.set_env.push_back("CONFINE_PROFILE=" + p.name);
  if (auto s = apply_network(p, o); !s) return s;
  if (auto s = apply_agent_config(p, home, o); !s) return s;
  if (const auto* s = p.setting("filesystem.workspace")) {
    if (s->value != "rw" && s->value != "ro") return sys::plain_error(s->origin + ": `filesystem.workspace` must be \"rw\" or \"ro\"");
    if (s->value == "ro") o.workspace_readonly = true;
  }
  if (const auto* s = p.setting("sandbox.allow_nested"); s && s->value == "true" && !o.allow_nested) {
    o.allow_nested = true;
    o.allow_nested_profile = p.name;
  }
  return apply_limits(p, o);
}

}  // namespace confine
