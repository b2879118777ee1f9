import type { PlannedWrite } from '../shared/types.js';

/** BatchWriteItem limits (API reference): 25 put/delete requests and 16 MB per call. */
export const MAX_BATCH_REQUESTS = 25;
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;

export interface Batch {
  writes: PlannedWrite[];
  /** Sum of the items' table write units. */
  wcu: number;
  bytes: number;
}

export interface BatchPush {
  /** A batch that is complete and can be sent. */
  full?: Batch;
  /** An earlier write to the same primary key that this write replaced before it was sent. */
  superseded?: PlannedWrite;
}

/**
 * Superseded writes kept per key as predecessors (the nearest first): enough for any refusal short of a
 * run of refused rows, while a key repeated a million times in a row does not hold a million rows.
 */
export const MAX_PREDECESSORS = 8;

export interface Batcher {
  push(write: PlannedWrite): BatchPush;
  /** Returns the last, partial batch, if any. */
  flush(): Batch | undefined;
}

/**
 * Groups writes into BatchWriteItem calls: at most 25 requests and 16 MB, and never two requests for one
 * primary key, which BatchWriteItem rejects as a whole ("Provided list of item keys contains
 * duplicates"). When a key repeats inside the batch being filled, the later row replaces the earlier
 * one: that is the state writing them one by one in input order would leave, with one write fewer. The
 * earlier write stays attached as the later one's `predecessor`, to be written if DynamoDB refuses the later.
 * With `supersede: false` (a conditional load, whose writes' outcomes depend on the writes of their key
 * before them) a repeated key closes the batch instead, and every row is sent.
 */
export function createBatcher(limits: { maxRequests?: number; maxBytes?: number; supersede?: boolean } = {}): Batcher {
  const maxRequests = limits.maxRequests ?? MAX_BATCH_REQUESTS;
  const supersede = limits.supersede ?? true;
  const maxBytes = limits.maxBytes ?? MAX_BATCH_BYTES;
  let writes: PlannedWrite[] = [];
  let index = new Map<string, number>();
  let bytes = 0;

  function take(): Batch | undefined {
    if (writes.length === 0) return undefined;
    let wcu = 0;
    for (const w of writes) wcu += w.wcu;
    const batch = { writes, wcu, bytes };
    writes = [];
    index = new Map();
    bytes = 0;
    return batch;
  }

  return {
    push(write) {
      const result: BatchPush = {};
      const at = index.get(write.keyId);
      if (at !== undefined && !supersede) {
        // Without supersede (conditional writes, each row tried in input order): the key's earlier write goes in
        // this batch, the later one starts the next; the dispatcher sends the next only once this one has settled.
        const full = take();
        if (full) result.full = full;
      } else if (at !== undefined) {
        const superseded = writes[at]!;
        result.superseded = superseded;
        attachPredecessor(write, superseded);
        if (bytes - superseded.size + write.size <= maxBytes) {
          writes[at] = write;
          bytes += write.size - superseded.size;
          return result;
        }
        // The later write does not fit in place: take the earlier one out and add the later one below,
        // which may start a new batch.
        writes.splice(at, 1);
        bytes -= superseded.size;
        index = new Map(writes.map((w, i) => [w.keyId, i]));
      }
      if (writes.length > 0 && bytes + write.size > maxBytes) {
        const full = take();
        if (full) result.full = full;
      }
      index.set(write.keyId, writes.length);
      writes.push(write);
      bytes += write.size;
      if (writes.length >= maxRequests) {
        const full = take();
        if (full) result.full = full;
      }
      return result;
    },
    flush: take,
  };
}

/** Starts `write`'s predecessor chain with `superseded`, cut after MAX_PREDECESSORS (the oldest stay superseded). */
function attachPredecessor(write: PlannedWrite, superseded: PlannedWrite): void {
  write.predecessor = superseded;
  let node: PlannedWrite = superseded;
  for (let depth = 1; node.predecessor !== undefined; depth++) {
    if (depth >= MAX_PREDECESSORS) {
      delete node.predecessor;
      break;
    }
    node = node.predecessor;
  }
}
