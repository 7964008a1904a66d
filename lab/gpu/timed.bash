# Sourced by lab/gpu/<stage>.sh (not a stage of its own): timed NAME ARGS... runs `snakemake --cores 16
# --rerun-incomplete ARGS` into $out/NAME.log, stopped after LIMIT seconds (default 560: the
# device call returns; the same call again on the same machine resumes from the journals, the
# lock the stopped run left removed), and prints its exit status, its time and, where it
# failed, the lines that say why.
timed() {  # name, snakemake args...
  local name=$1
  shift
  local start=$(date +%s)
  timeout "${LIMIT:-560}" snakemake --cores 16 --rerun-incomplete "$@" > "$out/$name.log" 2>&1
  local rc=$?
  # a run stopped by the timeout leaves its working directory locked: unlocked for the next call
  [ $rc -eq 124 ] && snakemake --unlock "$@" > /dev/null 2>&1
  echo "$name: exit $rc after $(($(date +%s) - start)) s"
  [ $rc -ne 0 ] && grep -h "Error\|error\|mmbench" "$out/$name.log" | head -8
  return $rc
}
