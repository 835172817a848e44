// "Share result" as one self-contained web page (pure): it opens in any browser, offline and without
// the app — the run's name, facts, notes and tags, its config, and its loss and accuracy charts
// (with chance and its sampling band) drawn as static SVG — and it embeds the result file itself, so
// the app's "Open result…" reopens it whole (selection snapshots included).
import { taskAnswerLabel, taskChance } from '../../train/eval/task-chance';
import { percent } from '../charts/chance-band';
import { SECTIONS } from '../config/fields';
import { sectionSummary } from '../config/section-summary';
import { formatLoss } from '../format';
import type { SharedResult } from './result-file';
import { ACCURACY_LINES, LOSS_LINES, type ResultLine, resultSeries } from './result-lines';
import { escapeXml, staticChartSvg, type StaticLine } from './static-chart';

/** The id of the script element holding the result file's JSON. */
export const EMBEDDED_RESULT_ID = 'nsa-playground-result';

const STYLE = `
body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; padding: 16px; max-width: 1100px; color: #1f2937; background: #fff; }
@media (prefers-color-scheme: dark) { body { color: #e5e7eb; background: #111827; } }
h1 { font-size: 1.4rem; margin: 0 0 4px; }
.muted { opacity: 0.75; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 16px; margin: 16px 0; }
.chart { width: 100%; height: auto; }
.tag { display: inline-block; border: 1px solid #8888; border-radius: 10px; padding: 0 6px; margin-right: 4px; font-size: 0.8rem; }
.notes { white-space: pre-wrap; }
ul.config { padding-left: 18px; }
pre { overflow-x: auto; font-size: 0.8rem; }
footer { margin-top: 24px; font-size: 0.85rem; }
`;

const twoDecimals = (v: number) => v.toFixed(2);

/** The page's HTML text; `resultJson` is the result file's text (encodeResult), embedded as it is. */
export function standaloneResultHtml(r: SharedResult, resultJson: string): string {
  const { series, band } = resultSeries(r);
  const lines = (specs: readonly ResultLine[]): StaticLine[] => specs.map((l) => ({ ...l, points: series.get(l.series).points() }));
  const chance = taskChance(r.config);
  const last = r.metrics.at(-1);
  const lastEval = r.evals.at(-1);
  const charts = [
    staticChartSvg({ testId: 'standalone-loss', title: 'Loss (nats/token)', xName: 'step', lines: lines(LOSS_LINES), format: twoDecimals }),
  ];
  if (chance !== null)
    charts.push(
      staticChartSvg({
        testId: 'standalone-accuracy',
        title: `Answer accuracy (${taskAnswerLabel(r.config) ?? 'answers'}, validation)`,
        xName: 'step',
        lines: lines(ACCURACY_LINES),
        format: percent,
        yRange: [0, 1],
        reference: { y: chance, label: `chance ${percent(chance)}` },
        band,
      }),
    );
  const facts = [
    `${r.metrics.length} steps`,
    `loss ${formatLoss(last?.loss)}`,
    `validation loss ${formatLoss(lastEval?.valLoss)}`,
    ...(lastEval?.accuracy !== undefined ? [`accuracy ${percent(lastEval.accuracy)}`] : []),
    ...(r.createdAt ? [`shared ${r.createdAt.slice(0, 16).replace('T', ' ')} UTC`] : []),
  ].join(' · ');
  // `<` escaped: the JSON cannot end its script element early (still the same JSON).
  const embedded = resultJson.replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="NSA Playground">
<title>${escapeXml(r.name)} · NSA Playground result</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1 data-testid="standalone-name">${escapeXml(r.name)}</h1>
<p class="muted" data-testid="standalone-facts">${escapeXml(facts)}</p>
${r.tags?.length ? `<p data-testid="standalone-tags">${r.tags.map((t) => `<span class="tag">${escapeXml(t)}</span>`).join('')}</p>` : ''}
${r.notes ? `<p class="notes" data-testid="standalone-notes">${escapeXml(r.notes)}</p>` : ''}
<div class="charts">
${charts.join('\n')}
</div>
<h2>Configuration</h2>
<ul class="config" data-testid="standalone-config">
${SECTIONS.map((s) => `<li><strong>${escapeXml(s.title)}</strong> <span class="muted">${escapeXml(sectionSummary(s.id, r.config))}</span></li>`).join('\n')}
</ul>
<details><summary>The whole config (JSON)</summary><pre>${escapeXml(JSON.stringify(r.config, null, 2))}</pre></details>
<footer class="muted">A training result of NSA Playground (Native Sparse Attention trained in the browser with WebGPU). This page works offline; open it with the playground's “Open result…” to step through its selection snapshots.</footer>
</main>
<script type="application/json" id="${EMBEDDED_RESULT_ID}">${embedded}</script>
</body>
</html>
`;
}

/** The result file's JSON embedded in a standalone page, or null when `html` holds none. */
export function embeddedResultJson(html: string): string | null {
  const m = new RegExp(`<script type="application/json" id="${EMBEDDED_RESULT_ID}">([\\s\\S]*?)</script>`).exec(html);
  return m ? m[1] : null;
}
