import { describe, expect, it } from 'vitest';
import { Disposer } from '../../../src/load/disposer.js';

describe('Disposer', () => {
  it('releases the last acquired first, awaiting each release before the next', async () => {
    const disposer = new Disposer();
    const order: string[] = [];
    disposer.defer(() => order.push('client'));
    disposer.defer(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push('lock');
    });
    disposer.defer(() => order.push('checkpoint'));
    await disposer.release();
    expect(order).toEqual(['checkpoint', 'lock', 'client']);
  });

  it('runs every release when one throws, then throws the first failure', async () => {
    const disposer = new Disposer();
    const order: string[] = [];
    disposer.defer(() => order.push('first acquired'));
    disposer.defer(() => {
      throw new Error('second');
    });
    disposer.defer(async () => {
      await Promise.resolve();
      throw new Error('third');
    });
    disposer.defer(() => order.push('last acquired'));
    await expect(disposer.release()).rejects.toThrow('third');
    expect(order).toEqual(['last acquired', 'first acquired']);
  });

  it('releases each thing once, and refuses a release deferred after it has released', async () => {
    const disposer = new Disposer();
    let released = 0;
    disposer.defer(() => released++);
    await disposer.release();
    await disposer.release();
    expect(released).toBe(1);
    expect(() => disposer.defer(() => undefined)).toThrow(/after release/);
  });
});
