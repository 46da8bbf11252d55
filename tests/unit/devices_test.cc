// --device and --gpus as typed, and CDI specs: what each asks for, and the one-line error for what is not one.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/devices.h"

using namespace confine;

namespace {

constexpr const char* kSpecJson = R"({
  "cdiVersion": "0.6.0",
  "kind": "nvidia.com/gpu",
  "devices": [
    {"name": "0", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}},
    {"name": "1", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia1", "permissions": "r"}]}},
    {"name": "all", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}, {"path": "/dev/nvidia1"}]}}
  ],
  "containerEdits": {
    "env": ["NVIDIA_VISIBLE_DEVICES=void"],
    "deviceNodes": [{"path": "/dev/nvidiactl", "hostPath": "/dev/nvidiactl"}],
    "mounts": [{"hostPath": "/usr/lib/libcuda.so.1", "containerPath": "/usr/lib/libcuda.so.1", "options": ["ro", "nosuid"]},
               {"hostPath": "/var/cache/gpu", "containerPath": "/cache", "options": ["rw"]}],
    "hooks": [{"hookName": "createContainer", "path": "/usr/bin/nvidia-cdi-hook", "args": ["update-ldcache"]}]
  }
})";

constexpr const char* kSpecYaml = R"(cdiVersion: 0.5.0
kind: vendor.example/fpga
devices:
  - name: card-a
    containerEdits:
      deviceNodes:
        - path: /dev/fpga0
          hostPath: /dev/fpga-host0
      env:
        - FPGA=a
)";

}  // namespace

TEST_CASE("--device takes docker's SRC[:DEST[:PERMS]]") {
  auto r = parse_device_request("/dev/fuse");
  REQUIRE(r);
  CHECK((r->path == "/dev/fuse" && r->dest == "/dev/fuse" && r->access.read && r->access.write && !r->access.mknod));
  r = parse_device_request("/dev/sda:/dev/xvdc:r");
  REQUIRE(r);
  CHECK((r->dest == "/dev/xvdc" && r->access.read && !r->access.write));
  r = parse_device_request("/dev/fuse:rwm");  // docker reads a second part without a slash as PERMS
  REQUIRE(r);
  CHECK((r->dest == "/dev/fuse" && r->access.mknod));
  for (const char* bad : {"dev/fuse", "/dev/a:/dev/b:x", "/dev/a:/dev/b:rr", "/dev/a:/dev/b:m", "/dev/a:/dev/b:w", "/dev/a:/dev/b:wm", "/a:/b:/c:r", "/dev/a:b/c:r", ""}) {
    INFO(bad);
    auto refused = parse_device_request(bad);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message().starts_with("--device `"));
  }
}

TEST_CASE("--device takes a CDI name, VENDOR/CLASS=NAME") {
  auto r = parse_device_request("nvidia.com/gpu=all");
  REQUIRE(r);
  CHECK((r->cdi_kind == "nvidia.com/gpu" && r->cdi_name == "all" && r->path.empty()));
  CHECK_FALSE(parse_device_request("nvidia.com/gpu=a b"));
  CHECK_FALSE(parse_device_request("nvidia.com/g/pu=0"));
}

TEST_CASE("--gpus names NVIDIA's CDI devices as docker counts them") {
  std::vector<std::string> names = {"0", "1", "all"};
  auto names_of = [&](const char* gpus) { return gpu_cdi_names(parse_gpus(gpus).value(), names); };
  CHECK(names_of("all").value() == std::vector<std::string>{"all"});
  CHECK(names_of("1").value() == std::vector<std::string>{"0"});
  CHECK(names_of("device=1,GPU-3a5").value() == std::vector<std::string>{"1", "GPU-3a5"});
  CHECK(names_of("3").error().message() == "--gpus 3: the CDI specs name 2 GPUs");
  for (const char* bad : {"0", "-1", "two", "device=", "device=a,,b", "1x", "ALL", "device=../x", ""}) {
    INFO(bad);
    CHECK_FALSE(parse_gpus(bad));
  }
}

TEST_CASE("a CDI spec's device brings its nodes and the spec's common edits; read-only mounts unless rw") {
  auto spec = parse_cdi_spec(kSpecJson, "/etc/cdi/nvidia.json");
  REQUIRE(spec);
  std::vector<CdiSpec> specs = {*spec};
  auto one = cdi_edits(specs, "nvidia.com/gpu", "1");
  REQUIRE(one);
  REQUIRE(one->nodes.size() == 2);
  CHECK((one->nodes[0].path == "/dev/nvidia1" && one->nodes[0].host_path == "/dev/nvidia1" && !one->nodes[0].access.write));
  CHECK(one->nodes[1].path == "/dev/nvidiactl");
  REQUIRE(one->mounts.size() == 2);
  CHECK_FALSE(one->mounts[0].writable);
  CHECK(one->mounts[1].writable);
  CHECK(one->env == std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=void"});
  CHECK(one->hooks == 1);
  // The spec's own "all" device, not every device.
  CHECK(cdi_edits(specs, "nvidia.com/gpu", "all")->nodes.size() == 3);
  auto missing = cdi_edits(specs, "nvidia.com/gpu", "7");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message() == "no CDI device nvidia.com/gpu=7 (the specs have: 0, 1, all)");
  CHECK(cdi_edits(specs, "amd.com/gpu", "0").error().message() == "no CDI spec for amd.com/gpu");
}

TEST_CASE("a CDI spec in YAML; =all without an `all` device is every device of the kind") {
  auto spec = parse_cdi_spec(kSpecYaml, "/etc/cdi/fpga.yaml");
  REQUIRE(spec);
  auto all = cdi_edits({*spec}, "vendor.example/fpga", "all");
  REQUIRE(all);
  REQUIRE(all->nodes.size() == 1);
  CHECK((all->nodes[0].path == "/dev/fpga0" && all->nodes[0].host_path == "/dev/fpga-host0"));
  CHECK(all->env == std::vector<std::string>{"FPGA=a"});
}

TEST_CASE("a CDI spec that is not one says which file and why") {
  for (const char* bad : {"kind: [", "- a\n- b\n", "kind: nogpu\n", "kind: a.com/gpu\ndevices:\n  - name: 'x y'\n",
                          "kind: a.com/gpu\ncontainerEdits:\n  env: [NOVALUE]\n",
                          "kind: a.com/gpu\ncontainerEdits:\n  deviceNodes: [{path: dev/x}]\n",
                          "kind: a.com/gpu\ncontainerEdits:\n  mounts: [{hostPath: /a}]\n"}) {
    INFO(bad);
    auto spec = parse_cdi_spec(bad, "/etc/cdi/bad.yaml");
    REQUIRE_FALSE(spec);
    CHECK(spec.error().message().starts_with("CDI spec /etc/cdi/bad.yaml"));
  }
}
