// Dawn (npm `webgpu`) dlopens libvulkan.so.1 by name. Debian's chromium ships one beside its
// SwiftShader driver; glibc reads LD_LIBRARY_PATH only at process start, so launchers add it here.
import { existsSync } from 'node:fs';

export const CHROMIUM_LIB_DIR = '/usr/lib/chromium';

export function envWithVulkan(env = process.env) {
  if (!existsSync(`${CHROMIUM_LIB_DIR}/libvulkan.so.1`)) return { ...env };
  const parts = (env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean);
  if (!parts.includes(CHROMIUM_LIB_DIR)) parts.push(CHROMIUM_LIB_DIR);
  return { ...env, LD_LIBRARY_PATH: parts.join(':') };
}
