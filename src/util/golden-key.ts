// The key of a golden value recorded on one adapter: `profile@vendor/architecture`, lower case,
// e.g. `train/tiny-nsa-300@nvidia/hopper`. The adapter is part of the key because the value
// depends on it: kernels pick variants per adapter, and GPUs round float32 differently, so a
// golden recorded on one adapter guards only that one. The e2e suite (e2e/golden.ts) and
// `npm run train:golden` (src/cli/train-golden.ts) use it.
export interface GoldenAdapter {
  vendor: string;
  architecture: string;
}

export function goldenKey(profile: string, adapter: GoldenAdapter): string {
  const part = (s: string) => s.trim().toLowerCase().replace(/\s+/g, '-') || 'unknown';
  return `${profile}@${part(adapter.vendor)}/${part(adapter.architecture)}`;
}
