/**
 * Progress of a download whose size is known (DynamoDB Local's pinned tarball): on a terminal one line
 * rewritten in place, "Downloading DynamoDB Local: 25.8 of 56.6 MB (46%), 3 s"; otherwise (CI logs, a
 * pipe) a line at each quarter, so a log shows it moving without a line per poll. Pure: the clock and the
 * output are passed in.
 */
export interface ProgressOutput {
  write(text: string): void;
  /** True for a terminal: the line is rewritten with a carriage return. */
  tty: boolean;
}

export interface DownloadProgress {
  /** Bytes received so far (never going back). */
  update(bytes: number): void;
  /** Ends the line on a terminal; says nothing more otherwise. */
  done(): void;
}

const MB = 1024 * 1024;
/** A terminal line is redrawn at most this often. */
const REDRAW_MS = 250;

export function downloadProgress(label: string, totalBytes: number, out: ProgressOutput, now: () => number = Date.now): DownloadProgress {
  const started = now();
  let shown = 0;
  let lastDraw = -Infinity;
  let quarter = 0;
  let drawn = false;
  const line = (bytes: number) => {
    const share = Math.min(1, bytes / totalBytes);
    const seconds = Math.round((now() - started) / 1000);
    return `${label}: ${(bytes / MB).toFixed(1)} of ${(totalBytes / MB).toFixed(1)} MB (${Math.floor(share * 100)}%), ${seconds} s`;
  };
  return {
    update(bytes) {
      if (bytes <= shown) return;
      shown = Math.min(bytes, totalBytes);
      if (out.tty) {
        if (now() - lastDraw < REDRAW_MS && shown < totalBytes) return;
        lastDraw = now();
        drawn = true;
        out.write(`\r${line(shown)}\x1b[K`);
        return;
      }
      const reached = Math.floor((shown / totalBytes) * 4);
      if (reached > quarter) {
        quarter = reached;
        out.write(`${line(shown)}\n`);
      }
    },
    done() {
      if (out.tty && drawn) out.write('\n');
    },
  };
}
