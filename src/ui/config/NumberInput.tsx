// A number typed as text: the config holds the parsed number (NaN while the text is not one), the
// input keeps what the user typed until the config changes from elsewhere (a preset, an import).
import { type InputHTMLAttributes, useState } from 'react';

import { formatNumberText, parseNumberText } from './number-text';

export interface NumberInputProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange' | 'type'> {
  value: unknown;
  integer?: boolean;
  onValue(v: number): void;
}

export function NumberInput({ value, integer, onValue, ...rest }: NumberInputProps) {
  const [draft, setDraft] = useState<{ text: string; value: number } | null>(null);
  const text = draft && Object.is(draft.value, value) ? draft.text : formatNumberText(value);
  return (
    <input
      {...rest}
      type="text"
      inputMode={integer ? 'numeric' : 'decimal'}
      autoComplete="off"
      spellCheck={false}
      value={text}
      onChange={(e) => {
        const v = parseNumberText(e.target.value);
        setDraft({ text: e.target.value, value: v });
        onValue(v);
      }}
    />
  );
}
