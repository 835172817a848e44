#!/usr/bin/env bash
# The offline GPU bundle's entry point (packed beside payload.tar.xz by scripts/gpu/pack.sh). Runs
# on a Linux x86-64 machine with an NVIDIA driver, no network and no Node:
#   bash run.sh OUTDIR [--small] [--allow-software] [--only STEP,...]
# Steps, in order (--only picks some; adapter always runs first):
#   adapter  the WebGPU adapter Dawn gives (adapter.json); a software one is refused
#   tests    the GPU test tier against that adapter: every kernel parity, determinism and property
#            test (gpu-tests.json, Vitest's JSON report)
#   bench    npm run bench: matmul up to 4096³, tiny/small/m7c-125m × dense/NSA, per-kernel GPU
#            time, MFU against the fp32 peak (bench.jsonl)
#   nsa      npm run bench:nsa --decode --train for T = 1k … 32k: training fwd+bwd and decode per token (bench-nsa.jsonl)
#   golden   npm run train:golden on tiny and small, dense and NSA: compared with
#            tests/golden/train.json, and recorded where this adapter has none (golden.json)
#   torch    the same dense models in PyTorch, eager and SDPA, when python3 has torch and CUDA
#            (torch.json)
# Then summary.json (every step's status and the headline figures) and run.log, the whole output:
# eight files at most in OUTDIR. Exit status 0 only if every step that ran passed.
# --small: sizes for a CPU (SwiftShader) check of the bundle itself; --allow-software: accept a
# software adapter (that check); NSA_BUNDLE_WORK: where the payload unpacks (default /tmp).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
usage() { echo "usage: bash run.sh OUTDIR [--small] [--allow-software] [--only adapter,tests,bench,nsa,golden,torch]" >&2; exit 2; }
[ $# -ge 1 ] || usage
outdir="$1"; shift
small=0; allow_software=0; only="tests,bench,nsa,golden,torch"
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small=1 ;;
    --allow-software) allow_software=1 ;;
    --only) [ $# -ge 2 ] || usage; only="$2"; shift ;;
    *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
for s in ${only//,/ }; do
  case "$s" in adapter|tests|bench|nsa|golden|torch) ;; *) echo "run.sh: --only: unknown step '$s'" >&2; usage ;; esac
done
[ -f "$here/payload.tar.xz" ] || { echo "run.sh: no payload.tar.xz beside run.sh: make the bundle with scripts/gpu/pack.sh" >&2; exit 1; }
mkdir -p "$outdir" && outdir="$(cd "$outdir" && pwd)"
exec > >(tee "$outdir/run.log") 2>&1
export NO_COLOR=1 FORCE_COLOR=0

# Unpack once per payload (a stamp holds its checksum).
work="${NSA_BUNDLE_WORK:-/tmp}/nsa-gpu-bundle"
sum="$(cksum < "$here/payload.tar.xz")"
if [ "$(cat "$work/.stamp" 2>/dev/null)" != "$sum" ]; then
  echo "[bundle] unpacking into $work"
  rm -rf "$work" && mkdir -p "$work" && xz -dc "$here/payload.tar.xz" | tar -C "$work" -xf - || { echo "[bundle] unpack failed" >&2; exit 1; }
  echo "$sum" > "$work/.stamp"
fi
cat "$work/MANIFEST.txt"
node="$work/bin/node"
export PATH="$work/bin:$PATH"
# The bundle's Vulkan loader first; then the NVIDIA driver's own folders where containers mount them
# (its Vulkan driver library is named in the manifest without a path).
lib_path="$work/lib"
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do [ -d "$d" ] && lib_path="$lib_path:$d"; done
if ! ldconfig -p 2>/dev/null | grep -q 'libGLdispatch.so.0'; then lib_path="$lib_path:$work/lib/fallback"; fi
export LD_LIBRARY_PATH="$lib_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The NVIDIA Vulkan driver's manifest, where containers put it.
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
  for f in /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
    if [ -f "$f" ]; then export VK_DRIVER_FILES="$f"; break; fi
  done
fi
if [ "$allow_software" = 1 ]; then export NSA_GPU=auto; else export NSA_GPU=hardware; fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "[bundle] NSA_GPU=$NSA_GPU VK_DRIVER_FILES=${VK_DRIVER_FILES:-} small=$small"
cd "$work/app" || exit 1

status="$work/steps.tsv"
: > "$status"
failed=0
# step NAME COMMAND...: runs it, records status and seconds.
step() {
  local name="$1"; shift
  echo "== $name: $*" >&2
  local t0=$SECONDS
  "$@"
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" >> "$status"
  echo "== $name: exit $rc in $((SECONDS - t0)) s" >&2
  [ "$rc" = 0 ] || failed=1
  return "$rc"
}
wants() { [[ ",$only," == *",$1,"* ]]; }
tsx() { "$node" scripts/run-node.mjs "$@"; }

step adapter tsx src/cli/gpu-adapter.ts > "$outdir/adapter.json" || {
  echo "[bundle] no usable adapter: nothing else can run" >&2
  "$node" scripts/gpu/summarize.mjs "$outdir" "$status" > "$outdir/summary.json"
  exit 1
}
cat "$outdir/adapter.json"

if wants tests; then
  step tests "$node" node_modules/vitest/vitest.mjs run --project gpu --reporter=default --reporter=json \
    --outputFile.json="$outdir/gpu-tests.json"
fi
if wants bench; then
  if [ "$small" = 1 ]; then args=(--presets tiny --attention dense,nsa --matmul 64,128 --steps 2)
  else args=(--presets tiny,small,m7c-125m --attention dense,nsa --matmul 256,512,1024,2048,4096 --steps 10); fi
  step bench tsx src/cli/bench.ts "${args[@]}" > "$outdir/bench.jsonl"
fi
if wants nsa; then
  if [ "$small" = 1 ]; then args=(--T 512 --repeats 1 --warmup 0 --decode --train)
  else args=(--T 1024,2048,4096,8192,16384,32768 --decode --train); fi
  step nsa tsx src/cli/bench-nsa.ts "${args[@]}" > "$outdir/bench-nsa.jsonl"
fi
if wants golden; then
  if [ "$small" = 1 ]; then args=(--presets tiny --steps 20); else args=(--presets tiny,small --steps 300); fi
  step golden tsx src/cli/train-golden.ts "${args[@]}" --record-missing --out "$outdir/golden.json" > /dev/null
fi
if wants torch; then
  if ! command -v python3 >/dev/null; then
    echo '{"skipped": "no python3 on this machine"}' > "$outdir/torch.json"
  elif [ ! -s "$outdir/bench.jsonl" ]; then
    echo '{"skipped": "no bench.jsonl to take the configurations from (run the bench step)"}' > "$outdir/torch.json"
  elif [ "$small" = 1 ]; then
    step torch python3 scripts/gpu/torch_bench.py --bench "$outdir/bench.jsonl" --out "$outdir/torch.json" --steps 2 --allow-cpu
  else
    step torch python3 scripts/gpu/torch_bench.py --bench "$outdir/bench.jsonl" --out "$outdir/torch.json"
  fi
fi

"$node" scripts/gpu/summarize.mjs "$outdir" "$status" > "$outdir/summary.json"
cat "$outdir/summary.json"
echo "[bundle] results in $outdir; $([ $failed = 0 ] && echo 'every step passed' || echo 'FAILED steps: see summary.json')"
exit $failed
