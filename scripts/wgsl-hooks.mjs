// Node module hooks: `import src from './x.wgsl?raw'` yields the file's text, as Vite does.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export async function load(url, context, nextLoad) {
  const [path, query] = url.split('?');
  if (path.endsWith('.wgsl') || query === 'raw') {
    const text = readFileSync(fileURLToPath(path), 'utf8');
    return { format: 'module', source: `export default ${JSON.stringify(text)};`, shortCircuit: true };
  }
  return nextLoad(url, context);
}
