#include "core/report.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>

#include "sys/landlock_abi.h"

namespace confine {
namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::vector<std::string> mounts_of(const Plan& plan, MountKind kind, bool read_only) {
  std::vector<std::string> out;
  for (const auto& m : plan.mounts)
    if (m.kind == kind && m.read_only == read_only && m.beneath.empty() && m.dest != plan.workspace) out.push_back(m.dest);
  return out;
}

bool writable_bind(const Plan& plan, const MountOp& m) {
  return m.kind == MountKind::bind && !m.read_only && !m.devices && m.beneath.empty() && m.dest != plan.workspace;
}

// Host paths bound writable at their own path besides the workspace (--rw, a profile's state directories); device
// nodes aside.
std::vector<std::string> writable_binds(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& m : plan.mounts)
    if (writable_bind(plan, m) && m.source == m.dest && m.dest != "/proc") out.push_back(m.dest);
  return out;
}

const char* identity_note(const Policy& p, const Enforcement& e) {
  if (!p.ids.run_by_root) return "";
  if (e.stand_ins.owner_identity) return " (run by root where no idmapped mount is allowed: the workspace's owner)";
  return " (run by root: the workspace is an idmapped mount)";
}

// What the sandbox sees at a path of its own, apart from the host's file there: a writable bind of another
// directory (a profile's private cache, --rw SRC:DEST) or a private copy.
std::vector<std::string> own_paths(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& m : plan.mounts) {
    if (writable_bind(plan, m) && m.source != m.dest) out.push_back(m.dest + " (from " + m.source + ")");
    if (m.kind == MountKind::copy) out.push_back(m.dest + " (a copy)");
  }
  return out;
}

// "r", "w" or "rw".
std::string access_text(const DeviceAccess& a) { return std::string(a.read ? "r" : "") + (a.write ? "w" : ""); }

std::string device_text(const HostDevice& d) {
  return fmt::format("{}{} ({}; {})", d.source, d.dest == d.source ? "" : " at " + d.dest, access_text(d.access), d.asked_as);
}

std::string device_json(const HostDevice& d) {
  return fmt::format(R"({{"source":{},"dest":{},"access":{},"asked_as":{}}})", json_string(d.source), json_string(d.dest),
                     json_string(access_text(d.access)), json_string(d.asked_as));
}

std::vector<std::string> masked(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& m : plan.mounts)
    if (m.kind == MountKind::mask) out.push_back(m.dest);
  return out;
}

std::vector<std::string> seccomp_groups(const Policy& p, Mode mode) {
  std::vector<std::string> out;
  auto selected = select_seccomp_rules(seccomp_policy(p.protection), p.protection.allow_nested, mode == Mode::full);
  for (const auto& r : selected.rules)
    if (!restates_default(selected, r)) out.push_back(r.group + " -> " + r.action.text);
  return out;
}

std::string net_name(const Policy& p) {
  return std::string(net_word({p.net, p.proxy.over_veth}));
}

std::string net_text(const Policy& p) {
  if (p.net == NetMode::none) return "none: loopback only";
  if (p.net == NetMode::host) return "host: shared with the host (no isolation)";
  std::vector<std::string> allowed;
  for (const auto& e : p.proxy.allow.entries()) allowed.push_back(e.text);
  auto where = p.proxy.over_veth ? fmt::format("{}:{} over a veth pair", kVethProxyAddress, kProxyPort)
                                 : fmt::format("127.0.0.1:{} inside", kProxyPort);
  auto text = fmt::format("proxy at {}; and by name: DNS at {} gives each allowed name a local address, and TCP to it on "
                          "a port allowed for the name is relayed (for `name:*`: ports 80 and 443); other names do not "
                          "exist, and no UDP but DNS leaves (HTTP/3 falls back to TCP); allowed: {}",
                          where, kDnsStubAddress, allowed.empty() ? "nothing" : join(allowed, " "));
  std::vector<std::string> rules;
  for (const auto& r : p.proxy.rules.rules()) rules.push_back(r.text);
  if (!rules.empty()) text += "; only these requests to their hosts: " + join(rules, ", ");
  return text;
}

// Which variables hold placeholders and where their real values go (never the values, nor the placeholders).
std::string secrets_text(const NetPolicy& net) {
  std::vector<std::string> out;
  for (const auto& s : net.secrets) {
    std::vector<std::string> plain;
    for (const auto& p : s.plain_http) plain.push_back(fmt::format("{}:{}", p.host, p.port));
    out.push_back(fmt::format("{} (a placeholder; the real value only in request headers to {}{})", s.name,
                              join(s.hosts, " "),
                              plain.empty() ? "" : ", in plain HTTP off this machine only to " + join(plain, " ")));
  }
  return join(out, ", ");
}

