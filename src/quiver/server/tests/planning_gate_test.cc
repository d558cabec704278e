// PlanningGate: the cap on statements planning at once, its per-token
// share, the queue's bounds (53400) and round-robin admission over tokens.
#include "quiver/server/planning_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "quiver/testing/status_assertions.h"

namespace quiver::server {
namespace {

PlanningGateOptions Opts(int planning, int per_token, int queued, int queued_per_token) {
  PlanningGateOptions o;
  o.max_planning = planning;
  o.max_planning_per_token = per_token;
  o.max_queued = queued;
  o.max_queued_per_token = queued_per_token;
  return o;
}

TEST(PlanningGate, OptionsOutOfRangeAreRefused) {
  EXPECT_FALSE(PlanningGate::Make(Opts(0, 1, 1, 1)).ok());
  EXPECT_FALSE(PlanningGate::Make(Opts(2, 3, 1, 1)).ok());
  EXPECT_FALSE(PlanningGate::Make(Opts(2, 1, 4, 5)).ok());
  EXPECT_FALSE(PlanningGate::Make(Opts(2, 1, 0, 0)).ok());
  EXPECT_OK(PlanningGate::Make(Opts(1, 1, 1, 1)));
}

TEST(PlanningGate, CapsQueueBoundsAndRoundRobinOverTokens) {
  auto gate = PlanningGate::Make(Opts(2, 1, 4, 3)).value();
  std::atomic<bool> no{false};
  // Token a: one plans (its share), three wait; a fourth is past its share.
  auto a1 = gate->Enter("a").value();
  EXPECT_TRUE(a1->admitted());
  auto a2 = gate->Enter("a").value();
  auto a3 = gate->Enter("a").value();
  auto a4 = gate->Enter("a").value();
  EXPECT_FALSE(a2->admitted());
  auto a5 = gate->Enter("a");
  ASSERT_FALSE(a5.ok());
  EXPECT_EQ(a5.status().sql_state(), "53400");
  EXPECT_NE(a5.status().message().find("max_queued_plans_per_token"), std::string::npos) << a5.status().message();
  // Token b gets the free slot at once, whatever a has queued.
  auto b1 = gate->Enter("b").value();
  EXPECT_TRUE(b1->admitted());
  auto b2 = gate->Enter("b").value();  // queued: 4 in all now
  EXPECT_FALSE(b2->admitted());
  auto c1 = gate->Enter("c");  // the whole queue is full
  ASSERT_FALSE(c1.ok());
  EXPECT_EQ(c1.status().sql_state(), "53400");
  EXPECT_NE(c1.status().message().find("(max_queued_plans)"), std::string::npos) << c1.status().message();
  auto st = gate->stats();
  EXPECT_EQ(st.planning, 2);
  EXPECT_EQ(st.queued, 4);
  EXPECT_EQ(st.refused, 2);
  // b1 done: b may plan again but a was served less recently? Round-robin
  // goes on after the client admitted last (b), so a's next would go
  // first — but a is at its share; so b2 is admitted.
  b1->Release();
  EXPECT_TRUE(b2->admitted());
  EXPECT_FALSE(a2->admitted());
  // a1 done: a2 (a's oldest) is admitted, FIFO within a token.
  a1->Release();
  EXPECT_TRUE(a2->Wait(no));
  EXPECT_FALSE(a3->admitted());
  // A waiting ticket gives up when cancelled, and leaves the queue.
  std::atomic<bool> cancel{true};
  EXPECT_FALSE(a3->Wait(cancel));
  EXPECT_EQ(gate->stats().abandoned, 1);
  EXPECT_EQ(gate->stats().queued, 1);
  // Destroying tickets gives their places back; the last waiter is admitted.
  b2.reset();
  a2.reset();
  EXPECT_TRUE(a4->admitted());
  a3.reset();
  a4.reset();
  st = gate->stats();
  EXPECT_EQ(st.planning, 0);
  EXPECT_EQ(st.queued, 0);
  EXPECT_EQ(st.admitted, 5);
}

TEST(PlanningGate, AWaiterWakesWhenASlotFrees) {
  auto gate = PlanningGate::Make(Opts(1, 1, 8, 8)).value();
  auto first = gate->Enter("a").value();
  auto second = gate->Enter("b").value();
  std::atomic<bool> no{false}, admitted{false};
  std::thread waiter([&] { admitted = second->Wait(no); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(admitted.load());
  first.reset();
  waiter.join();
  EXPECT_TRUE(admitted.load());
}

// Round-robin: with a's and b's statements queued, slots alternate between
// them whatever order they were queued in.
TEST(PlanningGate, SlotsAlternateBetweenTokens) {
  auto gate = PlanningGate::Make(Opts(1, 1, 16, 16)).value();
  auto running = gate->Enter("x").value();
  std::vector<std::unique_ptr<PlanningGate::Ticket>> a, b;
  for (int i = 0; i < 3; ++i) a.push_back(gate->Enter("a").value());
  for (int i = 0; i < 3; ++i) b.push_back(gate->Enter("b").value());
  std::string order;
  running.reset();
  for (int i = 0; i < 6; ++i) {
    for (auto* side : {&a, &b}) {
      for (auto& t : *side) {
        if (t && t->admitted()) {
          order += side == &a ? 'a' : 'b';
          t.reset();
          break;
        }
      }
    }
  }
  EXPECT_EQ(order, "ababab");
}

}  // namespace
}  // namespace quiver::server
