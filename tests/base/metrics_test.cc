// Metrics: the phase observer sees each phase as it starts, with or without
// recording, and nothing once it is removed; recording counts the calls.
#include "lib/base/metrics.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlomem {
namespace {

std::vector<std::string>& Seen() {
  static auto* seen = new std::vector<std::string>();
  return *seen;
}
void Remember(const char* phase) { Seen().push_back(phase); }

TEST(MetricsTest, TheObserverSeesEachPhaseAsItStartsUntilRemoved) {
  Seen().clear();
  Metrics::ObservePhases(Remember);
  {
    ScopedPhase outer("outer");
    EXPECT_THAT(Seen(), testing::ElementsAre("outer"));
    ScopedPhase inner("outer: inner");
  }
  Metrics::ObservePhases(nullptr);
  { ScopedPhase after("after"); }
  EXPECT_THAT(Seen(), testing::ElementsAre("outer", "outer: inner"));
  EXPECT_EQ(Metrics::phase_observer(), nullptr);
}

TEST(MetricsTest, RecordedPhasesAreCountedInTheReport) {
  Metrics::Enable();
  { ScopedPhase once("counted phase"); }
  { ScopedPhase twice("counted phase"); }
  const std::string report = Metrics::Report(1.0);
  // "counted phase  0.000  2  <faults> ..."
  EXPECT_THAT(report, testing::ContainsRegex("counted phase +[0-9.]+ +2 +[0-9]+ "));
  EXPECT_THAT(report, testing::HasSubstr("faults"));
}

}  // namespace
}  // namespace hlomem
