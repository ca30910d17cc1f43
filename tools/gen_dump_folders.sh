#!/usr/bin/env bash
# Regenerates testdata/dumps/: whole dump folders of training scripts as
# XLA writes them (helper modules, repeated names), from tools/scripts/.
#   tools/gen_dump_folders.sh
# Uses the virtualenv tools/gen_testdata.sh creates (.venv-jax-0.12.0.1) and
# keeps each module's text files: HLO before and after optimizations and
# XLA's buffer assignment with its values and memory-usage report (not
# object files, protos or the per-module folders).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$ROOT/.venv-jax-0.12.0.1/bin/python"
if ! "$PY" -c "import jax" 2>/dev/null; then
  echo "error: $PY has no jax; run tools/gen_testdata.sh --list once to create the virtualenv" >&2
  exit 2
fi
OUT="$ROOT/testdata/dumps"
# name|script|arguments
CASES=(
  "mlp_b64_last40|train_mlp.py|--examples 296 --batch 64"
  "mlp_b64_last48|train_mlp.py|--examples 304 --batch 64"
  "mlp_b128_last40|train_mlp.py|--examples 552 --batch 128"
)
for c in "${CASES[@]}"; do
  IFS='|' read -r name script arguments <<< "$c"
  tmp="$(mktemp -d)"
  # shellcheck disable=SC2086
  XLA_FLAGS="--xla_dump_to=$tmp --xla_dump_hlo_as_text" JAX_PLATFORMS=cpu \
    "$PY" "$ROOT/tools/scripts/$script" $arguments
  rm -rf "$OUT/$name"
  mkdir -p "$OUT/$name"
  find "$tmp" -maxdepth 1 -type f \( -name '*optimizations.txt' -o -name '*-buffer-assignment.txt' \
    -o -name '*-buffer-assignment-values.txt' -o -name '*-memory-usage-report.txt' \) -exec cp {} "$OUT/$name/" \;
  printf '{"script": "tools/scripts/%s", "arguments": "%s", "jax": "%s"}\n' "$script" "$arguments" \
    "$("$PY" -c 'import jax; print(jax.__version__)')" > "$OUT/$name/case.json"
  rm -rf "$tmp"
  echo "$name: $(ls "$OUT/$name" | grep -c 'after_optimizations.txt$') modules" >&2
done

# XLA:TPU's raw dump folders, kept whole as XLA wrote them (every stage,
# side file and per-module folder): train_mlp.py's step compiled deviceless
# for one topology per TPU generation, with the virtualenv that
# tools/gen_accel_testdata.sh creates (.venv-jax-tpu).
TPU_PY="$ROOT/.venv-jax-tpu/bin/python"
if ! "$TPU_PY" -c "import jax" 2>/dev/null; then
  echo "error: $TPU_PY has no jax; run tools/gen_accel_testdata.sh --manifest-only once to create it" >&2
  exit 2
fi
# name|topology
TPU_CASES=(
  "tpu_v4_mlp_raw|v4:2x2x1"
  "tpu_v5e_mlp_raw|v5e:1x1"
  "tpu_v5p_mlp_raw|v5p:2x2x1"
  "tpu_v6e_mlp_raw|v6e:1x1"
)
for c in "${TPU_CASES[@]}"; do
  IFS='|' read -r name topology <<< "$c"
  rm -rf "${OUT:?}/$name"
  XLA_FLAGS="--xla_dump_to=$OUT/$name" JAX_PLATFORMS=cpu TPU_SKIP_MDS_QUERY=1 \
    PYTHONPATH="$ROOT/tools/scripts" "$TPU_PY" "$ROOT/tools/scripts/aot_train_mlp.py" \
    --topology "$topology" --batch 64 > /dev/null
  printf '{"script": "tools/scripts/aot_train_mlp.py", "arguments": "--topology %s --batch 64", "jax": "%s"}\n' \
    "$topology" "$("$TPU_PY" -c 'import jax; print(jax.__version__)')" > "$OUT/$name.case.json"
  echo "$name: $(ls "$OUT/$name" | wc -l) entries, as XLA:TPU wrote them" >&2
done
