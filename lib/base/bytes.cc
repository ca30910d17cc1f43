#include "lib/base/bytes.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace hlomem {

std::string HumanBytes(int64_t bytes) {
  // Mirrors tsl: integer division by 1024 while the value is >= 1 MiB, then
  // one final floating division, one decimal for KiB and two above.
  const char* const kUnits = "KMGTPE";
  const bool negative = bytes < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(bytes)
                                : static_cast<uint64_t>(bytes);
  const char* sign = negative ? "-" : "";
  if (magnitude < 1024) return absl::StrFormat("%s%dB", sign, magnitude);
  const char* unit = kUnits;
  while (unit[1] != '\0' && magnitude >= uint64_t{1024} * 1024) {
    magnitude /= 1024;
    ++unit;
  }
  const double value = static_cast<double>(magnitude) / 1024.0;
  if (*unit == 'K') return absl::StrFormat("%s%.1fKiB", sign, value);
  return absl::StrFormat("%s%.2f%ciB", sign, value, *unit);
}

absl::StatusOr<int64_t> ParseByteSize(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  size_t number_end = 0;
  while (number_end < s.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(s[number_end])) ||
          s[number_end] == '.' || s[number_end] == '+' ||
          ((s[number_end] == 'e' || s[number_end] == 'E') &&
           number_end + 1 < s.size() &&
           (absl::ascii_isdigit(static_cast<unsigned char>(s[number_end + 1])) ||
            s[number_end + 1] == '+' || s[number_end + 1] == '-')) ||
          (s[number_end] == '-' && number_end > 0 &&
           (s[number_end - 1] == 'e' || s[number_end - 1] == 'E')))) {
    ++number_end;
  }
  const absl::string_view number = s.substr(0, number_end);
  const std::string unit =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(s.substr(number_end)));
  double value = 0;
  if (number.empty() || !absl::SimpleAtod(number, &value) || value < 0 ||
      !std::isfinite(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid size '", text,
                     "': expected a number with an optional unit, e.g. 80GiB"));
  }
  double scale = 1;
  static constexpr struct {
    const char* suffix;
    double scale;
  } kUnits[] = {
      {"", 1},          {"b", 1},
      {"k", 1024.0},    {"kib", 1024.0},  {"kb", 1e3},
      {"m", 1048576.0}, {"mib", 1048576.0}, {"mb", 1e6},
      {"g", 1073741824.0}, {"gib", 1073741824.0}, {"gb", 1e9},
      {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12},
  };
  bool known = false;
  for (const auto& u : kUnits) {
    if (unit == u.suffix) {
      scale = u.scale;
      known = true;
      break;
    }
  }
  if (!known) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid size '", text, "': unknown unit '", unit,
        "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)"));
  }
  const double bytes = std::round(value * scale);
  if (bytes >= 9.2e18) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid size '", text, "': too large"));
  }
  return static_cast<int64_t>(bytes);
}

absl::StatusOr<double> ParsePercent(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  if (absl::ConsumeSuffix(&s, "%")) s = absl::StripTrailingAsciiWhitespace(s);
  double value = 0;
  // SimpleAtod would take "nan", "inf" and surrounding spaces; only digits,
  // a sign, a point and an exponent make a percentage.
  const bool numeric = !s.empty() && s.find_first_not_of("0123456789.eE+-") == absl::string_view::npos;
  if (!numeric || !absl::SimpleAtod(s, &value) || !std::isfinite(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a percentage such as 5 or 5%, not '", text, "'"));
  }
  if (value < 0) {
    return absl::InvalidArgumentError(absl::StrCat("must be at least 0, not ", absl::StripAsciiWhitespace(text)));
  }
  return value;
}

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<int64_t> CheckedRoundUpTo(int64_t value, int64_t alignment) {
  const int64_t remainder = value % alignment;
  if (remainder == 0) return value;
  return CheckedAdd(value, alignment - remainder);
}

}  // namespace hlomem
