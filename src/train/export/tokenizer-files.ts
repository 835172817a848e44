// The Hugging Face tokenizer files of an exported directory (tokenizer.json, tokenizer_config.json,
// special_tokens_map.json), so that `AutoTokenizer.from_pretrained(dir)` encodes text as the
// playground does:
//   byte  one token per UTF-8 byte, id = the byte (a byte-level BPE with no merges);
//   gpt2  GPT-2's BPE (r50k_base, from the gpt-tokenizer package: the vocabulary and the merges, each
//         merge recovered from the ranks), `<|endoftext|>` (50256) its bos/eos token; the project
//         encodes that string in user text as plain text, so the files say split_special_tokens;
//   tasks (recall, passkey, random, copy: token ids without text) a word-level vocabulary of the
//         task's token names (recall f0…, k0…, v0…; passkey f0…, needle, query, d0…; others t0…),
//         split on whitespace, ids beyond the task's vocabulary t<id>.
import r50kRanks from 'gpt-tokenizer/bpeRanks/r50k_base';

import type { RunConfig } from '../config';
import { passkeyVocab } from '../data/passkey';
import { recallVocab } from '../data/recall';

export const TOKENIZER_FILE = 'tokenizer.json';
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';
export const SPECIAL_TOKENS_FILE = 'special_tokens_map.json';

/** GPT-2's end-of-text token and its id (after the 50256 ranks). */
export const GPT2_EOT = '<|endoftext|>';
export const GPT2_EOT_ID = 50256;

/** The special token ids config.json states (null: the tokenizer has none). */
export interface SpecialIds {
  bos: number | null;
  eos: number | null;
  pad: number | null;
}

/** GPT-2's printable stand-in for every byte (byte-level BPE's alphabet). */
function bytesToUnicode(): string[] {
  const keep: number[] = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const out: string[] = new Array<string>(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(keep.includes(b) ? b : 256 + n++);
  return out;
}

const BYTE_CHARS = bytesToUnicode();
const utf8 = new TextEncoder();
/** Bytes as a key string (one char per byte). */
const latin1 = (bytes: ArrayLike<number>) => String.fromCharCode(...Array.from(bytes));
const byteLevel = (bytes: ArrayLike<number>) => Array.from(bytes, (b) => BYTE_CHARS[b]).join('');

let gpt2Cache: { vocab: Record<string, number>; merges: [string, string][] } | undefined;

/** GPT-2's byte-level vocabulary and merges from the ranks gpt-tokenizer ships. */
function gpt2VocabAndMerges(): { vocab: Record<string, number>; merges: [string, string][] } {
  if (gpt2Cache) return gpt2Cache;
  const tokens = r50kRanks.map((t) => (typeof t === 'string' ? utf8.encode(t) : Uint8Array.from(t)));
  if (tokens.length !== GPT2_EOT_ID) throw new Error(`gpt2 tokenizer: expected ${GPT2_EOT_ID} ranks, gpt-tokenizer has ${tokens.length}`);
  const rank = new Map<string, number>(tokens.map((t, i) => [latin1(t), i]));
  const vocab: Record<string, number> = {};
  const merges: [string, string][] = [];
  tokens.forEach((t, id) => {
    vocab[byteLevel(t)] = id;
    if (t.length < 2) return;
    // The merge that made token `id`: BPE over its bytes with the merges ranked below it ends in two parts.
    let parts = Array.from(t, (b) => latin1([b]));
    for (;;) {
      let best = -1;
      let bestRank = id;
      for (let i = 0; i + 1 < parts.length; i++) {
        const r = rank.get(parts[i] + parts[i + 1]);
        if (r !== undefined && r < bestRank) [best, bestRank] = [i, r];
      }
      if (best < 0) break;
      parts = [...parts.slice(0, best), parts[best] + parts[best + 1], ...parts.slice(best + 2)];
    }
    if (parts.length !== 2) throw new Error(`gpt2 tokenizer: token ${id} is not one merge of two lower-ranked tokens`);
    const show = (p: string) => byteLevel(Array.from(p, (ch) => ch.charCodeAt(0)));
    merges.push([show(parts[0]), show(parts[1])]);
  });
  gpt2Cache = { vocab, merges };
  return gpt2Cache;
}

function addedToken(id: number, content: string) {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

/** A byte-level BPE tokenizer.json (GPT-2's pre-tokenizer regex when `regex`). */
function byteLevelTokenizer(vocab: Record<string, number>, merges: [string, string][], regex: boolean, added: object[]): object {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: regex },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: regex },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: regex },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
}

