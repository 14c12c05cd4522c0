// The gate alone (server/gate.h): admission limits, Hello deadlines and the throttling of
// failed authentications, with socket pairs standing in for accepted connections.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "server/gate.h"

namespace rgpu::server {
namespace {

using namespace std::chrono;
using Clock = Gate::Clock;

struct Conn {
  int ours = -1, theirs = -1;
  Conn() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ours = sv[0];
    theirs = sv[1];
  }
  ~Conn() {
    ::close(ours);
    ::close(theirs);
  }
  // Whether the gate shut our end down (the client sees the end of the stream).
  bool ShutDown() const {
    char c;
    return ::recv(theirs, &c, 1, MSG_DONTWAIT) == 0;
  }
};

GateOptions Small() {
  GateOptions o;
  o.hello_timeout = milliseconds(1000);
  o.max_unauthenticated = 4;
  o.max_unauthenticated_per_address = 2;
  o.auth_delay = milliseconds(100);
  o.auth_delay_max = milliseconds(500);
  o.auth_block_after = 4;
  o.auth_block = milliseconds(1000);
  return o;
}

TEST(Gate, LimitsInAllAndPerAddress) {
  Metrics m({});
  Gate g(Small(), &m);
  std::vector<Conn> c(6);
  Refusal why;
  EXPECT_TRUE(g.Admit(1, c[0].ours, "10.0.0.1", &why));
  EXPECT_TRUE(g.Admit(2, c[1].ours, "10.0.0.1", &why));
  EXPECT_FALSE(g.Admit(3, c[2].ours, "10.0.0.1", &why));
  EXPECT_EQ(why, Refusal::PerAddress);
  EXPECT_TRUE(g.Admit(4, c[3].ours, "10.0.0.2", &why));
  EXPECT_TRUE(g.Admit(5, c[4].ours, "local uid 1000", &why));
  EXPECT_FALSE(g.Admit(6, c[5].ours, "10.0.0.3", &why));
  EXPECT_EQ(why, Refusal::Unauthenticated);
  EXPECT_EQ(m.unauthenticated.load(), 4u);
  // Authenticated or gone, a connection frees its place.
  g.Authenticated(1);
  EXPECT_FALSE(g.Ended(2));
  EXPECT_EQ(m.unauthenticated.load(), 2u);
  EXPECT_TRUE(g.Admit(7, c[2].ours, "10.0.0.1", &why));
  EXPECT_EQ(m.Refusals(Refusal::PerAddress), 1u);
  EXPECT_EQ(m.Refusals(Refusal::Unauthenticated), 1u);
}

TEST(Gate, LocalUsersAreNotHeldToThePerAddressLimit) {
  Metrics m({});
  Gate g(Small(), &m);
  std::vector<Conn> c(3);
  Refusal why;
  for (uint64_t i = 0; i < 3; ++i) EXPECT_TRUE(g.Admit(i + 1, c[i].ours, "local uid 0", &why));
}

TEST(Gate, ConnectionsPastTheDeadlineAreShutDown) {
  Metrics m({});
  Gate g(Small(), &m);
  Conn late, authenticated;
  Refusal why;
  ASSERT_TRUE(g.Admit(1, late.ours, "10.0.0.1", &why));
  ASSERT_TRUE(g.Admit(2, authenticated.ours, "10.0.0.1", &why));
  g.Authenticated(2);
  EXPECT_EQ(g.Expire(Clock::now() + milliseconds(900)), 0u);
  EXPECT_FALSE(late.ShutDown());
  EXPECT_EQ(g.Expire(Clock::now() + milliseconds(1100)), 1u);
  EXPECT_TRUE(late.ShutDown());
  EXPECT_FALSE(authenticated.ShutDown());
  EXPECT_EQ(m.AuthFailures(AuthFailure::HelloTimeout), 1u);
  EXPECT_TRUE(g.Ended(1));  // it was the deadline
  EXPECT_EQ(m.unauthenticated.load(), 0u);
}

TEST(Gate, GuessesAreDelayedMoreEachTimeThenTheAddressIsBlocked) {
  Metrics m({});
  Gate g(Small(), &m);
  Refusal why;
  std::vector<milliseconds> delays;
  for (uint64_t i = 1; i <= 4; ++i) {
    Conn c;
    ASSERT_TRUE(g.Admit(i, c.ours, "10.0.0.9", &why));
    delays.push_back(g.Failed(i, AuthFailure::UnknownToken, "unknown token"));
    g.Ended(i);
  }
  EXPECT_EQ(delays, (std::vector<milliseconds>{milliseconds(100), milliseconds(200),
                                                milliseconds(400), milliseconds(500)}));
  Conn c;
  EXPECT_FALSE(g.Admit(10, c.ours, "10.0.0.9", &why));
  EXPECT_EQ(why, Refusal::Blocked);
  EXPECT_TRUE(g.Admit(11, c.ours, "10.0.0.10", &why)) << "another address is not blocked";
  EXPECT_EQ(m.AuthFailures(AuthFailure::UnknownToken), 4u);
  // Refusals that guess nothing are neither delayed nor counted towards a block.
  EXPECT_EQ(g.Failed(11, AuthFailure::MaxSessions, "full"), milliseconds(0));
  EXPECT_EQ(g.Failed(11, AuthFailure::Handshake, "bad record"), milliseconds(0));
  // After the block and as long again without failures, the burst is forgotten.
  g.Expire(Clock::now() + milliseconds(2100));
  Conn d;
  EXPECT_TRUE(g.Admit(12, d.ours, "10.0.0.9", &why));
  EXPECT_EQ(g.Failed(12, AuthFailure::UnknownToken, "unknown token"), milliseconds(100));
}

}  // namespace
}  // namespace rgpu::server
