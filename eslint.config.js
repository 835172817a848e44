// Lint: import order (simple-import-sort, auto-fixable with `npm run lint -- --fix`) and no `any` in
// source code. Formatting is Prettier's (`npm run format`); the layer order of src/ is checked by
// tests/architecture/layers.test.ts.
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'runs/', 'test-results/', 'playwright-report/', 'public/', 'tmp/'] },
  {
    files: ['**/*.{ts,tsx,js,mjs}'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 'latest', sourceType: 'module' },
    plugins: { 'simple-import-sort': simpleImportSort, '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
    },
  },
  {
    files: ['src/**/*.{ts,tsx}'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
);
