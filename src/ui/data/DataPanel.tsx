// The training data: Brown corpus, a synthetic task (with the recall or passkey task's settings), or an
// uploaded .txt file. A refused upload shows why and changes nothing else (the source, the
// previous file, the config).
import { useId, useRef, useState } from 'react';

import type { DataConfig, DataSource } from '../../train/config';
import { withDataSource } from '../../train/presets/recall-preset';
import { FieldInput } from '../config/FieldInput';
import { fieldSpec } from '../config/fields';
import { TaskFields } from '../config/TaskFields';
import { formatSize, MAX_UPLOAD_LABEL, type UploadedText, validateUploadedText } from './upload';

export interface DataPanelProps {
  data: DataConfig;
  onChange(d: DataConfig): void;
  /** The accepted upload, if any (used when data.source is 'upload'). */
  upload: UploadedText | null;
  onUpload(u: UploadedText): void;
  disabled?: boolean;
  /** Validation messages by field path ('data.source', 'data.tokenizer', 'data.recall.pairs', …). */
  errors?: ReadonlyMap<string, readonly string[]>;
}

export const SOURCE_NOTES: Record<DataSource, string> = {
  brown: 'The Brown corpus: American English prose of 1961, bundled with the page; validation on held-out documents.',
  random: 'Uniform random tokens: there is nothing to learn, so the loss must stay at ln(vocabulary). A leakage control.',
  copy: "Each sequence's second half repeats its first half: a model that attends back predicts it exactly.",
  upload: `Your own UTF-8 .txt file, up to ${MAX_UPLOAD_LABEL}. It stays in this browser.`,
  recall:
    'Associative recall: key→value pairs among fillers, then queries of earlier keys; each answer lies at least the minimum distance back, beyond a short sliding window.',
  passkey:
    'Passkey retrieval: a needle (a marker and a k-digit key) hidden among fillers at a random depth; the sequence ends with a query marker and the key, and only the key after it is scored.',
};

/** Why the data choice cannot start a run yet, or null. */
export function dataProblem(data: DataConfig, upload: UploadedText | null): string | null {
  return data.source === 'upload' && !upload ? 'Choose a .txt file to train on.' : null;
}

const NO_ERRORS: readonly string[] = [];

export function DataPanel({ data, onChange, upload, onUpload, disabled, errors }: DataPanelProps) {
  const fileId = useId();
  const messageId = useId();
  const latest = useRef(0);
  const [checking, setChecking] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const source = fieldSpec('data.source')!;
  const tokenizer = fieldSpec('data.tokenizer')!;
  const missing = dataProblem(data, upload);

  const onFile = async (file: File | undefined) => {
    if (!file) return;
    const ticket = ++latest.current;
    setChecking(true);
    const r = await validateUploadedText(file);
    if (ticket !== latest.current) return; // a later choice supersedes this one
    setChecking(false);
    if (r.ok) {
      setRefusal(null);
      onUpload({ name: r.name, text: r.text, bytes: file.size });
    } else {
      setRefusal(r.message);
    }
  };

  return (
    <div className="data-panel" data-testid="data-panel">
      <FieldInput
        spec={source}
        value={data.source}
        errors={errors?.get('data.source') ?? NO_ERRORS}
        disabled={disabled}
        onChange={(v) => onChange(withDataSource(data, v as DataSource))}
      />
      <p className="cfg-note muted" data-testid="data-source-note">
        {SOURCE_NOTES[data.source] ?? ''}
      </p>
      {data.source === 'recall' && data.recall && (
        <TaskFields
          kind="recall"
          task={data.recall}
          onChange={(recall) => onChange({ ...data, recall })}
          disabled={disabled}
          errors={errors}
        />
      )}
      {data.source === 'passkey' && data.passkey && (
        <TaskFields
          kind="passkey"
          task={data.passkey}
          onChange={(passkey) => onChange({ ...data, passkey })}
          disabled={disabled}
          errors={errors}
        />
      )}
      {data.source === 'upload' && (
        <div className="cfg-field cfg-upload">
          <label htmlFor={fileId}>Text file</label>
          <div className="cfg-control">
            <input
              id={fileId}
              type="file"
              accept=".txt,text/plain"
              data-testid="upload-input"
              disabled={disabled}
              aria-invalid={missing !== null}
              aria-describedby={messageId}
              onChange={(e) => {
                const input = e.currentTarget;
                void onFile(input.files?.[0]).finally(() => {
                  input.value = '';
                });
              }}
            />
            <div id={messageId} className="cfg-control">
              {upload && (
                <span className="cfg-hint" data-testid="upload-status">
                  Using {upload.name} ({formatSize(upload.bytes)}, {upload.text.length.toLocaleString('en-US')} characters).
                </span>
              )}
              {checking && <span className="cfg-hint">Checking the file…</span>}
              {refusal && (
                <span className="cfg-error" role="alert" data-testid="upload-error">
                  {refusal}
                  {upload ? ` Still using ${upload.name}.` : ''}
                </span>
              )}
              {missing && !refusal && (
                <span className="cfg-error" data-testid="upload-missing">
                  {missing}
                </span>
              )}
            </div>
          </div>
        </div>
      )}
      <FieldInput
        spec={tokenizer}
        value={data.tokenizer}
        errors={errors?.get('data.tokenizer') ?? NO_ERRORS}
        disabled={disabled}
        onChange={(v) => onChange({ ...data, tokenizer: v as DataConfig['tokenizer'] })}
      />
    </div>
  );
}
