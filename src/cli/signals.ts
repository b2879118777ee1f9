import { EXIT } from './exitCodes.js';

export type StopSignal = 'SIGINT' | 'SIGTERM';

export interface StopSignals {
  /** The exit code of the signal received (130 or 143), once one was. */
  readonly exitCode: number | undefined;
  /** Removes the handlers and the stop timer: main() runs in-process in tests, so no exit may fire after it returned. */
  dispose(): void;
}

/**
 * SIGINT/SIGTERM during a load: the first one asks for a graceful stop (`onStop`: finish the batches in
 * flight), and after `stopTimeoutS` seconds `onTimeout` runs, which ends the process. A second signal
 * quits at once. The checkpoint is saved atomically, so quitting either way leaves it consistent (the
 * batches still in flight are sent again on resume).
 */
export function handleStopSignals(
  stopTimeoutS: number,
  onStop: (name: StopSignal) => void,
  onTimeout: (name: StopSignal, exitCode: number) => void,
): StopSignals {
  let exitCode: number | undefined;
  let stopTimer: NodeJS.Timeout | undefined;
  const handler = (name: StopSignal) => () => {
    const code = name === 'SIGINT' ? EXIT.SIGINT : EXIT.SIGTERM;
    if (exitCode !== undefined) process.exit(code);
    exitCode = code;
    onStop(name);
    stopTimer = setTimeout(() => onTimeout(name, code), stopTimeoutS * 1000).unref();
  };
  const sigint = handler('SIGINT');
  const sigterm = handler('SIGTERM');
  process.on('SIGINT', sigint);
  process.on('SIGTERM', sigterm);
  return {
    get exitCode() {
      return exitCode;
    },
    dispose() {
      clearTimeout(stopTimer);
      process.off('SIGINT', sigint);
      process.off('SIGTERM', sigterm);
    },
  };
}
