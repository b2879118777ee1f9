import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { load, LoaderError, type LoadDependencies, type LoadOptions, type LoadResult } from '../../src/index.js';
import type { LocalAws } from './localAws.js';

/** Options of an in-process load against DynamoDB Local: the region and reject file have defaults. */
export type LocalLoadOptions = Omit<LoadOptions, 'region' | 'rejectsPath'> & Partial<Pick<LoadOptions, 'region' | 'rejectsPath'>>;

export interface LocalLoad {
  /** A path in the file's temp dir no other call of this helper hands out: `<dir>/<n>-<name>`. */
  path(name: string): string;
  /** Writes `content` to a fresh path(name) and returns it. */
  inputFile(name: string, content: string | Buffer): Promise<string>;
  /** load() against DynamoDB Local, with a fresh reject file in the temp dir and backoff sleeps of 0 ms. */
  run(options: LocalLoadOptions, deps?: LoadDependencies): Promise<LoadResult>;
  /** Runs a load that must fail; returns its LoaderError. */
  runFailing(options: LocalLoadOptions, deps?: LoadDependencies): Promise<LoaderError>;
}

/**
 * The in-process load of a test file against DynamoDB Local (useLocalAws), with `defaults` under every
 * run's options and `defaultDeps` under its dependencies. Call it at the top level of the file, after useLocalAws.
 */
export function localLoad(aws: Pick<LocalAws, 'endpoint' | 'dir'>, defaults: Partial<LoadOptions> = {}, defaultDeps: LoadDependencies = {}): LocalLoad {
  let seq = 0;
  const path = (name: string) => join(aws.dir(), `${++seq}-${name}`);
  const run = (options: LocalLoadOptions, deps: LoadDependencies = {}) =>
    load(
      { endpoint: aws.endpoint, region: 'us-east-1', rejectsPath: path('run.rejects.jsonl'), ...defaults, ...options },
      { random: () => 0, ...defaultDeps, ...deps },
    );
  return {
    path,
    async inputFile(name, content) {
      const file = path(name);
      await writeFile(file, content);
      return file;
    },
    run,
    async runFailing(options, deps = {}) {
      const error = await run(options, deps).then(
        (result) => new Error(`expected load() to fail, it resolved with ${JSON.stringify(result)}`),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LoaderError);
      return error as LoaderError;
    },
  };
}
