// `confine run BUNDLE` with an OCI runtime bundle (what `umoci unpack` makes): BUNDLE/rootfs is the image and
// BUNDLE/config.json's `process` gives the defaults docker takes from an image: command, environment, working
// directory and user. Nothing else of config.json is used (no mounts, no hooks: those would run host code).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sys/result.h"

namespace confine {

struct BundleProcess {
  std::vector<std::string> args;  // the default command
  std::vector<std::string> env;   // NAME=VALUE, the image's environment
  std::string cwd;                // absolute; empty: none given
  std::optional<std::pair<unsigned, unsigned>> user;  // uid, gid
};

// Errors name the source and the JSON location: "config.json: process.env[2]: expected NAME=VALUE".
sys::Result<BundleProcess> parse_bundle_config(std::string_view text, const std::string& source);

}  // namespace confine
