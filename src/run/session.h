// One run, from a resolved Policy: probe the layers, decide the mode (the degradation ladder), gather the host
// facts, build the plan, launch it, and fall back or refuse when namespaces turn out to be unavailable.
#pragma once

#include "core/policy.h"
#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::run {

// The files a run writes on the host (--report, --net-log, --log), opened before the run does anything: a file confine
// must refuse (a link, someone else's, a second name) or cannot open ends the run at once, with exit 125, instead
// of losing the report or every proxy record later. The secrets' real values ride along: read before the run
// like the files are opened, and given to the proxy only.
struct OutputFiles {
  sys::UniqueFd report;
  sys::UniqueFd net_log;
  sys::UniqueFd log;  // --log
  sys::UniqueFd lookups;  // confine learn: the names the command looked up (run/lookup_record.h)
  SecretSet secrets;  // --secret: the real values (run/secret_values.h)
};
sys::Result<OutputFiles> open_output_files(const Policy& policy);

int run_sandbox(const Policy& policy, const OutputFiles& files);
int explain(const Policy& policy, bool json);
int probe(bool json, const CallerEnvironment& env);

}  // namespace confine::run