std::string brokers_text(const NetPolicy& net) {
  std::vector<std::string> out;
  for (const auto& b : net.brokers)
    out.push_back(fmt::format("http://127.0.0.1:{} inside -> https://{}:{} (certificate verified)", b.local_port, b.host, b.port));
  return join(out, ", ");
}

// "127.0.0.1:3000 -> 127.0.0.1:8000 inside (this host only)": who can connect is what the user weighs.
std::string published_text(const PublishedPort& port) {
  bool loopback = port.host_ipv6 ? port.host_address == "::1" : port.host_address.starts_with("127.");
  auto who = port.reachable_from_network() ? "every address of the host: reachable from the network"
             : loopback                    ? "this host only"
                                           : "reachable from the network at that address";
  return fmt::format("{} -> 127.0.0.1:{} inside ({})", port.host_endpoint(), port.port, who);
}

std::string promise_state(const Promise& pr) {
  if (!pr.requested) return "off ";
  return pr.kept() ? "kept" : "LOST";
}

std::vector<std::string> enforcer_texts(const Promise& p) {
  std::vector<std::string> out;
  for (const auto& e : p.enforced_by) out.push_back(enforcer_text(e));
  return out;
}

std::string promise_json(const Promise& p) {
  return fmt::format(R"({{"id":{},"text":{},"requested":{},"kept":{},"enforced_by":{},"note":{}}})", json_string(promise_id_name(p.id)),
                     json_string(p.text), p.requested, p.kept(), json_array(enforcer_texts(p)), json_string(p.note));
}

}  // namespace

