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
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // ANSI escapes and C0 controls are matched on purpose (terminal output, invalid input).
      'no-control-regex': 'off',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  // The pure core (docs/ARCHITECTURE.md marks it): no files, network, timers, process or console, so it
  // runs in unit tests on plain values and time is always passed in.
  {
    files: [
      'src/typing/**/*.ts',
      'src/sharding/**/*.ts',
      'src/batching/**/*.ts',
      'src/shared/**/*.ts',
      'src/ordering/{order,writeCodec,grouping,stripeSchedule}.ts',
      'src/pacing/{rateChoice,rateControl,tokenBucket,inFlight,writeCost}.ts',
      'src/estimating/!(estimate).ts',
      'src/checkpointing/{checkpointState,checkpointShape,doneBatches}.ts',
      'src/load/{loadTally,loadResult,loadStop,options,segment,outputPaths}.ts',
      'src/reporting/{events,result,summary,logLine,estimateReport,charts}.ts',
      'src/reading/{utf8,loneSurrogates,magic,recordStarts}.ts',
      'src/writing/{wireItem,wireJson,backoff,awsEnv}.ts',
      'src/querying/{sortKeyOrder,itemJson}.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex:
                '^node:(fs|fs/promises|net|http|https|http2|child_process|os|timers|timers/promises|stream|stream/promises|readline|worker_threads|dns|zlib)$',
              message: "pure core: no I/O or timers here; do it in the stage's I/O module and pass the result in",
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'pure core: pass what you need from process in' },
        { name: 'setTimeout', message: 'pure core: time is passed in' },
        { name: 'setInterval', message: 'pure core: time is passed in' },
        { name: 'console', message: 'pure core: report through events' },
      ],
    },
  },
  // Plain JavaScript run by Node (the bin, this file).
  { files: ['**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  // Scripts that print their figures or drive a demo.
  { files: ['bench/**', 'scripts/**', 'tools/**', 'test/**'], rules: { 'no-console': 'off' } },
  prettier,
);
