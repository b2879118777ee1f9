/**
 * Adversarial suite (a): generated CSV and JSON Lines files through the real readers and
 * planner (openInput, readCsv / readJsonLines, createRowPlanner), cut into random chunks, without
 * DynamoDB. Each record must come out as the oracle says: the item exactly (names, values, types) or a
 * reject with its code, on its line, and no record lost or invented. One property per hostile dimension,
 * so a failure names its issue item; 'plain' is what the loader handles today and proves the harness.
 */
import { fc, it } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { expectedOf } from '../support/adversarialOracle.js';
import { fcParams, readerFates, REPLAY } from '../support/adversarialPipeline.js';
import { chunked, fileModel, PLAIN, serialize, type FileModel, type Profile } from '../support/adversarialRows.js';

const FILE = 'test/adversarial/readers.test.ts';
const READERS: Profile = { ...PLAIN, tooLarge: false, maxRows: 30, badShare: 0.2 };

const caseOf = (profile: Profile) => fc.tuple(fileModel(profile), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }));

async function check([model, cuts]: [FileModel, number[]]): Promise<void> {
  const file = serialize(model);
  const expected = expectedOf(model, file.lines);
  const fates = await readerFates(chunked(file.bytes, cuts), model.format, file.types);
  expect(fates).toEqual(expected.fates);
}

describe(`adversarial readers (${REPLAY(FILE)})`, () => {
  it.prop([caseOf(READERS)], fcParams(150))(
    'plain: quoting, one line ending per file, BOM, gzip, blank lines, unicode, 38-digit numbers, nested JSON, duplicate keys, bad rows',
    check,
    60_000,
  );
  it.prop([caseOf({ ...READERS, maxRows: 3, badShare: 0.5, tooLarge: true })], fcParams(15))(
    'plain with 410 KB values: ITEM_TOO_LARGE on its line',
    check,
    60_000,
  );
  it.prop([caseOf({ ...READERS, prototypeNames: true })], fcParams(100))(
    'attribute and map names constructor, __proto__, toString, valueOf, hasOwnProperty keep their values',
    check,
    60_000,
  );
  it.prop([caseOf({ ...READERS, formats: ['csv'], mixedLineEndings: true })], fcParams(100))(
    'LF and CRLF mixed line by line read as the lines a person sees',
    check,
    60_000,
  );
  it.prop([caseOf({ ...READERS, invalidUtf8: true, badShare: 0.3 })], fcParams(100))(
    'invalid UTF-8 in a key is INVALID_UTF8 on its line, never a merged key',
    check,
    60_000,
  );
  it.prop([caseOf({ ...READERS, tooDeep: true, badShare: 0.3 })], fcParams(60))(
    'JSON nested deeper than 32 levels is TOO_DEEP on its line, the rest reads',
    check,
    60_000,
  );
});
