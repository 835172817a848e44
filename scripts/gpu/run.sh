#!/usr/bin/env bash
# The offline GPU bundle's entry point (packed beside payload.tar.xz by scripts/gpu/pack.sh). Runs
# on a Linux x86-64 machine with an NVIDIA driver, no network and no Node:
#   bash run.sh OUTDIR [--small] [--allow-software] [--only STEP,...]
# Steps, most valuable first (--only picks some; adapter always runs first; learn only when named):
#   adapter  the WebGPU adapter Dawn gives (adapter.json); a software one is refused. When it fails,
#            the GPU steps are skipped and the PyTorch step still runs, from the presets' configs
#   smoke    a kernel subset of the GPU test tier (matmul, attention, NSA kernels, one NSA model
#            step with both kernel variants): a first verdict in about a minute (gpu-tests.json)
#   bench    npm run bench: matmul up to 4096³, tiny/small/m7c-125m (and m7c-125m at batch 8) ×
#            dense/NSA, per-kernel GPU time, MFU against the fp32 peak (bench.jsonl)
#   torch    the same models in PyTorch, eager and SDPA, when python3 has torch and CUDA (torch.json)
#   nsa      npm run bench:nsa --decode --train for T = 1k, 4k, 16k: training fwd+bwd and decode
#            per token (bench-nsa.jsonl)
#   golden   npm run train:golden on tiny and small, dense and NSA: compared with
#            tests/golden/train.json; one recorded here (no golden for this adapter) is reported
#            'recorded, unchecked', never as a pass (golden.json)
#   learn    npm run learn (WebGPU) for issue 20: mqar, mqar-long and passkey-long × NSA, window,
#            dense, nine concurrent runs early-stopped at the target accuracy, every evaluation
#            appended as it comes (learn.jsonl; scripts/gpu/learn.sh). Not in the default order: it
#            needs the whole call (cap 440 s; the speed steps take about 185 s of the 470 s budget),
#            and with them it would be a ninth file in OUTDIR. Run it as --only learn.
#   tests    the whole GPU test tier (replaces gpu-tests.json when it finishes)
# summary.json (every step's status, seconds and the headline figures) is rewritten after every
# step, and run.log has the whole output as it comes: eight files at most in OUTDIR, nothing
# written outside it and the work folder. Exit status 0 only if every step that ran passed.
# BUDGET=S (seconds, default none): the whole run's time; each step runs under its own cap clipped
# to what is left (less a reserve for the summary); a step with no time left is recorded as
# skipped. A step cut by its cap keeps what it wrote.
# --small: sizes for a CPU (SwiftShader) check of the bundle itself; --allow-software: accept a
# software adapter (that check); NSA_BUNDLE_WORK: where the payload unpacks (default /tmp);
# NSA_BUNDLE_APP=DIR: run the app in DIR (a checkout with node_modules) instead of unpacking;
# NSA_PYTHON: the python with torch (default python3); NSA_BENCH_NSA_ARGS: the nsa step's
# bench:nsa flags instead of its default (a follow-up call's, e.g. '--T 4096,16384,32768 --decode').
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
usage() { echo "usage: bash run.sh OUTDIR [--small] [--allow-software] [--only adapter,smoke,bench,torch,nsa,golden,learn,tests]" >&2; exit 2; }
[ $# -ge 1 ] || usage
outdir="$1"; shift
small=0; allow_software=0; only="smoke,bench,torch,nsa,golden,tests"
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small=1 ;;
    --allow-software) allow_software=1 ;;
    --only) [ $# -ge 2 ] || usage; only="$2"; shift ;;
    *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
# Files in OUTDIR: run.log, summary.json, adapter.json and one per step (smoke and tests share
# gpu-tests.json); the device tool returns eight.
files=3
tests_file=0
for s in ${only//,/ }; do
  case "$s" in
    adapter) ;;
    smoke|tests) tests_file=1 ;;
    bench|nsa|golden|torch|learn) files=$((files + 1)) ;;
    *) echo "run.sh: --only: unknown step '$s'" >&2; usage ;;
  esac
done
files=$((files + tests_file))
if [ "$files" -gt 8 ]; then
  echo "run.sh: --only $only would write $files files in OUTDIR; the device tool returns 8: leave a step out (learn is a call of its own: --only learn)" >&2
  exit 2
fi
started=$SECONDS
budget="${BUDGET:-}"
[ -z "$budget" ] || [[ "$budget" =~ ^[0-9]+$ ]] || { echo "run.sh: BUDGET must be whole seconds (got '$budget')" >&2; exit 2; }
if [ -z "${NSA_BUNDLE_APP:-}" ] && [ ! -f "$here/payload.tar.xz" ]; then
  echo "run.sh: no payload.tar.xz beside run.sh: make the bundle with scripts/gpu/pack.sh" >&2
  exit 1
