#!/usr/bin/env bash
# The CI recipe's commands (docs/pages/ci.md), one place for the GitHub composite action
# (host-tools/ci/action.yml) and the GitLab example (host-tools/ci/gitlab-ci.yml):
#   pqscope-ci.sh check   the exact check of the library's --impl-dir built by one compiler at one
#                         level: $OUT/pqscope.sarif, $OUT/junit.xml, $OUT/taint/ (its findings)
#   pqscope-ci.sh bench   its cycles, stack and code size: $OUT/benchmark.json (github-action-
#                         benchmark's customSmallerIsBetter), $OUT/run/; against $PQSCOPE_BASELINE
#                         (a previous run's directory) if set
#   pqscope-ci.sh gate    exits with the first non-zero status the steps above recorded
# check and bench record pqscope's exit status in $OUT/status and exit 0, so that the CI uploads
# what they wrote before `gate` fails the job (4 leak, 5 inconclusive, 6 regression, 1 error).
# Inputs (environment): PQSCOPE_IMPL_DIR, PQSCOPE_SCHEME, PQSCOPE_IMPL, PQSCOPE_COMPILER,
# PQSCOPE_OPT, PQSCOPE_SAMPLES (bench), PQSCOPE_BASELINE, PQSCOPE_CI_OUT (default pqscope-ci).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pqscope="$here/../pqscope"
out=${PQSCOPE_CI_OUT:-pqscope-ci}
mkdir -p "$out"

record() {  # runs pqscope with the arguments; keeps its status in $out/status unless one is there
  "$pqscope" "$@"
  local status=$?
  echo "pqscope-ci: pqscope $1 exited $status" >&2
  if [ "$status" -ne 0 ] && [ ! -s "$out/status" ]; then
    echo "$status" > "$out/status"
  fi
}

implementation=(--impl-dir "${PQSCOPE_IMPL_DIR:?the implementation directory of the library}"
                --scheme "${PQSCOPE_SCHEME:?a scheme name}" --impl "${PQSCOPE_IMPL:?an implementation name}")
case "${1:-}" in
  check)
    record taint "${implementation[@]}" --compiler "${PQSCOPE_COMPILER:-gcc12}" --opt "${PQSCOPE_OPT:-catalogue}" \
      --out "$out/taint" --sarif "$out/pqscope.sarif" --junit "$out/junit.xml" ;;
  bench)
    record run "${implementation[@]}" -n "${PQSCOPE_SAMPLES:-10}" --out "$out/run" \
      --benchmark-json "$out/benchmark.json" ${PQSCOPE_BASELINE:+--baseline "$PQSCOPE_BASELINE"} ;;
  gate)
    status=$(cat "$out/status" 2>/dev/null || echo 0)
    exit "${status:-0}" ;;
  *)
    echo "usage: pqscope-ci.sh check|bench|gate (see its header)" >&2
    exit 2 ;;
esac
