#include "core/devices.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "sys/unique_fd.h"

namespace confine {
namespace {

sys::Result<DeviceAccess> parse_access(std::string_view perms, std::string_view spec) {
  DeviceAccess a{false, false, false};
  for (char c : perms) {
    bool* bit = c == 'r' ? &a.read : c == 'w' ? &a.write : c == 'm' ? &a.mknod : nullptr;
    if (bit == nullptr || *bit)
      return sys::plain_error(fmt::format("--device `{}`: permissions `{}`: expected r, w and m, each once", spec, perms));
    *bit = true;
  }
  if (!a.read && !a.write)
    return sys::plain_error(fmt::format("--device `{}`: permissions `{}` grant neither r nor w", spec, perms));
  // Inside the sandbox Landlock checks writes, not reads (the mount view keeps what is unreadable out of sight):
  // nothing would keep a device given w from being read.
  if (!a.read)
    return sys::plain_error(fmt::format("--device `{}`: permissions `{}`: a device cannot be given write-only (use rw)", spec, perms));
  return a;
}

bool absolute_path(std::string_view p) { return !p.empty() && p.front() == '/'; }

// VENDOR/CLASS=NAME, as CDI names a device: a vendor domain, a class, a name of letters, digits, _ . : -.
bool cdi_name_like(std::string_view spec) {
  auto eq = spec.find('='), slash = spec.find('/');
  return eq != std::string_view::npos && slash != std::string_view::npos && slash > 0 && slash < eq && !absolute_path(spec);
}

bool valid_cdi_part(std::string_view s, std::string_view extra) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || extra.find(c) != std::string_view::npos;
  });
}

