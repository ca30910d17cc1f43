// The human-readable report: per module a summary (XLA's numbers beside
// hlomem's), the buffers live at the peak, memory by source line and by
// op_name, and a small timeline.
#ifndef HLOMEM_LIB_REPORT_TEXT_WRITER_H_
#define HLOMEM_LIB_REPORT_TEXT_WRITER_H_

#include <string>

#include "lib/report/report.h"

namespace hlomem::report {

struct TextOptions {
  int top = 10;        // rows per table
  bool color = false;  // ANSI colors (only on a terminal)
  int width = 100;     // columns available for the timeline
};

std::string WriteText(const Report& report, const TextOptions& options = {});

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_TEXT_WRITER_H_
