// Lint: import order (simple-import-sort, auto-fixable with `npm run lint -- --fix`), no `any` in
// source code, the rules of React hooks over src/ui and every .tsx, and no floating or misused
// promises (type-aware, through the TypeScript project service) over every file tsconfig.json
// includes. Formatting is Prettier's (`npm run format`); the layer order of src/ is checked by
// tests/architecture/layers.test.ts.
import reactHooks from 'eslint-plugin-react-hooks';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

// The files tsconfig.json includes: the type-aware rules need them in its program.
const TYPED = ['src/**/*.{ts,tsx}', 'tests/**/*.ts', 'e2e/**/*.ts', '{vite,vitest,playwright}.config.ts'];

// eslint-plugin-react-hooks' recommended rules (the rules of hooks, exhaustive deps and the React
// Compiler's checks), its warnings made errors: `eslint .` must fail on them.
const hooksRules = Object.fromEntries(Object.keys(reactHooks.configs.flat.recommended.rules).map((rule) => [rule, 'error']));

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'build/',
      'runs/',
      'test-results/',
      'playwright-report/',
      'public/',
      'tmp/',
      '.venv-lint/',
      '.venv-hf/',
    ],
  },
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
  {
    files: TYPED,
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['src/ui/**/*.{ts,tsx}', '**/*.tsx'],
    plugins: { 'react-hooks': reactHooks },
    rules: hooksRules,
  },
);
