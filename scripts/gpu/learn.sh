#!/usr/bin/env bash
# The device call's learn step (run.sh's `learn`; docs/gpu.md, "The learn step"): `npm run learn`'s
# CLI (src/cli/learn.ts, WebGPU engine) on the GPU for issue 20's presets, NSA, window-only and dense
# each, as concurrent processes (one per preset and mechanism: a small model fills neither the GPU
# nor the host), each stopping at its preset's target accuracy:
#   mqar          T = 256, 16 pairs          target 99 %   (issue 20: ≥ 99 % on a GPU)
#   mqar-long     T = 1,024, 64 pairs        target 95 %   (NSA ≥ 95 %, ≤ 1/4 of dense's keys)
#   passkey-long  T = 1,024, a 4-digit key   target 99 %   per digit (NSA ≥ 95 % of whole keys)
# NSA and dense train their preset's whole schedule (early-stopped), except passkey-long's dense,
# 1,500 of the preset's 4,000 steps (a 1,500-step schedule: on the CPU dense stayed at chance on the
# key's first digit where NSA learned it, which that schedule shows, and the GPU's seconds go to
# mqar-long); the window, which cannot reach the answers, 500 steps (a 500-step schedule): enough to
# show it at chance, and it leaves the GPU to the others sooner. passkey-long's first 1,500 of 4,000
# steps train at T = 256 (its sequence-length warm-up; a shorter run keeps that share: 563 of
# dense's 1,500, 188 of the window's 500).
#   bash scripts/gpu/learn.sh OUT_JSONL WORKDIR [--cap S] [--small]
# --cap S: the step's seconds (default $STEP_CAP, which run.sh's step sets to its cap clipped to the
# budget left).
# Every JSON line of every run (grid, each evaluation as it comes, run, best) is appended to
# OUT_JSONL, tagged with its preset and mechanism, then one {"kind":"process"} line per run with its
# exit status and seconds (exit 124: cut at the cap). Each run is under S − 10 seconds, so a cut
# run keeps the lines it wrote and this script still reports. The runs' own output (the tables) goes
# to WORKDIR and, at the end, to stdout; their errors to stderr as they come, prefixed by the run.
# --small: mqar-tiny for 2 steps per mechanism at batch 2 (the SwiftShader rehearsal).
# Exit status: 0 if every run exited 0, 124 if any was cut (and none failed), else 1.
# NSA_NODE: the node to run (default: node on PATH). NSA_LEARN_ONLY=NAME,...: only the runs named,
# each a preset (all its mechanisms) or preset-mechanism (e.g. mqar-long,passkey-long-nsa): a
# follow-up call for the runs a first one cut, with the GPU shared among fewer.
# NSA_LEARN_GRID=round2: instead, NSA alone in nine variants of issue 20's open items, after the
# H200 run of 2026-11-28 (docs/benchmarks.md: dense and the window settled; NSA at 93.5 %, 74.1 %
# and 91.0 % of whole keys, all with two key/value groups): mqar's preset (a selection per head, 4
# groups, at peak 2e-3: 99.2 % on the CPU at batch 8, where two groups at 3e-3 reached 71.5 %) and
# at 1e-3 and 3e-3 (with two groups 3e-3 collapsed after step 700 on the H200);
# mqar-long's preset (RoPE base 5·10⁵ and a selection per head: 93.9 % on the CPU at batch 8), with
# 5 selected blocks (0.243 × dense's keys, within issue 20's quarter) and at 1e-3; passkey-long with
# 5 blocks, at 1e-3, and with base 5·10⁵ and a selection per head.
# (Head dim 64, for routing by √(dk / block), did not learn on the CPU, nor did mqar-long
# without positional encoding: docs/benchmarks.md, MQAR.) Each run is named
# preset-mechanism-variant, and its lines carry the variant (npm run learn --variant).
set -uo pipefail
usage() { echo "usage: bash scripts/gpu/learn.sh OUT_JSONL WORKDIR [--cap S] [--small]" >&2; exit 2; }
[ $# -ge 2 ] || usage
jsonl="$1" work="$2"; shift 2
small=0
cap="${STEP_CAP:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small=1 ;;
    --cap) [ $# -ge 2 ] || usage; cap="$2"; shift ;;
    *) echo "learn.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
[[ "$cap" =~ ^[0-9]+$ ]] || { echo "learn.sh: --cap (or STEP_CAP) must be whole seconds (got '$cap')" >&2; exit 2; }
run_cap=$((cap - 10))
[ "$run_cap" -ge 5 ] || { echo "learn.sh: --cap $cap leaves no time for a run (each gets the cap − 10 s)" >&2; exit 2; }
node="${NSA_NODE:-node}"
mkdir -p "$work" || exit 1
touch "$jsonl" || exit 1

# preset mechanism steps eval-every target [extra learn flags...]
if [ "$small" = 1 ]; then
  runs=(
    "mqar-tiny nsa 2 1 0.99 --batch 2 --eval-batches 1"
    "mqar-tiny window 2 1 0.99 --batch 2 --eval-batches 1"
    "mqar-tiny dense 2 1 0.99 --batch 2 --eval-batches 1"
  )