std::string node_text(const YAML::Node& n, const char* key) {
  auto v = n[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// A spec's entries, all devices together: yaml-cpp shares an aliased node (an anchor) without copying it, but the
// edits read from it are copies, so a small file could name billions. No real spec comes near this.
constexpr std::size_t kMaxSpecEntries = 4096;

sys::Result<CdiEdits> parse_edits(const YAML::Node& node, const std::string& where, std::size_t& entries) {
  CdiEdits out;
  auto count = [&](const YAML::Node& list) {
    entries += list ? list.size() : 0;
    return entries <= kMaxSpecEntries;
  };
  if (node && node.IsMap() && (!count(node["env"]) || !count(node["deviceNodes"]) || !count(node["mounts"])))
    return sys::plain_error(fmt::format("{}: more than {} device nodes, mounts and variables", where, kMaxSpecEntries));
  if (!node) return out;
  if (!node.IsMap()) return sys::plain_error(where + ": containerEdits is not a mapping");
  if (auto env = node["env"]) {
    for (const auto& e : env) {
      auto text = e.IsScalar() ? e.as<std::string>() : std::string();
      if (text.find('=') == std::string::npos || text.front() == '=')
        return sys::plain_error(where + ": env entry `" + text + "` is not NAME=value");
      out.env.push_back(text);
    }
  }
  for (const auto& d : node["deviceNodes"]) {
    CdiEdits::Node n;
    n.path = node_text(d, "path");
    n.host_path = node_text(d, "hostPath");
    if (n.host_path.empty()) n.host_path = n.path;
    if (!absolute_path(n.path) || !absolute_path(n.host_path))
      return sys::plain_error(where + ": a device node without an absolute path");
    if (d["permissions"] && !d["permissions"].IsScalar())
      return sys::plain_error(where + ": a device node's permissions are not a string");
    auto perms = node_text(d, "permissions");
    auto access = parse_access(perms.empty() ? "rwm" : perms, n.path);
    if (!access) return sys::plain_error(where + ": " + access.error().message());
    n.access = *access;
    out.nodes.push_back(std::move(n));
  }
  for (const auto& m : node["mounts"]) {
    CdiEdits::Mount mount{node_text(m, "hostPath"), node_text(m, "containerPath")};
    if (!absolute_path(mount.host_path) || !absolute_path(mount.container_path))
      return sys::plain_error(where + ": a mount without absolute hostPath and containerPath");
    for (const auto& o : m["options"])
      if (o.IsScalar() && o.as<std::string>() == "rw") mount.writable = true;
    out.mounts.push_back(std::move(mount));
  }
  if (auto hooks = node["hooks"]) out.hooks = hooks.size();
  return out;
}

void append(CdiEdits& to, const CdiEdits& from) {
  to.nodes.insert(to.nodes.end(), from.nodes.begin(), from.nodes.end());
  to.mounts.insert(to.mounts.end(), from.mounts.begin(), from.mounts.end());
  to.env.insert(to.env.end(), from.env.begin(), from.env.end());
  to.hooks += from.hooks;
}

}  // namespace

sys::Result<DeviceRequest> parse_device_request(std::string_view spec) {
  DeviceRequest r;
  if (cdi_name_like(spec)) {
    auto eq = spec.find('=');
    r.cdi_kind = std::string(spec.substr(0, eq));
    r.cdi_name = std::string(spec.substr(eq + 1));
    auto slash = r.cdi_kind.find('/');
    if (!valid_cdi_part(r.cdi_kind.substr(0, slash), ".-") || !valid_cdi_part(r.cdi_kind.substr(slash + 1), "_.-") ||
        !valid_cdi_part(r.cdi_name, "_.:-"))
      return sys::plain_error(fmt::format("--device `{}`: a CDI device is named VENDOR/CLASS=NAME (nvidia.com/gpu=0)", spec));
    return r;
  }
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    auto colon = spec.find(':', start);
    parts.push_back(spec.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts.size() > 3 || !absolute_path(parts[0]))
    return sys::plain_error(fmt::format("--device `{}`: expected SRC[:DEST[:PERMS]] with an absolute SRC, or VENDOR/CLASS=NAME", spec));
  r.path = std::string(parts[0]);
  r.dest = r.path;
  // docker reads a second part without a slash as the permissions: --device /dev/fuse:rw.
  if (parts.size() == 2 && !absolute_path(parts[1])) parts.push_back(parts[1]), parts[1] = parts[0];
  if (parts.size() >= 2) {
    if (!absolute_path(parts[1]))
      return sys::plain_error(fmt::format("--device `{}`: DEST `{}` is not an absolute path", spec, parts[1]));
    r.dest = std::string(parts[1]);
  }
  if (parts.size() == 3) {
    auto access = parse_access(parts[2], spec);
    if (!access) return access.error();
    r.access = *access;
  }
  return r;
}

sys::Result<GpuRequest> parse_gpus(std::string_view gpus) {
  auto bad = [&] {
    return sys::plain_error(fmt::format("--gpus `{}`: expected all, a count, or device=ID[,ID...]", gpus));
  };
  GpuRequest r;
  if (gpus == "all") {
    r.all = true;
    return r;
  }
  if (gpus.starts_with("device=")) {
    auto ids = gpus.substr(std::string_view("device=").size());
    for (std::size_t start = 0; start <= ids.size();) {
      auto comma = std::min(ids.find(',', start), ids.size());
      auto id = ids.substr(start, comma - start);
      if (!valid_cdi_part(id, "_.:-")) return bad();
      r.ids.emplace_back(id);
      start = comma + 1;
    }
    return r;
  }
  auto [end, ec] = std::from_chars(gpus.data(), gpus.data() + gpus.size(), r.count);
  if (ec != std::errc() || end != gpus.data() + gpus.size() || r.count == 0) return bad();
  return r;
}

sys::Result<std::vector<std::string>> gpu_cdi_names(const GpuRequest& r, const std::vector<std::string>& names) {
  if (r.all) return std::vector<std::string>{"all"};
  if (!r.ids.empty()) return r.ids;
  std::vector<std::string> numbered;
  for (const auto& name : names)
    if (name != "all") numbered.push_back(name);
  if (numbered.size() < r.count)
    return sys::plain_error(fmt::format("--gpus {}: the CDI specs name {} GPU{}", r.count, numbered.size(), numbered.size() == 1 ? "" : "s"));
  numbered.resize(r.count);
  return numbered;
}

// yaml-cpp parses nested flow collections ([[[...]]]) by recursion: a spec nested deeper than a real one ever is
// is refused before it could exhaust the stack.
constexpr int kMaxFlowDepth = 64;

bool flow_depth_ok(const std::string& text) {
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    else if (c == '[' || c == '{') ++depth;
    else if ((c == ']' || c == '}') && depth > 0) --depth;
    if (depth > kMaxFlowDepth) return false;
  }
  return true;
}

sys::Result<CdiSpec> parse_cdi_spec(const std::string& text, const std::string& source) {
  if (!flow_depth_ok(text))
    return sys::plain_error(fmt::format("CDI spec {}: nested deeper than {} levels", source, kMaxFlowDepth));
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return sys::plain_error(fmt::format("CDI spec {}: {}", source, e.what()));
  }
  try {
    if (!doc.IsMap()) return sys::plain_error("CDI spec " + source + ": not a mapping");
    CdiSpec spec;
    spec.source = source;
    spec.kind = node_text(doc, "kind");
    auto slash = spec.kind.find('/');
    if (slash == std::string::npos || !valid_cdi_part(spec.kind.substr(0, slash), ".-") ||
        !valid_cdi_part(spec.kind.substr(slash + 1), "_.-"))
      return sys::plain_error(fmt::format("CDI spec {}: kind `{}` is not VENDOR/CLASS", source, spec.kind));
    std::size_t entries = 0;
    auto common = parse_edits(doc["containerEdits"], "CDI spec " + source, entries);
    if (!common) return common.error();
    spec.common = std::move(*common);
    for (const auto& d : doc["devices"]) {
      CdiSpec::Device device{node_text(d, "name"), {}};
      if (!valid_cdi_part(device.name, "_.:-"))
        return sys::plain_error(fmt::format("CDI spec {}: device name `{}` is not valid", source, device.name));
      auto edits = parse_edits(d["containerEdits"], fmt::format("CDI spec {}, device {}", source, device.name), entries);
      if (!edits) return edits.error();
      device.edits = std::move(*edits);
      spec.devices.push_back(std::move(device));
    }
    return spec;
  } catch (const YAML::Exception& e) {
    return sys::plain_error(fmt::format("CDI spec {}: {}", source, e.what()));
  }
}

