/**
 * --condition-failures across a stop (the signal, as SIGINT gives it) in the middle of a conditional load with a
 * checkpoint, and its resume: the stopped run's file holds exactly its conditionFailed rows, and after the
 * resume the file holds every conditionFailed row once, its line count the load's conditionFailed.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { LoaderError } from '../../src/index.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({ name: 'cf-abort', processCredentials: true, keys: { partitionKey: { name: 'pk', type: 'S' } } });
const { newTable, dropTable, client } = aws;
const { inputFile, run, path } = localLoad(aws);

const keysOf = async (file: string) =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { key: { pk: string } }).key.pk);

describe('--condition-failures across a stop and a resume', () => {
  it('the stopped run lists its conditionFailed rows; the resume ends with each once', async () => {
    const rows = 600;
    const file = await inputFile('rows.csv', `pk,v\n${Array.from({ length: rows }, (_, i) => `k${i},row ${i}`).join('\n')}\n`);
    const table = await newTable();
    const taken: string[] = [];
    for (let i = 0; i < rows; i += 5) {
      await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: `k${i}` }, v: { S: 'before' } } }));
      taken.push(`k${i}`);
    }
    const failures = path('kept.jsonl');
    const options = { input: file, table, ifNotExists: true, conditionFailuresPath: failures, checkpointPath: path('job.ckpt'), concurrency: 8 };
    try {
      const stop = new AbortController();
      const stopped = await run(options, {
        signal: stop.signal,
        onEvent: (e) => {
          if (e.type === 'progress' && e.counters.written > 150) stop.abort();
        },
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(stopped).toBeInstanceOf(LoaderError);
      const partial = (stopped as LoaderError).result!;
      expect(partial.written).toBeLessThan(rows - taken.length);
      const first = await keysOf(failures);
      expect(first).toHaveLength(partial.conditionFailed!);
      expect(new Set(first).size).toBe(first.length);

      const resumed = await run(options);
      expect(resumed).toMatchObject({ rowsRead: rows, written: rows - taken.length, conditionFailed: taken.length, rejected: 0, notWritten: 0 });
      const all = await keysOf(failures);
      expect(all.sort()).toEqual([...taken].sort());
    } finally {
      await dropTable(table);
    }
  });
});
