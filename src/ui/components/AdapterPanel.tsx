// Which GPU the worker trains on — one line with the adapter's name, its limits and features behind a
// "details" toggle — or why there is none and how to get one.
import { Fragment, useId, useState } from 'react';

import type { AdapterSummary } from '../../gpu/context';
import { describeAdapter } from '../../gpu/context';
import { restartWorker } from '../controller';
import { useStore } from '../store';
import { hasFeature, KEY_FEATURES, KEY_LIMITS, limitText } from './adapter-facts';
import { WebGpuHelp } from './WebGpuHelp';

function AdapterFacts({ a }: { a: AdapterSummary }) {
  const [open, setOpen] = useState(false);
  const detailsId = useId();
  return (
    <>
      <p className="adapter-line">
        <strong className="adapter-name" data-testid="adapter-name">
          {describeAdapter(a)}
        </strong>
        {a.software && (
          <span className="muted" data-testid="adapter-software-note">
            {' '}
            · software renderer: training works, many times slower than on a GPU
          </span>
        )}{' '}
        <button
          type="button"
          className="link-button"
          data-testid="adapter-details-toggle"
          aria-expanded={open}
          aria-controls={detailsId}
          onClick={() => setOpen((o) => !o)}
        >
          {open ? 'hide details' : 'details'}
        </button>
      </p>
      <div id={detailsId} hidden={!open} data-testid="adapter-details">
        <AdapterDetails a={a} />
      </div>
    </>
  );
}

/** Vendor, architecture, the limits and features that matter here, then all of them. */
function AdapterDetails({ a }: { a: AdapterSummary }) {
  return (
    <>
      <dl className="facts">
        <dt>Vendor</dt>
        <dd data-testid="adapter-vendor">{a.vendor}</dd>
        <dt>Architecture</dt>
        <dd data-testid="adapter-architecture">{a.architecture}</dd>
        <dt>Description</dt>
        <dd data-testid="adapter-description">{a.description || a.device || '–'}</dd>
        <dt>Kind</dt>
        <dd data-testid="adapter-kind">{a.software ? 'software' : 'hardware'}</dd>
        {KEY_LIMITS.map((row) => (
          <Fragment key={row.key}>
            <dt title={row.why}>{row.label}</dt>
            <dd data-testid={`adapter-limit-${row.key}`}>{limitText(a, row)}</dd>
          </Fragment>
        ))}
        {KEY_FEATURES.map((f) => (
          <Fragment key={f.name}>
            <dt title={f.why}>
              <code>{f.name}</code>
            </dt>
            <dd data-testid={`adapter-feature-${f.name}`}>{hasFeature(a, f.name) ? 'yes' : 'no'}</dd>
          </Fragment>
        ))}
      </dl>
      <details className="adapter-all">
        <summary>
          All {a.features.length} features and {Object.keys(a.limits).length} limits
        </summary>
        <p data-testid="adapter-features">{a.features.length ? a.features.join(', ') : 'none'}</p>
        <dl className="facts">
          {Object.entries(a.limits)
            .sort(([x], [y]) => x.localeCompare(y))
            .map(([k, v]) => (
              <Fragment key={k}>
                <dt>{k}</dt>
                <dd>{v.toLocaleString('en-US')}</dd>
              </Fragment>
            ))}
        </dl>
      </details>
      {a.software && (
        <p className="note">
          This is a software renderer: training works but is slow. A browser with WebGPU on your GPU is many times faster (on Linux, Chrome
          needs <code>--enable-unsafe-webgpu --enable-features=Vulkan</code>).
        </p>
      )}
    </>
  );
}

export function AdapterPanel() {
  const adapter = useStore((s) => s.adapter);
  const secure = window.isSecureContext;
  const hasGpu = 'gpu' in navigator;
  return (
    <section
      className={`panel adapter-panel${adapter.status === 'ready' ? ' adapter-ready' : ''}`}
      aria-labelledby="adapter-heading"
      data-testid="adapter-panel"
      data-state={adapter.status}
    >
      <h2 id="adapter-heading">GPU</h2>
      {adapter.status === 'probing' && (
        <>
          <p className="muted">Looking for a WebGPU adapter…</p>
          {adapter.note && (
            <p className="note" role="status" data-testid="adapter-probe-note">
              {adapter.note}
            </p>
          )}
        </>
      )}
      {adapter.status === 'ready' && <AdapterFacts a={adapter.summary} />}
      {adapter.status === 'unavailable' && (
        <>
          <div className="unavailable" role="alert" data-testid="webgpu-unavailable">
            <p>
              <strong>WebGPU is not available here, so this page cannot train.</strong>
            </p>
            <p data-testid="webgpu-unavailable-reason">{adapter.message}</p>
            {adapter.retry && (
              <button type="button" data-testid="adapter-retry" onClick={() => void restartWorker()}>
                Try again
              </button>
            )}
            <p className="muted">
              This page: secure context {String(secure)}, navigator.gpu {hasGpu ? 'present' : 'missing'}.
            </p>
          </div>
          <WebGpuHelp secureContext={secure} hasNavigatorGpu={hasGpu} />
        </>
      )}
    </section>
  );
}
