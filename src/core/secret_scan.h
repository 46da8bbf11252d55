// Finds the files inside the workspace that are masked by default (the seed's deny list: .env, .env.*, *.pem,
// id_rsa*, secrets/), with a bounded walk so start-up stays fast on big repositories.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace confine {

bool is_secret_file_name(std::string_view name);
bool is_secret_dir_name(std::string_view name);
// Directories the walk never enters: VCS metadata, dependency trees and caches (huge, and not the user's secrets).
bool is_skipped_dir_name(std::string_view name);

struct ScanLimits {
  int max_depth = 8;                 // directory levels below the workspace root
  std::size_t max_entries = 400000;  // directory entries examined before giving up (reported, never silent)
};

struct SecretScan {
  std::vector<std::string> files;  // relative to the workspace
  std::vector<std::string> dirs;   // relative to the workspace
  std::size_t entries_seen = 0;
  bool truncated = false;  // hit max_entries or max_depth somewhere: the caller warns
};

// Walks `workspace` (an absolute directory path). Never follows symlinks. Unreadable directories are skipped.
SecretScan scan_workspace_secrets(const std::string& workspace, const ScanLimits& limits = {});

}  // namespace confine
