// The read unit rules live with the write unit rules (pacing), where the estimate's price of a verify
// (estimating/verifyCost.ts) reads them too; verify's modules import them from here.
export { MAX_KEYS_PER_CALL, readUnitsOf } from '../pacing/readUnits.js';
