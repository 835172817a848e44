// Stepper colours for light and dark pages. Selected blue and forced orange are a
// colour-blind-safe pair; scores of unselected candidates are a neutral grey ramp so they never
// read as a selection. The legend, the bars and the canvas all take their colours from here.
export type Rgb = readonly [number, number, number];

export interface StepperPalette {
  /** Causally invisible cells (j·lSel > t). */
  future: Rgb;
  /** Unselected candidate with P = 0 … with P at its maximum. */
  candidateLow: Rgb;
  candidateHigh: Rgb;
  selected: Rgb;
  forced: Rgb;
  /** Window band fill (drawn translucent) and its edge. */
  window: Rgb;
  /** Compressed-visibility frontier line. */
  frontier: Rgb;
  /** Causal limit t + 1. */
  causal: Rgb;
  /** Current-row marker, hover outline, text. */
  marker: Rgb;
  grid: Rgb;
  text: Rgb;
}

export const LIGHT: StepperPalette = {
  future: [238, 239, 243],
  candidateLow: [252, 252, 253],
  candidateHigh: [150, 156, 172],
  selected: [37, 99, 214],
  forced: [226, 120, 16],
  window: [22, 163, 74],
  frontier: [192, 38, 160],
  causal: [90, 94, 110],
  marker: [20, 22, 28],
  grid: [214, 217, 224],
  text: [80, 84, 98],
};

export const DARK: StepperPalette = {
  future: [24, 25, 30],
  candidateLow: [40, 42, 50],
  candidateHigh: [132, 138, 156],
  selected: [96, 150, 255],
  forced: [255, 160, 64],
  window: [74, 222, 128],
  frontier: [240, 110, 220],
  causal: [160, 164, 178],
  marker: [245, 246, 250],
  grid: [58, 61, 72],
  text: [170, 174, 188],
};

export const css = (c: Rgb, alpha = 1): string => (alpha >= 1 ? `rgb(${c[0]} ${c[1]} ${c[2]})` : `rgb(${c[0]} ${c[1]} ${c[2]} / ${alpha})`);

/** Linear blend a → b at s ∈ [0, 1] (clamped). */
export function mix(a: Rgb, b: Rgb, s: number): [number, number, number] {
  const u = Math.min(1, Math.max(0, s));
  return [a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u, a[2] + (b[2] - a[2]) * u];
}

/**
 * Colour of an unselected candidate with score fraction f = P / (H/G) (a group's scores sum to at
 * most H/G). A square-root ramp keeps small scores visible next to the large ones.
 */
export function scoreColour(p: StepperPalette, f: number): [number, number, number] {
  return mix(p.candidateLow, p.candidateHigh, Number.isFinite(f) && f > 0 ? Math.sqrt(Math.min(1, f)) : 0);
}
