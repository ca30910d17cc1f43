// Byte counts: XLA's human-readable form, size parsing for budgets, and
// overflow-checked arithmetic for sizes computed from untrusted shapes.
#ifndef HLOMEM_LIB_BASE_BYTES_H_
#define HLOMEM_LIB_BASE_BYTES_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hlomem {

// The same text as tsl::strings::HumanReadableNumBytes, so hlomem's numbers
// can be compared with XLA's reports at a glance: "1023B", "768.0KiB",
// "129.01GiB".
std::string HumanBytes(int64_t bytes);

// Parses "80GiB", "1.5e9", "512MB", "1024", "2 TiB". Binary (KiB, MiB, ...)
// and decimal (KB, MB, ...) suffixes; a bare number is bytes. "K"/"M"/"G"
// alone are taken as binary, as most ML tooling does.
absl::StatusOr<int64_t> ParseByteSize(absl::string_view text);

// Parses a percentage as people write it: "5", "5.5", "5%", "5 %", " 5% ".
// Finite and at least 0 (growth of 200% is allowed); one optional '%' sign.
// The messages name no flag, so each caller can prefix its own name.
absl::StatusOr<double> ParsePercent(absl::string_view text);

// Overflow-checked arithmetic on non-negative sizes: nullopt on overflow.
std::optional<int64_t> CheckedMul(int64_t a, int64_t b);
std::optional<int64_t> CheckedAdd(int64_t a, int64_t b);

// a + b, clamped to the int64 range instead of overflowing: totals of
// untrusted sizes stay ordered and never wrap.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}

// Rounds `value` up to a multiple of `alignment` (> 0).
inline int64_t RoundUpTo(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
// The same for untrusted `value` >= 0 and `alignment` > 0: nullopt on overflow.
std::optional<int64_t> CheckedRoundUpTo(int64_t value, int64_t alignment);

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_BYTES_H_
