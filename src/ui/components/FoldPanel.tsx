// A panel that folds to its heading and a one-line summary: open on wide screens, folded on a phone
// (so the page stays a few screens long there), and the reader's choice after that.
import { type ReactNode, useState } from 'react';

/** A phone-sized viewport (narrower than a tablet): secondary panels and charts start folded. */
export function isPhone(): boolean {
  return typeof window !== 'undefined' && typeof window.matchMedia === 'function' && window.matchMedia('(max-width: 600px)').matches;
}

interface Props {
  title: ReactNode;
  /** Shown beside the title, folded or not (e.g. the last heartbeat's age). */
  summary?: ReactNode;
  className: string;
  testId: string;
  /** data-* attributes of the panel (e.g. its status, for tests). */
  data?: Record<`data-${string}`, string | number | boolean>;
  children: ReactNode;
}

export function FoldPanel({ title, summary, className, testId, data, children }: Props) {
  const [open, setOpen] = useState(() => !isPhone());
  return (
    <details
      className={`panel fold-panel ${className}`}
      data-testid={testId}
      {...data}
      open={open}
      onToggle={(e) => setOpen(e.currentTarget.open)}
    >
      <summary>
        <h2>{title}</h2>
        {summary !== undefined && <span className="fold-summary muted">{summary}</span>}
      </summary>
      {children}
    </details>
  );
}
