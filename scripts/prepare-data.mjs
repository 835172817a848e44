#!/usr/bin/env node
// Writes public/data/brown.txt: the Brown corpus as plain cleaned text, documents separated by a
// blank line, for the page's worker to fetch. Uses the same cleaning code as the Node CLI and tests.
// Usage: node scripts/prepare-data.mjs [output path]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { tsImport } from 'tsx/esm/api';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? resolve(root, 'public/data/brown.txt'));

const started = performance.now();
const { loadBrownText } = await tsImport('../src/train/data/brown-node.ts', import.meta.url);
const text = loadBrownText();
const documents = text.split('\n\n').length;

// Leave an identical file untouched so a running dev server does not reload for nothing.
if (existsSync(out) && readFileSync(out, 'utf8') === text) {
  console.log(`${out} is up to date (${documents} documents, ${text.length} chars)`);
} else {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
  const ms = Math.round(performance.now() - started);
  console.log(`wrote ${out}: ${documents} documents, ${text.length} chars in ${ms} ms`);
}