// Length of the valid UTF-8 sequence starting at s[i], or 0. Valid as RFC 3629 says: no overlong form, no
// surrogate, nothing past U+10FFFF (a strict reader of the line refuses each).
std::size_t utf8_sequence(const std::string& s, std::size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  auto second = static_cast<unsigned char>(s[i + 1]);
  if ((c == 0xe0 && second < 0xa0) || (c == 0xf0 && second < 0x90)) return 0;  // overlong
  if (c == 0xed && second > 0x9f) return 0;                                     // a surrogate
  if (c == 0xf4 && second > 0x8f) return 0;                                     // past U+10FFFF
  return n;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // Bytes from the sandbox may be anything: valid UTF-8 passes, any other byte becomes \u00XX.
      if (auto n = utf8_sequence(s, i); n > 0) {
        out.append(s, i, n);
        i += n - 1;
      } else {
        out += fmt::format("\\u{:04x}", c);
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string json_array(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& i : items) quoted.push_back(json_string(i));
  return "[" + join(quoted, ",") + "]";
}

std::string probe_table(const std::vector<ProbeRow>& rows) {
  std::string out;
  for (const auto& r : rows) out += fmt::format("{:<16} {:<8} {}\n", r.name, r.status, r.detail);
  return out;
}

std::string probe_json(const std::vector<ProbeRow>& rows) {
  std::vector<std::string> items;
  for (const auto& r : rows) {
    auto controllers = r.controllers ? fmt::format(R"(,"controllers":{{"usable":{},"missing":{}}})",
                                                   json_array(r.controllers->usable), json_array(r.controllers->missing))
                                     : std::string();
    items.push_back(fmt::format(R"({}:{{"status":{},"detail":{}{}}})", json_string(r.name), json_string(r.status),
                                json_string(r.detail), controllers));
  }
  return "{" + join(items, ",") + "}\n";
}

StartReport start_report(const Enforcement& e, const PlanInputs& in) {
  StartReport r;
  // Every name masked, as the start line counts them (a secret-named link and where it leads are two).
  auto count = [&](const SecretScan& scan) {
    for (const auto& m : scan.masks) ++(m.type == S_IFDIR ? r.masked_dirs : r.masked_files);
  };
  count(in.secrets);
  for (const auto& b : in.bind_secrets) count(b.scan);
  r.status_mode = mode_name(e.mode);
  r.status_layers = e.layers_applied();
  r.landlock_abi = e.use_landlock ? e.landlock_abi : 0;
  r.status_lost = e.lost();
  return r;
}

std::string status_line(const StartReport& r, pid_t sandbox_pid, const std::string& version) {
  return fmt::format(R"({{"confine":{},"event":"started","pid":{},"mode":{},"layers":{},"landlock_abi":{},"lost":{}}})",
                     json_string(version), sandbox_pid, json_string(r.status_mode), json_array(r.status_layers),
                     r.landlock_abi, json_array(r.status_lost)) + "\n";
}

namespace {

// What the run's refusals go to, and what of them goes unseen.
std::string refusals_text(const Policy& p, const Plan& plan) {
  std::string recorded = "network, limits, git state set aside";
  if (!plan.seccomp.notifying.empty()) recorded = "syscalls (answered by confine), " + recorded;
  if (std::any_of(plan.mounts.begin(), plan.mounts.end(), [](const MountOp& m) { return m.kind == MountKind::mask; }))
    recorded += ", masked names opened";
  std::string where = p.report.log_file.empty() ? "counted at exit" : "to " + p.report.log_file + ", counted at exit";
  if (plan.denial_log) where += fmt::format(", read inside at {} (${})", kDenialLogPath, kDenialLogVariable);
  auto text = "recorded: " + recorded + "; " + where;
  if (!plan.seccomp.code.empty() && plan.seccomp.notifying.empty())
    text += p.protection.allow_nested ? "; refused syscalls are not (--allow-nested: a nested sandbox may need its own listener)"
                                      : "; refused syscalls are not (the --seccomp policy refuses the handover)";
  return text;
}

// What the Landlock domain restricts beyond its path rules, as the explain line lists it.
std::string landlock_uses(const Plan& plan) {
  namespace ll = sys::landlock;
  const auto& l = plan.landlock;
  std::string out;
  if ((l.handled_fs & ll::kFsResolveUnix) != 0) out += ", unix socket files outside the writable paths refused";
  const char* protocols = (l.handled_net & ll::kNetBindUdp) != 0 ? "TCP and UDP" : "TCP";
  if (l.handled_net != 0 && plan.seccomp.gates_network)
    out += fmt::format(", {} bind/connect only through confine (checked against the allowlist)", protocols);
  else if (l.handled_net != 0)
    out += fmt::format(", {} bind/connect denied", protocols);
  if (l.scoped != 0) out += ", abstract sockets and signals scoped";
  return out;
}

}  // namespace

std::string explain_text(const Policy& p, const Plan& plan, const Enforcement& e) {
  std::string out;
  auto line = [&](const std::string& k, const std::string& v) { out += fmt::format("{:<12} {}\n", k, v); };
  line("mode", e.mode == Mode::full ? "full: user, mount, pid, ipc, uts, cgroup namespaces" +
                                          std::string(plan.new_netns ? ", network namespace" : "")
                                    : "fallback: no namespaces (Landlock + seccomp + no_new_privs)");
  line("command", join(p.proc.argv, " "));
  line("profile", p.profile_name);
  line("workspace", p.fs.workspace + (p.fs.workspace_readonly ? " (read-only" : " (read-write") + "; the working directory)");
  if (e.mode == Mode::full)
    line("identity", fmt::format("uid {} gid {} inside; host uid {}{}", plan.ids.inside_uid, plan.ids.inside_gid,
                                 plan.ids.host_uid, identity_note(p, e)));
  else
    line("identity", fmt::format("host uid {} gid {} (no user namespace)", plan.ids.host_uid, plan.ids.host_gid));
  line("network", net_text(p));
  if (!p.proxy.secrets.empty()) line("secrets", secrets_text(p.proxy));
  if (!p.proxy.brokers.empty()) line("brokers", brokers_text(p.proxy));
  for (std::size_t i = 0; i < plan.published.size(); ++i) line(i == 0 ? "published" : "", published_text(plan.published[i]));
  if (e.mode == Mode::full) {
    line("read-only", join(mounts_of(plan, MountKind::bind, true), " "));
    if (auto rw = writable_binds(plan); !rw.empty()) line("read-write", join(rw, " "));
    if (auto own = own_paths(plan); !own.empty()) line("own", join(own, " "));
    line("private", join(mounts_of(plan, MountKind::tmpfs, false), " ") + " (tmpfs)");
    if (e.stand_ins.container_proc) line("/proc", "the container's, read-only, with its masks (it refuses a fresh one)");
    line("hidden", "/home/* /root and every other top-level host path not listed above");
    auto m = masked(plan);
    line("masked", m.empty() ? "no secret files found" : join(m, " "));
    line("not walked", join(p.fs.secret_names.skipped_dir_names(), " ") + " (searched for private keys only)");
  }
  for (const auto& d : p.fs.devices) line("device", device_text(d));
  if (p.limits.any()) line("limits", describe_limits(p.limits));
  line("environment", p.proc.dropped_env.empty() ? "no credential variables found"
                                                 : fmt::format("dropped: {}", join(p.proc.dropped_env, " ")));
  // --allow-nested in full mode: no filesystem right handled (a domain that handles one refuses every mount).
  constexpr const char* kNestedStepBack = "no filesystem rules (--allow-nested: they would refuse the command's own mounts)";
  if (e.use_landlock && plan.landlock.abi == 0) {
    line("landlock", std::string("not applied: ") + kNestedStepBack);
  } else if (e.use_landlock) {
    auto missing = landlock_rights_missing(plan.landlock.abi, e.mode == Mode::fallback);
    auto rules = plan.landlock.handled_fs != 0 ? fmt::format("{} path rules", plan.landlock.rules.size())
                                               : std::string(kNestedStepBack);
    line("landlock", fmt::format("ABI {}, {}{}", plan.landlock.abi, rules, landlock_uses(plan)));
    if (!missing.empty()) line("", "this ABI cannot restrict: " + join(missing, "; "));
  } else {
    line("landlock", "not applied");
  }
  line("seccomp", e.use_seccomp ? fmt::format("{} ({} BPF instructions, other ABIs killed)", seccomp_policy(p.protection).source,
                                              plan.seccomp.code.size())
                                : "not applied");
  for (const auto& g : seccomp_groups(p, e.mode)) line("", g);
  line("refusals", refusals_text(p, plan));
  out += "\npromises\n";
  for (const auto& pr : e.promises)
    out += fmt::format("  {}  {}\n        {}\n", promise_state(pr), pr.text,
                       pr.kept() && pr.requested ? "by " + join(enforcer_texts(pr), " + ") : pr.note);
  auto lost = e.lost();
  out += "\nnot enforced on this machine: " + std::string(lost.empty() ? "nothing" : "") + "\n";
  for (const auto& l : lost) out += "  - " + l + "\n";
  return out;
}

std::string explain_steps(const Plan& plan) {
  std::string out = "\nsteps, in order\n";
  auto list = [&](const char* who, const auto& steps) {
    for (const auto& s : steps) out += fmt::format("  {:<8} {}\n", who, describe(plan, s));
  };
  // The parent's steps around the sandbox's: pid 1 and the command run theirs between send_go and supervise.
  auto go = std::find_if(plan.parent_steps.begin(), plan.parent_steps.end(),
                         [](const ParentStep& s) { return s.kind == ParentStepKind::send_go; });
  auto after_go = go == plan.parent_steps.end() ? go : go + 1;
  list("confine", std::vector<ParentStep>(plan.parent_steps.begin(), after_go));
  list("init", plan.init_steps);
  list("command", plan.command_steps);
  list("confine", std::vector<ParentStep>(after_go, plan.parent_steps.end()));
  return out;
}

std::string explain_json(const Policy& p, const Plan& plan, const Enforcement& e) {
  std::vector<std::string> promises, devices;
  for (const auto& pr : e.promises) promises.push_back(promise_json(pr));
  for (const auto& d : p.fs.devices) devices.push_back(device_json(d));
  return fmt::format(
             R"({{"mode":{},"command":{},"workspace":{},"network":{},"devices":[{}],"masked":{},"dropped_env":{},)"
             R"("landlock":{{"abi":{},"rules":{},"missing":{}}},"seccomp":{{"applied":{},"source":{},"rules":{}}},)"
             R"("refusals":{{"syscalls_recorded":{},"inside":{}}},"promises":[{}],"lost":{}}})",
             json_string(mode_name(e.mode)), json_array(p.proc.argv), json_string(p.fs.workspace),
             json_string(net_name(p)), join(devices, ","), json_array(masked(plan)), json_array(p.proc.dropped_env),
             e.use_landlock ? plan.landlock.abi : 0, plan.landlock.rules.size(),
             json_array(e.use_landlock ? landlock_rights_missing(plan.landlock.abi, e.mode == Mode::fallback)
                                       : std::vector<std::string>{}),
             e.use_seccomp, json_string(seccomp_policy(p.protection).source), json_array(seccomp_groups(p, e.mode)),
             !plan.seccomp.notifying.empty(), plan.denial_log ? json_string(kDenialLogPath) : std::string("null"),
             join(promises, ","), json_array(e.lost())) +
         "\n";
}

std::string refusal_text(const Enforcement& e) {
  auto given_up = fmt::format("--no-namespaces gives up {} promises that need namespaces", e.given_up);
  constexpr std::string_view kListed = "(`confine explain --no-namespaces --best-effort -- CMD` lists each)";
  if (e.problems.empty()) return fmt::format("{}: add --best-effort to run without them {}", given_up, kListed);
  std::string out = fmt::format("cannot enforce the sandbox here ({} mode); refusing to run a weaker one:\n", mode_name(e.mode));
  if (e.given_up > 0) out += fmt::format("  - {} {}\n", given_up, kListed);
  for (const auto& p : e.problems) out += "  - " + p + "\n";
  out += "Fix the cause above, or pass --best-effort to run without these promises (confine lists them at start);\n"
         "`confine explain -- CMD` shows every promise and the layer that keeps it.";
  return out;
}

}  // namespace confine
