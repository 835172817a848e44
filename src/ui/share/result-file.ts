// "Share result": one JSON file that carries a run's result — its name, notes and tags, config,
// every step's metrics, its evaluations and the selection snapshots of its latest snapshot step (every layer and
// KV group) — and reopens in the page of any browser (no run library, no worker state needed).
// Typed arrays travel as base64 of their little-endian bytes.
import type { SelectionSnapshot } from '../../definitions/selection-snapshot';
import type { RunConfig } from '../../train/config';
import type { EvalMetrics, StepMetrics } from '../../train/types';
import { runConfigErrors } from '../config/parse';
import { embeddedResultJson } from './standalone-html';

export const RESULT_FORMAT = 'nsa-playground-result';
export const RESULT_VERSION = 1;

export interface SharedResult {
  name: string;
  /** ISO time the file was written. */
  createdAt: string;
  config: RunConfig;
  metrics: StepMetrics[];
  evals: EvalMetrics[];
  snapshots: SelectionSnapshot[];
  /** The run library entry's notes and tags, when it had any. */
  notes?: string;
  tags?: string[];
}

type ArrayKind = 'i32' | 'f32' | 'u8';
interface EncodedArray {
  kind: ArrayKind;
  base64: string;
}

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function fromBase64(text: string): Uint8Array {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function encodeArray(a: Int32Array | Float32Array | Uint8Array): EncodedArray {
  const kind: ArrayKind = a instanceof Int32Array ? 'i32' : a instanceof Float32Array ? 'f32' : 'u8';
  return { kind, base64: toBase64(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)) };
}

function decodeArray(e: unknown, want: ArrayKind, field: string): Int32Array | Float32Array | Uint8Array {
  const x = e as Partial<EncodedArray> | null;
  if (!x || x.kind !== want || typeof x.base64 !== 'string') throw new Error(`${field}: not an encoded ${want} array`);
  const bytes = fromBase64(x.base64);
  const size = want === 'u8' ? 1 : 4;
  if (bytes.length % size !== 0) throw new Error(`${field}: ${bytes.length} bytes is not a whole number of ${want} values`);
  const copy = bytes.slice().buffer;
  return want === 'i32' ? new Int32Array(copy) : want === 'f32' ? new Float32Array(copy) : new Uint8Array(copy);
}

/** The file's text. */
export function encodeResult(r: SharedResult): string {
  return JSON.stringify({
    format: RESULT_FORMAT,
    version: RESULT_VERSION,
    name: r.name,
    createdAt: r.createdAt,
    config: r.config,
    metrics: r.metrics,
    evals: r.evals,
    notes: r.notes,
    tags: r.tags,
    snapshots: r.snapshots.map((s) => ({
      ...s,
      tokens: encodeArray(s.tokens),
      sel: encodeArray(s.sel),
      scores: s.scores ? encodeArray(s.scores) : null,
      gates: s.gates ? encodeArray(s.gates) : undefined,
      recorded: s.recorded ? encodeArray(s.recorded) : undefined,
    })),
  });
}

/** A result file's contents; throws naming the file and what is wrong with it. */
export function decodeResult(text: string, file: string): SharedResult {
  // A standalone result page (standalone-html.ts) carries the file in a script element.
  if (/^\s*</.test(text)) {
    const embedded = embeddedResultJson(text);
    if (embedded === null) throw new Error(`${file}: a web page, but not a result page of this playground`);
    text = embedded;
  }
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${file}: not a shared result (not JSON)`);
  }
  if (!raw || typeof raw !== 'object' || raw.format !== RESULT_FORMAT) throw new Error(`${file}: not a shared result of this page`);
  if (raw.version !== RESULT_VERSION) throw new Error(`${file}: result version ${String(raw.version)}, this page reads ${RESULT_VERSION}`);
  const config = raw.config as RunConfig;
  const issues = config && typeof config === 'object' ? runConfigErrors(config) : [{ field: 'config', message: 'missing' }];
  if (issues.length) throw new Error(`${file}: config.${issues[0].field}: ${issues[0].message}`);
  if (!Array.isArray(raw.metrics) || !Array.isArray(raw.evals) || !Array.isArray(raw.snapshots))
    throw new Error(`${file}: metrics, evals and snapshots must be lists`);
  const snapshots = (raw.snapshots as Array<Record<string, unknown>>).map((s, i): SelectionSnapshot => {
    const at = `${file}: snapshots[${i}]`;
    const snap = {
      ...(s as unknown as SelectionSnapshot),
      tokens: decodeArray(s.tokens, 'i32', `${at}.tokens`) as Int32Array,
      sel: decodeArray(s.sel, 'i32', `${at}.sel`) as Int32Array,
      scores: s.scores === null ? null : (decodeArray(s.scores, 'f32', `${at}.scores`) as Float32Array),
      gates: s.gates === undefined ? undefined : (decodeArray(s.gates, 'f32', `${at}.gates`) as Float32Array),
      recorded: s.recorded === undefined ? undefined : (decodeArray(s.recorded, 'u8', `${at}.recorded`) as Uint8Array),
    };
    if (snap.tokens.length !== snap.T) throw new Error(`${at}: ${snap.tokens.length} tokens for T = ${snap.T}`);
    if (snap.sel.length !== snap.T * snap.cfg.nSel)
      throw new Error(`${at}: ${snap.sel.length} selections for T·n = ${snap.T * snap.cfg.nSel}`);
    return snap;
  });
  return {
    name: typeof raw.name === 'string' ? raw.name : file,
    createdAt: typeof raw.createdAt === 'string' ? raw.createdAt : '',
    config,
    metrics: raw.metrics as StepMetrics[],
    evals: raw.evals as EvalMetrics[],
    snapshots,
    ...(typeof raw.notes === 'string' ? { notes: raw.notes } : {}),
    ...(Array.isArray(raw.tags) ? { tags: raw.tags.filter((t): t is string => typeof t === 'string') } : {}),
  };
}

/** The file name: the run's name made safe, then `.nsa-result.json` (`.nsa-result.html` for the standalone page). */
export function resultFileName(name: string, kind: 'json' | 'html' = 'json'): string {
  return `${name.replace(/[^\w.-]+/g, '_').replace(/^_+|_+$/g, '') || 'run'}.nsa-result.${kind}`;
}
