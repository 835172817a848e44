// A hidden <input type=file> that a button opens (ref.current.click()); hands the picked file to
// `onFile` and clears itself afterwards, so choosing the same file again fires again.
import type { Ref } from 'react';

export interface HiddenFileInputProps {
  inputRef: Ref<HTMLInputElement>;
  accept: string;
  label: string;
  testId: string;
  onFile(file: File | undefined): Promise<void>;
}

export function HiddenFileInput({ inputRef, accept, label, testId, onFile }: HiddenFileInputProps) {
  return (
    <input
      ref={inputRef}
      type="file"
      accept={accept}
      hidden
      aria-label={label}
      data-testid={testId}
      onChange={(e) => {
        const input = e.currentTarget;
        void onFile(input.files?.[0]).finally(() => {
          input.value = '';
        });
      }}
    />
  );
}
