// The stepper palette for the page's colour scheme, following prefers-color-scheme live.
import { useEffect, useState } from 'react';

import { DARK, LIGHT, type StepperPalette } from './palette';

const QUERY = '(prefers-color-scheme: dark)';

function prefersDark(): boolean {
  return typeof matchMedia === 'function' && matchMedia(QUERY).matches;
}

export function usePalette(): StepperPalette {
  const [dark, setDark] = useState(prefersDark);
  useEffect(() => {
    if (typeof matchMedia !== 'function') return;
    const m = matchMedia(QUERY);
    const on = () => setDark(m.matches);
    m.addEventListener('change', on);
    return () => m.removeEventListener('change', on);
  }, []);
  return dark ? DARK : LIGHT;
}
