// Peak float32 (non-tensor-core) throughput of known GPUs, from the vendors' data sheets, for
// model-FLOP utilisation in `npm run bench`. WebGPU does not report it; --peak-tflops overrides.
export interface Fp32Peak {
  /** Peak float32 TFLOP/s (boost clock, FMA = 2 FLOPs). */
  tflops: number;
  /** The data-sheet row it came from. */
  source: string;
}

// Most specific first: the first pattern that matches the adapter's description wins.
const KNOWN: Array<[RegExp, number, string]> = [
  [/H200/i, 66.9, 'NVIDIA H200 SXM'],
  [/H100.*PCIe/i, 51.2, 'NVIDIA H100 PCIe'],
  [/H100/i, 66.9, 'NVIDIA H100 SXM'],
  [/A100/i, 19.5, 'NVIDIA A100'],
  [/L40S/i, 91.6, 'NVIDIA L40S'],
  [/\bL4\b/i, 30.3, 'NVIDIA L4'],
  [/\bA10\b/i, 31.2, 'NVIDIA A10'],
  [/RTX 4090/i, 82.6, 'NVIDIA GeForce RTX 4090'],
  [/RTX 3090/i, 35.6, 'NVIDIA GeForce RTX 3090'],
  [/V100/i, 15.7, 'NVIDIA V100 SXM2'],
  [/\bT4\b/i, 8.1, 'NVIDIA T4'],
];

/** The peak for an adapter description (e.g. Dawn's 'NVIDIA H100 80GB HBM3'), or null if unknown. */
export function knownFp32Peak(adapterDescription: string): Fp32Peak | null {
  for (const [pattern, tflops, source] of KNOWN) if (pattern.test(adapterDescription)) return { tflops, source };
  return null;
}
