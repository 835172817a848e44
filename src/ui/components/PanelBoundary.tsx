// One panel's error boundary: a view that throws (a bug, or a value no validation foresaw) is
// replaced by a note naming the panel, the error and the config fields it concerns where known
// (those that differ from the last valid config), with "Revert the config" (back to the last
// valid one) and "Try again"; the rest of the page goes on. The boundary clears itself when
// `resetKey` changes (the config it draws from), so a fixed config redraws the panel.
import { Component, type ReactNode } from 'react';

import type { RunConfig } from '../../train/config';
import { diffConfig } from '../config/diff';

/** The settings of `draft` that differ from `valid` (the fields a failure most likely concerns). */
export function fieldsAtFault(draft: RunConfig, valid: RunConfig): string[] {
  if (draft === valid) return [];
  return Object.keys(diffConfig(valid, draft));
}

export interface PanelFailureProps {
  panel: string;
  error: Error;
  /** Config fields the failure concerns, where known. */
  fields: readonly string[];
  /** Replaces the draft config with the last valid one; absent when there is nothing to revert. */
  onRevert?: () => void;
  onRetry: () => void;
}

export function PanelFailure({ panel, error, fields, onRevert, onRetry }: PanelFailureProps) {
  const id = panel.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return (
    <section className="panel panel-failure" role="alert" data-testid={`panel-failure-${id}`} data-panel={panel}>
      <h2>{panel} could not be drawn</h2>
      <p className="error-text" data-testid="panel-failure-message">
        {error.name && error.name !== 'Error' ? `${error.name}: ` : ''}
        {error.message || String(error)}
      </p>
      {fields.length > 0 && (
        <p data-testid="panel-failure-fields">
          It follows the config field{fields.length === 1 ? '' : 's'} <code>{fields.join(', ')}</code>, changed since the last valid config.
        </p>
      )}
      <p className="panel-failure-actions">
        {onRevert && (
          <button type="button" data-testid="panel-failure-revert" onClick={onRevert}>
            Revert the config to the last valid one
          </button>
        )}
        <button type="button" data-testid="panel-failure-retry" onClick={onRetry}>
          Try again
        </button>
      </p>
    </section>
  );
}

export interface PanelBoundaryProps {
  /** The panel's name as the page shows it (e.g. "How NSA works"). */
  panel: string;
  children: ReactNode;
  /** A change (e.g. the config the panel draws) clears a failure. */
  resetKey?: unknown;
  /** The config fields a failure concerns, read when it happens. */
  fields?: () => string[];
  /** Offered with the failure: back to the last valid config. */
  onRevert?: () => void;
}

interface State {
  error: Error | null;
  fields: string[];
  resetKey: unknown;
}

export class PanelBoundary extends Component<PanelBoundaryProps, State> {
  override state: State = { error: null, fields: [], resetKey: this.props.resetKey };

  static getDerivedStateFromError(e: unknown): Partial<State> {
    return { error: e instanceof Error ? e : new Error(String(e)) };
  }

  static getDerivedStateFromProps(props: PanelBoundaryProps, state: State): Partial<State> | null {
    return Object.is(props.resetKey, state.resetKey) ? null : { resetKey: props.resetKey, error: null, fields: [] };
  }

  override componentDidCatch(): void {
    // The fields are read once, when the failure happens (the draft may change after).
    this.setState({ fields: this.props.fields?.() ?? [] });
  }

  private readonly retry = () => this.setState({ error: null, fields: [] });

  private readonly revert = () => {
    this.props.onRevert?.();
    this.retry();
  };

  override render(): ReactNode {
    const { error, fields } = this.state;
    if (!error) return this.props.children;
    return (
      <PanelFailure
        panel={this.props.panel}
        error={error}
        fields={fields}
        onRevert={this.props.onRevert && fields.length > 0 ? this.revert : undefined}
        onRetry={this.retry}
      />
    );
  }
}
