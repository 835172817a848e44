#!/usr/bin/env bash
# One call on a lent GPU machine (15 minutes of device time in all, start-up included; ≤ 10 minutes
# a command; ≤ 8 files back): every figure, most valuable first, in one command of ≤ BUDGET seconds.
#   bash scripts/gpu/device-call.sh [run.sh's flags]
# run in the repository's root with the bundle carried (npm run gpu:pack → build/gpu-bundle, and
# the GL/Vulkan loader .debs in .gl/ if packed beside it: see docs/gpu.md). It
#   1. probes the machine: glibc (the bundle's node and dawn.node need ≥ 2.28), the NVIDIA driver
#      files (Vulkan ICD, EGL vendor), the loaders ldconfig knows, xz, python3 and torch;
#   2. installs the carried loaders (.gl/*.deb, unpacked into /, then ldconfig) when the machine
#      has no libvulkan, and points VK_DRIVER_FILES / __EGL_VENDOR_LIBRARY_FILENAMES at the NVIDIA
#      mount when the loader would find no driver;
#   3. runs the bundle's run.sh with what is left of BUDGET: adapter → kernel smoke → bench →
#      PyTorch (also when the adapter failed) → NSA vs dense → golden → the rest of the GPU tests,
#      each under a cap clipped to the time left; summary.json rewritten after every step.
#      `--only learn` instead: issue 20's learning runs (mqar, mqar-long, passkey-long × NSA, window,
#      dense) in one call of their own (learn.jsonl; docs/gpu.md, "The learn step").
# Everything goes to OUT ($OUT, else ./device-out): run.log (the probe, then everything as it
# comes), summary.json and the steps' own files — eight at most.
# BUDGET (default 470 s) leaves the device tool's 600 s limit room for start-up and the transfer.
# NSA_BUNDLE_DIR: the bundle (default build/gpu-bundle); NSA_BUNDLE_APP=DIR: run the checkout DIR
# instead of a packed bundle (the SwiftShader rehearsal in tests/bundle/device-call.integration.test.ts);
# NSA_PYTHON: the python with torch (default python3).
set -uo pipefail
started=$SECONDS
budget="${BUDGET:-470}"
[[ "$budget" =~ ^[0-9]+$ ]] || { echo "device-call: BUDGET must be whole seconds (got '$budget')" >&2; exit 2; }
out="${OUT:-$PWD/device-out}"
mkdir -p "$out" && out="$(cd "$out" && pwd)"
log="$out/run.log"
say() { echo "[device-call] $*" | tee -a "$log" >&2; }

# 1. The probe: what the machine has, written before anything can fail.
{
  echo "== probe $(date -u +%Y-%m-%dT%H:%M:%SZ), budget ${budget} s"
  echo "kernel: $(uname -srm)"
  echo "glibc: $(ldd --version 2>/dev/null | head -1) (the bundle's node needs >= 2.28)"
  command -v nvidia-smi >/dev/null && timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  for f in /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
    /usr/share/glvnd/egl_vendor.d/10_nvidia.json /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json; do
    [ -e "$f" ] && echo "driver file: $f"
  done
  echo "loaders known to ldconfig:"
  ldconfig -p 2>/dev/null | grep -E 'libvulkan|libEGL|libGLdispatch|libGLX|libnvidia-glcore|libGLX_nvidia' | sed 's/^/  /'
  echo "xz: $(command -v xz || echo 'absent (python3 lzma fallback)')"
  py="${NSA_PYTHON:-python3}"
  echo "$py: $($py --version 2>&1); torch: $(timeout 60 "$py" -c 'import torch; print(torch.__version__, "cuda", torch.cuda.is_available())' 2>&1 | tail -1)"
  echo "env: VK_DRIVER_FILES=${VK_DRIVER_FILES:-} VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-} __EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-}"
} >> "$log" 2>&1

# 2. Loaders: the carried .debs when the machine has no Vulkan loader (the GPU machines' recipe).
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1'; then
  if compgen -G ".gl/*.deb" >/dev/null; then
    say "no libvulkan on this machine: unpacking the carried loaders $(ls .gl/*.deb | xargs -n1 basename | tr '\n' ' ')"
    for f in .gl/*.deb; do dpkg -x "$f" / >> "$log" 2>&1 || say "dpkg -x $f failed"; done
    ldconfig >> "$log" 2>&1
  else
    say "no libvulkan on this machine and no .gl/*.deb carried: the bundle's own libvulkan and fallbacks are used"
  fi
fi
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ -z "${NSA_BUNDLE_APP:-}" ] &&
  [ ! -f /usr/share/vulkan/icd.d/nvidia_icd.json ] && [ ! -f /etc/vulkan/icd.d/nvidia_icd.json ] &&
  [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  say "no driver in the loader's default places: VK_DRIVER_FILES and __EGL_VENDOR_LIBRARY_FILENAMES point at the NVIDIA mount"
fi

# 3. The bundle, with what is left of the budget.
if [ -n "${NSA_BUNDLE_APP:-}" ]; then run_sh="$(dirname "$0")/run.sh"; else run_sh="${NSA_BUNDLE_DIR:-build/gpu-bundle}/run.sh"; fi
[ -f "$run_sh" ] || { say "no $run_sh: carry the bundle (npm run gpu:pack writes build/gpu-bundle)"; exit 1; }
left=$((budget - (SECONDS - started)))
say "run.sh with BUDGET=${left} s"
BUDGET="$left" bash "$run_sh" "$out" "$@"
rc=$?
say "done in $((SECONDS - started)) s (exit $rc); files in $out: $(ls "$out" | tr '\n' ' ')"
exit $rc
