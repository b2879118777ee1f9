/**
 * Which write of each key the table should show, pure: the key's last write that landed. The dry run
 * is read twice in the same deterministic order (its writes numbered in input order, as planned): the
 * first pass notes each key's last landed write, the second compares only that write, so a key written
 * twice in the input is never compared against an earlier row, whatever the distance between them.
 *
 * A write in the load's reject file (DynamoDB refused it) did not land: the write before it stands, as
 * load leaves it (writing/writeBatch.ts sends a refused write's predecessor in its place). A key whose
 * every write was refused is expected absent.
 *
 * Memory: one map entry per distinct key of the input (its key identity and a number), the bound of a
 * verify: about 100 bytes a key plus its key text.
 */
export class LastWrites {
  /** Key identity → number of its last write that landed. */
  #landed = new Map<string, number>();
  /** Key identity → number of its last refused write (only kept while no write of the key landed). */
  #refused = new Map<string, number>();
  #sealed = false;

  /** Pass one: write `seq` of `keyId`, refused by DynamoDB in the load (in its reject file) or not. */
  note(keyId: string, seq: number, refused: boolean): void {
    if (this.#sealed) throw new Error('LastWrites.note after seal');
    if (!refused) {
      this.#landed.set(keyId, seq);
      this.#refused.delete(keyId);
    } else if (!this.#landed.has(keyId)) this.#refused.set(keyId, seq);
  }

  /** Ends pass one. */
  seal(): void {
    this.#sealed = true;
  }

  /** Distinct keys of the input. */
  get keys(): number {
    return this.#landed.size + this.#refused.size;
  }

  /** Whether the input has a write of this key (any: landed, refused or a delete). */
  has(keyId: string): boolean {
    return this.#landed.has(keyId) || this.#refused.has(keyId);
  }

  /**
   * Pass two: what write `seq` of `keyId` is. 'final': the key's last write that landed (compare it);
   * 'refused': the last of a key none of whose writes landed (expect the key absent); 'superseded': a later
   * write of the key decides.
   */
  verdict(keyId: string, seq: number): 'final' | 'refused' | 'superseded' {
    if (!this.#sealed) throw new Error('LastWrites.verdict before seal');
    if (this.#landed.get(keyId) === seq) return 'final';
    if (this.#refused.get(keyId) === seq) return 'refused';
    return 'superseded';
  }
}
