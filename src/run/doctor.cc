#include "run/doctor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "cli/profiles.h"
#include "core/exit_status.h"
#include "core/net_mode.h"
#include "mech/probe.h"
#include "run/session.h"
#include "sys/log.h"

extern char** environ;

namespace confine::run {
namespace {

constexpr const char* kDoctorBinary = "/run/confine-doctor/confine";
// Where the outbound check aims: a public anycast address, so a success means packets really leave.
constexpr const char* kOutboundAddress = "1.1.1.1";
constexpr int kOutboundPort = 443;

struct Result {
  bool pass;
  std::string why;
};

void print(const char* what, const Result& r) { std::printf("%s  %-38s %s\n", r.pass ? "PASS" : "FAIL", what, r.why.c_str()); }

std::string err(const char* call, int e) { return fmt::format("{}: {}", call, std::strerror(e)); }

Result ssh_hidden(const std::string& home) {
  auto path = home + "/.ssh";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {true, "~/.ssh is not there (" + err("stat", errno) + ")"};
  return {false, "~/.ssh is visible inside the sandbox"};
}

Result aws_unreadable(const std::string& home) {
  int fd = ::open((home + "/.aws/credentials").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {true, "~/.aws/credentials cannot be read (" + err("open", errno) + ")"};
  ::close(fd);
  return {false, "~/.aws/credentials can be read"};
}

Result no_direct_outbound(NetMode net) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return {true, "no TCP socket at all (" + err("socket", errno) + ")"};
  struct sockaddr_in a {};
  a.sin_family = AF_INET;
  a.sin_port = htons(kOutboundPort);
  ::inet_pton(AF_INET, kOutboundAddress, &a.sin_addr);
  int rc = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  int e = rc == 0 ? 0 : errno;
  if (e == EINPROGRESS) {
    struct pollfd p {s, POLLOUT, 0};
    if (::poll(&p, 1, 3000) == 0) {
      ::close(s);
      return {false, fmt::format("connect {}:{} did not fail at once: packets leave the sandbox", kOutboundAddress, kOutboundPort)};
    }
    socklen_t len = sizeof e;
    ::getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &len);
  }
  ::close(s);
  if (e == 0)
    return {false, fmt::format("connected to {}:{} directly{}", kOutboundAddress, kOutboundPort, net == NetMode::host ? " (--net host)" : "")};
  auto why = fmt::format("connect {}:{}: {}", kOutboundAddress, kOutboundPort, std::strerror(e));
  if (net == NetMode::proxy) why += "; only the proxy's allowlist is reachable";
  return {true, why};
}

bool credential_like(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* w : {"key", "token", "secret", "password", "passwd", "credential"})
    if (name.find(w) != std::string::npos) return true;
  return false;
}

// `env | grep -iE 'key|token|secret'`: anything found that was not passed on purpose fails.
Result no_credentials_in_env(const std::string& passed) {
  std::vector<std::string> leaked, on_purpose;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string name(*e, std::strcspn(*e, "="));
    if (!credential_like(name)) continue;
    bool was_passed = ("," + passed + ",").find("," + name + ",") != std::string::npos;
    (was_passed ? on_purpose : leaked).push_back(name);
  }
  std::string note = on_purpose.empty() ? "" : fmt::format("; passed on purpose: {}", fmt::join(on_purpose, " "));
  if (!leaked.empty()) return {false, fmt::format("credential-like variables inside: {}", fmt::join(leaked, " "))};
  return {true, "no key, token or secret variables" + note};
}

std::string parent_of(const std::string& workspace) {
  auto parent = workspace.substr(0, workspace.rfind('/'));
  return parent.empty() ? "/" : parent;
}

// System directories must refuse a new file. Next to the workspace, a private tmpfs (a workspace under /tmp) may
// take one: the file is left for the parent, which checks that it did not appear on the host.
Result no_writes_to_system(const std::string& workspace, const std::string& marker) {
  for (const char* dir : {"/usr", "/etc"}) {
    auto path = std::string(dir) + "/" + marker;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
      ::unlink(path.c_str());
      return {false, std::string("created a file in ") + dir};
    }
  }
  int fd = ::open((parent_of(workspace) + "/" + marker).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
  return {true, "cannot create files in /usr or /etc"};
}

// The other half of the write check, on the host: the file tried next to the workspace must not be there.
Result nothing_reached_the_host(const std::string& workspace, const std::string& marker) {
  auto path = parent_of(workspace) + "/" + marker;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    ::unlink(path.c_str());
    return {false, "a file created inside appeared in " + parent_of(workspace) + " on the host"};
  }
  return {true, "nothing created inside reached " + parent_of(workspace) + " on the host"};
}

