// The selection stepper: for a snapshot (training step or generation), layer and group, the
// query × key-block heatmap and, for the current query t, the scores, ranges and tokens.
// It opens on the last query (a task run's: the one scored for the last answer). Keyboard (when the
// stepper has focus): ←/→ or ↑/↓ step t, PageUp/PageDown ±16, Home/End, [ and ] the previous /
// next snapshot, and in task runs Q / A the next query / answer (Shift+Q / Shift+A back).
import './stepper.css';

import { type KeyboardEvent, type ReactNode, useEffect, useId, useMemo, useState } from 'react';

import {
  rowRecorded,
  type SelectionSnapshot,
  snapshotIssues,
  snapshotMechanism,
  type SnapshotRange,
  snapshotRanges,
} from '../../definitions/selection-snapshot';
import type { PasskeyTask } from '../../train/data/passkey';
import type { RecallTask } from '../../train/data/recall';
import { gateMeans } from './cell-facts';
import { frameKey, type SnapshotSource, sourceOf } from './frames';
import { clampT, stepKey } from './geometry';
import { Heatmap } from './Heatmap';
import { Legend } from './Legend';
import { PasskeyNote } from './PasskeyNote';
import { RangeList } from './RangeList';
import { RecallPairNote } from './RecallPairNote';
import { ScoreBars } from './ScoreBars';
import { nextWithRole, openingT, passkeyLabels, recallLabels } from './task-roles';
import { type DecodeFn, tokenText } from './tokens';
import { usePalette } from './use-palette';
import { type StepperSources, useStepperData } from './use-stepper-data';
import { WhyList } from './WhyList';

/** Where the stepper looks. */
export interface StepperView {
  source: SnapshotSource;
  step: number;
  layer: number;
  group: number;
  t: number;
}

/** A request to move the stepper (e.g. a clicked generated token); applied when its identity changes. */
export type StepperFocus = Partial<StepperView> & { step: number };

/**
 * Snapshots come eagerly (`snapshots`: any steps, layers, groups, training or decode) and/or lazily
 * (`steps` kept by the worker with `layers` × `groups` each, fetched through `load` when in view).
 * Pass a new `load` function for a new run: the loaded-snapshot cache is keyed on it.
 */
export interface SelectionStepperProps extends StepperSources {
  /** Token ids → text (null: show ids). */
  decode?: DecodeFn;
  /** Moves the stepper when this object changes. */
  focus?: StepperFocus | null;
  /** Called whenever the view changes (for the URL, a store, …). */
  onViewChange?: (v: StepperView) => void;
  /** Shown instead of the default text while there is no snapshot (e.g. a dense run's note). */
  emptyNote?: ReactNode;
  /** The recall task of the run: its tokens are labelled key, value, query and answer. */
  recall?: { task: RecallTask; seqLen: number };
  /** The passkey task of the run: its tokens are labelled needle, query and answer. */
  passkey?: { task: PasskeyTask; seqLen: number };
}

const EDITABLE = new Set(['INPUT', 'SELECT', 'TEXTAREA']);

/** A token shown on its own: spaces made visible so a blank token is not an empty box. */
const showBlank = (text: string) => (text.trim() === '' ? text.replace(/ /g, '␣') || '∅' : text);

