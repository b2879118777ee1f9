// ESLint flat config: typescript-eslint's recommended rules over src/, test/, bench/, scripts/ and tools/;
// formatting is Prettier's (eslint-config-prettier turns off the rules it owns).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/**
 * Who may import whom: the folders of src/, top to bottom. A folder imports only folders below it, so
 * every import points down and no stage reaches back into one that uses it (docs/ARCHITECTURE.md, "Who
 * may import whom"). src/index.ts, the public API, sits above them all. test/unit/importGraph.test.ts reads
 * this list too, and also refuses import cycles between files.
 */
export const LAYERS = [
  'cli',
  'verifying',
  'querying',
  'estimating',
  'load',
  'reporting',
  'checkpointing',
  'writing',
  'pacing',
  'ordering',
  'batching',
  'reading',
  'typing',
  'sharding',
  'aws',
  'files',
  'shared',
];

/** One config entry per folder: imports of the folders above it are errors. */
function layerRules() {
  return LAYERS.slice(1).map((folder, i) => {
    const above = LAYERS.slice(0, i + 1);
    const message = `src/${folder}/ may import only the folders below it (docs/ARCHITECTURE.md, "Who may import whom"); move the shared piece down instead`;
    // One `../` per folder level, so a subfolder's files (ordering/stripes/) are held to their folder's rule.
    // esquery regexes cannot hold a slash: \x2F is one.
    const upward = `^(\\.\\.\\x2F)+(${above.join('|')})\\x2F`;
    return {
      files: [`src/${folder}/**/*.ts`],
      rules: {
        '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ regex: `^(\\.\\./)+(${above.join('|')})/`, message }] }],
        // import('…') as a type or an expression, which no-restricted-imports does not see.
        'no-restricted-syntax': [
          'error',
          { selector: `TSImportType[argument.literal.value=/${upward}/]`, message },
          { selector: `ImportExpression[source.value=/${upward}/]`, message },
        ],
      },
    };
  });
}

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
      'src/ordering/{order,writeCodec}.ts',
      'src/ordering/stripes/{grouping,stripeSchedule,stripeLayout,recordStarts,keyCells}.ts',
      'src/pacing/{rateChoice,rateControl,tokenBucket,inFlight,writeCost,sendPacer}.ts',
      'src/estimating/!(estimate).ts',
      'src/checkpointing/{checkpointState,checkpointShape,doneBatches}.ts',
      'src/load/{loadTally,loadResult,loadStop,options,segment,outputPaths,writeAffectingOptions}.ts',
      'src/reporting/{events,result,summary,logLine,charts}.ts',
      'src/reading/{utf8,magic,inputFormat}.ts',
      'src/writing/{wireItem,wireJson}.ts',
      'src/aws/{backoff,awsEnv}.ts',
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
  ...layerRules(),
  // Plain JavaScript run by Node (the bin, this file).
  { files: ['**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  // Scripts that print their figures or drive a demo.
  { files: ['bench/**', 'scripts/**', 'tools/**', 'test/**'], rules: { 'no-console': 'off' } },
  prettier,
);
