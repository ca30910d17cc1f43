// The JSON form of a report (`hlomem report --format json`). The keys named
// in schema/report.schema.json are a contract: fields may be added, never
// renamed. All sizes are integer bytes.
#ifndef HLOMEM_LIB_REPORT_JSON_WRITER_H_
#define HLOMEM_LIB_REPORT_JSON_WRITER_H_

#include <string>

#include "lib/report/report.h"

namespace hlomem::report {

struct JsonOptions {
  bool include_buffers = true;
  bool include_timeline = true;
  int indent = 2;  // -1 for one line
};

std::string WriteJson(const Report& report, const JsonOptions& options = {});

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_JSON_WRITER_H_
