import { packageVersion } from '../load/toolVersion.js';
import type { LoadResult } from '../reporting/result.js';
import { fingerprintFile } from '../files/fingerprintFile.js';
import { writeJsonAtomically } from '../files/privateFiles.js';
import { reportTimeline, summaryJson } from '../reporting/summary.js';
import type { Failure } from './terminal.js';

/** --report: the summary, the input's fingerprint, the version, the timings and the load's course, written atomically. */
export async function writeReport(path: string, input: string, result: LoadResult, startedAt: Date, error?: Failure, excerpts = true): Promise<void> {
  const summary = JSON.parse(summaryJson(result, error, excerpts)) as Record<string, unknown>;
  await writeJsonAtomically(
    path,
    {
      reportVersion: 1,
      ddbSpreadVersion: packageVersion(),
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      ...summary,
      inputFingerprint: (await fingerprintFile(input).catch(() => undefined)) ?? null,
      ...(result.timeline ? { timeline: reportTimeline(result.timeline, excerpts) } : {}),
    },
    '--report',
  );
}

export { packageVersion };
