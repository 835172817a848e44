import { register } from 'node:module';
register('./wgsl-hooks.mjs', import.meta.url);
