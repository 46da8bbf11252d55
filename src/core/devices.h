// Host devices in the sandbox: docker's `--device SRC[:DEST[:PERMS]]`, CDI devices (`--device VENDOR/CLASS=NAME`,
// the Container Device Interface's specs in /etc/cdi and /var/run/cdi) and `--gpus`, which names NVIDIA's CDI
// devices as docker does. Parsing and resolving only: the plan binds each device node (core/plan.cc) and
// Landlock grants it (core/decisions.cc).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/result.h"

namespace confine {

// What the command may do with a device (docker's PERMS: r, w, m): r or rw; w alone is refused (nothing would keep
// the device from being read). m (mknod) grants nothing in confine: the sandbox never creates device nodes.
struct DeviceAccess {
  bool read = true;
  bool write = true;
  bool mknod = false;
};

// One host device node the sandbox gets.
struct HostDevice {
  std::string source;  // the host's device file, links resolved
  std::string dest;    // where it is inside
  DeviceAccess access;
  std::string asked_as;  // what asked for it: "--device /dev/fuse", "nvidia.com/gpu=0"
};

// --device as typed: a host path (SRC[:DEST[:PERMS]]) or a CDI device name (VENDOR/CLASS=NAME).
struct DeviceRequest {
  std::string path;  // the host path, as typed (empty for a CDI name)
  std::string dest;
  DeviceAccess access;
  std::string cdi_kind;  // "nvidia.com/gpu"
  std::string cdi_name;  // "0", "all"
};
sys::Result<DeviceRequest> parse_device_request(std::string_view spec);

// --gpus all|N|device=ID[,ID...], as typed.
struct GpuRequest {
  bool all = false;
  unsigned count = 0;            // N
  std::vector<std::string> ids;  // device=ID,...
};
sys::Result<GpuRequest> parse_gpus(std::string_view gpus);
// The CDI names of the GPUs asked for (nvidia.com/gpu=...): N is the first N devices of the spec, by name order, as
// docker counts them (`names`: the names the spec has).
sys::Result<std::vector<std::string>> gpu_cdi_names(const GpuRequest& r, const std::vector<std::string>& names);
// The kinds --gpus takes, in order: NVIDIA's, as docker does, else AMD's where only AMD's spec is there.
inline constexpr const char* kGpuCdiKinds[] = {"nvidia.com/gpu", "amd.com/gpu"};

// A CDI spec's edits of the sandbox (containerEdits): device nodes, binds, variables; its hooks are counted, not run.
struct CdiEdits {
  struct Node {
    std::string path;       // inside
    std::string host_path;  // on the host (the spec's hostPath, else path)
    DeviceAccess access;
  };
  struct Mount {
    std::string host_path;
    std::string container_path;
    bool writable = false;  // read-only unless the spec's options say rw
  };
  std::vector<Node> nodes;
  std::vector<Mount> mounts;
  std::vector<std::string> env;  // NAME=value
  std::size_t hooks = 0;
};

struct CdiSpec {
  std::string source;  // the file
  std::string kind;    // vendor/class
  struct Device {
    std::string name;
    CdiEdits edits;
  };
  std::vector<Device> devices;
  CdiEdits common;  // the spec's own containerEdits, for any of its devices
};

// A spec file's text (JSON or YAML: JSON is YAML too), or why it is not one.
sys::Result<CdiSpec> parse_cdi_spec(const std::string& text, const std::string& source);

// The edits one CDI device name brings, the spec's common edits included; "all" is the spec's device of that name
// if it has one, else every device of the kind. An unknown kind or name is an error naming what the specs have.
sys::Result<CdiEdits> cdi_edits(const std::vector<CdiSpec>& specs, const std::string& kind, const std::string& name);

// The names of the devices of `kind` in the specs, sorted.
std::vector<std::string> cdi_device_names(const std::vector<CdiSpec>& specs, const std::string& kind);

// Where CDI specs are looked for, in order (a later directory's device of a name wins over an earlier one's);
// CONFINE_CDI_SPEC_DIRS (DIR[:DIR...]) replaces them.
inline constexpr const char* kCdiSpecDirs[] = {"/etc/cdi", "/var/run/cdi"};

// The host's device file at `path` (links followed), or why it is not one: missing, or not a character or block
// device. The result is the path without links.
sys::Result<std::string> host_device_node(const std::string& path);

// The specs in `dirs` (*.json, *.yaml, *.yml, by name in each). A spec decides what the sandbox is given, so one
// is read only if it and its directory belong to root or to `caller` and nobody else may write them, and
// `reachable(path)` (the sandbox could write there) is false; the others are named in `skipped`, with why.
struct CdiSpecs {
  std::vector<CdiSpec> specs;
  std::vector<std::string> skipped;
};
CdiSpecs load_cdi_specs(const std::vector<std::string>& dirs, uid_t caller,
                        const std::function<bool(const std::string&)>& reachable);

}  // namespace confine
