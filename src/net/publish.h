// Published ports (--publish): confine listens on the host, and relays each connection to a port on the sandbox's
// own loopback through a socket the socket maker made in the sandbox's network namespace (mech/sandbox_sockets.h).
// Inbound only: the sandbox gets no route out, and nothing inside can open a connection through a published port.
//
// It runs on a thread of its own with its own Boost.Asio loop, apart from the egress proxy: --net none publishes
// with no proxy at all, and each loop's relays share only that loop's pipes (net/relay.h).
#pragma once

#include <memory>
#include <vector>

#include "core/published_port.h"
#include "mech/sandbox_sockets.h"
#include "net/net_recorder.h"
#include "sys/result.h"
#include "sys/unique_fd.h"

namespace confine::net {

struct HostListener {
  sys::UniqueFd fd;  // listening, non-blocking, close-on-exec
  PublishedPort port;
};

// Binds and listens on the port's host address. A taken port is one line: "--publish 3000:3000: 127.0.0.1:3000 is
// in use".
sys::Result<HostListener> listen_on_host(const PublishedPort& port);

class Publisher {
 public:
  // `sockets` and `recorder` must outlive the Publisher; each connection is recorded there (an inbound one: a
  // --net-log line).
  Publisher(const mech::SandboxSockets& sockets, NetRecorder& recorder);
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Serves the listeners on its own thread.
  void start(std::vector<HostListener> listeners);
  // Stops the thread and closes the host's listening sockets (the ports are free again); connections still open
  // are logged as such. Safe to call twice.
  void stop();

  struct State;  // the loop, the listeners and the connections in progress; defined in publish.cc

 private:
  std::unique_ptr<State> state_;
};

}  // namespace confine::net