elif [ "${NSA_LEARN_GRID:-}" = round2 ]; then
  runs=(
    "mqar-long nsa 4000 100 0.95 --set model.nsa.nSel=5 --variant nsel5"
    "mqar-long nsa 4000 100 0.95 --lrs 1e-3 --variant lr1e-3"
    "mqar-long nsa 4000 100 0.95 --variant theta5e5-g4"
    "passkey-long nsa 4000 50 0.99 --set model.nsa.nSel=5 --variant nsel5"
    "passkey-long nsa 4000 50 0.99 --lrs 1e-3 --variant lr1e-3"
    "passkey-long nsa 4000 50 0.99 --set model.ropeTheta=500000 --set model.nKvGroups=4 --variant theta5e5-g4"
    "mqar nsa 3000 100 0.99 --variant g4-lr2e-3"
    "mqar nsa 3000 100 0.99 --lrs 1e-3 --variant g4-lr1e-3"
    "mqar nsa 3000 100 0.99 --lrs 3e-3 --variant g4-lr3e-3"
  )
elif [ -n "${NSA_LEARN_GRID:-}" ]; then
  echo "learn.sh: NSA_LEARN_GRID: unknown grid '${NSA_LEARN_GRID}' (known: round2)" >&2; exit 2
else
  runs=(
    "mqar-long nsa 4000 100 0.95"
    "mqar-long dense 4000 100 0.95"
    "passkey-long nsa 4000 50 0.99"
    "passkey-long dense 1500 50 0.99"
    "mqar nsa 3000 100 0.99"
    "mqar dense 3000 100 0.99"
    "mqar-long window 500 100 0.95"
    "passkey-long window 500 50 0.99"
    "mqar window 500 100 0.99"
  )
fi

# A run's variant (the value of its --variant flag, if any) and name: preset-mechanism[-variant].
variant_of() { [[ " $1 " =~ \ --variant\ ([^ ]+) ]] && echo "${BASH_REMATCH[1]}"; }
name_of() {
  local preset mechanism v
  read -r preset mechanism _ <<< "$1"
  v="$(variant_of "$1")"
  echo "$preset-$mechanism${v:+-$v}"
}

if [ -n "${NSA_LEARN_ONLY:-}" ]; then
  picked=()
  for want in ${NSA_LEARN_ONLY//,/ }; do
    found=0
    for r in "${runs[@]}"; do
      read -r preset mechanism _ <<< "$r"
      name="$(name_of "$r")"
      if [ "$want" = "$preset" ] || [ "$want" = "$preset-$mechanism" ] || [ "$want" = "$name" ]; then
        found=1
        [[ " ${picked[*]+${picked[*]}} " == *" $name "* ]] || picked+=("$name")
      fi
    done
    [ "$found" = 1 ] || { echo "learn.sh: NSA_LEARN_ONLY: '$want' names no run (presets, preset-mechanism pairs and run names of this script's list)" >&2; exit 2; }
  done
  kept=()
  for r in "${runs[@]}"; do
    [[ " ${picked[*]} " == *" $(name_of "$r") "* ]] && kept+=("$r")
  done
  runs=("${kept[@]}")
fi

echo "[learn] ${#runs[@]} runs at once, each under ${run_cap} s; lines appended to $jsonl"
pids=()
names=()
for r in "${runs[@]}"; do
  read -r preset mechanism steps every target extra <<< "$r"
  name="$(name_of "$r")"
  variant="$(variant_of "$r")"
  names+=("$name")
  (
    t0=$SECONDS
    # --foreground: the run stays in this script's process group, so a signal to the group (the
    # step's own cap in run.sh) reaches it too.
    # shellcheck disable=SC2086 # $extra is a list of flags
    timeout --foreground -k 3 "$run_cap" "$node" scripts/run-node.mjs src/cli/learn.ts --preset "$preset" --mechanisms "$mechanism" \
      --steps "$steps" --eval-every "$every" --target "$target" $extra --out "$work/$name" --jsonl "$jsonl" --no-figure \
      > "$work/$name.out" 2> >(sed -u "s/^/[learn $name] /" >&2)
    rc=$?
    printf '{"kind":"process","preset":"%s","mechanism":"%s",%s"exit":%d,"seconds":%d,"cut":%s}\n' \
      "$preset" "$mechanism" "${variant:+\"variant\":\"$variant\",}" "$rc" "$((SECONDS - t0))" "$([ "$rc" = 124 ] && echo true || echo false)" >> "$jsonl"
    exit "$rc"
  ) &
  pids+=($!)
done

failed=0
cut=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  rc=$?
  if [ "$rc" = 124 ]; then cut=1; elif [ "$rc" != 0 ]; then failed=1; fi
  # The run's table (its JSON lines are in OUT_JSONL already), then its exit status.
  grep -v '^{' "$work/${names[$i]}.out" 2>/dev/null | sed "s/^/[learn ${names[$i]}] /"
  echo "[learn] ${names[$i]}: exit $rc$([ "$rc" = 124 ] && echo ", cut at ${run_cap} s (its lines so far kept)")"
done
[ "$failed" = 0 ] || exit 1
[ "$cut" = 0 ] || exit 124
exit 0