fi
mkdir -p "$outdir" && outdir="$(cd "$outdir" && pwd)"
exec > >(tee -a "$outdir/run.log") 2>&1
export NO_COLOR=1 FORCE_COLOR=0 PYTHONUNBUFFERED=1

if [ -n "${NSA_BUNDLE_APP:-}" ]; then
  # A checkout instead of the payload (the SwiftShader rehearsal): its node, its node_modules.
  app="$(cd "$NSA_BUNDLE_APP" && pwd)"
  node="$(command -v node)"
  work="$(mktemp -d)"
  lib_path="$work"
else
  # Unpack once per payload (a stamp holds its checksum); python3's lzma where xz is missing.
  work="${NSA_BUNDLE_WORK:-/tmp}/nsa-gpu-bundle"
  sum="$(cksum < "$here/payload.tar.xz")"
  if [ "$(cat "$work/.stamp" 2>/dev/null)" != "$sum" ]; then
    echo "[bundle] unpacking into $work"
    rm -rf "$work" && mkdir -p "$work"
    if command -v xz >/dev/null; then unxz() { xz -dc "$1"; }
    else
      echo "[bundle] no xz: decompressing with python3's lzma"
      unxz() { "${NSA_PYTHON:-python3}" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; }
    fi
    unxz "$here/payload.tar.xz" | tar -C "$work" -xf - || { echo "[bundle] unpack failed" >&2; exit 1; }
    echo "$sum" > "$work/.stamp"
  fi
  cat "$work/MANIFEST.txt"
  app="$work/app"
  node="$work/bin/node"
  export PATH="$work/bin:$PATH"
  # The bundle's Vulkan loader first; the GL/EGL loaders (lib/fallback) only for those the machine
  # lacks; then the NVIDIA driver's own folders where containers mount them.
  lib_path="$work/lib"
  for lib in libGLdispatch.so.0 libEGL.so.1 libGLX.so.0 libOpenGL.so.0 libGL.so.1 libGLESv2.so.2; do
    if ! ldconfig -p 2>/dev/null | grep -q "$lib"; then lib_path="$lib_path:$work/lib/fallback"; break; fi
  done
fi
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do [ -d "$d" ] && lib_path="$lib_path:$d"; done
export LD_LIBRARY_PATH="$lib_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The NVIDIA Vulkan driver's manifest, where containers put it.
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ -z "${NSA_BUNDLE_APP:-}" ]; then
  for f in /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
    if [ -f "$f" ]; then export VK_DRIVER_FILES="$f"; break; fi
  done
fi
# NVIDIA's Vulkan driver loads through EGL: its vendor file, where containers mount it.
if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && [ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ] &&
  [ ! -f /usr/share/glvnd/egl_vendor.d/10_nvidia.json ]; then
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
if [ "$allow_software" = 1 ]; then export NSA_GPU=auto; else export NSA_GPU=hardware; fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "[bundle] NSA_GPU=$NSA_GPU VK_DRIVER_FILES=${VK_DRIVER_FILES:-} __EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-} small=$small budget=${budget:-none}"
cd "$app" || exit 1

status="$work/steps.tsv"
: > "$status"
failed=0
# summary.json after every step (its table on stderr only at the end: `summary show`).
summary() {
  if [ "${1:-}" = show ]; then "$node" scripts/gpu/summarize.mjs "$outdir" "$status" > "$outdir/summary.json.tmp"
  else "$node" scripts/gpu/summarize.mjs "$outdir" "$status" > "$outdir/summary.json.tmp" 2>/dev/null; fi
  mv "$outdir/summary.json.tmp" "$outdir/summary.json"
}
RESERVE=10 # seconds kept for the last summary
# step NAME CAP COMMAND...: runs it under min(CAP, what the budget has left), records status and
# seconds (rc 124: cut by its cap; 'skipped': no time left), rewrites summary.json.
step() {
  local name="$1" cap="$2"; shift 2
  if [ -n "$budget" ]; then
    local left=$((budget - (SECONDS - started) - RESERVE))
    if [ "$left" -lt 5 ]; then
      printf '%s\tskipped\t0\n' "$name" >> "$status"; echo "== $name: skipped, no time left in BUDGET=$budget" >&2; summary; return 0
    fi
    [ "$left" -lt "$cap" ] && cap=$left
  fi
  echo "== $name (cap ${cap} s): $*" >&2
  local t0=$SECONDS
  STEP_CAP="$cap" timeout -k 5 "$cap" "$@"
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" >> "$status"
  echo "== $name: exit $rc in $((SECONDS - t0)) s$([ "$rc" = 124 ] && echo ", cut at its ${cap} s cap")" >&2
  [ "$rc" = 0 ] || failed=1
  summary
  return "$rc"
}
wants() { [[ ",$only," == *",$1,"* ]]; }
# Commands, not shell functions, so that timeout can run them.
cli=("$node" scripts/run-node.mjs)
vitest=("$node" node_modules/vitest/vitest.mjs run --project gpu --reporter=verbose --reporter=json)

