import { parentPort, workerData } from 'node:worker_threads';
import { LoaderError } from '../shared/errors.js';
import { fileByteSource } from './byteSource.js';
import { FilePin } from './filePin.js';
import { packValue } from './clonedValues.js';
import { decodeRowGroups } from './readParquet.js';
import type { FromWorker, ParquetWorkerData } from './parquetThread.js';

/**
 * The worker that decodes one Parquet file (started by parquetThread.ts): a row group at a time, one
 * ahead of the rows the load has taken ('next' asks for the one after). A corrupt page that makes
 * hyparquet loop forever blocks this thread only; the load's thread sees no row group come and ends it.
 */
const port = parentPort!;
const { path, file, identity } = workerData as ParquetWorkerData;
let credits = 1;
let wake: (() => void) | undefined;
port.on('message', (message: 'next') => {
  if (message !== 'next') return;
  credits++;
  wake?.();
});
const send = (message: FromWorker) => port.postMessage(message);

async function decode(): Promise<void> {
  const source = await fileByteSource(path, identity ? new FilePin(file, path, identity) : undefined);
  for await (const group of decodeRowGroups(source, file, (index, bytes) => send({ type: 'group', group: index, bytes }))) {
    send({ type: 'rows', ...group, rows: group.rows.map(packValue) as Record<string, unknown>[], bytesRead: source.bytesRead() });
    credits--;
    while (credits <= 0) await new Promise<void>((resolve) => (wake = resolve));
  }
  send({ type: 'end', bytesRead: source.bytesRead() });
}

decode().catch((error: unknown) =>
  send({
    type: 'error',
    code: error instanceof LoaderError ? error.code : undefined,
    message: error instanceof Error ? error.message : String(error),
  }),
);
