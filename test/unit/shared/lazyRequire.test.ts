import { describe, expect, it } from 'vitest';
import * as ionImported from 'ion-js';
import { lazyRequire } from '../../../src/shared/lazyRequire.js';

describe('lazyRequire', () => {
  it('gives the very module an import gives, loaded once', () => {
    const ion = lazyRequire<typeof ionImported>('ion-js', 'reading Ion');
    expect(ion()).toBe(ion());
    expect(ion().makeReader).toBe(ionImported.makeReader);
    expect(ion().IonTypes.STRUCT).toBe(ionImported.IonTypes.STRUCT);
  });

  it('a package that cannot be loaded is an error naming it and what needed it, at first use only', () => {
    const missing = lazyRequire('no-such-package-ddb-spread', 'reading Ion');
    expect(missing).toThrow(/^cannot load the package no-such-package-ddb-spread, which reading Ion needs \(Cannot find module 'no-such-package-ddb-spread'/);
    expect(missing).toThrow(/reinstall ddb-spread$/);
  });
});
