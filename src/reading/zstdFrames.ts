/**
 * The frame structure of a zstd stream (RFC 8878 §3.1), read from the compressed bytes without decoding
 * them: where each frame starts and ends, what its header promises (content size, checksum, dictionary)
 * and the checksum written after its last block. Skippable frames are passed over. The decoder (fzstd)
 * checks none of this; decompress.ts decodes each frame the scanner delimits and compares.
 * Pure: bytes in, calls on the sink out; a malformed or truncated structure throws.
 */

export interface ZstdFrameHeader {
  /** The frame's number in the stream, from 1 (skippable frames not counted). */
  frame: number;
  /** Frame_Content_Size, when the header carries it. */
  contentSize: bigint | undefined;
  /** Content_Checksum_flag: the frame ends with the low 32 bits of the XXH64 of its content. */
  checksum: boolean;
  /** Dictionary_ID; 0 when the frame names none. */
  dictionaryId: number;
}

export interface ZstdFrameSink {
  /** A frame begins; `header` is its header. */
  start(header: ZstdFrameHeader): void;
  /** Bytes of the current frame, in order: its header, blocks and checksum, as the decoder expects them. */
  bytes(part: Uint8Array): void;
  /** The current frame ended; `checksum` is the value it carries (undefined without the flag). */
  end(checksum: number | undefined): void;
}

const ZSTD_MAGIC = 0xfd2fb528;
const BLOCK_RESERVED = 3;
const BLOCK_RLE = 1;

type State =
  | { at: 'magic' }
  | { at: 'header'; need: number }
  | { at: 'blockHeader' }
  | { at: 'blockBody'; left: number; last: boolean }
  | { at: 'checksum' }
  | { at: 'skip'; left: number }
  | { at: 'skipSize' };

export class ZstdFrameScanner {
  private state: State = { at: 'magic' };
  /** Bytes of a fixed-size field (magic, header, block header, checksum) that a chunk boundary cut. */
  private pending: Uint8Array = new Uint8Array(0);
  private header: ZstdFrameHeader | undefined;
  private frames = 0;

  constructor(private readonly sink: ZstdFrameSink) {}

  /** Feeds the next compressed bytes. */
  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      const state = this.state;
      if (state.at === 'blockBody' || state.at === 'skip') {
        const take = Math.min(state.left, chunk.length - at);
        if (state.at === 'blockBody') this.sink.bytes(chunk.subarray(at, at + take));
        at += take;
        state.left -= take;
        if (state.left === 0) this.state = state.at === 'skip' ? { at: 'magic' } : state.last ? this.afterLastBlock() : { at: 'blockHeader' };
        continue;
      }
      const need = this.fieldSize(state);
      const take = Math.min(need - this.pending.length, chunk.length - at);
      this.pending = concat(this.pending, chunk.subarray(at, at + take));
      at += take;
      if (this.pending.length === need) {
        const field = this.pending;
        this.pending = new Uint8Array(0);
        this.field(field);
      }
    }
  }

  /** The input ended: it must end between frames. */
  finish(): void {
    if (this.state.at === 'magic' && this.pending.length === 0) return;
    const at = this.state.at;
    const where = at === 'magic' ? 'after the last frame' : at === 'skip' || at === 'skipSize' ? 'inside a skippable frame' : `inside frame ${this.frames}`;
    throw new Error(`the input ends ${where}`);
  }

  private fieldSize(state: State): number {
    switch (state.at) {
      case 'magic':
      case 'checksum':
      case 'skipSize':
        return 4;
      case 'header':
        return state.need;
      case 'blockHeader':
        return 3;
      default:
        return 0;
    }
  }

  /** One whole fixed-size field. */
  private field(field: Uint8Array): void {
    const state = this.state;
    switch (state.at) {
      case 'magic': {
        const magic = u32(field, 0);
        if (magic === ZSTD_MAGIC) {
          this.frames += 1;
          this.pending = field;
          this.state = { at: 'header', need: 5 };
        } else if (magic >>> 4 === 0x184d2a5) this.state = { at: 'skipSize' };
        else throw new Error(`frame ${this.frames + 1} does not start with zstd's magic number`);
        return;
      }
      case 'skipSize': {
        const left = u32(field, 0);
        this.state = left === 0 ? { at: 'magic' } : { at: 'skip', left };
        return;
      }
      case 'header': {
        if (state.need === 5) {
          this.pending = field;
          this.state = { at: 'header', need: 5 + headerRest(field[4]!) };
          if (this.state.need > 5) return;
        }
        this.header = parseHeader(field, this.frames);
        this.sink.start(this.header);
        this.sink.bytes(field);
        this.state = { at: 'blockHeader' };
        return;
      }
      case 'blockHeader': {
        const value = field[0]! | (field[1]! << 8) | (field[2]! << 16);
        const type = (value >> 1) & 3;
        if (type === BLOCK_RESERVED) throw new Error(`frame ${this.frames} has a block of the reserved type`);
        const size = type === BLOCK_RLE ? 1 : value >>> 3;
        this.sink.bytes(field);
        const last = (value & 1) === 1;
        this.state = size > 0 ? { at: 'blockBody', left: size, last } : last ? this.afterLastBlock() : { at: 'blockHeader' };
        return;
      }
      case 'checksum':
        this.sink.bytes(field);
        this.state = { at: 'magic' };
        this.endFrame(u32(field, 0));
        return;
      default:
        return;
    }
  }

  private afterLastBlock(): State {
    if (this.header?.checksum) return { at: 'checksum' };
    this.endFrame(undefined);
    return { at: 'magic' };
  }

  private endFrame(checksum: number | undefined): void {
    this.header = undefined;
    this.sink.end(checksum);
  }
}

/** The header's length after the magic and the descriptor, from the descriptor (RFC 8878 §3.1.1.1). */
function headerRest(descriptor: number): number {
  const singleSegment = (descriptor >> 5) & 1;
  const fcsFlag = descriptor >> 6;
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
  const contentSizeBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
  return (singleSegment ? 0 : 1) + dictionaryBytes + contentSizeBytes;
}

function parseHeader(field: Uint8Array, frame: number): ZstdFrameHeader {
  const descriptor = field[4]!;
  if (descriptor & 8) throw new Error(`the header of frame ${frame} sets its reserved bit`);
  const singleSegment = (descriptor >> 5) & 1;
  const fcsFlag = descriptor >> 6;
  let at = 5 + (singleSegment ? 0 : 1);
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
  let dictionaryId = 0;
  for (let i = 0; i < dictionaryBytes; i++) dictionaryId += field[at + i]! * 2 ** (8 * i);
  at += dictionaryBytes;
  const contentSizeBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
  let contentSize: bigint | undefined;
  if (contentSizeBytes > 0) {
    contentSize = 0n;
    for (let i = contentSizeBytes - 1; i >= 0; i--) contentSize = (contentSize << 8n) | BigInt(field[at + i]!);
    if (contentSizeBytes === 2) contentSize += 256n;
  }
  return { frame, contentSize, checksum: ((descriptor >> 2) & 1) === 1, dictionaryId };
}

function u32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
