// Early-return helpers for absl::Status / absl::StatusOr, in the shape of
// tsl's TF_RETURN_IF_ERROR / TF_ASSIGN_OR_RETURN (Abseil ships none).
#ifndef HLOMEM_LIB_BASE_STATUS_MACROS_H_
#define HLOMEM_LIB_BASE_STATUS_MACROS_H_

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HLOMEM_RETURN_IF_ERROR(expr)                    \
  do {                                                  \
    ::absl::Status hlomem_status_ = (expr);             \
    if (ABSL_PREDICT_FALSE(!hlomem_status_.ok())) {     \
      return hlomem_status_;                            \
    }                                                   \
  } while (0)

#define HLOMEM_CONCAT_INNER_(a, b) a##b
#define HLOMEM_CONCAT_(a, b) HLOMEM_CONCAT_INNER_(a, b)

#define HLOMEM_ASSIGN_OR_RETURN(lhs, expr) \
  HLOMEM_ASSIGN_OR_RETURN_IMPL_(HLOMEM_CONCAT_(hlomem_statusor_, __COUNTER__), lhs, expr)

#define HLOMEM_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {                \
    return std::move(statusor).status();                   \
  }                                                        \
  lhs = std::move(statusor).value()

#endif  // HLOMEM_LIB_BASE_STATUS_MACROS_H_
