// Types for tiers.mjs (the Vitest tiers; see there).
export type TierName = 'fast' | 'integration' | 'gpu' | 'learning';

export interface Tier {
  include: string[];
  exclude: string[];
}

export const LEARNING_FILES: string[];
export const LEARNING_CHECK: string;
export const INTEGRATION_FILES: string[];
export const GPU_FILES: string[];
export const TIERS: Record<TierName, Tier>;
export const FAST_TIER_GPU_ERROR: string;
export const FAST_TIER_SPAWN_ERROR: string;
