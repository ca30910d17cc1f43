#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz/ (or
# $HLOMEM_FUZZ_BUILD) and runs each for a bounded time, seeded from testdata/,
# tests/fuzz/seeds/ (and ../shared/corpus, ../shared/targets when present).
# Fails when any target crashes, leaks, hangs or runs out of memory.
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     default: 60 s, all
# Targets: hlo_text hlo_proto xla_buffer_assignment dump_file_name text_proto
# gpu_target_config tpu_target_arguments xla_oom_error.
# Crashing inputs land in build-fuzz/crashes/; each fixed one belongs in
# tests/regress/<target>/ (replayed by tests/hostile/regress_test.cc).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(hlo_text hlo_proto xla_buffer_assignment dump_file_name text_proto gpu_target_config
           tpu_target_arguments xla_oom_error report_json)
fi
build="${HLOMEM_FUZZ_BUILD:-build-fuzz}"  # a build directory of its own

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DHLOMEM_FUZZ=ON > /dev/null
cmake --build "$build" --target fuzzers -j "$(nproc)"

# Seeds: real files of each format, up to 64 KiB (bigger ones only slow
# every mutation down), under content-hash names so reruns add nothing.
seed_roots=(testdata)
if [ -d ../shared/corpus ]; then seed_roots+=(../shared/corpus); fi
copy_seeds() {  # copy_seeds TARGET ROOTS-ARRAY-NAME FIND-PREDICATES...
  local dir="$build/seeds/$1"
  local -n roots="$2"
  shift 2
  mkdir -p "$dir"
  find "${roots[@]}" -type f -size -65k "$@" -print0 |
    while IFS= read -r -d '' f; do
      cp "$f" "$dir/$(sha1sum < "$f" | cut -c1-40)"
    done
}
add_seeds() { local target="$1"; shift; copy_seeds "$target" seed_roots "$@"; }
add_seeds hlo_text \( -name '*.txt' -o -name '*.hlo' \) ! -name '*-buffer-assignment*' \
  ! -name '*-live-range.txt' ! -name '*-memory-usage-report.txt'
add_seeds hlo_proto \( -name '*.pb' -o -name '*.pbtxt' \) ! -name '*memory-usage-report*'
add_seeds xla_buffer_assignment \( -name '*-buffer-assignment*.txt' -o -name '*-live-range.txt' \
  -o -name '*-memory-usage-report.txt' \)
# The target files (lib/target): the committed seeds, what testdata holds
# (testdata/accel's per-module files) and the shared GPU device specs.
target_roots=(tests/fuzz/seeds testdata)
if [ -d ../shared/targets ]; then target_roots+=(../shared/targets); fi
add_target_seeds() { local target="$1"; shift; copy_seeds "$target" target_roots "$@"; }
gpu_files=( \( -name '*gpu_target_config.pbtxt' -o -name '*.txtpb' \) )
tpu_files=( -name '*.target_arguments.txt' )
add_target_seeds gpu_target_config "${gpu_files[@]}"
add_target_seeds tpu_target_arguments "${tpu_files[@]}"
add_target_seeds xla_oom_error -name 'error.txt'
add_target_seeds text_proto \( "${gpu_files[@]}" -o "${tpu_files[@]}" \
  -o -name '*.execution_options.txt' \)
# Committed seeds of syntax the corpora lack (tests/fuzz/seeds/<target>/).
for dir in tests/fuzz/seeds/*/; do
  target="$(basename "$dir")"
  mkdir -p "$build/seeds/$target"
  for f in "$dir"*; do cp "$f" "$build/seeds/$target/$(sha1sum < "$f" | cut -c1-40)"; done
done
mkdir -p "$build/seeds/dump_file_name"
find "${seed_roots[@]}" -type f -printf '%f\n' | sort -u | while IFS= read -r name; do
  printf '%s' "$name" > "$build/seeds/dump_file_name/$(printf '%s' "$name" | sha1sum | cut -c1-40)"
done

# UBSan findings must stop the run like ASan's do.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
failed=()
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  mkdir -p "$corpus" "$build/crashes"
  echo "== fuzzing $target for ${seconds}s"
  dict=()
  dict_file="tests/fuzz/$target.dict"
  case "$target" in  # the target files are all text protos
    gpu_target_config | tpu_target_arguments) dict_file=tests/fuzz/text_proto.dict ;;
  esac
  if [ -f "$dict_file" ]; then dict=(-dict="$dict_file"); fi
  # -timeout: an input that takes 30 s is a hang; -rss_limit_mb: inputs are
  # at most 64 KiB, so 2 GiB is far past "bounded by the input size".
  if ! "$build/tests/fuzz/${target}_fuzzer" "$corpus" "$build/seeds/$target" \
      -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/crashes/${target}-" "${dict[@]}" 2> "$build/$target.log"; then
    tail -n 60 "$build/$target.log"
    failed+=("$target")
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|Done [0-9]+ runs' \
    "$build/$target.log" || true
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $build/crashes/)" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} target(s) ran ${seconds}s each without a crash"
