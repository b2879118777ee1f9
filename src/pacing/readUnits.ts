/**
 * Read units, pure (DynamoDB developer guide, "Read consistency" and "Capacity unit consumption for
 * reads"): one read unit reads up to 4 KB strongly consistent, half a unit eventually consistent; every
 * item is rounded up to the next 4 KB, and a key with no item still costs the minimum.
 */
export function readUnitsOf(sizeBytes: number, consistent: boolean): number {
  const blocks = Math.max(1, Math.ceil(sizeBytes / 4096));
  return consistent ? blocks : blocks / 2;
}

/** BatchGetItem takes at most 100 keys per call. */
export const MAX_KEYS_PER_CALL = 100;
