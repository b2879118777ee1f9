import { describe, expect, it } from 'vitest';
import { LoaderError } from '../../../src/shared/errors.js';
import { LoadStop } from '../../../src/load/loadStop.js';

describe('LoadStop', () => {
  it('follows the signal until the load settles', () => {
    const controller = new AbortController();
    const stop = new LoadStop(controller.signal);
    expect(stop.aborted).toBe(false);
    controller.abort();
    expect(stop.aborted).toBe(true);
    expect(stop.stopping).toBe(true);
    stop.settle();
    expect(stop.aborted).toBe(true);
  });

  it('a signal after the load settled stops nothing: the load is not reported aborted', () => {
    const controller = new AbortController();
    const stop = new LoadStop(controller.signal);
    stop.settle();
    controller.abort();
    expect(stop.aborted).toBe(false);
    expect(stop.stopping).toBe(false);
  });

  it('the first failure wins, before or after settling', () => {
    const stop = new LoadStop();
    stop.settle();
    stop.fail(new LoaderError('ACCESS_DENIED', 'first'));
    stop.fail(new LoaderError('ABORTED', 'second'));
    expect(stop.error?.code).toBe('ACCESS_DENIED');
    expect(stop.stopping).toBe(true);
  });
});
