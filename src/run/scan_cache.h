// Where the workspace scan cache lives ($XDG_CACHE_HOME/confine/scan, else ~/.cache/confine/scan), loading and
// saving it. The cache decides which files are masked, so it is kept only where no sandbox can write: outside
// the workspace and every --rw bind, reached without a symbolic link, in a directory of the caller's own.
#pragma once

#include <string>

#include "core/policy.h"
#include "core/secret_scan.h"
#include "sys/unique_fd.h"

namespace confine::run {

struct ScanCacheLocation {
  sys::UniqueFd dir;    // invalid: no cache for this run (yet: see to_make)
  std::string name;     // the workspace's file in `dir`
  std::string to_make;  // the cache's directory, where it does not exist yet: the first save makes it
};

// The cache's place for `p`'s workspace, its directory opened if it exists. None without a home; none, with a
// warning saying why and what to do, where confine must not keep one.
ScanCacheLocation scan_cache_location(const Policy& p);
// The cache of another directory the run scans (a bind named on the command line), in the same place as `at`.
ScanCacheLocation scan_cache_beside(const ScanCacheLocation& at, const std::string& scanned);
// Where scan_cache_location keeps the cache, when it may (empty dir: nowhere), without making anything or warning;
// and the location reopened from it (its directory again without a link, again the caller's own). For the check
// after a run, which reads the workspace through the same cache, maybe in a later confine.
struct ScanCachePlace {
  std::string dir;
  std::string name;
};
ScanCachePlace scan_cache_place(const Policy& p);
ScanCacheLocation reopen_scan_cache(const ScanCachePlace& place);
// The file name of the cache of the directory `scanned` (in ScanCachePlace::dir).
std::string scan_cache_name(const std::string& scanned);
// An empty cache (a full scan) when there is no usable file: one confine did not write is not one to trust.
ScanCache load_scan_cache(const ScanCacheLocation& at, const std::string& workspace, const ScanLimits& limits = {});
// Best effort: a cache that cannot be written only costs the next run a full scan. Makes the cache's directory
// where it is missing (`at` then holds it).
void save_scan_cache(const ScanCache& cache, ScanCacheLocation& at);

// A cache the start-up scan used, kept for the check after the run: that walks the same tree through it, so the
// file is read once per run and the check's walk lists only what the run changed.
struct KeptScanCache {
  std::string tree;         // the directory scanned, as the check names it
  ScanCacheLocation at;
  ScanCache cache;
  ScanLimits limits;        // the names the scan used (a cache made with other names is not reused)
};
using KeptScanCaches = std::vector<KeptScanCache>;

}  // namespace confine::run
