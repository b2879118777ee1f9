// ESLint flat config: typescript-eslint's recommended rules over src/, test/, bench/, scripts/ and tools/;
// formatting is Prettier's (eslint-config-prettier turns off the rules it owns).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.cache/', 'bench/results/', 'bench/.children-*/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  // Plain JavaScript run by Node (the bin, this file).
  { files: ['**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  // Scripts that print their figures or drive a demo.
  { files: ['bench/**', 'scripts/**', 'tools/**', 'test/**'], rules: { 'no-console': 'off' } },
  prettier,
);
