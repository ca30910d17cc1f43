// ParsePercent: percentages as people write them ("5", "5%", "5 %"), and
// clear refusals of anything else.
#include <string>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/bytes.h"

namespace hlomem {
namespace {

using ::testing::HasSubstr;

TEST(ParsePercentTest, AcceptsNumbersWithOrWithoutThePercentSign) {
  const struct {
    const char* text;
    double value;
  } kCases[] = {
      {"5", 5},       {"5.5", 5.5},   {"5%", 5},    {"5 %", 5},    {" 5% ", 5},
      {"0", 0},       {"0%", 0},      {"0.25%", 0.25}, {"250%", 250}, {"1e1", 10},
      {"\t2.5 %\n", 2.5},
  };
  for (const auto& c : kCases) {
    const absl::StatusOr<double> parsed = ParsePercent(c.text);
    ASSERT_TRUE(parsed.ok()) << "'" << c.text << "': " << parsed.status();
    EXPECT_DOUBLE_EQ(*parsed, c.value) << "'" << c.text << "'";
  }
}

TEST(ParsePercentTest, RefusesWhatIsNotAPercentage) {
  for (const char* text : {"", " ", "%", "5%%", "abc", "5 percent", "%5", "5x", "nan", "NaN%",
                           "inf", "-inf", "infinity", "1e999", "5 5", "0x10", "5,5"}) {
    const absl::StatusOr<double> parsed = ParsePercent(text);
    ASSERT_FALSE(parsed.ok()) << "'" << text << "' parsed as " << *parsed;
    EXPECT_EQ(parsed.status().message(),
              std::string("expected a percentage such as 5 or 5%, not '") + text + "'");
  }
}

TEST(ParsePercentTest, RefusesNegativesStatingTheRange) {
  for (const char* text : {"-3", "-0.5%", " -1 % "}) {
    const absl::StatusOr<double> parsed = ParsePercent(text);
    ASSERT_FALSE(parsed.ok()) << "'" << text << "' parsed as " << *parsed;
    EXPECT_THAT(parsed.status().message(), HasSubstr("must be at least 0, not -"));
  }
  EXPECT_EQ(ParsePercent("-3").status().message(), "must be at least 0, not -3");
}

}  // namespace
}  // namespace hlomem