/** The token names of a task's vocabulary (data sources without text), id → name. */
export function taskTokenNames(config: RunConfig): string[] {
  const V = config.model.vocabSize;
  const names = Array.from({ length: V }, (_, i) => `t${i}`);
  const name = (from: number, count: number, prefix: string) => {
    for (let i = 0; i < count && from + i < V; i++) names[from + i] = `${prefix}${i}`;
  };
  const d = config.data;
  if (d.source === 'recall' && d.recall) {
    const v = recallVocab(d.recall);
    name(v.fillerBase, d.recall.fillers, 'f');
    name(v.keyBase, d.recall.keys, 'k');
    name(v.valueBase, d.recall.values, 'v');
  } else if (d.source === 'passkey' && d.passkey) {
    const v = passkeyVocab(d.passkey);
    name(v.fillerBase, d.passkey.fillers, 'f');
    if (v.needle < V) names[v.needle] = 'needle';
    if (v.query < V) names[v.query] = 'query';
    name(v.digitBase, d.passkey.digits, 'd');
  }
  return names;
}

/** Whether the run's data is text (and which tokenizer), or token ids of a task. */
function kindOf(config: RunConfig): 'byte' | 'gpt2' | 'task' {
  return config.data.source === 'brown' || config.data.source === 'upload' ? config.data.tokenizer : 'task';
}

/** The special token ids the exported tokenizer has (config.json's bos/eos/pad_token_id). */
export function specialTokenIds(config: RunConfig): SpecialIds {
  // GPT-2 has no pad token; <|endoftext|> marks both ends (as Hugging Face's gpt2). Bytes and task
  // tokens are all data: no id is special, so generate() stops only at max_new_tokens.
  return kindOf(config) === 'gpt2' ? { bos: GPT2_EOT_ID, eos: GPT2_EOT_ID, pad: null } : { bos: null, eos: null, pad: null };
}

/** The three tokenizer files as JSON values, by file name. */
export function tokenizerFiles(config: RunConfig): Record<string, object> {
  const kind = kindOf(config);
  const common = {
    clean_up_tokenization_spaces: false,
    model_max_length: config.model.seqLen,
    tokenizer_class: 'PreTrainedTokenizerFast',
    add_bos_token: false,
    add_eos_token: false,
  };
  if (kind === 'gpt2') {
    const { vocab, merges } = gpt2VocabAndMerges();
    const special = { bos_token: GPT2_EOT, eos_token: GPT2_EOT, unk_token: GPT2_EOT };
    return {
      [TOKENIZER_FILE]: byteLevelTokenizer(vocab, merges, true, [addedToken(GPT2_EOT_ID, GPT2_EOT)]),
      // The project reads "<|endoftext|>" in text as plain text: so does the tokenizer (split_special_tokens).
      [TOKENIZER_CONFIG_FILE]: { ...common, ...special, split_special_tokens: true },
      [SPECIAL_TOKENS_FILE]: special,
    };
  }
  if (kind === 'byte') {
    const vocab: Record<string, number> = {};
    BYTE_CHARS.forEach((ch, b) => (vocab[ch] = b));
    return {
      [TOKENIZER_FILE]: byteLevelTokenizer(vocab, [], false, []),
      [TOKENIZER_CONFIG_FILE]: common,
      [SPECIAL_TOKENS_FILE]: {},
    };
  }
  const names = taskTokenNames(config);
  const vocab = Object.fromEntries(names.map((n, i) => [n, i]));
  return {
    [TOKENIZER_FILE]: {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [],
      normalizer: null,
      pre_tokenizer: { type: 'WhitespaceSplit' },
      post_processor: null,
      decoder: null,
      // A name not in the vocabulary is refused by the tokenizer (the unknown token is not in it).
      model: { type: 'WordLevel', vocab, unk_token: '<unk>' },
    },
    [TOKENIZER_CONFIG_FILE]: common,
    [SPECIAL_TOKENS_FILE]: {},
  };
}
