const EMPTY = Buffer.alloc(0);

/**
 * The bytes fed to csv-parse that no record's raw text has been cut from yet, placed by their offset
 * among all the bytes fed (csv-parse's `info.bytes` counts the same way). Each raw text is a copy
 * (Buffer#toString), never a slice of a longer string: V8 keeps the whole string a slice is cut from alive
 * as long as the slice, so a row held by a write order kept the ~8 KB fed with it (6.5 MB for 800 rows kept
 * of 200k, against 0.3 MB). Pieces fed are joined only when a cut spans them: once per feed, or once per
 * record that spans several, so a long record is never copied again and again as it grows.
 */
export class FedBytes {
  #pieces: Buffer[] = [];
  /** Offset of the first piece's first byte. */
  #start = 0;
  #end = 0;
  /** Where the next cut starts: the end of the last record cut. */
  from = 0;

  /** Offset one past the last byte fed. */
  get end(): number {
    return this.#end;
  }

  feed(bytes: Buffer): void {
    this.#pieces.push(bytes);
    this.#end += bytes.length;
  }

  /** The bytes from `from` to `to` (exclusive), as latin1 text (a character a byte); `from` moves to `to`. */
  cut(to: number): string {
    if (this.#pieces.length > 1) this.#pieces = [Buffer.concat(this.#pieces)];
    const text = (this.#pieces[0] ?? EMPTY).toString('latin1', this.from - this.#start, to - this.#start);
    this.from = to;
    return text;
  }

  /** Whether the bytes kept (fed, not yet released) hold `byte`. */
  holds(byte: number): boolean {
    return this.#pieces.some((piece) => piece.indexOf(byte) !== -1);
  }

  /** Lets go of the bytes before `from`. */
  release(): void {
    let drop = this.from - this.#start;
    while (this.#pieces.length > 0 && drop >= this.#pieces[0]!.length) {
      const piece = this.#pieces.shift()!;
      drop -= piece.length;
      this.#start += piece.length;
    }
    if (drop > 0) {
      this.#pieces[0] = this.#pieces[0]!.subarray(drop);
      this.#start += drop;
    }
  }
}
