import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/support/globalSetup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    // The first run downloads DynamoDB Local (~56 MB) inside the global setup.
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
