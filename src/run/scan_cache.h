// Where the workspace scan cache lives ($XDG_CACHE_HOME/confine/scan, else ~/.cache/confine/scan), loading and
// saving it. Outside the workspace and invisible inside the sandbox, so the agent cannot tamper with it.
#pragma once

#include <string>

#include "core/secret_scan.h"

namespace confine::run {

// An empty cache (a full scan) when there is no usable file.
ScanCache load_scan_cache(const std::string& workspace, const std::string& home);
// Best effort: a cache that cannot be written only costs the next run a full scan.
void save_scan_cache(const ScanCache& cache, const std::string& workspace, const std::string& home);

}  // namespace confine::run
