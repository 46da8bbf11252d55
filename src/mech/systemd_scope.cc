#include "mech/systemd_scope.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "mech/cgroup.h"

namespace confine::mech {
namespace {

// The few sd-bus entry points used, resolved from libsystemd.so.0 at run time; sd_bus and sd_bus_message are
// opaque, so plain pointers stand for them (signatures as in <systemd/sd-bus.h>).
struct SdBus {
  int (*open_user)(void** bus) = nullptr;
  int (*new_method_call)(void* bus, void** m, const char* dest, const char* path, const char* iface, const char* member) = nullptr;
  int (*append)(void* m, const char* types, ...) = nullptr;
  int (*open_container)(void* m, char type, const char* contents) = nullptr;
  int (*close_container)(void* m) = nullptr;
  int (*call)(void* bus, void* m, std::uint64_t usec, void* error, void** reply) = nullptr;
  void* (*message_unref)(void* m) = nullptr;
  void* (*bus_unref)(void* bus) = nullptr;
  void (*error_free)(void* error) = nullptr;
  bool loaded = false;
};

template <typename F>
bool resolve(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(::dlsym(lib, name));
  return f != nullptr;
}

const SdBus& sd_bus() {
  static const SdBus lib = [] {
    SdBus s;
    void* h = ::dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return s;
    s.loaded = resolve(h, s.open_user, "sd_bus_open_user") && resolve(h, s.new_method_call, "sd_bus_message_new_method_call") &&
               resolve(h, s.append, "sd_bus_message_append") && resolve(h, s.open_container, "sd_bus_message_open_container") &&
               resolve(h, s.close_container, "sd_bus_message_close_container") && resolve(h, s.call, "sd_bus_call") &&
               resolve(h, s.message_unref, "sd_bus_message_unref") && resolve(h, s.bus_unref, "sd_bus_flush_close_unref") &&
               resolve(h, s.error_free, "sd_bus_error_free");
    return s;
  }();
  return lib;
}

// sd_bus_error's layout: name, message, and a private field.
struct BusError {
  const char* name = nullptr;
  const char* message = nullptr;
  int need_free = 0;
};

sys::Error bus_error(const std::string& what, int rc, const BusError& e) {
  std::string why = e.message != nullptr ? e.message : e.name != nullptr ? e.name : "";
  return sys::Error{"systemd: " + what + (why.empty() ? "" : ": " + why), rc < 0 ? -rc : 0};
}

}  // namespace

sys::Status move_into_transient_scope() {
  const SdBus& sd = sd_bus();
  if (!sd.loaded) return sys::plain_error("systemd: libsystemd.so.0 could not be loaded (install libsystemd0)");
  void* bus = nullptr;
  BusError err;
  if (int rc = sd.open_user(&bus); rc < 0) return bus_error("cannot reach your user manager ($XDG_RUNTIME_DIR/bus)", rc, err);
  auto unit = "confine-" + std::to_string(::getpid()) + ".scope";
  void* m = nullptr;
  void* reply = nullptr;
  int rc = sd.new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                              "org.freedesktop.systemd1.Manager", "StartTransientUnit");
  // StartTransientUnit(name, mode, properties a(sv), aux a(sa(sv))): this process, delegated, gone when it ends.
  if (rc >= 0) rc = sd.append(m, "ss", unit.c_str(), "fail");
  if (rc >= 0) rc = sd.open_container(m, 'a', "(sv)");
  if (rc >= 0) rc = sd.append(m, "(sv)", "PIDs", "au", 1, static_cast<std::uint32_t>(::getpid()));
  if (rc >= 0) rc = sd.append(m, "(sv)", "Delegate", "b", 1);
  if (rc >= 0) rc = sd.append(m, "(sv)", "CollectMode", "s", "inactive-or-failed");
  if (rc >= 0) rc = sd.append(m, "(sv)", "Description", "s", "confine sandbox (resource limits)");
  if (rc >= 0) rc = sd.close_container(m);
  if (rc >= 0) rc = sd.append(m, "a(sa(sv))", 0);
  if (rc >= 0) rc = sd.call(bus, m, 5'000'000, &err, &reply);
  sys::Status status = sys::ok_status();
  if (rc < 0) status = bus_error("StartTransientUnit " + unit, rc, err);
  sd.error_free(&err);
  if (reply != nullptr) sd.message_unref(reply);
  if (m != nullptr) sd.message_unref(m);
  sd.bus_unref(bus);
  if (!status) return status;
  // The job moves this process into the scope; it is done when /proc/self/cgroup says so.
  for (int i = 0; i < 500; ++i) {
    if (own_cgroup().ends_with("/" + unit)) return sys::ok_status();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return sys::plain_error("systemd: " + unit + " was started but this process did not arrive in it within 5 s");
}

}  // namespace confine::mech
