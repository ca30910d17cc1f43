// The hlomem command line. CLI11 lives here and nowhere else: each
// subcommand fills an options struct and calls into lib/.
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/base/file_contents.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"
#include "version.h"

namespace {

// Exit codes, the diff/grep convention CI systems expect.
constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;

// Prints the computed allocations in XLA's buffer-assignment layout.
int RunAssign(const std::string& path) {
  auto file = hlomem::FileContents::Open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
    return kExitBadInput;
  }
  auto modules = hlomem::hlo::ParseHloText(*file);
  if (!modules.ok()) {
    std::fprintf(stderr, "%s\n", std::string(modules.status().message()).c_str());
    return kExitBadInput;
  }
  for (const auto& module : *modules) {
    auto assignment = hlomem::analysis::BufferAssignment::Run(module);
    if (!assignment.ok()) {
      std::fprintf(stderr, "%s\n", std::string(assignment.status().message()).c_str());
      return kExitBadInput;
    }
    std::printf("%s", hlomem::analysis::FormatAllocations(**assignment).c_str());
  }
  return kExitOk;
}

int RunParse(const std::vector<std::string>& paths) {
  int exit_code = kExitOk;
  for (const std::string& path : paths) {
    auto file = hlomem::FileContents::Open(path);
    if (!file.ok()) {
      std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
      exit_code = kExitBadInput;
      continue;
    }
    auto modules = hlomem::hlo::ParseHloText(*file);
    if (!modules.ok()) {
      std::fprintf(stderr, "%s\n", std::string(modules.status().message()).c_str());
      exit_code = kExitBadInput;
      continue;
    }
    for (const auto& module : *modules) {
      absl::Status verified = hlomem::hlo::VerifyModule(module);
      if (!verified.ok()) {
        std::fprintf(stderr, "%s\n", std::string(verified.message()).c_str());
        exit_code = kExitBadInput;
        continue;
      }
      std::printf("%s\n", absl::StrFormat("%s: module %s: %d computations, %d instructions%s",
                                          path, module.name.empty() ? "<unnamed>" : module.name,
                                          module.computations.size(), module.instructions.size(),
                                          module.is_scheduled ? ", scheduled" : "")
                              .c_str());
    }
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hlomem: where the memory of a compiled XLA program goes"};
  app.set_version_flag("--version",
                       absl::StrCat("hlomem ", HLOMEM_VERSION, " (JSON schema version ",
                                    HLOMEM_SCHEMA_VERSION, ")"));
  app.require_subcommand(1);

  std::vector<std::string> parse_paths;
  CLI::App* parse = app.add_subcommand("parse", "Parse and verify HLO modules; one line per module");
  parse->add_option("paths", parse_paths, "HLO text or proto files, or dump directories")
      ->required();

  std::string assign_path;
  CLI::App* assign = app.add_subcommand(
      "buffer-assignment", "Print the computed buffer assignment in XLA's -buffer-assignment.txt layout");
  assign->add_option("path", assign_path, "HLO text file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  if (parse->parsed()) return RunParse(parse_paths);
  if (assign->parsed()) return RunAssign(assign_path);
  return kExitBadInput;
}
