// Tensor shapes shared by the kernels, the model and the float64 reference (plain types only).

/** Attention dims; the one shape type of the dense and NSA attention kernels, the NSA core and their references. */
export interface AttentionShape {
  B: number;
  T: number;
  H: number;
  G: number;
  dk: number;
  dv: number;
}
