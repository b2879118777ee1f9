import { packageVersion } from '../load/toolVersion.js';
import type { LoadResult } from '../reporting/result.js';
import { fingerprintFile } from '../files/fingerprintFile.js';
import { writeJsonAtomically, writePrivateFileAtomically } from '../files/privateFiles.js';
import { htmlReport } from '../reporting/htmlReport.js';
import { reportTimeline, summaryJson } from '../reporting/summary.js';
import { LoaderError } from '../shared/errors.js';
import { parseEstimateJson, type EstimateBeside } from '../reporting/estimateBeside.js';
import { readFile } from 'node:fs/promises';
import type { Failure } from './terminal.js';

/** Where the report goes: --report (JSON) and --html-report (the same report as a page); --compare-estimate's predictions, read before the load. */
export interface ReportPaths {
  report?: string | undefined;
  htmlReport?: string | undefined;
  estimate?: EstimateBeside | undefined;
}

/** --compare-estimate: read and checked before the load, so a wrong file stops it before its first write. */
export async function readEstimateBeside(path: string): Promise<EstimateBeside> {
  const text = await readFile(path, 'utf8').catch((cause: NodeJS.ErrnoException) => {
    throw new LoaderError(
      'INPUT_NOT_FOUND',
      `--compare-estimate ${path} cannot be read (${cause.code === 'ENOENT' ? 'no such file' : cause.message}); give the file \`ddb-spread estimate --json\` wrote`,
      {
        file: path,
        cause,
      },
    );
  });
  return parseEstimateJson(text, path);
}

/**
 * --report and --html-report: the summary, the input's fingerprint, the version, the timings and the
 * load's course, each written atomically and private (0600); the page embeds the very object the JSON holds.
 */
export async function writeReport(paths: ReportPaths, input: string, result: LoadResult, startedAt: Date, error?: Failure, excerpts = true): Promise<void> {
  const summary = JSON.parse(summaryJson(result, error, excerpts)) as Record<string, unknown>;
  const report = {
    reportVersion: 1,
    ddbSpreadVersion: packageVersion(),
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    ...summary,
    inputFingerprint: (await fingerprintFile(input).catch(() => undefined)) ?? null,
    ...(result.timeline ? { timeline: reportTimeline(result.timeline, excerpts) } : {}),
    ...(paths.estimate ? { estimate: paths.estimate } : {}),
  };
  if (paths.report) await writeJsonAtomically(paths.report, report, '--report');
  if (paths.htmlReport) {
    const path = paths.htmlReport;
    await writePrivateFileAtomically(path, htmlReport(report)).catch((cause: Error) => {
      throw new LoaderError('REPORT_UNWRITABLE', `cannot write --html-report ${path}: ${cause.message}; choose another path`, { file: path, cause });
    });
  }
}

/** True when the load writes a report of either kind. */
export function wantsReport(paths: ReportPaths): boolean {
  return paths.report !== undefined || paths.htmlReport !== undefined;
}

export { packageVersion };
