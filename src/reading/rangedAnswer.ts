/**
 * What a GET of an S3 object answered, checked against what was asked (a server or proxy may ignore Range and send the whole object). Pure.
 *
 * A read that broke mid-object asks again from the first byte not received (`Range: bytes=N-`). S3 answers
 * 206 with `Content-Range: bytes N-last/size`; a server, cache or proxy that ignores Range may answer 200
 * with the whole object (RFC 9110 allows it), whose first N bytes were delivered already and must be
 * skipped, never appended again. A 206 from another byte, or any answer whose size is not the pinned one,
 * would put bytes in the wrong place: it is refused.
 */

/** The part of an answer this check reads (the SDK's GetObject output, and its HTTP status). */
export interface RangedAnswer {
  status: number | undefined;
  contentRange: string | undefined;
  contentLength: number | undefined;
}

/** `bytes first-last/total` (total may be `*`); undefined when the text is not that. */
export function parseContentRange(text: string): { first: number; last: number; total: number | undefined } | undefined {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(text.trim());
  if (!m) return undefined;
  return { first: Number(m[1]), last: Number(m[2]), total: m[3] === '*' ? undefined : Number(m[3]) };
}

/**
 * How many bytes of the answer's body to drop before its bytes follow on from `offset` (the bytes already
 * delivered), or why the answer cannot be used (a sentence to put after the object's name).
 */
export function bytesToSkip(answer: RangedAnswer, offset: number, size: number): { skip: number } | { refused: string; changed: boolean } {
  const { status, contentRange, contentLength } = answer;
  if (status === 206 || contentRange !== undefined) {
    const range = contentRange === undefined ? undefined : parseContentRange(contentRange);
    if (range === undefined)
      return { refused: `answered a ranged read with ${contentRange === undefined ? 'no Content-Range' : `Content-Range "${contentRange}"`}`, changed: false };
    if (range.total !== undefined && range.total !== size)
      return { refused: `is ${range.total} bytes now, ${size} when listed (Content-Range "${contentRange}")`, changed: true };
    if (range.first !== offset)
      return {
        refused: `answered the read from byte ${offset} with bytes ${range.first}-${range.last} (Content-Range "${contentRange}"): its bytes would land in the wrong place`,
        changed: false,
      };
    return { skip: 0 };
  }
  // 200: the whole object, from byte 0, whatever was asked.
  if (contentLength !== undefined && contentLength !== size) return { refused: `is ${contentLength} bytes now, ${size} when listed`, changed: true };
  return { skip: offset };
}
