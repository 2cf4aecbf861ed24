# Sourced by scripts/test and scripts/fuzz.
# run_at_most N COMMAND...: starts COMMAND in the background once fewer than N
# of this shell's background jobs are running; `wait` for the last ones.
run_at_most() {
  local n=$1
  shift
  while [ "$(jobs -rp | wc -l)" -ge "$n" ]; do wait -n || true; done
  "$@" &
}