// The kernel's layers, as `confine probe` sees them: the three walls are PASS/FAIL, the rest informative.
int print_layers(const CallerEnvironment& caller) {
  int failed = 0;
  for (const auto& row : mech::probe_all(caller)) {
    bool ok = row.status != "no";
    if (row.wall && !ok) ++failed;
    std::printf("%s  %-38s %s\n", !row.wall ? "INFO" : ok ? "PASS" : "FAIL", ("layer " + row.name + ": " + row.status).c_str(),
                row.detail.c_str());
  }
  return failed;
}

std::string self_exe() {
  std::vector<char> buf(4096);
  auto n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

int doctor_checks(int argc, char** argv) {
  if (argc != 7) return kExitSetupFailed;
  std::string home = argv[2], workspace = argv[3], passed = argv[5], marker = argv[6];
  // confine passed its own --net word (already checked by resolve()): read once, into its meaning.
  auto net = parse_net(argv[4]);
  if (!net) return kExitSetupFailed;
  int failed = 0;
  auto run = [&](const char* what, const Result& r) {
    print(what, r);
    failed += r.pass ? 0 : 1;
  };
  run("ls ~/.ssh", ssh_hidden(home));
  run("cat ~/.aws/credentials", aws_unreadable(home));
  run("an outbound connection", no_direct_outbound(net->mode));
  run("env | grep -iE 'key|token|secret'", no_credentials_in_env(passed));
  run("a write to /usr and /etc", no_writes_to_system(workspace, marker));
  std::fflush(stdout);
  return failed == 0 ? 0 : 1;
}

namespace {

// The checks inside a sandbox made with `options`: confine's exit code, and the policy it ran with.
struct SandboxChecks {
  int code = kExitSetupFailed;
  std::string workspace;
};

SandboxChecks run_checks(Options options, const CallerContext& caller, const std::string& exe, const std::string& marker) {
  // confine's own binary runs the checks inside: bound read-only on the private /run. Without namespaces there is
  // no mount to make, and the binary is reached where it is.
  std::string inside = exe;
  if (!options.no_namespaces) options.ro_binds.push_back(exe + ":" + kDoctorBinary), inside = kDoctorBinary;
  std::string passed;
  for (const auto& n : options.pass_env) passed += (passed.empty() ? "" : ",") + n;
  options.command = {inside, kDoctorChecks, caller.home, "", std::string(net_word(options.net)), passed, marker};
  auto policy = resolve(options, caller);
  if (!policy) {
    log::error("{}", policy.error().message());
    return {};
  }
  policy->proc.argv[3] = policy->fs.workspace;
  auto files = open_output_files(*policy);
  if (!files) {
    log::error("{}", files.error().message());
    return {};
  }
  std::fflush(stdout);
  return {run_sandbox(*policy, *files), policy->fs.workspace};
}

}  // namespace

int doctor(Options options, const CallerContext& caller) {
  if (auto s = cli::apply_profile_to(options, caller); !s) {
    log::error("{}", s.error().message());
    return kExitSetupFailed;
  }
  auto exe = self_exe();
  if (exe.empty()) {
    log::error("doctor: cannot find confine's own binary (/proc/self/exe)");
    return kExitSetupFailed;
  }
  std::printf("confine doctor: testing your containment, inside a sandbox with your options\n");
  int failed = print_layers(caller.env);
  auto marker = fmt::format(".confine-doctor-{}", ::getpid());
  auto checks = run_checks(options, caller, exe, marker);
  // Refused as asked (a container withholds a step): the checks still run, in what --best-effort would give.
  if (checks.code == kExitSetupFailed && !options.best_effort) {
    std::printf("FAIL  %-38s refused with your options (see above); the checks again with --best-effort:\n",
                "the sandbox itself");
    ++failed;
    options.best_effort = true;
    checks = run_checks(options, caller, exe, marker);
  }
  if (checks.code != 0 && checks.code != 1) {
    std::printf("FAIL  %-38s confine could not build the sandbox (exit %d; see above)\n", "the sandbox itself", checks.code);
    return 1;
  }
  failed += checks.code;
  auto host = nothing_reached_the_host(checks.workspace, marker);
  print("a write next to the workspace", host);
  failed += host.pass ? 0 : 1;
  std::printf(failed == 0 ? "all checks passed\n" : "some checks failed\n");
  return failed == 0 ? 0 : 1;
}

}  // namespace confine::run
