// Beside the compared curves: the settings that differ between the runs, and each run's final and
// best figures (src/train/compare.ts, the same data `npm run compare` prints).
import { type Comparison, FIGURE_COLUMNS, figureCells, formatSettingValue } from '../../train/compare';
import { runColor } from './compare-series';

function RunHeader({ names }: { names: string[] }) {
  return (
    <>
      {names.map((n, i) => (
        <th key={i} scope="col">
          <span className="swatch" style={{ background: runColor(i) }} aria-hidden="true" />
          {n}
        </th>
      ))}
    </>
  );
}

export function CompareTables({ comparison: c }: { comparison: Comparison }) {
  const names = c.runs.map((r) => r.name);
  // One column per run (beside the charts there is room for few columns): figure by figure.
  const cells = c.runs.map((r) => figureCells(r));
  return (
    <div className="compare-tables">
      <table className="diff-table" data-testid="compare-diff">
        <caption>{c.differences.length ? 'Settings that differ' : 'Settings: identical'}</caption>
        {c.differences.length > 0 && (
          <>
            <thead>
              <tr>
                <th scope="col">setting</th>
                <RunHeader names={names} />
              </tr>
            </thead>
            <tbody>
              {c.differences.map((d) => (
                <tr key={d.path} data-testid="compare-diff-row" data-path={d.path}>
                  <th scope="row">{d.path}</th>
                  {d.values.map((v, i) => (
                    <td key={i}>{formatSettingValue(v)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </>
        )}
      </table>
      <table className="figures-table" data-testid="compare-figures">
        <caption>Metrics</caption>
        <thead>
          <tr>
            <th scope="col">{FIGURE_COLUMNS[0]}</th>
            <RunHeader names={names} />
          </tr>
        </thead>
        <tbody>
          {FIGURE_COLUMNS.slice(1).map((label, k) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              {cells.map((row, i) => (
                <td key={i} className="num">
                  {row[k + 1]}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
