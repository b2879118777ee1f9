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
 * A write in the load's --condition-failures file was tried and its condition was false: the table kept
 * the item it had (another writer's, or an earlier row's), which the input cannot tell. A key whose last
 * write tried is such a write is 'kept': not compared. A later write of the key that landed decides again.
 *
 * Memory: one map entry per distinct key of the input (its key identity and a number), the bound of a
 * verify: about 100 bytes a key plus its key text.
 */
/** What became of a write in the load: it landed, DynamoDB refused it (the reject file), or its condition was false. */
export type WriteFate = 'landed' | 'refused' | 'kept';

export class LastWrites {
  /** Key identity → number of its last write that landed. */
  #landed = new Map<string, number>();
  /** Key identity → number of its last write whose condition was false, when no write of the key landed after it. */
  #kept = new Map<string, number>();
  /** Key identity → number of its last refused write (only kept while no write of the key landed or was kept). */
  #refused = new Map<string, number>();
  #sealed = false;

  /** Pass one: write `seq` of `keyId`, and what became of it in the load. */
  note(keyId: string, seq: number, fate: WriteFate): void {
    if (this.#sealed) throw new Error('LastWrites.note after seal');
    if (fate === 'landed') {
      this.#landed.set(keyId, seq);
      this.#kept.delete(keyId);
      this.#refused.delete(keyId);
    } else if (fate === 'kept') {
      this.#kept.set(keyId, seq);
      this.#landed.delete(keyId);
      this.#refused.delete(keyId);
    } else if (!this.#landed.has(keyId) && !this.#kept.has(keyId)) this.#refused.set(keyId, seq);
  }

  /** Ends pass one. */
  seal(): void {
    this.#sealed = true;
  }

  /** Distinct keys of the input. */
  get keys(): number {
    return this.#landed.size + this.#kept.size + this.#refused.size;
  }

  /** Whether the input has a write of this key (any: landed, kept, refused or a delete). */
  has(keyId: string): boolean {
    return this.#landed.has(keyId) || this.#kept.has(keyId) || this.#refused.has(keyId);
  }

  /**
   * Pass two: what write `seq` of `keyId` is. 'final': the key's last write that landed (compare it);
   * 'kept': the key's last write tried, whose condition was false (the table kept its item: not compared);
   * 'refused': the last of a key none of whose writes landed (expect the key absent); 'superseded': a later
   * write of the key decides.
   */
  verdict(keyId: string, seq: number): 'final' | 'kept' | 'refused' | 'superseded' {
    if (!this.#sealed) throw new Error('LastWrites.verdict before seal');
    if (this.#landed.get(keyId) === seq) return 'final';
    if (this.#kept.get(keyId) === seq) return 'kept';
    if (this.#refused.get(keyId) === seq) return 'refused';
    return 'superseded';
  }
}
