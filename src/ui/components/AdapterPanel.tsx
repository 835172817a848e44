// Which GPU the worker trains on, or why there is none and how to get one.
import { describeAdapter } from '../../gpu/context';
import { formatBytes } from '../format';
import { useStore } from '../store';

export function AdapterPanel() {
  const adapter = useStore((s) => s.adapter);
  return (
    <section className="panel" aria-labelledby="adapter-heading" data-testid="adapter-panel" data-state={adapter.status}>
      <h2 id="adapter-heading">GPU</h2>
      {adapter.status === 'probing' && <p className="muted">Looking for a WebGPU adapter…</p>}
      {adapter.status === 'ready' && (
        <>
          <p className="adapter-name" data-testid="adapter-name">
            {describeAdapter(adapter.summary)}
          </p>
          <dl className="facts">
            <dt>Vendor</dt>
            <dd data-testid="adapter-vendor">{adapter.summary.vendor}</dd>
            <dt>Architecture</dt>
            <dd data-testid="adapter-architecture">{adapter.summary.architecture}</dd>
            <dt>Description</dt>
            <dd>{adapter.summary.description || adapter.summary.device || '–'}</dd>
            <dt>Kind</dt>
            <dd data-testid="adapter-kind">{adapter.summary.software ? 'software' : 'hardware'}</dd>
            <dt>Max buffer</dt>
            <dd>{formatBytes(adapter.summary.limits.maxBufferSize ?? 0)}</dd>
          </dl>
          {adapter.summary.software && (
            <p className="note">
              This is a software renderer: training works but is slow. A browser with WebGPU on your GPU is many times
              faster.
            </p>
          )}
        </>
      )}
      {adapter.status === 'unavailable' && (
        <div className="unavailable" role="alert" data-testid="webgpu-unavailable">
          <p>
            <strong>WebGPU is not available here, so this page cannot train.</strong>
          </p>
          <p data-testid="webgpu-unavailable-reason">{adapter.message}</p>
          <p className="muted">
            This page: secure context {String(window.isSecureContext)}, navigator.gpu{' '}
            {'gpu' in navigator ? 'present' : 'missing'}.
          </p>
        </div>
      )}
    </section>
  );
}
