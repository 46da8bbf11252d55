// Finds the files inside the workspace that are masked by default (the seed's deny list: .env, .env.*, *.pem,
// id_rsa*, secrets/), with a bounded walk so start-up stays fast on big repositories, and a per-directory cache
// (git's untracked-cache idea) so a repeated run only re-reads directories whose entries changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace confine {

bool is_secret_file_name(std::string_view name);
bool is_secret_dir_name(std::string_view name);
// Directories the walk never enters: VCS metadata, dependency trees and caches (huge, and not the user's secrets).
bool is_skipped_dir_name(std::string_view name);

struct ScanLimits {
  int max_depth = 8;                 // directory levels below the workspace root
  std::size_t max_entries = 400000;  // directory entries examined before giving up (reported, never silent)
  std::int64_t racy_seconds = 2;     // a directory changed this recently is re-read next time (coarse ctimes)
};

struct SecretScan {
  std::vector<std::string> files;  // relative to the workspace
  std::vector<std::string> dirs;   // relative to the workspace
  std::size_t entries_seen = 0;
  std::size_t dirs_read = 0;       // directories actually listed (the rest came from the cache)
  bool truncated = false;          // hit max_entries or max_depth somewhere: the caller warns
};

// What one full read of a directory found. It stays valid while the directory's inode number and ctime are
// unchanged: adding, removing or renaming an entry updates the ctime, and no user can set a ctime back.
struct DirRecord {
  std::uint64_t ino = 0;
  std::int64_t ctime_sec = 0;
  std::int64_t ctime_nsec = 0;
  std::uint64_t entries = 0;
  std::vector<std::string> subdirs;  // names to descend into
  std::vector<std::string> files;    // secret file names
  std::vector<std::string> dirs;     // secret directory names
};

struct ScanCache {
  std::unordered_map<std::string, DirRecord> dirs;  // key: path relative to the workspace ("" is the root)
  bool changed = false;                             // a directory was (re)read: worth saving
};

// Walks `workspace` (an absolute directory path). Never follows symlinks. Unreadable directories are skipped.
// With a cache, unchanged directories are not listed again; the cache is replaced by what this walk saw.
SecretScan scan_workspace_secrets(const std::string& workspace, const ScanLimits& limits = {}, ScanCache* cache = nullptr);

// The cache's file format: a header naming the workspace, then length-prefixed records. parse returns false on
// anything malformed (the caller then scans from scratch).
std::string serialize_scan_cache(const ScanCache& cache, const std::string& workspace);
bool parse_scan_cache(std::string_view data, const std::string& workspace, ScanCache& out);

}  // namespace confine
