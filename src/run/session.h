// One run, from a resolved Policy: probe the layers, decide the mode (the degradation ladder), gather the host
// facts, build the plan, launch it, and fall back or refuse when namespaces turn out to be unavailable.
#pragma once

#include "core/policy.h"
#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::run {

// What the host holds ready for a run before it does anything: the files it writes on the host (--report,
// --net-log, --log), opened first, so that a file confine must refuse (a link, someone else's, a second name) or
// cannot open ends the run at once, with exit 125, instead of losing the report or every proxy record later; and
// the secrets' real values (--secret), read before the run too and given to the proxy only.
struct HostResources {
  sys::UniqueFd report;
  sys::UniqueFd net_log;
  sys::UniqueFd log;  // --log
  sys::UniqueFd lookups;  // confine learn: the names the command looked up (run/lookup_record.h)
  SecretSet secrets;  // --secret: the real values (run/secret_values.h)
};
sys::Result<HostResources> open_output_files(const Policy& policy);

int run_sandbox(const Policy& policy, const HostResources& files);
int explain(const Policy& policy, bool json);
int probe(bool json, const CallerEnvironment& env);

}  // namespace confine::run
