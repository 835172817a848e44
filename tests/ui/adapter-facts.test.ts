// The adapter panel's limit and feature rows.
import { describe, expect, it } from 'vitest';

import type { AdapterSummary } from '../../src/gpu/context';
import { hasFeature, KEY_FEATURES, KEY_LIMITS, limitText } from '../../src/ui/components/adapter-facts';

// SwiftShader's numbers (measured on SwiftShader): 1 GiB buffers and bindings, 32 KiB workgroup memory.
const swiftshader: AdapterSummary = {
  vendor: 'google',
  architecture: 'swiftshader',
  device: '',
  description: 'SwiftShader Device',
  software: true,
  runtime: 'browser',
  features: ['subgroups', 'timestamp-query'],
  limits: {
    maxBufferSize: 2 ** 30,
    maxStorageBufferBindingSize: 2 ** 30,
    maxComputeWorkgroupStorageSize: 32768,
    maxComputeInvocationsPerWorkgroup: 256,
  },
};

describe('adapter facts', () => {
  it('lists the limits and features the issue names', () => {
    expect(KEY_LIMITS.map((r) => r.key)).toEqual([
      'maxBufferSize',
      'maxStorageBufferBindingSize',
      'maxComputeWorkgroupStorageSize',
      'maxComputeInvocationsPerWorkgroup',
      'maxStorageBuffersPerShaderStage',
    ]);
    expect(KEY_FEATURES.map((f) => f.name)).toEqual(['timestamp-query', 'shader-f16', 'subgroups']);
  });

  it('formats byte limits, counts, and a limit the adapter did not report', () => {
    const text = Object.fromEntries(KEY_LIMITS.map((r) => [r.key, limitText(swiftshader, r)]));
    expect(text).toEqual({
      maxBufferSize: '1.0 GiB (1,073,741,824 bytes)',
      maxStorageBufferBindingSize: '1.0 GiB (1,073,741,824 bytes)',
      maxComputeWorkgroupStorageSize: '32 KiB (32,768 bytes)',
      maxComputeInvocationsPerWorkgroup: '256',
      maxStorageBuffersPerShaderStage: 'not reported',
    });
    expect(KEY_FEATURES.map((f) => hasFeature(swiftshader, f.name))).toEqual([true, false, true]);
  });
});