std::vector<std::string> cdi_device_names(const std::vector<CdiSpec>& specs, const std::string& kind) {
  std::set<std::string> names;
  for (const auto& s : specs)
    if (s.kind == kind)
      for (const auto& d : s.devices) names.insert(d.name);
  return {names.begin(), names.end()};
}

sys::Result<CdiEdits> cdi_edits(const std::vector<CdiSpec>& specs, const std::string& kind, const std::string& name) {
  auto names = cdi_device_names(specs, kind);
  if (names.empty())
    return sys::plain_error(fmt::format("no CDI spec for {}", kind));
  bool every = name == "all" && std::find(names.begin(), names.end(), "all") == names.end();
  CdiEdits out;
  bool found = false;
  // A later spec's device of the same name replaces an earlier one's (/var/run/cdi after /etc/cdi).
  for (auto s = specs.rbegin(); s != specs.rend(); ++s) {
    if (s->kind != kind) continue;
    bool used = false;
    for (const auto& d : s->devices) {
      if (!every && (d.name != name || found)) continue;
      append(out, d.edits);
      used = found = true;
    }
    if (used) append(out, s->common);
  }
  if (!found)
    return sys::plain_error(fmt::format("no CDI device {}={} (the specs have: {})", kind, name, fmt::join(names, ", ")));
  return out;
}

sys::Result<std::string> host_device_node(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return sys::errno_error(fmt::format("--device `{}`", path));
  if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
    return sys::plain_error(fmt::format("--device `{}`: not a device file (a character or block device)", path));
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return sys::errno_error(fmt::format("--device `{}`", path));
  std::string out = real;
  std::free(real);
  return out;
}

namespace {

constexpr off_t kMaxSpecBytes = 1 << 20;

bool spec_file_name(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".yaml") || name.ends_with(".yml");
}

// Why `st` (a spec or its directory) is not to be trusted; empty: it is.
std::string untrusted(const struct stat& st, uid_t caller) {
  if (st.st_uid != 0 && st.st_uid != caller) return "owned by another user";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "writable by others";
  return {};
}

// One spec file, read through its directory's fd without following a link.
sys::Result<std::string> read_spec(int dir, const std::string& name, uid_t caller) {
  sys::UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return sys::errno_error("open");
  if (!S_ISREG(st.st_mode)) return sys::plain_error("not a regular file");
  if (auto why = untrusted(st, caller); !why.empty()) return sys::plain_error(why);
  if (st.st_size > kMaxSpecBytes) return sys::plain_error("larger than 1 MiB");
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  if (::read(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) return sys::errno_error("read");
  return text;
}

// The path the kernel has for the open directory `fd`, empty if it has none.
std::string real_path_of(int fd) {
  char buf[PATH_MAX];
  auto n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), buf, sizeof buf);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buf || buf[0] != '/') return {};
  return std::string(buf, static_cast<std::size_t>(n));
}

std::vector<std::string> spec_names(int dir) {
  std::vector<std::string> names;
  sys::UniqueFd copy(::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* d = copy.valid() ? ::fdopendir(copy.get()) : nullptr;
  if (d == nullptr) return names;
  [[maybe_unused]] int owned_by_dir = copy.release();
  while (const dirent* e = ::readdir(d))
    if (spec_file_name(e->d_name)) names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

CdiSpecs load_cdi_specs(const std::vector<std::string>& dirs, uid_t caller,
                        const std::function<bool(const std::string&)>& reachable) {
  CdiSpecs out;
  for (const auto& dir : dirs) {
    sys::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) continue;  // no specs there (a machine without CDI has neither directory)
    struct stat st {};
    std::string why = ::fstat(fd.get(), &st) != 0 ? std::strerror(errno) : untrusted(st, caller);
    // Judged where the directory is, not by the name given: a link, `//` or `/./` must not lead into the workspace
    // unseen.
    auto real = real_path_of(fd.get());
    if (why.empty() && real.empty()) why = "its real path cannot be read";
    if (why.empty() && reachable(real)) why = "the sandbox could write there";
    if (!why.empty()) {
      out.skipped.push_back(fmt::format("{} ({})", dir, why));
      continue;
    }
    for (const auto& name : spec_names(fd.get())) {
      auto path = dir + "/" + name;
      auto text = read_spec(fd.get(), name, caller);
      auto spec = text ? parse_cdi_spec(*text, path) : sys::Result<CdiSpec>(text.error());
      if (spec) out.specs.push_back(std::move(*spec));
      else out.skipped.push_back(text ? spec.error().message() : fmt::format("{} ({})", path, text.error().message()));
    }
  }
  return out;
}

}  // namespace confine
