# Sourced by the real-program tests (tests/apps/*_test.sh): each runs one unmodified program
# natively and through rgpud and compares. Run under tests/with_rgpud.sh (CI, PoCL) or
# tests/gpu/apps_on_device.sh (a GPU host), which set:
#   OCL_ICD_VENDORS  the vendors directory with rgpu.icd only (the rgpu run)
#   RGPUD_LOG        rgpud's log, where each session's launches are counted at its end
# and optionally:
#   NATIVE_VENDORS   the vendors directory with the device's own ICD (default /etc/OpenCL/vendors)
#   APPS_OUT         where to keep the outputs (default: a temporary directory)
RGPU_VENDORS=$OCL_ICD_VENDORS
NATIVE_VENDORS=${NATIVE_VENDORS:-/etc/OpenCL/vendors}
if [ -z "${APPS_OUT:-}" ]; then
  APPS_OUT=$(mktemp -d /tmp/rgpu-apps.XXXXXX)
  trap 'rm -rf "$APPS_OUT"' EXIT
fi
mkdir -p "$APPS_OUT"
# The programs write sessions, potfiles and caches under $HOME: a private one. PoCL's kernel
# cache stays where it was, so that a rerun does not compile everything again.
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pocl}
export HOME=$APPS_OUT/home
unset XDG_CACHE_HOME XDG_DATA_HOME XDG_CONFIG_HOME
mkdir -p "$HOME"
failures=0

native() { OCL_ICD_VENDORS=$NATIVE_VENDORS "$@"; }
through_rgpu() { OCL_ICD_VENDORS=$RGPU_VENDORS "$@"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Kernel launches rgpud counted for the sessions that started after line MARK of its log
# (logged when each session ends, a moment after its client exits; sessions without a
# launch log none); empty if no session started.
log_mark() { wc -l <"$RGPUD_LOG"; }
launches_since() {
  local mark=$1 sessions total=0 s n
  sessions=$(tail -n +"$((mark + 1))" "$RGPUD_LOG" | sed -nE 's/.*session ([0-9]+) start: .*/\1/p')
  [ -n "$sessions" ] || return 0
  for s in $sessions; do
    for _ in $(seq 100); do grep -q "session $s end:" "$RGPUD_LOG" && break; sleep 0.1; done
    n=$(sed -nE "s/.*session $s scheduling \([a-z0-9]+\): ([0-9]+) launches.*/\1/p" "$RGPUD_LOG")
    total=$((total + ${n:-0}))
  done
  echo "$total"
}

# Runs "$@" through rgpu with its output in FILE: sets RGPU_RC and RGPU_LAUNCHES (the kernel
# launches rgpud ran for it).
run_through_rgpu_counted() {
  local out=$1 mark
  shift
  mark=$(log_mark)
  through_rgpu "$@" >"$out" 2>&1
  RGPU_RC=$?
  RGPU_LAUNCHES=$(launches_since "$mark")
}

finish() {
  if [ $failures -gt 0 ]; then echo "$failures check(s) failed (outputs in $APPS_OUT)"; exit 1; fi
  echo "all checks passed"
  exit 0
}
