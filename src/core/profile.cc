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

// The keys of the top level, and of each credential's table ([credentials.NAME]); the tables' own keys are
// core/profile_keys.h's. Anything else is an error (a typo must not silently weaken a sandbox).
constexpr std::string_view kTopKeys[] = {"format", "description", "extends", "credentials"};
constexpr std::string_view kCredentialKeys[] = {"for", "source", "broker", "set", "endpoint", "endpoint_key"};

// The tables that hold ProfileKeys, in the table's order.
std::vector<std::string_view> key_tables() {
  std::vector<std::string_view> out;
  for (const auto& k : profile_keys())
    if (std::find(out.begin(), out.end(), k.table) == out.end()) out.push_back(k.table);
  return out;
}

// The keys `table` may hold ("" the top level, "credentials.NAME" a credential's).
std::vector<std::string> table_keys(std::string_view table) {
  std::vector<std::string> out;
  if (table.empty()) {
    out.assign(std::begin(kTopKeys), std::end(kTopKeys));
    for (auto t : key_tables()) out.emplace_back(t);
  } else if (table == "credentials.NAME") {
    out.assign(std::begin(kCredentialKeys), std::end(kCredentialKeys));
  }
  for (const auto& k : profile_keys())
    if (k.table == table) out.emplace_back(k.name);
  return out;
}