gpu=1
step adapter 60 "${cli[@]}" src/cli/gpu-adapter.ts > "$outdir/adapter.json" || {
  gpu=0
  echo "[bundle] no usable adapter: the GPU steps are skipped; PyTorch still runs" >&2
}
[ "$gpu" = 1 ] && cat "$outdir/adapter.json"

if [ "$gpu" = 1 ] && wants smoke; then
  step smoke 150 "${vitest[@]}" --outputFile.json="$outdir/gpu-tests.json" tests/kernels/matmul.test.ts tests/kernels/attention.test.ts \
    tests/nsa-gpu/attention.test.ts tests/nsa-gpu/select.test.ts tests/nsa-gpu/compress.test.ts tests/model/one-step-nsa.test.ts
fi
if [ "$gpu" = 1 ] && wants bench; then
  if [ "$small" = 1 ]; then args=(--presets tiny --attention dense,nsa --matmul 64,128 --steps 2)
  # m7c-125m@8: the same model at 8 sequences a step (its preset trains 1, 1,024 tokens, too few to fill a GPU).
  else args=(--presets tiny,small,m7c-125m,m7c-125m@8 --attention dense,nsa --matmul 256,1024,4096 --steps 10); fi
  step bench 150 "${cli[@]}" src/cli/bench.ts "${args[@]}" > "$outdir/bench.jsonl"
fi
if wants torch; then
  python="${NSA_PYTHON:-python3}"
  if ! command -v "$python" >/dev/null; then
    echo '{"skipped": "no python3 on this machine"}' > "$outdir/torch.json"
  else
    configs="$outdir/bench.jsonl"
    if ! grep -q '"kind":"preset"' "$configs" 2>/dev/null; then
      # No WebGPU figures (the adapter failed, or bench did not run): the presets' own configs.
      configs="$work/preset-configs.jsonl"
      if [ "$small" = 1 ]; then presets=tiny; else presets=tiny,small,m7c-125m; fi
      "${cli[@]}" scripts/gpu/preset-configs.ts --presets "$presets" > "$configs"
    fi
    if [ "$small" = 1 ]; then step torch 120 "$python" -u scripts/gpu/torch_bench.py --bench "$configs" --out "$outdir/torch.json" --steps 2 --allow-cpu
    else step torch 120 "$python" -u scripts/gpu/torch_bench.py --bench "$configs" --out "$outdir/torch.json"; fi
  fi
fi
if [ "$gpu" = 1 ] && wants nsa; then
  if [ "$small" = 1 ]; then args=(--T 512 --repeats 1 --warmup 0 --decode --train)
  else args=(--T 1024,4096,16384 --decode --train); fi
  # NSA_BENCH_NSA_ARGS: other bench:nsa flags for a follow-up call (e.g. decode up to 32k alone).
  [ -z "${NSA_BENCH_NSA_ARGS:-}" ] || read -r -a args <<< "$NSA_BENCH_NSA_ARGS"
  step nsa 150 "${cli[@]}" src/cli/bench-nsa.ts "${args[@]}" > "$outdir/bench-nsa.jsonl"
fi
if [ "$gpu" = 1 ] && wants golden; then
  if [ "$small" = 1 ]; then args=(--presets tiny --steps 20); else args=(--presets tiny,small --steps 300); fi
  step golden 120 "${cli[@]}" src/cli/train-golden.ts "${args[@]}" --record-missing --out "$outdir/golden.json" > /dev/null
fi
if [ "$gpu" = 1 ] && wants learn; then
  if [ "$small" = 1 ]; then args=(--small); else args=(); fi
  NSA_NODE="$node" step learn 440 bash scripts/gpu/learn.sh "$outdir/learn.jsonl" "$work/learn" ${args[@]+"${args[@]}"}
fi
if [ "$gpu" = 1 ] && wants tests; then
  # The whole tier replaces the smoke report only when it finishes (Vitest writes its JSON at the end).
  step tests 600 "${vitest[@]}" --outputFile.json="$work/gpu-tests-all.json" && cp "$work/gpu-tests-all.json" "$outdir/gpu-tests.json"
fi

summary show
cat "$outdir/summary.json"
[ "$gpu" = 1 ] || failed=1
echo "[bundle] results in $outdir; $([ $failed = 0 ] && echo 'every step passed' || echo 'FAILED steps: see summary.json')"
[ -z "${NSA_BUNDLE_APP:-}" ] || rm -rf "$work"
exit $failed
