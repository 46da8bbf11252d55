#include "run/seccomp_watch.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "core/seccomp_verdict.h"

namespace confine::run {
namespace {

// The process behind a notification, as the log names it: its command name and its pid inside the sandbox.
struct ProcessInfo {
  std::string comm;
  long pid_inside = 0;
};

// From /proc/PID/status (`pid` is in confine's pid namespace): "Name:", and the last number of "NSpid:", its pid
// in the innermost namespace, the sandbox's. One read into a buffer on the stack: the refused call waits for it.
ProcessInfo read_process(pid_t pid) {
  ProcessInfo info;
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
  sys::UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  char buf[4096];
  ssize_t n = fd.valid() ? ::read(fd.get(), buf, sizeof buf - 1) : -1;
  if (n <= 0) return info;
  std::string_view status(buf, static_cast<std::size_t>(n));
  auto field = [&status](std::string_view name) -> std::string_view {
    auto at = status.find(name);
    if (at == std::string_view::npos) return {};
    auto value = status.substr(at + name.size());
    return value.substr(0, value.find('\n'));
  };
  info.comm = std::string(field("Name:\t"));
  auto nspid = field("\nNSpid:");
  if (auto last = nspid.find_last_of(" \t"); last != std::string_view::npos)
    info.pid_inside = std::strtol(std::string(nspid.substr(last + 1)).c_str(), nullptr, 10);
  return info;
}

std::string syscall_name(int nr) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  std::string out = name ? name : fmt::format("syscall {}", nr);
  std::free(name);
  return out;
}

std::string errno_name(int err) {
  const char* name = ::strerrorname_np(err);
  return name ? name : std::to_string(err);
}

// The arguments the rule compares, as "argN": "0x…": what decided, and nothing the rule did not look at (a
// pointer's value says nothing and could be an address worth keeping private).
nlohmann::json checked_arguments(const SeccompRule* rule, const std::uint64_t (&args)[6]) {
  nlohmann::json out = nlohmann::json::object();
  if (!rule) return out;
  std::set<unsigned> indices;
  for (const auto& alternative : rule->alternatives)
    for (const auto& check : alternative) indices.insert(check.arg);
  for (unsigned i : indices)
    if (i < 6) out[fmt::format("arg{}", i)] = fmt::format("{:#x}", args[i]);
  return out;
}

}  // namespace

struct SeccompWatch::State {
  sys::UniqueFd listener;
  const SeccompProgram& program;
  std::function<SeccompPolicy()> make_rules;
  std::optional<SeccompPolicy> rules;
  RefusalLog& log;
  bool let_through;
  NetworkGate network;
  std::unordered_map<int, std::string> names;

  State(sys::UniqueFd l, const SeccompProgram& p, std::function<SeccompPolicy()> r, RefusalLog& g, bool through)
      : listener(std::move(l)), program(p), make_rules(std::move(r)), log(g), let_through(through) {}

  // libseccomp looks a name up through its whole table: once per syscall number a run refuses.
  const std::string& name_of(int nr) {
    auto it = names.find(nr);
    if (it == names.end()) it = names.emplace(nr, syscall_name(nr)).first;
    return it->second;
  }

  const SeccompRule* rule_for(const SeccompCall& call) {
    if (!rules) rules = make_rules();
    return refusing_rule(*rules, call.nr, call.args);
  }

  // The errno the plain program returns for the call: the kernel handed it over exactly where that program
  // returns SECCOMP_RET_ERRNO. A verdict of any other kind cannot come here; it is refused with EPERM all the same.
  int errno_for(const SeccompCall& call) const {
    auto verdict = seccomp_verdict(program.code, call);
    if (!verdict || (*verdict & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO) return EPERM;
    return static_cast<int>(*verdict & SECCOMP_RET_DATA);
  }

  void answer_one() {
    struct seccomp_notif request {};
    // ENOENT: the caller was interrupted by a signal before this read; it will call again.
    if (::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_RECV, &request) != 0) return;
    if (network && network(request)) return;
    SeccompCall call;
    call.nr = request.data.nr;
    call.arch = request.data.arch;
    call.ip = request.data.instruction_pointer;
    std::memcpy(call.args, request.data.args, sizeof call.args);
    int err = errno_for(call);
    const SeccompRule* rule = rule_for(call);
    // Learn mode lets the call run as if no filter were there; the floor is never let through (no profile can
    // allow it, so recording it as allowable would be a lie).
    bool through = let_through && rule && !rule->floor;
    // Before the answer: once answered, the process may be gone. Still the caller afterwards, or the pid was reused.
    auto process = read_process(static_cast<pid_t>(request.pid));
    if (::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &request.id) != 0) process = {};
    // Recorded before the answer: a command that reads $CONFINE_DENIALS as soon as its call fails finds the line.
    record(call, rule, err, through, process);
    struct seccomp_notif_resp response {};
    response.id = request.id;
    if (through) response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    else response.error = -err;
    [[maybe_unused]] int sent = ::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_SEND, &response);
  }

  void record(const SeccompCall& call, const SeccompRule* rule, int err, bool through, const ProcessInfo& process) {
    Refusal r;
    r.layer = RefusalLayer::seccomp;
    r.action = through ? RefusalAction::recorded : RefusalAction::refused;
    r.what = name_of(call.nr);
    r.detail = {{"syscall", r.what},
                {"errno", errno_name(err)},
                {"rule", rule ? nlohmann::json(rule->group) : nlohmann::json(nullptr)},
                {"args", checked_arguments(rule, call.args)},
                {"pid", process.pid_inside},
                {"comm", process.comm}};
    if (rule && rule->unless == RuleCondition::allow_nested) r.allow_with = "--allow-nested";
    log.record(r);
  }

};

SeccompWatch::SeccompWatch(FdWatches& watches, sys::UniqueFd listener, const SeccompProgram& program,
                           std::function<SeccompPolicy()> rules, RefusalLog& log, bool let_through,
                           std::function<NetworkGate(int listener)> network)
    : watches_(watches),
      state_(std::make_unique<State>(std::move(listener), program, std::move(rules), log, let_through)) {
  if (network) state_->network = network(state_->listener.get());
  watches_.add(state_->listener.get(), [s = state_.get()] { s->answer_one(); });
}

// A process the run left behind (fallback mode has no pid namespace to end them all) may still hold the filter:
// the watch stops anyway, and its refused calls then fail with ENOSYS, the kernel's answer without a listener.
SeccompWatch::~SeccompWatch() { watches_.remove(state_->listener.get()); }

}  // namespace confine::run
