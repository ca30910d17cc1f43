#!/usr/bin/env bash
# The GitHub Action (action.yml) as a script, so that it can be run and
# tested anywhere. Inputs come as INPUT_* variables:
#   INPUT_PATHS      dump folders or files to check (space-separated)
#   INPUT_PYTEST     a command to run first (e.g. "pytest tests/memory"),
#                    with XLA's dump flags added: what it compiles is checked
#   INPUT_MAX_TOTAL, INPUT_MAX_TEMP, INPUT_MAX_PEAK   budgets (80GiB, 1.5e9)
#   INPUT_BASELINE, INPUT_TOLERANCE                   a report .json and % growth
#   INPUT_FAIL_ON    detectors whose findings fail (space-separated, or "all")
#   INPUT_DEVICE     device fit (h100-80gb, v5e-16gb, ...)
#   INPUT_TARGET     backend rules, when the dump does not say
#   INPUT_SARIF      write SARIF 2.1.0: "true" to $RUNNER_TEMP/hlomem.sarif
#                    (where action.yml uploads it from), or to a path
#   HLOMEM           the hlomem command (action.yml: the install step's)
# Annotations (::error file=...,line=...) go to stderr, the Markdown report
# to $GITHUB_STEP_SUMMARY. Exit 1 when a gate or the command failed, 2 on
# bad input.
set -uo pipefail
HLOMEM="${HLOMEM:-hlomem}"
case "${INPUT_SARIF:-}" in
  "" | false) INPUT_SARIF="" ;;
  true) INPUT_SARIF="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/hlomem.sarif" ;;
esac
summary="${GITHUB_STEP_SUMMARY:-/dev/null}"
read -r -a paths <<< "${INPUT_PATHS:-}"
command_status=0
if [ -n "${INPUT_PYTEST:-}" ]; then
  dump="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/hlomem-dump-$$"
  mkdir -p "$dump"
  echo "::group::${INPUT_PYTEST} (XLA dumps to ${dump})"
  # A persistent-cache hit skips compilation, and with it the dump.
  XLA_FLAGS="${XLA_FLAGS:-} --xla_dump_to=${dump} --xla_dump_hlo_as_text --xla_dump_hlo_as_proto" \
    JAX_ENABLE_COMPILATION_CACHE=false bash -c "${INPUT_PYTEST}"
  command_status=$?
  echo "::endgroup::"
  if [ "$command_status" != 0 ]; then
    echo "::error title=hlomem::'${INPUT_PYTEST}' exited with status ${command_status}" >&2
  fi
  if [ -n "$(ls -A "$dump")" ]; then
    paths+=("$dump")
  else
    echo "::warning title=hlomem::'${INPUT_PYTEST}' compiled no XLA program: nothing to check" >&2
    [ ${#paths[@]} = 0 ] && exit $(( command_status == 0 ? 2 : 1 ))
  fi
fi
if [ ${#paths[@]} = 0 ]; then
  echo "::error title=hlomem::set 'paths' (dump folders or files) or 'pytest' (a command to run)" >&2
  exit 2
fi
options=()
[ -n "${INPUT_TARGET:-}" ] && options+=(--target "$INPUT_TARGET")
gates=()
[ -n "${INPUT_MAX_TOTAL:-}" ] && gates+=(--max-total "$INPUT_MAX_TOTAL")
[ -n "${INPUT_MAX_TEMP:-}" ] && gates+=(--max-temp "$INPUT_MAX_TEMP")
[ -n "${INPUT_MAX_PEAK:-}" ] && gates+=(--max-peak "$INPUT_MAX_PEAK")
[ -n "${INPUT_BASELINE:-}" ] && gates+=(--baseline "$INPUT_BASELINE" --tolerance "${INPUT_TOLERANCE:-0}")
for detector in ${INPUT_FAIL_ON:-}; do gates+=(--fail-on "$detector"); done
[ -n "${INPUT_DEVICE:-}" ] && gates+=(--device "$INPUT_DEVICE")
if [ ${#gates[@]} = 0 ]; then
  # Nothing to gate on: the report is the summary.
  "$HLOMEM" report "${paths[@]}" "${options[@]}" --format markdown >> "$summary"
  status=$?
else
  [ -n "${INPUT_SARIF:-}" ] && gates+=(--sarif "$INPUT_SARIF")
  # --github: annotations on stderr and the Markdown summary appended to
  # $GITHUB_STEP_SUMMARY; the verdict in the log.
  "$HLOMEM" check "${paths[@]}" "${options[@]}" "${gates[@]}" --github
  status=$?
fi
if [ "$status" = 0 ] && [ "$command_status" != 0 ]; then status=1; fi
exit "$status"
