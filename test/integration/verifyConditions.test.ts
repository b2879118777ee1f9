/**
 * verify() after a conditional load, in-process against DynamoDB Local: a backfill with --if-newer into a
 * table another writer already holds newer items of, and --if-not-exists over items there before. The
 * rows whose condition was false are in the load's --condition-failures file; given it, verify does not
 * compare those keys against the input (the table kept the other writer's item, which the input cannot
 * tell: outcome conditionKept, not read), compares a key whose later row landed after a failed one against
 * that row, and still names a tampering of a key the load wrote. Without the file, the kept keys read as
 * different: what the file is for.
 */
import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { verify } from '../../src/verifying/verify.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({ name: 'verify-conditions', processCredentials: true });
const { endpoint, client, newTable } = aws;
const loads = localLoad(aws);

describe("verify with the load's --condition-failures file", () => {
  it('--if-newer: keys kept by the condition are not compared; the rest are, and a tampering is still named', async () => {
    const table = await newTable({ partitionKey: { name: 'id', type: 'S' } });
    // Another writer's items, newer than some rows of the input (version 50).
    for (const id of ['a', 'c']) await client().send(new PutItemCommand({ TableName: table, Item: { id: { S: id }, version: { N: '50' }, by: { S: 'app' } } }));
    // a: both rows older than the app's (kept); b: no item before (written); c: first row older (kept), the
    // second newer (written, decides); d: first row written, second older than it (kept: the first stays).
    const rows = [
      { id: 'a', version: 10, by: 'backfill' },
      { id: 'b', version: 10, by: 'backfill' },
      { id: 'c', version: 20, by: 'backfill' },
      { id: 'a', version: 30, by: 'backfill' },
      { id: 'c', version: 60, by: 'backfill' },
      { id: 'd', version: 40, by: 'backfill' },
      { id: 'd', version: 35, by: 'backfill' },
      { id: 'e', version: 1, by: 'backfill' },
    ];
    const input = await loads.inputFile('rows.jsonl', `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const conditionFailuresPath = loads.path('kept.jsonl');
    const options = { table, input, ifNewer: 'version', conditionFailuresPath };
    const loaded = await loads.run(options);
    expect(loaded.conditionFailed).toBe(4);
    const kept = (await readFile(conditionFailuresPath, 'utf8')).trim().split('\n');
    // In the order the calls settled (rows of other keys are written side by side).
    expect(kept.map((l) => (JSON.parse(l) as { line: number }).line).sort((x, y) => x - y)).toEqual([1, 3, 4, 7]);

    const base = { ...options, endpoint, region: 'us-east-1', differencesPath: loads.path('diff.jsonl') };
    const result = await verify(base);
    expect(result.differing, JSON.stringify(result.examples)).toBe(0);
    // a and d kept; b, c (its row 5) and e matched.
    expect(result.outcomes).toMatchObject({ matched: 3, conditionKept: 2, different: 0, missing: 0 });
    expect(result.writes).toMatchObject({ planned: 8, checked: 5, superseded: 3 });
    // The kept keys are not read: 3 keys of one unit each (small items, strongly consistent).
    expect(result.reads.consumedRcu).toBe(3);
    // By a Scan: the kept keys' items are the input's keys (not extra), and not compared; the same outcomes.
    const scanned = await verify({ ...base, scanSegments: 2, differencesPath: loads.path('scan.jsonl') });
    expect(scanned.outcomes).toEqual({ ...result.outcomes, extra: 0 });
    // A sample: each key in it has the outcome it has in the whole run.
    const sampled = await verify({ ...base, sample: 0.5, differencesPath: loads.path('sample.jsonl') });
    expect(sampled.differing).toBe(0);
    expect(sampled.outcomes.matched + sampled.outcomes.conditionKept).toBe(sampled.checked);
    // The load's file is read, never written.
    expect((await readFile(conditionFailuresPath, 'utf8')).trim().split('\n')).toEqual(kept);

    // Tampering a key the load wrote is still found; tampering a kept key is not the input's to judge.
    await client().send(new PutItemCommand({ TableName: table, Item: { id: { S: 'b' }, version: { N: '10' }, by: { S: 'changed' } } }));
    await client().send(new DeleteItemCommand({ TableName: table, Key: { id: { S: 'e' } } }));
    await client().send(new PutItemCommand({ TableName: table, Item: { id: { S: 'a' }, version: { N: '70' }, by: { S: 'app' } } }));
    const tampered = await verify({ ...base, differencesPath: loads.path('diff2.jsonl') });
    expect(tampered.outcomes).toMatchObject({ matched: 1, conditionKept: 2, different: 1, missing: 1 });

    // Without the file, every key's last row is expected: the kept keys read as different.
    const { conditionFailuresPath: _file, ...blind } = base;
    const without = await verify({ ...blind, differencesPath: loads.path('diff3.jsonl') });
    expect(without.outcomes.conditionKept).toBe(0);
    expect(without.outcomes.different).toBeGreaterThanOrEqual(3);
  });

  it('--if-not-exists: items there before are kept, the rest compared; a line that is not the file format is refused', async () => {
    const table = await newTable({ partitionKey: { name: 'id', type: 'S' } });
    await client().send(new PutItemCommand({ TableName: table, Item: { id: { S: 'x' }, v: { S: 'there before' } } }));
    const input = await loads.inputFile('rows.csv', 'id,v\nx,ours\ny,ours\nx,again\nz,ours\n');
    const conditionFailuresPath = loads.path('kept.jsonl');
    const options = { table, input, ifNotExists: true, conditionFailuresPath };
    const loaded = await loads.run(options);
    expect(loaded.conditionFailed).toBe(2);
    const base = { ...options, endpoint, region: 'us-east-1', differencesPath: loads.path('diff.jsonl') };
    const result = await verify(base);
    expect(result.differing, JSON.stringify(result.examples)).toBe(0);
    expect(result.outcomes).toMatchObject({ matched: 2, conditionKept: 1 });

    const wrong = loads.path('wrong.jsonl');
    await import('node:fs/promises').then((fs) => fs.writeFile(wrong, 'not json\n'));
    await expect(verify({ ...base, conditionFailuresPath: wrong })).rejects.toThrow(/is not a line of the load's --condition-failures file/);
  });

  it("a file that is not this input's load's is refused, naming its line; a line twice counts once", async () => {
    const table = await newTable({ partitionKey: { name: 'id', type: 'S' } });
    await client().send(new PutItemCommand({ TableName: table, Item: { id: { S: 'x' }, v: { S: 'there before' } } }));
    const input = await loads.inputFile('rows.csv', 'id,v\nx,ours\ny,ours\nz,ours\n');
    const conditionFailuresPath = loads.path('kept.jsonl');
    const options = { table, input, ifNotExists: true, conditionFailuresPath };
    expect((await loads.run(options)).conditionFailed).toBe(1);
    const text = await readFile(conditionFailuresPath, 'utf8');
    const base = { ...options, endpoint, region: 'us-east-1', differencesPath: loads.path('diff.jsonl') };
    // y's item changed since the load: a verify that skipped y would not see it.
    await client().send(new PutItemCommand({ TableName: table, Item: { id: { S: 'y' }, v: { S: 'changed' } } }));
    const write = async (name: string, lines: object[]) => {
      const path = loads.path(name);
      await writeFile(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
      return path;
    };
    const line = { code: 'CONDITION_FAILED', condition: '--if-not-exists', raw: 'q,theirs' };
    // Another input's row at a line of this one (same file name, another key): y is not kept.
    const otherKey = await write('other-key.jsonl', [{ ...line, file: input, line: 3, key: { id: 'q' } }]);
    const refused = (await verify({ ...base, conditionFailuresPath: otherKey }).catch((e: Error) => e)) as Error;
    expect(refused.message).toContain(`${otherKey} line 1`);
    expect(refused.message).toContain(`line 3 of ${input}`);
    // A row the input does not have.
    const noRow = await write('no-row.jsonl', [{ ...line, file: input, line: 9, key: { id: 'q' } }]);
    await expect(verify({ ...base, conditionFailuresPath: noRow })).rejects.toThrow(/line 1 .* is not a row of the input/);
    const otherFile = await write('other-file.jsonl', [{ ...line, file: `${input}.old`, line: 2, key: { id: 'x' } }]);
    await expect(verify({ ...base, conditionFailuresPath: otherFile })).rejects.toThrow(/is not a row of the input/);
    // The load's own lines, twice: x kept once, y found changed.
    const twice = await write(
      'twice.jsonl',
      `${text}${text}`
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as object),
    );
    const result = await verify({ ...base, conditionFailuresPath: twice });
    expect(result.outcomes).toMatchObject({ matched: 1, conditionKept: 1, different: 1 });
  });
  it("stopped mid-keys, it resumes with the same file to the whole run's outcomes; a file changed since is refused", async () => {
    const table = await newTable({ partitionKey: { name: 'id', type: 'S' } });
    // Every tenth key there before: --if-not-exists keeps it.
    for (let i = 0; i < 2000; i += 10) await client().send(new PutItemCommand({ TableName: table, Item: { id: { S: `k${i}` }, v: { S: 'theirs' } } }));
    const input = await loads.inputFile('rows.csv', `id,v\n${Array.from({ length: 2000 }, (_, i) => `k${i},ours`).join('\n')}\n`);
    const conditionFailuresPath = loads.path('kept.jsonl');
    const options = { table, input, ifNotExists: true, conditionFailuresPath };
    expect((await loads.run(options)).conditionFailed).toBe(200);
    const base = { ...options, endpoint, region: 'us-east-1' };
    const whole = await verify({ ...base, differencesPath: loads.path('whole.jsonl') });
    expect(whole.outcomes).toMatchObject({ matched: 1800, conditionKept: 200, different: 0 });

    const checkpointPath = loads.path('verify.checkpoint.json');
    const differencesPath = loads.path('diff.jsonl');
    const controller = new AbortController();
    const stopped = await verify(
      { ...base, checkpointPath, differencesPath, concurrency: 1 },
      { signal: controller.signal, onProgress: (p) => void (p.phase === 'checking keys' && p.settled >= 600 && controller.abort(new Error('stop'))) },
    ).then(
      () => undefined,
      (error: unknown) => error as { code?: string },
    );
    expect(stopped?.code).toBe('ABORTED');
    const saved = JSON.parse(await readFile(`${checkpointPath}.verify`, 'utf8')) as { done: number };
    expect(saved.done).toBeGreaterThanOrEqual(600);
    expect(saved.done).toBeLessThan(2000);

    // The file with its last line gone: another set of kept keys than the checkpoint counted.
    const text = await readFile(conditionFailuresPath, 'utf8');
    const changed = loads.path('changed.jsonl');
    await writeFile(changed, text.trim().split('\n').slice(0, -1).join('\n') + '\n');
    await expect(verify({ ...base, conditionFailuresPath: changed, checkpointPath, differencesPath })).rejects.toMatchObject({ code: 'CHECKPOINT_MISMATCH' });
    const resumed = await verify({ ...base, checkpointPath, differencesPath });
    expect(resumed.checkpoint!.resumedFrom).toBe(saved.done);
    expect(resumed.outcomes).toEqual(whole.outcomes);
    expect(resumed.writes).toEqual(whole.writes);
  }, 60_000);
  it('--segment: each segment verifies against its own file (the load named it .seg-i-of-N), whichever segment a kept key is in', async () => {
    const table = await newTable({ partitionKey: { name: 'id', type: 'S' } });
    for (let i = 0; i < 40; i += 4) await client().send(new PutItemCommand({ TableName: table, Item: { id: { S: `k${i}` }, v: { S: 'theirs' } } }));
    const input = await loads.inputFile('rows.csv', `id,v\n${Array.from({ length: 40 }, (_, i) => `k${i},ours`).join('\n')}\n`);
    const conditionFailuresPath = loads.path('kept.jsonl');
    const options = { table, input, ifNotExists: true, conditionFailuresPath };
    let failed = 0;
    for (const segment of ['0/2', '1/2']) failed += (await loads.run({ ...options, segment })).conditionFailed ?? 0;
    expect(failed).toBe(10);
    const outcomes = { matched: 0, conditionKept: 0, differing: 0 };
    for (const segment of ['0/2', '1/2']) {
      const result = await verify({
        ...options,
        segment,
        endpoint,
        region: 'us-east-1',
        differencesPath: loads.path(`diff-${segment.replace('/', '-')}.jsonl`),
      });
      outcomes.matched += result.outcomes.matched;
      outcomes.conditionKept += result.outcomes.conditionKept;
      outcomes.differing += result.differing;
    }
    expect(outcomes).toEqual({ matched: 30, conditionKept: 10, differing: 0 });
    // The other segment's lines in this segment's file: not this segment's rows, refused.
    const own = conditionFailuresPath.replace(/\.jsonl$/, '.seg-0-of-2.jsonl');
    await writeFile(own, await readFile(conditionFailuresPath.replace(/\.jsonl$/, '.seg-1-of-2.jsonl')));
    await expect(verify({ ...options, segment: '0/2', endpoint, region: 'us-east-1', differencesPath: loads.path('x.jsonl') })).rejects.toThrow(
      /is not a row of the input written by the load/,
    );
  });
});