export function SelectionStepper({ decode, focus, onViewChange, emptyNote, recall, passkey, ...sources }: SelectionStepperProps) {
  const palette = usePalette();
  const [frame, setFrame] = useState<string | null>(null);
  const [layer, setLayer] = useState(0);
  const [group, setGroup] = useState(0);
  const { frames, snapshot, layers, groups, loading, error } = useStepperData(sources, frame, layer, group);
  const latestTrain = [...frames].reverse().find((f) => f.source === 'train') ?? frames.at(-1);
  const [follow, setFollow] = useState(true);
  // null: the opening query (the last answer of a task sequence, else t = T − 1) until one is picked.
  const [tRaw, setT] = useState<number | null>(null);
  const ids = { layer: useId(), group: useId(), slider: useId(), follow: useId(), heading: useId(), keys: useId() };

  // The state below follows props and snapshots: it is adjusted while rendering (React's pattern
  // for that; the render starts again at once with the new state), not in effects after a commit.
  const latestKey = latestTrain?.key ?? null;
  // A new focus moves the stepper (and stops following the latest).
  const [appliedFocus, setAppliedFocus] = useState<StepperFocus | null>(null);
  if ((focus ?? null) !== appliedFocus) {
    setAppliedFocus(focus ?? null);
    if (focus) {
      setFrame(frameKey(focus.source ?? 'train', focus.step));
      setFollow(false);
      if (focus.layer !== undefined) setLayer(focus.layer);
      if (focus.group !== undefined) setGroup(focus.group);
      if (focus.t !== undefined) setT(focus.t);
    }
  } else if (latestKey && frame !== latestKey && (follow || (frame !== null && !frames.some((f) => f.key === frame)))) {
    // Follow the newest training snapshot unless the user chose an older one; a frame that
    // disappeared (snapshots thinned out) falls back to the latest.
    setFrame(latestKey);
  }
  const frameIndex = frames.findIndex((f) => f.key === frame);
  const current = frameIndex >= 0 ? frames[frameIndex] : null;

  const T = snapshot?.T ?? 0;
  const t = clampT(tRaw ?? openingT(T, { recall: recall?.task, passkey: passkey?.task }), T);

  useEffect(() => {
    if (snapshot) onViewChange?.({ source: sourceOf(snapshot), step: snapshot.step, layer: snapshot.layer, group: snapshot.group, t });
  }, [snapshot, t, onViewChange]);

  const issues = useMemo(() => (snapshot ? snapshotIssues(snapshot) : []), [snapshot]);
  let ranges: SnapshotRange[] = [];
  let rangeError: string | null = null;
  const recorded = snapshot !== null && T > 0 && rowRecorded(snapshot, t);
  if (snapshot && recorded) {
    try {
      ranges = snapshotRanges(snapshot, t);
    } catch (e) {
      rangeError = e instanceof Error ? e.message : String(e);
    }
  }

  const goFrame = (delta: number) => {
    const i = Math.max(0, frameIndex) + delta;
    if (i < 0 || i >= frames.length) return;
    setFrame(frames[i].key);
    setFollow(frames[i].key === latestKey);
  };

  const labels = snapshot && recall ? recallLabels(snapshot.tokens, recall.task, recall.seqLen) : null;
  const needle = snapshot && passkey ? passkeyLabels(snapshot.tokens, passkey.task, passkey.seqLen) : null;
  const roles = labels?.roles ?? needle?.roles;
  /** The previous / next query or answer of a task sequence (Q, A; with Shift backwards). */
  const jump = (role: 'query' | 'answer', dir: 1 | -1) => (roles ? nextWithRole(roles, t, role, dir) : null);

  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (EDITABLE.has((e.target as HTMLElement).tagName)) return;
    if (e.key === '[' || e.key === ']') {
      goFrame(e.key === '[' ? -1 : 1);
      e.preventDefault();
      return;
    }
    const k = e.key.toLowerCase();
    if (roles && (k === 'q' || k === 'a')) {
      const p = jump(k === 'q' ? 'query' : 'answer', e.shiftKey ? -1 : 1);
      if (p !== null) setT(p);
      e.preventDefault();
      return;
    }
    const next = stepKey(e.key, t, T);
    if (next === null) return;
    setT(next);
    e.preventDefault();
  };

  if (!snapshot || !current) {
    return (
      <section className="panel stepper" data-testid="stepper" aria-labelledby={ids.heading}>
        <h2 id={ids.heading}>Selection stepper</h2>
        {emptyNote ?? (
          <p className="muted" data-testid="stepper-empty">
            No selection snapshots yet. They are taken every few training steps of an NSA, MoBA or DSA model (and for every generated
            token).
          </p>
        )}
      </section>
    );
  }

  const gates = gateMeans(snapshot, t);
  const mechanism = snapshotMechanism(snapshot);
  const queryText = tokenText(decode, snapshot.tokens[t]);
  return (
    <section
      className="panel stepper"
      data-testid="stepper"
      data-step={snapshot.step}
      data-source={sourceOf(snapshot)}
      data-layer={snapshot.layer}
      data-group={snapshot.group}
      data-invalid-rows={issues.length}
      data-mechanism={mechanism}
      data-loading={loading}
      aria-labelledby={ids.heading}
      aria-describedby={ids.keys}
      tabIndex={0}
      onKeyDown={onKeyDown}
    >
      <h2 id={ids.heading}>Selection stepper</h2>
      <p id={ids.keys} className="muted stepper-help">
        {HELP[mechanism]} Focus here, then ←/→ step t, PageUp/PageDown ±16, Home/End, [ / ] snapshots
        {roles ? ', Q / A the next query / answer (Shift: the previous one)' : ''}.
      </p>
      <div className="stepper-toolbar">
        <div className="stepper-frames" role="group" aria-label="Snapshot">
          <button
            type="button"
            data-testid="stepper-prev-snapshot"
            aria-label="Previous snapshot"
            disabled={frameIndex <= 0}
            onClick={() => goFrame(-1)}
          >
            ◀
          </button>
          <span className="stepper-frame-label" data-testid="stepper-snapshot" aria-live="polite">
            {current.label}{' '}
            <span className="muted">
              ({frameIndex + 1} / {frames.length})
            </span>
            {loading && <span className="muted"> · loading…</span>}
          </span>
          <button
            type="button"
            data-testid="stepper-next-snapshot"
            aria-label="Next snapshot"
            disabled={frameIndex < 0 || frameIndex >= frames.length - 1}
            onClick={() => goFrame(1)}
          >
            ▶
          </button>
          <label className="stepper-follow" htmlFor={ids.follow}>
            <input
              id={ids.follow}
              type="checkbox"
              data-testid="stepper-follow"
              checked={follow}
              onChange={(e) => setFollow(e.target.checked)}
            />{' '}
            follow latest
          </label>
        </div>
        <label htmlFor={ids.layer}>Layer</label>
        <select id={ids.layer} data-testid="stepper-layer" value={snapshot.layer} onChange={(e) => setLayer(Number(e.target.value))}>
          {layers.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
        <label htmlFor={ids.group}>Group</label>
        <select id={ids.group} data-testid="stepper-group" value={snapshot.group} onChange={(e) => setGroup(Number(e.target.value))}>
          {groups.map((g) => (
            <option key={g} value={g}>
              {g}
            </option>
          ))}
        </select>
        <span className="muted stepper-cfg" data-testid="stepper-cfg">
          {cfgLine(snapshot)}
        </span>
      </div>
      {error && (
        <p className="error" role="alert" data-testid="stepper-load-error">
          {error}
        </p>
      )}
      {snapshot.phase === 'warmup' && (
        <p className="muted" data-testid="stepper-dsa-warmup">
          Step {snapshot.step} is in DSA's dense warm-up: the main attention read every earlier token; the tokens shown are what the
          indexer, still learning, would pick.
        </p>
      )}
      {issues.length > 0 && (
        <p className="error" role="alert" data-testid="stepper-invalid">
          {issues.length} query row{issues.length > 1 ? 's have' : ' has'} an invalid selection (a bug, shown as recorded): t ={' '}
          {issues[0].t}: {issues[0].message}
        </p>
      )}
      <div className="stepper-body">
        <div className="stepper-left">
          <Heatmap snapshot={snapshot} t={t} onPick={setT} palette={palette} />
          <Legend palette={palette} mechanism={mechanism} />
        </div>
        <div className="stepper-right">
          <div className="stepper-t-row">
            <label htmlFor={ids.slider}>Query t</label>
            <input
              id={ids.slider}
              type="range"
              data-testid="stepper-t-slider"
              min={0}
              max={Math.max(0, T - 1)}
              step={1}
              value={t}
              onChange={(e) => setT(Number(e.target.value))}
            />
            <output data-testid="stepper-t" data-t={t} htmlFor={ids.slider} aria-live="polite">
              t = {t} <span className="muted">/ {T - 1}</span>
            </output>
          </div>
          {roles && (
            <div className="stepper-jumps" role="group" aria-label="Jump to a query or an answer">
              {(['query', 'answer'] as const).map((role) => (
                <span key={role} className="stepper-jump">
                  <button
                    type="button"
                    data-testid={`stepper-prev-${role}`}
                    aria-label={`Previous ${role}`}
                    aria-keyshortcuts={`Shift+${role === 'query' ? 'Q' : 'A'}`}
                    disabled={jump(role, -1) === null}
                    onClick={() => setT(jump(role, -1))}
                  >
                    ◀
                  </button>
                  {role}
                  <button
                    type="button"
                    data-testid={`stepper-next-${role}`}
                    aria-label={`Next ${role}`}
                    aria-keyshortcuts={role === 'query' ? 'Q' : 'A'}
                    disabled={jump(role, 1) === null}
                    onClick={() => setT(jump(role, 1))}
                  >
                    ▶
                  </button>
                </span>
              ))}
            </div>
          )}
          <p className="stepper-query">
            query token{' '}
            <span className="tok tok-query" title={`token id ${snapshot.tokens[t]}`}>
              {queryText === null ? snapshot.tokens[t] : showBlank(queryText)}
            </span>{' '}
            <span className="muted">id {snapshot.tokens[t]}</span>
            {roles && (
              <span className={`badge tok-role-${roles[t]}`} data-testid="stepper-query-role">
                {roles[t]}
              </span>
            )}
            {gates && (
              <span className="muted stepper-gates" data-testid="stepper-gates">
                {' '}
                · gates cmp {gates[0].toFixed(2)} sel {gates[1].toFixed(2)} win {gates[2].toFixed(2)}
              </span>
            )}
          </p>
          {labels && recorded && <RecallPairNote snapshot={snapshot} t={t} labels={labels} />}
          {needle && recorded && <PasskeyNote snapshot={snapshot} t={t} labels={needle} />}
          <ScoreBars snapshot={snapshot} t={t} palette={palette} />
          {!recorded ? (
            <p className="muted" data-testid="stepper-unrecorded">
              No selection was recorded for query {t} (generation records the queries that produced new tokens).
            </p>
          ) : rangeError ? (
            <p className="error" role="alert" data-testid="stepper-error">
              Invalid selection at t = {t}: {rangeError}
            </p>
          ) : (
            <>
              <WhyList snapshot={snapshot} t={t} />
              <RangeList snapshot={snapshot} t={t} ranges={ranges} decode={decode} roles={roles} />
            </>
          )}
        </div>
      </div>
    </section>
  );
}

const HELP = {
  nsa: 'Which key blocks each query position selected.',
  moba: 'Which key blocks of B each query position read under MoBA: its own block and the top k − 1 earlier ones by q·mean(K).',
  dsa: 'Which tokens each query position read under DSA: the top k by the lightning indexer’s score.',
} as const;

/** The snapshot's selection settings in the mechanism's own letters. */
export function cfgLine(s: SelectionSnapshot): string {
  const c = s.cfg;
  switch (snapshotMechanism(s)) {
    case 'moba':
      return `MoBA B=${c.lSel} k=${c.nSel}`;
    case 'dsa':
      return `DSA k=${c.nSel} tokens`;
    default:
      return `l=${c.l} d=${c.d} l′=${c.lSel} n=${c.nSel} w=${c.w}`;
  }
}
