// A chart element's width in CSS pixels (ResizeObserver) and whether it is on screen
// (IntersectionObserver): charts off screen skip their redraws until scrolled into view.
import { type RefObject, useEffect, useRef, useState } from 'react';

export function useBox<T extends HTMLElement>(fallbackWidth: number): [RefObject<T | null>, number, boolean] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(fallbackWidth);
  // Off screen until the observer says otherwise (it reports at once), so a chart mounted below
  // the fold draws nothing until scrolled to.
  const [visible, setVisible] = useState(typeof IntersectionObserver === 'undefined');
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const observers: Array<{ disconnect(): void }> = [];
    if (typeof ResizeObserver !== 'undefined') {
      const ro = new ResizeObserver((entries) => {
        const w = entries[0]?.contentRect.width;
        if (w && w > 0) setWidth(Math.round(w));
      });
      ro.observe(el);
      observers.push(ro);
    }
    if (typeof IntersectionObserver !== 'undefined') {
      // A margin of half a screen: a chart scrolled towards is already drawn when it appears.
      const io = new IntersectionObserver((entries) => setVisible(entries.at(-1)?.isIntersecting ?? true), { rootMargin: '50% 0px' });
      io.observe(el);
      observers.push(io);
    }
    return () => observers.forEach((o) => o.disconnect());
  }, []);
  return [ref, width, visible];
}
