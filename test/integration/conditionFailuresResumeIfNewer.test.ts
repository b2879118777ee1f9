/**
 * A kill -9 that catches two rows of one key under --if-newer both landed and neither recorded: the resume
 * sends both again. The earlier row's condition now finds the later row's item (the load's own), not its own.
 * Simulated exactly: the checkpoint as it was saved before either batch was done, and the table as the killed
 * run left it (both rows landed, the later one's item stored). The resume cannot tell this from a killed run in
 * which the earlier row's condition was truly false (another writer's newer item, then our later row): the
 * table ends the same. It counts the earlier row conditionFailed and lists it (docs/REFERENCE.md, "Conditional
 * writes"); what must hold either way: every row counted once, the file's lines exactly the conditionFailed
 * rows, none twice, and the table right.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { copyFile, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({ name: 'cf-resume-ifnewer', processCredentials: true, keys: { partitionKey: { name: 'pk', type: 'S' } } });
const { newTable, dropTable, client } = aws;
const { inputFile, run, path } = localLoad(aws, { types: { ver: 'N' } });

describe('--condition-failures after a kill between two rows of one key (--if-newer)', () => {
  it('every row counted once and the file its conditionFailed rows; the earlier row is the one counted conditionFailed', async () => {
    const file = await inputFile('versions.csv', 'pk,ver,v\nA,1,first\nB,1,other\nA,2,second\n');
    const table = await newTable();
    const checkpoint = path('job.ckpt');
    const saved = path('job.ckpt.copy');
    const failures = path('kept.jsonl');
    const options = { input: file, table, ifNewer: 'ver', conditionFailuresPath: failures, checkpointPath: checkpoint };
    try {
      // The killed run: every row landed; its checkpoint as of its first save (no batch done yet).
      let copied: Promise<void> | undefined;
      const first = await run(options, { onEvent: (e) => void (e.type === 'started' && (copied = copyFile(checkpoint, saved))) });
      await copied;
      expect(first).toMatchObject({ written: 3, conditionFailed: 0 });
      expect(JSON.parse(await readFile(saved, 'utf8'))).toMatchObject({ status: 'running', batchesDone: 0 });
      await copyFile(saved, checkpoint);
      const resumed = await run(options);
      expect(resumed).toMatchObject({ rowsRead: 3, written: 2, conditionFailed: 1, rejected: 0, notWritten: 0 });
      const lines = (await readFile(failures, 'utf8')).split('\n').filter(Boolean);
      expect(lines.map((l) => JSON.parse(l) as { line: number; key: { pk: string } })).toMatchObject([{ line: 2, key: { pk: 'A' } }]);
      const item = await client().send(new GetItemCommand({ TableName: table, Key: { pk: { S: 'A' } } }));
      expect(item.Item?.['v']?.S).toBe('second');
    } finally {
      await dropTable(table);
    }
  });
});
