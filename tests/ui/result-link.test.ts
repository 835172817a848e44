// A result as a link: the result file's JSON gzipped into ?result= round-trips exactly; a damaged
// or cut link is refused as such; the link keeps the page's path and drops its config hash.
import { describe, expect, it } from 'vitest';

import { decodeResultParam, encodeResultParam, resultLink, resultParam } from '../../src/ui/share/result-link';

describe('result link', () => {
  it('round-trips the JSON, in URL-safe characters, shorter than the text', async () => {
    const json = JSON.stringify({
      format: 'nsa-playground-result',
      metrics: Array.from({ length: 200 }, (_, i) => ({ step: i, loss: 5 - i / 100 })),
    });
    const param = await encodeResultParam(json);
    expect(param).toMatch(/^[\w-]+$/);
    expect(param.length).toBeLessThan(json.length / 2);
    expect(await decodeResultParam(param)).toBe(json);
    const url = resultLink('https://x.org/nsa/?run=a#v=1&preset=tiny', param);
    expect(url).toBe(`https://x.org/nsa/?result=${param}`);
    expect(resultParam(new URL(url).search)).toBe(param);
    expect(resultParam('?run=a')).toBeNull();
  });

  it('refuses a damaged or cut link', async () => {
    const param = await encodeResultParam('{"a":1}');
    await expect(decodeResultParam('%%%')).rejects.toThrow('the link is damaged (not base64url)');
    await expect(decodeResultParam(param.slice(0, param.length - 6))).rejects.toThrow('the link is damaged (cut short?)');
  });
});
