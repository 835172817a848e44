// The one form of a configuration error: a list of issues, each naming the offending field (a
// dotted path such as `model.nsa.d`, `train.lrMax`, `data.recall.pairs`, or a field of the
// object validated, e.g. `pairs` for a recall task), so a UI can point at the input and a CLI can
// print one line per problem. Every validator returns ConfigIssue[] (empty: valid); every assert*
// throws an InvalidConfigError carrying that list.

/** One problem of a configuration: the field it concerns and why. */
export interface ConfigIssue {
  field: string;
  message: string;
}

/** One `field: message` line per issue. */
export function formatConfigIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((i) => `${i.field}: ${i.message}`).join('\n');
}

/**
 * A configuration that failed validation. `issues` holds every problem found (never empty) and
 * `context` what was being validated; the message is the context line followed by the formatted
 * issues, one per line.
 */
export class InvalidConfigError extends Error {
  override readonly name: string = 'InvalidConfigError';
  /** What was validated, e.g. 'invalid model config' (the message's first line). */
  readonly context: string;
  readonly issues: ConfigIssue[];

  constructor(context: string, issues: readonly ConfigIssue[], options?: ErrorOptions) {
    super(`${context}:\n${formatConfigIssues(issues)}`, options);
    this.context = context;
    this.issues = issues.map((i) => ({ field: i.field, message: i.message }));
  }

  /** The fields named by the issues, in order, without repeats. */
  get fields(): string[] {
    return [...new Set(this.issues.map((i) => i.field))];
  }
}

/** The issues with each field prefixed (`prefix.field`), e.g. a recall task's inside a run config. */
export function prefixIssues(prefix: string, issues: readonly ConfigIssue[]): ConfigIssue[] {
  return issues.map((i) => ({ field: `${prefix}.${i.field}`, message: i.message }));
}
