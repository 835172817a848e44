// The static site's assets: every file index.html and the manifest link exists in public/, with a
// relative URL (the build works from any sub-path), and the PNGs have the sizes they claim.
import { existsSync, readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (p: string) => readFileSync(new URL(p, root));

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes: Buffer): [number, number] {
  expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(bytes.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

describe('public assets', () => {
  it('index.html links icon, manifest and social preview relatively, and they exist', () => {
    const html = read('index.html').toString();
    const links = [...html.matchAll(/(?:href|content)="(\.\/[^"]+)"/g)].map((m) => m[1]);
    expect(links).toEqual(expect.arrayContaining(['./icon.svg', './icon-192.png', './manifest.webmanifest', './social-preview.png']));
    for (const l of links) expect(existsSync(new URL(`public/${l.slice(2)}`, root)), l).toBe(true);
    expect(html).not.toMatch(/(href|src)="\/(?!src\/ui\/main\.tsx)/); // no root-absolute asset URL
  });

  it('the manifest parses and its icons exist with their sizes', () => {
    const m = JSON.parse(read('public/manifest.webmanifest').toString()) as {
      name: string;
      start_url: string;
      icons: Array<{ src: string; sizes: string; type: string }>;
    };
    expect(m.name).toBe('NSA Playground');
    expect(m.start_url).toBe('./');
    for (const icon of m.icons) {
      const bytes = read(`public/${icon.src}`);
      if (icon.type === 'image/png') expect(pngSize(bytes).join('x')).toBe(icon.sizes);
      else expect(bytes.toString()).toMatch(/^<svg /);
    }
    expect(pngSize(read('public/social-preview.png'))).toEqual([1200, 630]);
  });
});