bool is_section(std::string_view key) {
  auto tables = key_tables();
  return key == "credentials" || std::find(tables.begin(), tables.end(), key) != tables.end();
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
    auto known = table_keys(table);
    for (const auto& [key, node] : t) {
      std::string k(key.str());
      if (std::find(known.begin(), known.end(), k) == known.end())
        error(node, "unknown key `" + dotted(table, k) + "`" + did_you_mean(dotted(table, k), dotted_keys(table, known)));
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

  void scalar(const toml::node& n, ProfileKey key, Profile& p) {
    auto kind = profile_key(key).value;
    std::string v;
    if (auto s = n.as_string(); s && kind != ProfileValue::boolean) v = s->get();
    else if (auto i = n.as_integer(); i && kind == ProfileValue::text_or_number) v = std::to_string(i->get());
    else if (auto f = n.as_floating_point(); f && kind == ProfileValue::text_or_number) v = fmt::format("{}", f->get());
    else if (auto b = n.as_boolean(); b && kind == ProfileValue::boolean) v = b->get() ? "true" : "false";
    else
      return error(n, "`" + profile_key_text(key) + "` must be " +
                          (kind == ProfileValue::boolean ? "true or false"
                           : kind == ProfileValue::text  ? "a string"
                                                         : "a string or a number"));
    p.settings.push_back({key, {v, at(n)}});
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

// One key of a table, by what it holds.
void read_key(Reader& r, const toml::table& t, const ProfileKeyInfo& k, Profile& p) {
  const toml::node* n = t.get(k.name);
  if (n == nullptr) return;
  auto name = profile_key_text(k.key);
  auto& list = p.lists[k.key];
  switch (k.value) {
    case ProfileValue::strings: return r.strings(t, std::string(k.name).c_str(), name, list);
    case ProfileValue::home_paths: return r.home_paths(t, std::string(k.name).c_str(), name, list);
    case ProfileValue::assignments: return read_assignments(r, *n, name, list);
    case ProfileValue::text:
    case ProfileValue::text_or_number:
    case ProfileValue::boolean: return r.scalar(*n, k.key, p);
  }
}

void read_tables(Reader& r, const toml::table& doc, Profile& p) {
  r.check_keys(doc, "");
  for (auto table : key_tables()) {
    auto* t = doc[table].as_table();
    if (t == nullptr) continue;
    r.check_keys(*t, std::string(table));
    for (const auto& k : profile_keys())
      if (k.table == table) read_key(r, *t, k, p);
  }
  p.private_owners.assign(p.list(ProfileKey::filesystem_private).size(), p.name);
  if (auto* credentials = doc["credentials"].as_table()) read_credentials(r, *credentials, p);
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
  for (const auto& [key, values] : child.lists) {
    auto& to = base.lists[key];
    to.insert(to.end(), values.begin(), values.end());
  }
  base.private_owners.insert(base.private_owners.end(), child.private_owners.begin(), child.private_owners.end());
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
      errors.push_back(s.origin + ": `" + profile_key_text(key) + "` is already `" + old->value + "` (" + old->origin +
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
  const auto* mode = p.setting(ProfileKey::network_mode);
  const auto& allow = p.list(ProfileKey::network_allow);
  const auto& profile_net = p.net;
  if (mode != nullptr && !profile_net)
    return sys::plain_error(fmt::format("{}: `{}` `{}`: expected {}", mode->origin, profile_key_text(ProfileKey::network_mode),
                                        mode->value, net_words_text()));
  if (profile_net && !o.net_given) o.net = *profile_net;
  if (o.net_given && profile_net && *profile_net != o.net) {
    if (o.net.mode != NetMode::proxy) {
      std::vector<std::string> unused;
      if (!allow.empty()) unused.push_back(fmt::format("its allowed hosts ({})", fmt::join(allow, ", ")));
      if (!p.credentials.empty()) unused.push_back("its credentials");
      if (!unused.empty())  // a mode alone changed is what --net says; nothing of the profile's is set aside
        o.profile_overrides.push_back(fmt::format("--net {} replaces profile `{}`'s network.mode = \"{}\" ({}): {} are not used",
                                                  net_word(o.net), p.name, mode->value, mode->origin, fmt::join(unused, " and ")));
      return sys::ok_status();
    }
  }
  o.allow.insert(o.allow.begin(), allow.begin(), allow.end());
  o.profile_credentials = p.credentials;
  return sys::ok_status();
}

// [config]: the agent's configuration file, one of the profile's copies (the sandbox's copy is the one confine
// points at its brokers; the host's file is only read).
sys::Status apply_agent_config(const Profile& p, const std::string& home, Options& o) {
  const auto* file = p.setting(ProfileKey::config_file);
  const auto* providers = p.setting(ProfileKey::config_providers);
  bool keyed = std::any_of(p.credentials.begin(), p.credentials.end(),
                           [](const Options::ProfileCredential& c) { return !c.endpoint_key.empty(); });
  if (file == nullptr) {
    if (providers != nullptr) return sys::plain_error(providers->origin + ": `config.providers` needs `config.file`");
    if (keyed) return sys::plain_error("profile `" + p.name + "`: a credential's `endpoint_key` needs `config.file`");
    return sys::ok_status();
  }
  const auto& copies = p.list(ProfileKey::filesystem_copy);
  if (std::find(copies.begin(), copies.end(), file->value) == copies.end())
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
  for (auto [key, field, name] : {std::tuple{ProfileKey::limits_memory, &o.memory, &names.memory},
                                  {ProfileKey::limits_memory_swap, &o.memory_swap, &names.memory_swap},
                                  {ProfileKey::limits_pids, &o.pids, &names.pids},
                                  {ProfileKey::limits_cpus, &o.cpus, &names.cpus},
                                  {ProfileKey::limits_tmpfs_size, &o.tmpfs_size, nullptr},
                                  {ProfileKey::limits_shm_size, &o.shm_size, nullptr}}) {
    const auto* s = p.setting(key);
    if (s == nullptr || !field->empty()) continue;
    *field = s->value;
    auto what = fmt::format("{}: `{}`", s->origin, profile_key_text(key));
    if (name != nullptr) *name = what;
    else sizes.emplace_back(what, field);
  }
  if (auto l = parse_limits(o.memory, o.memory_swap, o.pids, o.cpus, names); !l) return l.error();
  for (const auto& [what, value] : sizes)
    if (auto b = parse_size(what, *value); !b) return b.error();
  return sys::ok_status();
}

// The profile's entries first, the command line's after them.
void put_first(const std::vector<std::string>& profile, std::vector<std::string>& given) {
  given.insert(given.begin(), profile.begin(), profile.end());
}

std::vector<std::string> expanded(const std::vector<std::string>& paths, const std::string& home) {
  std::vector<std::string> out;
  for (const auto& s : paths) out.push_back(expand_home(s, home));
  return out;
}

// What one key of the profile does to the options. The scalars the command line may set are the profile's only
// where it left them unset; the network and the limits are applied together below (each checks with the others).
sys::Status apply_key(const Profile& p, ProfileKey key, const std::string& home, Options& o) {
  const auto& list = p.list(key);
  switch (key) {
    case ProfileKey::filesystem_ro: put_first(expanded(list, home), o.optional_ro_binds); break;
    case ProfileKey::filesystem_rw: {
      std::vector<std::string> rw;
      for (const auto& path : expanded(list, home)) {
        if (path.size() > 1 && path.ends_with('/')) o.state_dirs.push_back(path.substr(0, path.size() - 1));
        else rw.push_back(path);
      }
      put_first(rw, o.optional_rw_binds);
      break;
    }
    case ProfileKey::filesystem_private:
      for (std::size_t i = 0; i < list.size(); ++i) o.private_dirs.push_back({p.private_owners[i], expand_home(list[i], home)});
      break;
    case ProfileKey::filesystem_copy:
      for (const auto& path : expanded(list, home)) o.private_copies.push_back(path);
      break;
    case ProfileKey::filesystem_tmpfs: put_first(list, o.tmpfs); break;
    case ProfileKey::filesystem_mask: put_first(expanded(list, home), o.masks); break;
    case ProfileKey::filesystem_workspace:
      if (const auto* s = p.setting(key)) {
        if (s->value != "rw" && s->value != "ro")
          return sys::plain_error(s->origin + ": `" + profile_key_text(key) + "` must be \"rw\" or \"ro\"");
        if (s->value == "ro") o.workspace_readonly = true;
      }
      break;
    case ProfileKey::secrets_mask: put_first(list, o.secret_masks); break;
    case ProfileKey::secrets_skip: put_first(list, o.scan_skip); break;
    case ProfileKey::secrets_walk: put_first(list, o.scan_walk); break;
    case ProfileKey::environment_pass: put_first(list, o.pass_env); break;
    case ProfileKey::environment_set: put_first(list, o.set_env); break;
    case ProfileKey::network_mode: return apply_network(p, o);
    case ProfileKey::network_allow: break;  // with network.mode, which decides whether the hosts are used
    case ProfileKey::limits_memory:
    case ProfileKey::limits_memory_swap:
    case ProfileKey::limits_pids:
    case ProfileKey::limits_cpus:
    case ProfileKey::limits_tmpfs_size:
    case ProfileKey::limits_shm_size: break;  // all at once in apply_limits
    case ProfileKey::sandbox_allow_nested:
      if (const auto* s = p.setting(key); s && s->value == "true" && !o.allow_nested) {
        o.allow_nested = true;
        o.allow_nested_profile = p.name;
      }
      break;
    case ProfileKey::devices_device: put_first(list, o.devices); break;
    case ProfileKey::devices_gpus:
      if (const auto* s = p.setting(key); s && s->value.empty())
        return sys::plain_error(fmt::format("{}: `{}` is empty (all, a count, or device=ID,...)", s->origin, profile_key_text(key)));
      else if (s && o.gpus.empty()) o.gpus = s->value;  // --gpus wins
      break;
    case ProfileKey::checkpoint_exclude: put_first(list, o.checkpoint_exclude); break;
    case ProfileKey::config_file: return apply_agent_config(p, home, o);
    case ProfileKey::config_providers: break;  // with config.file
  }
  return sys::ok_status();
}

}  // namespace

const std::vector<std::string>& Profile::list(ProfileKey key) const {
  static const std::vector<std::string> none;
  auto it = lists.find(key);
  return it == lists.end() ? none : it->second;
}

const ProfileSetting* Profile::setting(ProfileKey key) const {
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
  if (const auto* mode = merged.setting(ProfileKey::network_mode))
    if (auto chosen = parse_net(mode->value)) merged.net = *chosen;
  if (!errors.empty()) {
    // One problem fits on one line; several are listed below the profile's name, one line each.
    std::string all;
    for (const auto& e : errors) all += (all.empty() ? "" : "\n") + e;
    return sys::plain_error("profile `" + name + "`:" + (errors.size() == 1 ? " " : "\n") + all);
  }
  return merged;
}

sys::Status apply_profile(const Profile& p, const std::string& home, Options& o) {
  for (const auto& k : profile_keys())
    if (auto s = apply_key(p, k.key, home, o); !s) return s;
  o.set_env.push_back("CONFINE_PROFILE=" + p.name);
  return apply_limits(p, o);
}

}  // namespace confine
