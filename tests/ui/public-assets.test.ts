// The static site's assets: every file index.html and the manifest link exists in public/, with a
// relative URL (the build works from any sub-path), except the social-preview tags, which are
// absolute (NSA_SITE_URL at build time); and the PNGs have the sizes they claim.
import { existsSync, readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { DEFAULT_SITE_URL, siteUrl, siteUrlPlugin } from '../../vite.config';

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
    expect(links).toEqual(expect.arrayContaining(['./icon.svg', './icon-192.png', './manifest.webmanifest']));
    for (const l of links) expect(existsSync(new URL(`public/${l.slice(2)}`, root)), l).toBe(true);
    expect(html).not.toMatch(/(href|src)="\/(?!src\/ui\/main\.tsx)/); // no root-absolute asset URL
  });

  it('the social-preview tags are absolute URLs from NSA_SITE_URL (default: where npm run preview serves)', () => {
    const html = read('index.html').toString();
    const plugin = siteUrlPlugin(siteUrl('https://example.org/nsa'));
    const hook = plugin.transformIndexHtml as { handler: (html: string) => string };
    const out = hook.handler(html);
    const meta = (attr: string, name: string) => new RegExp(`<meta ${attr}="${name}" content="([^"]+)"`).exec(out)?.[1];
    expect(meta('property', 'og:url')).toBe('https://example.org/nsa/');
    expect(meta('property', 'og:image')).toBe('https://example.org/nsa/social-preview.png');
    expect(meta('name', 'twitter:image')).toBe('https://example.org/nsa/social-preview.png');
    expect(out).not.toContain('__NSA_SITE_URL__');
    expect(existsSync(new URL('public/social-preview.png', root))).toBe(true);
    expect(siteUrl(undefined)).toBe(DEFAULT_SITE_URL);
    expect(siteUrl('')).toBe(DEFAULT_SITE_URL);
    expect(() => siteUrl('./relative/')).toThrow(/absolute URL/);
    expect(() => siteUrl('ftp://example.org/')).toThrow(/http/);
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
