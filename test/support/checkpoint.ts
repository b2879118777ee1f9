import { readFileSync } from 'node:fs';

/** Batches the checkpoint at `path` records as done (0 while there is none): progress read as the loader saves it. */
export function batchesDone(path: string): number {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { batchesDone: number }).batchesDone;
  } catch {
    return 0;
  }
}
