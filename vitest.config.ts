import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One PostgreSQL server per run, started only if a test asks for it (test/support/postgres.ts).
    globalSetup: ['test/support/postgres-global.ts'],
  },
});
