// The doors a net log line names in its "method" field: an HTTP request by its own method (GET, CONNECT, …),
// every other door by one word of this table, which the recorder (net/net_recorder.h) writes and learn
// (core/learn.h) reads back.
#pragma once

#include <string_view>

namespace confine {

enum class NetDoor {
  request,  // an HTTP request to the proxy or a broker: the line names its method
  tcp,      // a connection the sandbox made itself (a name given by the DNS stub, or a connect() the gate took)
  udp,      // a datagram the sandbox sent outside it (always refused)
  forward,  // a forward to a service on the host's loopback
  dns,      // a question to the DNS stub
  publish,  // a connection from the host to a published port (inbound)
};

// The word for `door` ("TCP"); "?" for a request, named by its method once its head is read.
std::string_view net_door_word(NetDoor door);
// The door a line's "method" field names: a word of the table, else a request.
NetDoor net_door_of(std::string_view method);

}  // namespace confine
