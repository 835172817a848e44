// The resource limits of a Node run: the adapter's buffer and binding limits, the machine's memory
// for host arrays, Node's largest byte array (buffer.constants.MAX_LENGTH).
import { constants } from 'node:buffer';
import { totalmem } from 'node:os';

import { type AdapterSummary, describeAdapter } from '../gpu/context';
import { matmulPartsFloats } from '../kernels/matmul';
import { limitsOfAdapter, type ResourceLimits } from '../train/resources';

export function nodeResourceLimits(adapter: AdapterSummary): ResourceLimits {
  return limitsOfAdapter(adapter.limits, describeAdapter(adapter), {
    memoryBytes: totalmem(),
    maxArrayBytes: constants.MAX_LENGTH,
    // A software adapter's "GPU memory" is the machine's.
    gpuMemoryBytes: adapter.software ? totalmem() : undefined,
    matmulPartsFloats: matmulPartsFloats(adapter),
  });
}
