// Network namespace: with --net none, the new namespace gets loopback up and nothing else.
#pragma once

namespace confine::mech {

// Child side, async-signal-safe.
int bring_loopback_up();
// A listening TCP socket on 127.0.0.1 (or ::1) at `port`, in the calling process's network namespace.
int listen_on_loopback(bool ipv6, unsigned short port);
// A UDP socket bound to the IPv4 `address` (dotted quad, on loopback) at `port`, in the calling process's network
// namespace.
int bind_udp(const char* address, unsigned short port);

}  // namespace confine::mech
