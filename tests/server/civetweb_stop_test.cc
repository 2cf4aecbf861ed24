// StopCivetWebPromptly (server/app/civetweb_stop.h) against stand-ins for
// CivetWeb's two waits, on real loopback sockets: a thread polling the
// listening socket, and one polling an accepted, idle connection for its
// next request. Each waits at most 10 s; what the test checks is what woke
// it (a connection, the end of the stream), not how soon.
#include "server/app/civetweb_stop.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "support/net.h"

namespace server {
namespace {

// Waits (up to 10 s) until `fd` is readable.
bool Readable(int fd) {
  pollfd wait{fd, POLLIN, 0};
  return poll(&wait, 1, 10000) == 1;
}

TEST(CivetWebStopTest, WakesTheListenerAndEndsIdleConnectionsButNotTheirWrites) {
  int port = 0;
  const int listener = testing_support::ListenLoopback(&port);
  ASSERT_GE(listener, 0);
  const int client = testing_support::ConnectLoopback(port);
  ASSERT_GE(client, 0);
  const int idle = accept(listener, nullptr, nullptr);
  ASSERT_GE(idle, 0);

  bool listener_woke = false;
  bool idle_connection_ended = false;
  // A name, not an address: the host is resolved (an address would be too).
  StopCivetWebPromptly("localhost", port, [&] {
    std::thread listening([&] { listener_woke = Readable(listener); });
    char byte = 0;
    idle_connection_ended = Readable(idle) && read(idle, &byte, 1) == 0;
    listening.join();
  });
  EXPECT_TRUE(listener_woke) << "no connection reached the listening socket";
  EXPECT_TRUE(idle_connection_ended) << "the idle connection did not read end-of-stream";

  // Only reading ended: a response being written still reaches the client.
  ASSERT_EQ(write(idle, "answer", 6), 6);
  char received[6] = {};
  EXPECT_EQ(read(client, received, sizeof(received)), 6);
  EXPECT_EQ(std::string(received, 6), "answer");
  close(idle);
  close(client);
  close(listener);
}

TEST(CivetWebStopTest, LeavesConnectionsToOtherPortsAlone) {
  int port = 0;
  int other_port = 0;
  const int listener = testing_support::ListenLoopback(&port);
  const int other_listener = testing_support::ListenLoopback(&other_port);
  ASSERT_GE(listener, 0);
  ASSERT_GE(other_listener, 0);
  const int client = testing_support::ConnectLoopback(other_port);
  ASSERT_GE(client, 0);
  const int other = accept(other_listener, nullptr, nullptr);
  ASSERT_GE(other, 0);

  StopCivetWebPromptly("127.0.0.1", port, [&] { Readable(listener); });

  // Still open both ways: a byte each way arrives.
  ASSERT_EQ(write(client, "q", 1), 1);
  char byte = 0;
  EXPECT_EQ(read(other, &byte, 1), 1);
  ASSERT_EQ(write(other, "a", 1), 1);
  EXPECT_EQ(read(client, &byte, 1), 1);
  for (int fd : {other, client, other_listener, listener}) close(fd);
}

}  // namespace
}  // namespace server
