// Brown corpus (form C, "word/tag" tokens) → plain English. Shared by Node and the browser.
//
// File layout: paragraphs are blocks separated by blank lines, each line in a block is a sentence.
// Output: one paragraph per line (sentences joined by a space), headlines on their own line, and
// never a blank line, so that a blank line can separate documents in the combined text.

interface Token {
  word: string;
  tag: string;
}

/** Splits "word/tag" at the last slash: words may contain slashes ("1-1/2/cd"), tags never do. */
function parseToken(raw: string): Token {
  const slash = raw.lastIndexOf('/');
  if (slash <= 0) return { word: raw, tag: '' };
  return { word: raw.slice(0, slash), tag: raw.slice(slash + 1) };
}

const NO_SPACE_BEFORE = new Set([',', '.', ';', ':', '?', '!', ')', ']', '}', "''", '--']);
const NO_SPACE_AFTER = new Set(['(', '[', '{', '``', '--']);

/** Joins one paragraph's tokens with English spacing: none before closing punctuation, none after openers. */
function detokenize(words: string[]): string {
  let out = '';
  let glueNext = true; // no space before the first word
  let singleOpen = false; // a lone ' alternates between opening and closing within a paragraph
  let prev = '';
  for (const w of words) {
    // "Jr./np ./." ends a sentence on an abbreviation: print one period, not two.
    if (w === '.' && prev.length > 1 && prev.endsWith('.')) {
      prev = w;
      continue;
    }
    // Inch marks: "1/8''/nn ''/''" carries the mark twice; print 1/8" once.
    if (w === "''" && prev.length > 2 && prev.endsWith("''")) {
      prev = w;
      continue;
    }
    prev = w;
    let text = w.length > 2 ? w.replaceAll("''", '"') : w;
    let glueBefore = NO_SPACE_BEFORE.has(w);
    let glueAfter = NO_SPACE_AFTER.has(w);
    if (w === '``' || w === "''") text = '"';
    else if (w === "'") {
      if (singleOpen) glueBefore = true;
      else glueAfter = true;
      singleOpen = !singleOpen;
    }
    if (out.length > 0 && !glueNext && !glueBefore) out += ' ';
    out += text;
    glueNext = glueAfter;
  }
  return out;
}

/** A headline line: every token's tag carries the "-hl" suffix (e.g. "nn-hl", ".-hl"). */
function isHeadline(tokens: Token[]): boolean {
  return tokens.length > 0 && tokens.every((t) => t.tag.endsWith('-hl'));
}

/** One document's tagged text → plain text: paragraphs on separate lines, no blank lines. */
export function cleanBrown(tagged: string): string {
  const paragraphs: string[] = [];
  for (const block of tagged.split(/\n[ \t]*\n/)) {
    let words: string[] = [];
    const flush = () => {
      if (words.length > 0) paragraphs.push(detokenize(words));
      words = [];
    };
    for (const line of block.split('\n')) {
      const trimmed = line.trim();
      if (trimmed.length === 0) continue;
      const tokens = trimmed.split(/\s+/).map(parseToken);
      if (isHeadline(tokens)) {
        flush();
        words = tokens.map((t) => t.word);
        flush();
      } else {
        for (const t of tokens) words.push(t.word);
      }
    }
    flush();
  }
  return paragraphs.join('\n');
}

/** One entry of the corpus's cats.txt: file id ("ca01") and genre ("news"). */
export interface BrownFileEntry {
  id: string;
  category: string;
}

/** Parses cats.txt ("ca01 news" per line). */
export function parseBrownCategories(catsTxt: string): BrownFileEntry[] {
  const entries: BrownFileEntry[] = [];
  for (const line of catsTxt.split('\n')) {
    const parts = line.trim().split(/\s+/);
    if (parts.length >= 2 && /^c[a-r]\d\d$/.test(parts[0])) entries.push({ id: parts[0], category: parts[1] });
  }
  return entries;
}
