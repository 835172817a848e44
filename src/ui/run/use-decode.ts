// The run's tokenizer as the stepper's decode function, loaded on demand (the GPT-2 ranks are
// large: only a GPT-2 run pays for them). Synthetic datasets have none: ids are shown.
import { useEffect, useState } from 'react';

import type { TokenizerName } from '../../train/data/tokenizer';
import type { DecodeFn } from '../stepper';

export function useDecode(tokenizer: TokenizerName | null): DecodeFn | undefined {
  const [decode, setDecode] = useState<{ name: TokenizerName; fn: DecodeFn } | null>(null);
  useEffect(() => {
    if (!tokenizer || decode?.name === tokenizer) return;
    let live = true;
    void import('../../train/data/tokenizer').then(({ createTokenizer }) => {
      const tok = createTokenizer(tokenizer);
      if (live) setDecode({ name: tokenizer, fn: (ids) => tok.decode(ids) });
    });
    return () => {
      live = false;
    };
  }, [tokenizer, decode?.name]);
  return tokenizer && decode?.name === tokenizer ? decode.fn : undefined;
}
