import { hash32 } from '../shared/hash.js';

/**
 * --sample P%: which keys a sampled verify checks, and what checking them proves. Pure.
 *
 * A key is in the sample when its hash falls in the first P% of the hash's range: the same keys on every
 * run (a rerun checks the same keys, and a fix can be checked against them), spread over the whole input
 * rather than its first rows.
 */
export function inSample(keyId: string, share: number): boolean {
  if (share >= 1) return true;
  return hash32(`verify:${keyId}`) < share * 2 ** 32;
}

/** What a sample proves, as figures. */
export interface SampleStatement {
  /** Keys checked. */
  checked: number;
  /** Keys found not as the input would leave them. */
  differing: number;
  /** The share of differing keys observed in the sample. */
  observedRate: number;
  /**
   * With none differing: the rate below which the whole input's differing share lies at 95% confidence
   * (1 - 0.05^(1/n): were it at least this, a sample of n would have missed every one with under 5%
   * probability). Undefined when some were found or none were checked.
   */
  upperBound95?: number;
}

export function sampleStatement(checked: number, differing: number): SampleStatement {
  const observedRate = checked === 0 ? 0 : differing / checked;
  if (differing > 0 || checked === 0) return { checked, differing, observedRate };
  return { checked, differing, observedRate, upperBound95: 1 - 0.05 ** (1 / checked) };
}

/** "--sample 1%" (or "0.5%", "1") as a share in (0, 1]; an error message otherwise. */
export function parseSampleShare(text: string): number | string {
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*%?\s*$/.exec(text);
  const percent = match ? Number(match[1]) : NaN;
  if (!Number.isFinite(percent) || percent <= 0 || percent > 100)
    return `--sample takes a share of the keys from above 0% to 100%, such as 1% or 0.5%, got "${text}"`;
  return percent / 100;
}
