// Number formatting shared by the page's components.

export function formatLoss(x: number | undefined): string {
  return x === undefined ? '–' : x.toFixed(4);
}

export function formatRate(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '–';
  return x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1);
}

export function formatBytes(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(1)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  return `${(n / 2 ** 10).toFixed(0)} KiB`;
}
