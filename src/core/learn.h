// `confine learn`: from what one trusted run was seen to do, the profile (`confine-profile/1`) that lets the same
// run succeed under the strict sandbox, with a comment on every entry saying what was observed. Pure: the records
// come in parsed, the profile goes out as text; the run and the reading of what it left are src/run/learn.cc's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/net_door.h"
#include "core/profile.h"

namespace confine {

// One line of --net-log, as learn reads it back.
struct NetRecord {
  std::string method;  // a request's method (CONNECT, GET, …), or the door's word
  std::string host;
  std::uint16_t port = 0;
  bool allowed = false;
  std::string reason;  // for an allowed line: how (`allowed by …`, `recorded by confine learn`) or why it failed

  // The door the line names, from its method.
  [[nodiscard]] NetDoor door() const { return net_door_of(method); }
};

// Every line of a net log that is a connection record; any other line is skipped.
std::vector<NetRecord> parse_net_log(std::string_view text);

// One seccomp line of the denial log: a call the strict policy refuses.
struct SeccompRecord {
  std::string syscall;
  std::string rule;  // its rule group in seccomp/default.toml
  std::string err;   // the errno the strict run returns, by name (EPERM)
};

// The seccomp lines of a denial log (JSON lines; `"layer":"seccomp"` with `"syscall"`, `"rule"`, `"errno"`); any
// other line is skipped.
std::vector<SeccompRecord> parse_seccomp_denials(std::string_view text);

// A host file or directory the run looked up outside its view (it was not there for the run).
struct ReadRecord {
  std::string path;       // as a profile names it: `~/a/b` below $HOME, else absolute
  bool directory = false;
  bool secret = false;         // a name on the way is one the secret scan masks (id_rsa, .ssh, .env …)
  bool beside_secret = false;  // its directory holds such a name
};

struct LearnRecords {
  std::vector<std::string> command;      // as run, for the header
  std::vector<NetRecord> network;        // the net log of the run
  std::vector<std::string> home_writes;  // what the run left below $HOME, relative to it ("a/b"), names as found
  std::vector<SeccompRecord> seccomp;    // the denial log's seccomp lines (none until confine records them)
  std::vector<std::string> dropped_env;  // variables the scrub kept out of the run
  std::vector<std::string> bound;        // the paths below $HOME the run was given (--ro), as `~/a/b`
  std::vector<ReadRecord> reads;         // what it looked up outside its view that the host has
};

// The built-in profile a command starts from, by its program's name (npm and npx → npm, pip and pip3 → pip,
// cargo, go, codex, claude, aider, gemini …); `default` for anything else.
std::string base_profile_for(const std::vector<std::string>& command);

// The profile text: `base_name` is what --profile would name (extended, or copied when it sets a network mode
// other than the proxy, which a profile extending it could not change); `base` is that profile, loaded.
std::string learned_profile(const LearnRecords& records, const std::string& base_name, const Profile& base);

}  // namespace confine
