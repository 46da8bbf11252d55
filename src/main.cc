// confine: the table of contents. parse -> resolve -> discover -> plan -> launch (which supervises).
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "core/exit_status.h"
#include "core/host_layout.h"
#include "core/plan.h"
#include "core/resolve.h"
#include "core/secret_scan.h"
#include "run/launcher.h"
#include "sys/log.h"

extern char** environ;

namespace {

using namespace confine;

CallerContext caller_context() {
  CallerContext c;
  c.uid = ::getuid();
  c.gid = ::getgid();
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) != nullptr) c.cwd = buf.data();
  if (const char* home = std::getenv("HOME")) c.home = home;
  for (char** e = environ; *e != nullptr; ++e) c.environ.emplace_back(*e);
  return c;
}

void report_policy(const Policy& policy, const PlanInputs& inputs) {
  if (policy.net == NetMode::host) log::warn("--net host: the sandbox shares the host's network (no egress control)");
  if (inputs.secrets.truncated)
    log::warn("the scan for secret files in the workspace stopped early ({} entries, or deeper than the depth "
              "limit); files it did not reach are not masked — add --mask PATH for those",
              inputs.secrets.entries_seen);
  for (const auto& f : inputs.secrets.files) log::info("masked {}/{}", policy.fs.workspace, f);
  for (const auto& d : inputs.secrets.dirs) log::info("masked {}/{}/", policy.fs.workspace, d);
  for (const auto& name : policy.proc.dropped_env) log::info("dropped environment variable {}", name);
}

// With stdin/stdout/stderr closed by the caller, the next fds confine opens (the channel, say) would take
// their numbers and receive the command's output. Park /dev/null on any that is closed.
void ensure_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && ::open("/dev/null", O_RDWR) < 0) std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  ensure_standard_fds();
  auto parsed = cli::parse(argc, argv);
  if (auto* exit_now = std::get_if<cli::ExitNow>(&parsed)) return exit_now->code;
  const auto& options = std::get<Options>(parsed);
  log::set_level(static_cast<log::Level>(options.verbosity));

  auto policy = resolve(options, caller_context());
  if (!policy) {
    log::error("{}", policy.error().message());
    return kExitSetupFailed;
  }
  PlanInputs inputs{discover_system_entries(), scan_workspace_secrets(policy->fs.workspace),
                    discover_git_layout(policy->fs.workspace),
                    policy->net == NetMode::host ? discover_resolver_dir() : std::string()};
  if (auto s = check_mount_points(*policy, inputs.system); !s) {
    log::error("{}", s.error().message());
    return kExitSetupFailed;
  }
  report_policy(*policy, inputs);
  return run::launch(make_plan(*policy, inputs));
}
