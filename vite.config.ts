import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/**
 * The address the site is published at, for the social-preview tags (og:url, og:image,
 * twitter:image), which crawlers only read as absolute URLs. Set NSA_SITE_URL when building for a
 * host (e.g. NSA_SITE_URL=https://example.github.io/nsa-playground/ npm run build); the default is
 * where `npm run preview` serves the build.
 */
export const DEFAULT_SITE_URL = 'http://localhost:4173/';

/** NSA_SITE_URL (or the default) as an absolute http(s) URL ending in '/'; throws on anything else. */
export function siteUrl(env: string | undefined = process.env.NSA_SITE_URL): string {
  const raw = env === undefined || env.trim() === '' ? DEFAULT_SITE_URL : env.trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`NSA_SITE_URL must be an absolute URL such as https://example.org/nsa/ (got '${raw}')`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`NSA_SITE_URL must be an http(s) URL (got '${raw}')`);
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

/** Writes the site URL into index.html's __NSA_SITE_URL__ placeholders (dev server and build). */
export function siteUrlPlugin(url: string = siteUrl()): Plugin {
  return {
    name: 'nsa-site-url',
    transformIndexHtml: { order: 'pre', handler: (html) => html.replaceAll('__NSA_SITE_URL__', url) },
  };
}

export default defineConfig({
  // Relative asset URLs: the static build works from any sub-path of a static host.
  base: './',
  plugins: [react(), siteUrlPlugin()],
  worker: { format: 'es' },
  server: { port: 5173, strictPort: false },
  build: { target: 'es2022', sourcemap: true },
});
