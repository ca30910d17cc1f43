#include "tests/perf/perf_inputs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace hlomem::perf {
namespace {

std::shared_ptr<const FileContents> OpenOrDie(const std::string& path) {
  absl::StatusOr<std::shared_ptr<const FileContents>> file = FileContents::Open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
    std::exit(2);
  }
  return *file;
}

}  // namespace

const std::vector<PerfInput>& PerfInputs() {
  static const auto* inputs = [] {
    auto* list = new std::vector<PerfInput>();
    const std::string dir = HLOMEM_TESTDATA_DIR "/jax/";
    list->push_back({"transformer22_train_12MB",
                     OpenOrDie(dir + "big_unrolled_transformer_train/module_0000."
                               "jit_unrolled_transformer_step.cpu_after_optimizations.txt")});
    list->push_back({"transformer48_forward",
                     OpenOrDie(dir + "big_unrolled_transformer_48_forward/module_0000."
                               "jit_unrolled_transformer_forward.cpu_after_optimizations.txt")});
    // The corpus's modules over 1 MB (parser conformance inputs: real
    // dumps, SPMD ones among them), in name order.
    std::error_code error;
    std::vector<std::filesystem::path> corpus;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(HLOMEM_CORPUS_DIR, error)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && entry.file_size() > (size_t{1} << 20) &&
          (ext == ".txt" || ext == ".hlo")) {
        corpus.push_back(entry.path());
      }
    }
    std::sort(corpus.begin(), corpus.end(), [](const auto& a, const auto& b) {
      return a.filename() < b.filename();
    });
    for (const auto& path : corpus) {
      list->push_back({"corpus:" + path.filename().string().substr(0, 40), OpenOrDie(path.string())});
    }
    if (const char* big = std::getenv("HLOMEM_PERF_FILE")) {
      list->push_back({"HLOMEM_PERF_FILE", OpenOrDie(big)});
    }
    return list;
  }();
  return *inputs;
}

double CatSeconds(const std::string& path) {
  std::vector<char> buffer(size_t{1} << 20);
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    while (::read(fd, buffer.data(), buffer.size()) > 0) {
    }
    ::close(fd);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run == 0 || seconds < best) best = seconds;
  }
  return best;
}

std::string AttributeHeavyModule(int count) {
  std::string text = "HloModule attribute_heavy, is_scheduled=true\n\nENTRY %main {\n";
  absl::StrAppend(&text, "  %p.0 = f32[128,256]{1,0} parameter(0)\n");
  for (int k = 1; k <= count; ++k) {
    absl::StrAppend(
        &text, "  %custom-call.", k, " = f32[128,256]{1,0} custom-call(%",
        k == 1 ? std::string("p.0") : absl::StrCat("custom-call.", k - 1),
        "), custom_call_target=\"__cublas$gemm\", metadata={op_type=\"dot_general\" "
        "op_name=\"jit(train_step)/jvp(transformer)/layer_", k,
        "/attention/dot_general[dimension_numbers=(((2,), (1,)), ((0,), (0,)))]\" "
        "source_file=\"/home/user/models/transformer.py\" source_line=", k % 997,
        "}, backend_config={\"operation_queue_id\":\"0\",\"wait_on_operation_queues\":[],"
        "\"gemm_backend_config\":{\"alpha_real\":1,\"beta\":0,\"dot_dimension_numbers\":"
        "{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"]},"
        "\"epilogue\":\"DEFAULT\",\"lhs_stride\":\"32768\",\"rhs_stride\":\"32768\"}}\n");
  }
  absl::StrAppend(&text, "  ROOT %copy = f32[128,256]{1,0} copy(%custom-call.", count, ")\n}\n");
  return text;
}

}  // namespace hlomem::perf
